// DP-Hype (Liebenow, Peinemann, Mohammadi, Liebenow et al. 2025): federated hyperparameter search
// by private top-k voting with secure aggregation.  Client-level (ε, δ)-DP whose cost does not
// depend on the number of candidates; the vote's sensitivity counts every client whose data one
// record can change (TunerContext::scopes_changed_by_one_record: 2 on Dirichlet shards by label),
// so the printed ε also holds for one record's replacement.
//
//  * n clients each train every candidate with the pipeline's (non-private) trainer on their own
//    shard (DataScope::client(j, n): iid or Dirichlet, each with its own train/validation split)
//    and rank them by local validation utility; ties are broken by a random order (Algorithm 1,
//    lines 2-8).
//  * Each client adds N(0, σ²/h) per entry through the pipeline's mechanism (line 9), h = n − ⌊γn⌋
//    − ⌊ξn⌋ the honest survivors the threat model guarantees (γ = secagg_corrupt_rate clients may
//    collude with the server and subtract their own noise; ξn may drop out: Appendix A-A); the
//    noisy votes meet only inside secure aggregation (Bonawitz et al. 2017, see
//    include/dp_hype/secagg.hpp); the server takes the argmax (lines 11-12).
//  * Released: the argmax, the noisy vote vector (the Gaussian mechanism's output, which the
//    guarantee covers) and notes that depend on the configuration alone.  `baselines: true`
//    evaluates every candidate non-privately; those utilities go only into trials marked
//    sensitive (trials.SENSITIVE.csv on opt-in), never into `selected` or the notes.
//  * σ from (ε, δ, k): the pipeline's accountant on Gaussian(σ/√(2k)) (Lemma III.1, Theorem III.1,
//    Theorem I.1 with the rdp accountant), or, labelled, the analytic Gaussian (Balle & Wang 2018).
//  * Liebenow et al. 2025 Figure 2 (the simulation of §IV-B) is `dptune-figures`'s, not this
//    plugin's (tools/figures).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "dp_hype/chacha_rng.hpp"
#include "dp_hype/peer_vote.hpp"
#include "dp_hype/private_vote.hpp"
#include "dptune/dptune.hpp"
#include "dptune/helpers/format.hpp"

namespace dptune::dp_hype {
namespace {

using dptune::Params;

std::string fmt(double x, int digits = 6) { return dptune::significant_digits(x, digits); }

constexpr const char* kBaselineLabel = "non-private baseline (not covered by the guarantee)";

class DpHype final : public dptune::Tuner {
 public:
  explicit DpHype(const Params& p) : p_(p) {
    if (p.get_int("dropouts") >= p.get_int("clients"))
      throw dptune::InvalidArgument("dp_hype: dropouts must be < clients");
    // At least one honest noise share must survive the worst case (throws InvalidArgument).
    guaranteed_honest_noise_shares(static_cast<std::size_t>(p.get_int("clients")),
                                   p.get_double("xi"), p.get_double("secagg_corrupt_rate"));
  }

  // Private at the client level (Liebenow et al. 2025): it releases the selected candidate only,
  // voted on by clients that evaluate on their own shards (and, with baselines, non-private runs
  // on the whole data).
  static dptune::TunerTraits traits() {
    return {.outputs = dptune::TunerOutputs::Private,
            .releases_model = false,
            .scopes = {dptune::DataScope::Kind::Client, dptune::DataScope::Kind::Whole},
            .unit = dptune::GuaranteeUnit::Client};
  }

  static dptune::ParamSchema schema() {
    using std::int64_t;
    return dptune::ParamSchema{}
        .add_float("epsilon", "target client-level epsilon (at the pipeline's delta)")
        .min_exclusive(0)
        .default_to(1.0)
        .add_int("k",
                 "votes per client (Algorithm 1); the sensitivity is sqrt(2k), 2 sqrt(2k) on "
                 "Dirichlet shards (one record can change two clients)")
        .min(1)
        .default_to(int64_t{5})
        .add_int("clients", "number of clients n (data shards DataScope::client(j, n))")
        .min(2)
        .default_to(int64_t{50})
        .add_float("xi",
                   "tolerated dropout fraction: each client adds N(0, sigma^2 / h), h = n - "
                   "floor(secagg_corrupt_rate n) - floor(xi n) honest survivors")
        .min(0)
        .max_exclusive(1)
        .default_to(0.0)
        .add_string(
            "calibration",
            "rdp: sigma from the pipeline's accountant (Liebenow et al. 2025, Thm III.1 + I.1); "
            "analytic_gaussian: tighter sigma of Balle & Wang 2018 (guarantee still from the "
            "accountant)")
        .one_of({"rdp", "analytic_gaussian"})
        .default_to(std::string("rdp"))
        .add_int("points_per_dimension", "grid points per float dimension of the search space")
        .min(1)
        .default_to(int64_t{10})
        .add_string(
            "secagg",
            "secure aggregation graph: secagg_plus (Bell et al. 2020 random Harary graph, "
            "degree and threshold from secagg_corrupt_rate / secagg_dropout_rate at 40-bit "
            "security, 20-bit correctness; what Liebenow et al. 2025 ran in Flower) or complete "
            "(every pair of clients, Bonawitz et al. 2017)")
        .one_of({"secagg_plus", "complete"})
        .default_to(std::string("secagg_plus"))
        .add_float("secagg_corrupt_rate",
                   "assumed fraction gamma of clients colluding with the server: their noise is "
                   "not counted (each client adds N(0, sigma^2 / h), h = n - floor(gamma n) - "
                   "floor(xi n)), and the SecAgg+ graph and Shamir threshold are sized for them")
        .min(0)
        .max_exclusive(0.9)
        .default_to(0.05)
        .add_float("secagg_dropout_rate",
                   "secagg_plus: assumed fraction of clients dropping out (raised to xi and to "
                   "dropouts / clients if smaller)")
        .min(0)
        .max_exclusive(0.9)
        .default_to(0.05)
        .add_int("threshold",
                 "Shamir threshold t (0: from the SecAgg+ analysis, or floor((n-1)/2) + 1 for the "
                 "complete graph / floor(d/2) + 1 for a hand-set degree)")
        .min(0)
        .default_to(int64_t{0})
        .add_int("neighbours",
                 "secagg_plus: hand-set even graph degree overriding the analysis (0: from the "
                 "analysis; no failure bound is then reported)")
        .min(0)
        .default_to(int64_t{0})
        .add_int("dropouts", "clients that drop after key exchange (simulated, chosen at random)")
        .min(0)
        .default_to(int64_t{0})
        .add_float("round_timeout",
                   "over MPI ranks: seconds the server waits for one protocol round's messages; "
                   "clients whose messages have not come by then are dropouts (Shamir recovery)")
        .min_exclusive(0)
        .default_to(30.0)
        .add_int("stop_rank",
                 "over MPI ranks, for tests of real dropouts: this rank's clients stop after "
                 "sharing their keys (before the masked input), and the server finds out only by "
                 "its round timeout (0: none)")
        .min(0)
        .default_to(int64_t{0})
        .add_float("gap", "vote gap gamma for the Theorem IV.1 bound (0: report n/10, n/4, n/2)")
        .min(0)
        .default_to(0.0)
        .add_bool("baselines",
                  "also evaluate every candidate on the whole data NON-PRIVATELY "
                  "(Liebenow et al. 2025's Opt and RandGuess): written only as trials marked "
                  "sensitive (output.sensitive_trials), labelled non-private baseline, not "
                  "covered by the guarantee")
        .default_to(false);
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    if (!(context.delta() > 0 && context.delta() < 1))
      throw dptune::ConfigError("dp_hype: the accountant's delta must be in (0, 1), got " +
                                fmt(context.delta()));
    return federated(context);
  }

  // The worst case of the final guarantee, reserved in the ledger before any client evaluates.
  // In one process the only dropouts are the `dropouts` simulated ones, which the dry run
  // simulates too: the final guarantee is the dry run's, and nothing is stated.  Over MPI ranks a
  // client whose message misses a round timeout is a dropout the dry run cannot see.  The fewest
  // survivors a released sum can have is max(t, c + 1): secure aggregation aborts with fewer than
  // its Shamir threshold t masked inputs (Bonawitz et al. 2017, §4: the server needs t shares to
  // unmask; Server::collect_masked refuses below t), and with no survivor outside the c clients
  // that may collude the tuner releases nothing (guarantee()).  The honest noise σ_h = s·√(m − c)
  // grows with the survivors m, and the Gaussian mechanism's ε falls as its noise grows (more noise
  // is the less noisy output plus independent noise, a post-processing; its RDP α Δ² / (2σ_h²)
  // falls pointwise, Mironov 2017, Proposition 7), so the event at m = max(t, c + 1) bounds every
  // final guarantee the run can release.  An accountant whose price were not monotone would show
  // as a supplement above the reservation, which the host withholds.
  std::optional<dptune::DpEvent> worst_case_event(dptune::TunerContext& context,
                                                  bool distributed) const override {
    if (!distributed) return std::nullopt;
    const Setup s = setup(context);
    std::string graph_note;
    const SecureVoteOptions options = secagg_options(s.colluders, graph_note);
    // The threshold the server will use (vote_over_ranks: make_config of the same options).  A
    // default t depends on the graph's smallest degree, which the public seed does not change: the
    // seed only places the clients on the ring (every placement gives the same circulant graph,
    // relabelled).
    const std::uint32_t threshold =
        secagg::make_config(static_cast<std::uint32_t>(n()),
                            static_cast<std::uint32_t>(s.candidates.size()), options.threshold,
                            options.degree, 0, {})
            .threshold;
    const std::size_t fewest = std::max<std::size_t>(threshold, s.colluders + 1);
    return event_for_sigma(honest_sigma(s.noise.stddev, fewest, s.colluders), k(), s.shares,
                           s.clients_changed);
  }

 private:
  std::size_t k() const { return static_cast<std::size_t>(p_.get_int("k")); }
  std::size_t n() const { return static_cast<std::size_t>(p_.get_int("clients")); }

  // "sqrt(2k)", or "2 sqrt(2k)" when one record can change two clients' data.
  static std::string sensitivity_formula(std::size_t clients_changed) {
    return clients_changed == 1 ? "sqrt(2k)" : std::to_string(clients_changed) + " sqrt(2k)";
  }

  secagg::ParallelFor pool(dptune::TunerContext& context) const {
    return [&context](std::size_t count, const std::function<void(std::size_t)>& body) {
      context.parallel_for(count, body);
    };
  }

  // σ for (ε, δ, k) and how it was obtained.
  std::pair<double, std::string> sigma_for(dptune::TunerContext& context, double epsilon,
                                           std::size_t kk, const ShareNoise& shares,
                                           std::size_t clients_changed) const {
    if (p_.get_string("calibration") == "analytic_gaussian") {
      const double sigma = analytic_gaussian_sigma(epsilon, context.delta(), kk, clients_changed);
      return {sigma,
              "analytic Gaussian calibration (Balle & Wang 2018, Thm 8; TIGHTER than the "
              "paper's RDP calibration)"};
    }
    const auto cal = calibrate_sigma(context.accountant(), epsilon, context.delta(), kk, shares,
                                     clients_changed);
    return {cal.noise,
            "calibrated with the accountant (" + cal.guarantee.accountant + ") on " +
                (shares.discrete() ? "discrete_gaussian_sum" : "Gaussian") + "(sigma / " +
                (clients_changed == 1 ? sensitivity_formula(clients_changed)
                                      : "(" + sensitivity_formula(clients_changed) + ")") +
                "), " + std::to_string(cal.evaluations) + " accountant calls"};
  }

  // Algorithm 1 lines 2-8 for every client in this process: each evaluates every candidate on its
  // own shard (non-private, never leaves the client) and votes for its k best.
  std::vector<std::vector<double>> local_votes(dptune::TunerContext& context,
                                               const std::vector<Params>& candidates) const {
    const std::size_t clients = n(), kk = k(), p = candidates.size();
    std::vector<std::vector<double>> votes(clients);
    context.progress().start("dp_hype: local evaluation", clients * p);
    const std::size_t chunk = std::max<std::size_t>(1, 256 / p);
    for (std::size_t first = 0; first < clients; first += chunk) {
      const std::size_t last = std::min(clients, first + chunk);
      std::vector<dptune::EvaluationRequest> requests;
      for (std::size_t j = first; j < last; ++j)
        for (const auto& c : candidates) {
          dptune::EvaluationRequest r;
          r.candidate = c;
          r.scope = dptune::DataScope::client(j, clients);
          r.private_run = false;
          requests.push_back(std::move(r));
        }
      const auto evaluations = context.evaluator().evaluate(requests);
      for (std::size_t j = first; j < last; ++j) {
        std::vector<double> scores(p);
        for (std::size_t c = 0; c < p; ++c)
          scores[c] = evaluations[(j - first) * p + c].utility_mean;
        auto ties = ChaChaGenerator::derive(context.rng(), "client tie-break");
        votes[j] = top_k_votes(scores, kk, ties);
      }
      context.progress().advance(last * p, std::nullopt);
    }

    return votes;
  }

  // The secure aggregation graph and threshold (SecAgg+ analysis or the complete graph), with the
  // note that describes them.
  SecureVoteOptions secagg_options(std::size_t colluders, std::string& graph_note) const {
    const std::size_t clients = n();
    const double xi = p_.get_double("xi");
    SecureVoteOptions options;
    options.threshold = static_cast<std::uint32_t>(p_.get_int("threshold"));
    options.degree = static_cast<std::uint32_t>(p_.get_int("neighbours"));
    if (p_.get_string("secagg") == "complete") {
      options.degree = 0;
      // Bonawitz et al. 2017: t above the colluders (and a majority), so the server and its
      // colluders can never unmask one honest client.
      if (options.threshold == 0)
        options.threshold =
            static_cast<std::uint32_t>(std::max(colluders + 1, (clients - 1) / 2 + 1));
      graph_note =
          "complete graph (Bonawitz et al. 2017), every pair of clients, Shamir "
          "threshold t = " +
          std::to_string(options.threshold);
    } else if (options.degree == 0) {
      // Sized for the larger of the assumed rate, the tolerated ξ and the simulated dropouts: with
      // more dropouts than the graph was sized for the protocol may abort (cleanly).
      const double dropout_rate =
          std::max({p_.get_double("secagg_dropout_rate"), xi,
                    static_cast<double>(p_.get_int("dropouts")) / static_cast<double>(clients)});
      const auto g = secagg::secagg_plus_parameters(
          static_cast<std::uint32_t>(clients), p_.get_double("secagg_corrupt_rate"), dropout_rate);
      options.degree = g.complete ? 0 : g.degree;
      if (options.threshold == 0) options.threshold = g.threshold;
      graph_note = g.describe();
      if (options.threshold != g.threshold)
        graph_note += "; WARNING: threshold overridden to " + std::to_string(options.threshold) +
                      ", the bounds above are for t = " + std::to_string(g.threshold);
    } else {
      graph_note = "SecAgg+ circulant graph of hand-set degree " + std::to_string(options.degree) +
                   " (no failure bound computed)";
    }
    return options;
  }

  // Rank 0's side of the vote when the clients are on the other ranks (peer_vote.hpp): public
  // parameters out, the server's side of secure aggregation, the sum back.
  SecureVoteResult vote_over_ranks(dptune::TunerContext& context, dptune::PeerChannel& peers,
                                   const SecureVoteOptions& options, const ClientNoise& noise,
                                   std::size_t p) const {
    peer::Plan plan;
    plan.run = context.rng().next_u64();
    plan.clients = static_cast<std::uint32_t>(n());
    plan.length = static_cast<std::uint32_t>(p);
    plan.k = static_cast<std::uint32_t>(k());
    for (std::size_t i = 0; i < 2; ++i) {
      const std::uint64_t w = context.rng().next_u64();
      std::memcpy(plan.session.data() + 8 * i, &w, 8);
    }
    plan.graph_seed = context.rng().next_u64();
    const auto config = secagg::make_config(plan.clients, plan.length, options.threshold,
                                            options.degree, plan.graph_seed, plan.session);
    plan.threshold = config.threshold;
    plan.degree = options.degree;
    plan.noise = noise;
    plan.round_timeout = p_.get_double("round_timeout");
    plan.stop_before.assign(plan.clients, 4);
    for (std::size_t j = 0; j < options.drop_before.size(); ++j)
      plan.stop_before[j] = static_cast<std::uint8_t>(options.drop_before[j]);
    // A whole rank that stops answering after sharing its keys (a deterministic dropout).
    const auto stop_rank = static_cast<int>(p_.get_int("stop_rank"));
    if (stop_rank > 0)
      for (std::uint32_t j = 0; j < plan.clients; ++j)
        if (peer::rank_of(j, peers.size()) == stop_rank) plan.stop_before[j] = 2;
    context.progress().message("dp_hype: " + std::to_string(n()) + " clients on " +
                               std::to_string(peers.size() - 1) + " MPI ranks");
    return peer::server_vote(peers, plan);
  }

  // A client rank's part (peer_vote.hpp): its clients' local evaluation, votes and noise, then
  // the protocol.
  void serve_peer(dptune::TunerContext& context) override {
    dptune::PeerChannel* peers = context.peers();
    if (!peers) throw dptune::Error("dp_hype: serve_peer without peers");
    const auto candidates =
        context.space().grid(static_cast<std::size_t>(p_.get_int("points_per_dimension")));
    peer::serve_clients(
        *peers, context.rng(),
        [&](std::uint32_t client, const peer::Plan& plan, ChaChaGenerator& own) {
          dptune::require(plan.length == candidates.size(),
                          "dp_hype: rank 0 has " + std::to_string(plan.length) +
                              " candidates, this rank " + std::to_string(candidates.size()));
          auto mechanism =
              context.mechanism(Params{{"noise_multiplier", plan.noise.noise_multiplier}});
          check_gaussian(*mechanism, plan.noise.noise_multiplier);
          std::vector<dptune::EvaluationRequest> requests;
          for (const auto& c : candidates) {
            dptune::EvaluationRequest r;
            r.candidate = c;
            r.scope = dptune::DataScope::client(client, plan.clients);
            r.private_run = false;
            requests.push_back(std::move(r));
          }
          const auto evaluations = context.evaluator().evaluate(requests);
          std::vector<double> scores(candidates.size());
          for (std::size_t c = 0; c < scores.size(); ++c) scores[c] = evaluations[c].utility_mean;
          auto ties = ChaChaGenerator::derive(own, "tie-break");
          auto noise_rng = ChaChaGenerator::derive(own, "noise");
          peer::PreparedClient prepared;
          prepared.votes = top_k_votes(scores, plan.k, ties);
          prepared.input =
              client_input(prepared.votes, *mechanism, plan.noise, plan.clients, noise_rng);
          return prepared;
        });
  }

  // Over MPI ranks a client rank evaluates its own clients' shards only (train and validation
  // parts), and rank 0 nothing but the non-private baselines on the whole data: so each rank holds
  // only its own clients' rows, and the server none (Liebenow et al. 2025 §I-A: a client's data
  // never leaves it).
  std::optional<std::vector<dptune::DataScope>> rank_scopes(int rank, int ranks) const override {
    if (ranks < 2) return std::nullopt;  // one process: its clients are objects here
    std::vector<dptune::DataScope> scopes;
    if (rank == 0) {
      if (p_.get_bool("baselines")) scopes.push_back(dptune::DataScope::whole());
      return scopes;
    }
    for (std::uint32_t j = 0; j < n(); ++j)
      if (peer::rank_of(j, ranks) == rank) scopes.push_back(dptune::DataScope::client(j, n()));
    return scopes;
  }

  // What a federated run fixes before any client data is touched: the candidates, σ and how it
  // was obtained, the colluders the threat model counts, each client's noise and the mechanism.
  struct Setup {
    std::vector<Params> candidates;
    double sigma = 0;
    std::string how;  // how σ was obtained
    std::size_t colluders = 0;
    ClientNoise noise;
    std::shared_ptr<const dptune::Mechanism> mechanism;
    ShareNoise shares;  // exact discrete Gaussian shares (the mechanism's noise: secure) or not
    // How many clients' data one record's replacement can change: 2 for Dirichlet shards by label
    // (the record may move between clients), 1 for iid shards.  The vote's L2 sensitivity is this
    // many times √(2k) (group privacy), so the guarantee holds for one record, not only one client.
    std::size_t clients_changed = 1;
  };

  Setup setup(dptune::TunerContext& context) const {
    Setup s;
    s.candidates =
        context.space().grid(static_cast<std::size_t>(p_.get_int("points_per_dimension")));
    const std::size_t clients = n(), kk = k(), p = s.candidates.size();
    if (kk > p)
      throw dptune::ConfigError("dp_hype: k = " + std::to_string(kk) + " exceeds the " +
                                std::to_string(p) + " candidates of the search space grid");
    s.shares = share_noise(context, kk, p);
    s.clients_changed = context.scopes_changed_by_one_record(dptune::DataScope::client(0, clients));
    if (s.clients_changed < 1 || s.clients_changed > 2)
      throw dptune::Error("dp_hype: the host says one record changes " +
                          std::to_string(s.clients_changed) +
                          " clients' data; this tuner prices 1 or 2");
    std::tie(s.sigma, s.how) =
        sigma_for(context, p_.get_double("epsilon"), kk, s.shares, s.clients_changed);
    const double collusion = p_.get_double("secagg_corrupt_rate");
    s.colluders = colluding_clients(clients, collusion);
    s.noise = client_noise(s.sigma, kk, clients, p_.get_double("xi"), collusion, s.clients_changed);
    s.mechanism = context.mechanism(Params{{"noise_multiplier", s.noise.noise_multiplier}});
    check_gaussian(*s.mechanism, s.noise.noise_multiplier);
    check_share_scale(*s.mechanism, s.shares);
    return s;
  }

  // The simulated dropouts: `dropouts` clients, chosen at random, miss the masked-input round.
  void choose_dropouts(dptune::TunerContext& context, SecureVoteOptions& options) const {
    const auto dropouts = static_cast<std::size_t>(p_.get_int("dropouts"));
    if (!dropouts) return;
    const std::size_t clients = n();
    std::vector<std::size_t> order(clients);
    for (std::size_t i = 0; i < clients; ++i) order[i] = i;
    dptune::shuffle(context.rng(), order);
    options.drop_before.assign(clients, 4);
    for (std::size_t i = 0; i < dropouts; ++i) options.drop_before[order[i]] = 2;
  }

  // Algorithm 1 lines 2-11: local votes and their secure aggregation.  Over the ranks of a
  // distributed run the clients live on the other ranks (peer_vote.hpp); in one process they are
  // objects here.  The protocol code is the same.
  SecureVoteResult aggregate(dptune::TunerContext& context, const Setup& s,
                             std::string& graph_note) const {
    dptune::PeerChannel* peers = context.peers();
    const bool over_ranks = peers && peers->size() >= 2;
    std::vector<std::vector<double>> votes;
    if (!over_ranks) votes = local_votes(context, s.candidates);
    SecureVoteOptions options = secagg_options(s.colluders, graph_note);
    choose_dropouts(context, options);
    context.progress().message("dp_hype: secure aggregation of " + std::to_string(n()) +
                               " noisy vote vectors");
    if (over_ranks) return vote_over_ranks(context, *peers, options, s.noise, s.candidates.size());
    return secure_vote(votes, *s.mechanism, s.noise, options, context.rng(), pool(context));
  }

  // What the accountant proves for the noise the adversary cannot subtract: the honest survivors'
  // shares (Liebenow et al. 2025, Lemma III.1 and Theorem III.1).
  dptune::PrivacyGuarantee guarantee(dptune::TunerContext& context, const Setup& s,
                                     std::size_t survivors, double sigma_h) const {
    const std::size_t kk = k(), colluders = s.colluders;
    const ClientNoise& noise = s.noise;
    if (!(sigma_h > 0))
      throw dptune::PrivacyError(
          "dp_hype: only " + std::to_string(survivors) + " clients survived and up to " +
          std::to_string(colluders) +
          " of them may collude with the server: no honest noise protects the votes, nothing is "
          "released");
    dptune::PrivacyGuarantee g = context.accountant().epsilon(
        event_for_sigma(sigma_h, kk, s.shares, s.clients_changed), context.delta());
    const std::string relation =
        s.clients_changed == 1
            ? std::string(" (Lemma III.1; one record changes one client's data: iid shards)")
            : " (Lemma III.1 for each of the " + std::to_string(s.clients_changed) +
                  " clients whose data one record can change: Dirichlet shards by label move the "
                  "record between two clients, group privacy by the triangle inequality)";
    g.derivation =
        "DP-Hype (Liebenow et al. 2025): the server sees the sum of " + std::to_string(survivors) +
        " noisy vote vectors = Gaussian mechanism, L2 sensitivity " +
        sensitivity_formula(s.clients_changed) + " = " + fmt(noise.sensitivity) + relation +
        "; only the noise of the " + std::to_string(survivors - colluders) +
        " survivors outside the " + std::to_string(colluders) +
        " clients that may collude with the server is counted: noise stddev " + fmt(sigma_h) +
        " (noise multiplier " + fmt(sigma_h / noise.sensitivity) + "), RDP alpha " +
        (s.clients_changed == 1 ? std::string("k") : "4k") + " / sigma^2 (Thm III.1" +
        (s.clients_changed == 1 ? "" : " with the sensitivity doubled") + "); " + g.derivation;
    return g;
  }

  dptune::TuningResult federated(dptune::TunerContext& context) {
    const Setup s = setup(context);
    // Before any client evaluates: the host's preflight (validate, and run before the ledger is
    // charged) collects this message as a warning; it depends on the configuration alone.
    const std::string noise_warning = vote_noise_warning(s.sigma);
    if (!noise_warning.empty()) context.progress().message(noise_warning);
    std::string graph_note;
    const SecureVoteResult aggregated = aggregate(context, s, graph_note);
    const std::size_t survivors = aggregated.survivors.size();
    const std::size_t chosen = argmax(aggregated.noisy_votes);
    const double sigma_h = honest_sigma(s.noise.stddev, survivors, s.colluders);
    const dptune::PrivacyGuarantee g = guarantee(context, s, survivors, sigma_h);

    dptune::TuningResult result;
    dptune::Trial selected;
    selected.id = chosen;
    selected.params = s.candidates[chosen];
    selected.privacy = g;
    // The DP release is the candidate alone: no utility of it was computed privately.
    selected.utility_mean = selected.utility_min = selected.utility_max =
        std::numeric_limits<double>::quiet_NaN();
    selected.repetitions = 0;
    result.guarantee = g;
    // The event guarantee() priced: the server's view of the honest survivors' noisy votes.
    result.event = event_for_sigma(sigma_h, k(), s.shares, s.clients_changed);
    result.notes = setup_notes(context, s, survivors, sigma_h);
    if (!noise_warning.empty()) result.notes.push_back(noise_warning);
    auto released = release_notes(s, aggregated, chosen, sigma_h, graph_note);
    result.notes.insert(result.notes.end(), released.begin(), released.end());
    if (p_.get_bool("baselines")) {
      result.trials = baseline_trials(context, s.candidates);
      result.trials_sensitive = true;
      result.notes.push_back(
          "baselines: true: every candidate was also trained and scored on the whole training "
          "data WITHOUT differential privacy (Liebenow et al. 2025's Opt is their best, "
          "RandGuess their mean utility); these are non-private baselines (not covered by the "
          "guarantee), written only as trials marked sensitive (trials.SENSITIVE.csv with "
          "output.sensitive_trials: true)");
      result.notes.push_back(std::string(dptune::kDpOutputNote) +
                             "the selected candidate's row in trials.SENSITIVE.csv has id " +
                             std::to_string(chosen));
    }
    result.selected = selected;
    return result;
  }

  // "WARNING: ..." when the vote noise swamps the votes, else "".  The noisy count of candidate a
  // minus that of b is their vote difference m plus N(0, 2 sigma^2) (the noise is independent per
  // entry), so b is ranked above a with probability Phi(-m / (sigma sqrt 2)) even when m clients
  // more vote for a.  At m = n/2 (half of all clients) this is computed from the configuration
  // alone (sigma depends on epsilon, delta, k and the clients one record changes, not on the
  // data); above 5 % the release is mostly noise (Liebenow et al. 2025, Theorem IV.1 makes the
  // same point for the realised gap).
  std::string vote_noise_warning(double sigma) const {
    constexpr double kTolerated = 0.05;
    constexpr double kZ95 = 1.6448536269514722;  // Phi^-1(0.95)
    const double clients = static_cast<double>(n()), margin = clients / 2;
    const double swapped = 0.5 * std::erfc(margin / (sigma * std::sqrt(2.0)) / std::sqrt(2.0));
    if (swapped < kTolerated) return {};
    const double clients_needed = std::ceil(2 * kZ95 * sigma * std::sqrt(2.0));
    return "WARNING: the vote noise swamps the votes: noise stddev sigma = " + fmt(sigma, 4) +
           " on each candidate's count of " + std::to_string(n()) +
           " clients' votes, so a candidate that half the clients (" + fmt(margin, 4) +
           ") more vote for than another is still ranked below it with probability " +
           fmt(swapped, 2) + "; raise epsilon, or use at least " + fmt(clients_needed, 6) +
           " clients for that probability to fall below " + fmt(kTolerated, 2);
  }

  // The configuration's notes: parameters, threat model, per-client noise, and a warning when
  // more clients dropped than the calibration tolerated.
  std::vector<std::string> setup_notes(dptune::TunerContext& context, const Setup& s,
                                       std::size_t survivors, double sigma_h) const {
    const std::size_t clients = n();
    const double xi = p_.get_double("xi"), collusion = p_.get_double("secagg_corrupt_rate");
    const ClientNoise& noise = s.noise;
    std::vector<std::string> notes;
    notes.push_back("DP-Hype: " + std::to_string(clients) + " clients, " +
                    std::to_string(s.candidates.size()) +
                    " candidates, k = " + std::to_string(k()) + ", target epsilon " +
                    fmt(p_.get_double("epsilon")) + " at delta " + fmt(context.delta()) +
                    "; sigma = " + fmt(s.sigma) + " (" + s.how + ")");
    notes.push_back(
        "threat model: honest-but-curious server colluding with up to floor(gamma n) = " +
        std::to_string(s.colluders) + " clients (gamma = secagg_corrupt_rate = " + fmt(collusion) +
        "; they know their own noise and can subtract it) and up to floor(xi n) = " +
        std::to_string(tolerated_dropouts(clients, xi)) + " dropouts (xi = " + fmt(xi) +
        "); only honest survivors' noise is counted: at least h = n - floor(gamma n) - "
        "floor(xi n) = " +
        std::to_string(noise.honest_shares) + " shares");
    notes.push_back("per-client noise: N(0, sigma^2 / h) per entry, stddev " + fmt(noise.stddev) +
                    ", through mechanism with sensitivity " + fmt(noise.sensitivity) +
                    " and noise_multiplier " + fmt(noise.noise_multiplier) +
                    " (any h honest shares sum to variance sigma^2)");
    if (sigma_h + 1e-12 < s.sigma)
      notes.push_back("WARNING: " + std::to_string(clients - survivors) +
                      " clients dropped, more than floor(xi n) = " +
                      std::to_string(tolerated_dropouts(clients, xi)) +
                      ": the honest noise stddev is only " + fmt(sigma_h) +
                      " and the guarantee above is correspondingly weaker than the target");
    return notes;
  }

  // The released notes: the noisy votes and the selection (DP outputs), the Theorem IV.1 bound,
  // the secure aggregation and the noise's exactness.
  std::vector<std::string> release_notes(const Setup& s, const SecureVoteResult& aggregated,
                                         std::size_t chosen, double sigma_h,
                                         const std::string& graph_note) const {
    const std::size_t p = s.candidates.size(), survivors = aggregated.survivors.size();
    std::vector<std::string> notes;
    // The Gaussian mechanism's output and its post-processing are the DP outputs: declared with
    // kDpOutputNote so the host reports them with the release (and the neighbouring test allows
    // them to differ).
    std::string v = std::string(dptune::kDpOutputNote) +
                    "noisy vote vector (what the server learns; candidate order = search space "
                    "grid): [";
    for (std::size_t j = 0; j < p; ++j) v += (j ? ", " : "") + fmt(aggregated.noisy_votes[j], 5);
    notes.push_back(v + "]");
    notes.push_back(std::string(dptune::kDpOutputNote) + "selected candidate " +
                    std::to_string(chosen) + " " + s.candidates[chosen].to_string() + " with " +
                    fmt(aggregated.noisy_votes[chosen], 5) + " noisy votes");
    notes.push_back(theorem_iv1_note(p, sigma_h));
    notes.push_back(
        "secure aggregation (Bonawitz et al. 2017, pairwise X25519/ChaCha20 masks, double "
        "masking, Shamir threshold over GF(2^61-1)): " +
        std::to_string(survivors) + " of " + std::to_string(n()) + " clients in the sum, " +
        graph_note + ", " + std::to_string(aggregated.bytes) +
        " bytes exchanged; fixed point with " + std::to_string(secagg::kFractionBits) +
        " fractional bits mod 2^64 (votes and noise encoded separately: the rounding, "
        "|decoded - real sum| <= " +
        fmt(aggregated.rounding_bound, 3) + " per entry, depends on the noise alone)");
    notes.push_back(
        aggregated.exact_noise
            ? "noise: every client's share is exact discrete Gaussian noise on a power-of-two grid "
              "(gaussian mechanism, noise: secure), summed exactly; the sum of discrete "
              "Gaussians is not a discrete Gaussian: the event states it as "
              "discrete_gaussian_sum (scale, shares, candidates), priced by its Renyi bound "
              "(Kairouz, Liu & Steinke 2021, Prop. 14: the continuous curve plus tau d, tau = "
              "10 sum_{k<n} exp(-2 pi^2 s^2 k/(k+1)), s the share's scale in grid units; "
              "docs/noise.md)"
            : "INSECURE NOISE: the clients' noise shares are not on the fixed-point grid "
              "(floating-point noise, e.g. mechanism noise: fast); their low-order bits can "
              "reveal information (Mironov 2012) and the sum is not an exact Gaussian");
    notes.push_back("per-client rankings and votes are not released");
    return notes;
  }

  // Theorem IV.1 at the configured gaps (never the realised, data-dependent gap).
  std::string theorem_iv1_note(std::size_t p, double sigma_h) const {
    const double clients = static_cast<double>(n());
    std::vector<double> gaps;
    if (p_.get_double("gap") > 0)
      gaps = {p_.get_double("gap")};
    else
      gaps = {clients / 10, clients / 4, clients / 2};
    std::string bound =
        "Theorem IV.1: Pr[a good candidate is picked | gap gamma] >= 1 - |H_bad| sigma "
        "/ (gamma sqrt(pi)) exp(-gamma^2 / (4 sigma^2)), with |H_bad| <= " +
        std::to_string(p - 1) + ", sigma = " + fmt(sigma_h) + ":";
    for (double gamma : gaps)
      bound += " gamma = " + fmt(gamma) + " -> " +
               fmt(success_lower_bound(p - 1, sigma_h, gamma), 4) + ";";
    return bound;
  }

  // Liebenow et al. 2025 §V-B's non-private baselines: every candidate on the whole training data.
  // Each trial carries the evaluator's "no guarantee" (ε = ∞, δ = 1), so the host never prints an ε
  // beside it, and the label below; the caller marks them sensitive.
  std::vector<dptune::Trial> baseline_trials(dptune::TunerContext& context,
                                             const std::vector<Params>& candidates) const {
    context.progress().message("dp_hype: non-private baselines on the whole data");
    std::vector<dptune::EvaluationRequest> requests;
    for (const auto& c : candidates) {
      dptune::EvaluationRequest r;
      r.candidate = c;
      r.private_run = false;
      requests.push_back(std::move(r));
    }
    const auto evaluations = context.evaluator().evaluate(requests);
    std::vector<dptune::Trial> trials;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      dptune::Trial t;
      t.id = c;
      t.params = candidates[c];
      t.privacy.epsilon = std::numeric_limits<double>::infinity();
      t.privacy.delta = 1;
      t.privacy.accountant = "none";
      t.privacy.derivation = kBaselineLabel;
      t.utility_mean = evaluations[c].utility_mean;
      t.utility_min = evaluations[c].utility_min;
      t.utility_max = evaluations[c].utility_max;
      t.repetitions = evaluations[c].request.repetitions;
      t.seconds = evaluations[c].seconds;
      trials.push_back(std::move(t));
    }
    return trials;
  }

  // The vote's noise event follows the clients' mechanism.  Exact discrete Gaussian shares (the
  // `gaussian` mechanism's noise: secure, which states its scale: discrete_gaussian_on_grid) sum
  // to a distributed discrete Gaussian, stated as discrete_gaussian_sum with that scale, the
  // clients as the count and the candidates as the dimension (docs/noise.md).  A discrete
  // mechanism that states no scale is refused: the sum's bound needs one.
  ShareNoise share_noise(dptune::TunerContext& context, std::size_t kk, std::size_t p) const {
    const auto mechanism = context.mechanism(Params{{"noise_multiplier", 1.0}});
    check_gaussian(*mechanism, 1.0);
    const dptune::DpEvent stated = mechanism->event();
    ShareNoise shares;
    if (stated.kind() == dptune::DpEvent::Kind::DiscreteGaussian)
      throw dptune::ConfigError(
          "dp_hype: the mechanism states discrete Gaussian noise without its scale "
          "(discrete_gaussian); the sum of the clients' shares is priced by Kairouz, Liu & "
          "Steinke 2021, Proposition 14, which needs the shares' scale in lattice units: use a "
          "mechanism that states discrete_gaussian_on_grid (the gaussian mechanism's noise: "
          "secure)");
    if (stated.kind() == dptune::DpEvent::Kind::DiscreteGaussianOnGrid) {
      shares.min_scale = stated.min_scale();
      shares.summands = n();
      shares.dimension = p;
    }
    const std::string why =
        context.accountant().unsupported_reason(event_for_sigma(1.0, kk, shares));
    if (!why.empty())
      throw dptune::ConfigError(
          "dp_hype: the accountant cannot price the clients' noise (" +
          std::string(shares.discrete() ? "exact discrete Gaussian shares, mechanism noise: secure"
                                        : "Gaussian shares") +
          "): " + why +
          (shares.discrete()
               ? "; or use accountant best (which prices it with rdp), or the mechanism's "
                 "noise: fast, floating-point and labelled INSECURE NOISE"
               : ""));
    return shares;
  }

  // The mechanism the clients draw with must vouch for at least the scale the events state (τ
  // falls as the scale grows, so a larger one is covered).
  static void check_share_scale(const dptune::Mechanism& mechanism, const ShareNoise& shares) {
    if (!shares.discrete()) return;
    const dptune::DpEvent e = mechanism.event();
    if (e.kind() != dptune::DpEvent::Kind::DiscreteGaussianOnGrid ||
        !(e.min_scale() >= shares.min_scale))
      throw dptune::Error("dp_hype: the clients' mechanism states " + e.to_string() +
                          ", not discrete noise of scale at least " + fmt(shares.min_scale) +
                          " lattice units as the vote's event assumes");
  }

  static void check_gaussian(const dptune::Mechanism& mechanism, double noise_multiplier) {
    const dptune::DpEvent e = mechanism.event();  // one release, multiplier relative to Δ
    if ((e.kind() != dptune::DpEvent::Kind::Gaussian &&
         e.kind() != dptune::DpEvent::Kind::DiscreteGaussian &&
         e.kind() != dptune::DpEvent::Kind::DiscreteGaussianOnGrid) ||
        std::abs(e.noise_multiplier() - noise_multiplier) > 1e-9 * noise_multiplier)
      throw dptune::ConfigError(
          "dp_hype: the pipeline's mechanism must be a Gaussian mechanism (continuous or discrete) "
          "taking `noise_multiplier` "
          "(the clients' noise shares must sum to Gaussian noise, Liebenow et al. 2025 §I-A); its "
          "event for noise_multiplier " +
          fmt(noise_multiplier) + " is " + e.to_string());
  }

  Params p_;
};

}  // namespace
}  // namespace dptune::dp_hype

DPTUNE_PLUGIN(
    tuner, dp_hype, dptune::dp_hype::DpHype, "1.0.0",
    "DP-Hype: federated private top-k voting with secure aggregation (Liebenow et al. 2025)")
