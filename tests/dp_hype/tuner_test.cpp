// The dp_hype tuner plugin, loaded through the host's registry and driven by a fake TunerContext:
// what it asks the evaluator (non-private client-scoped runs), which noise it asks the mechanism
// for, what it releases, baselines, dropout accounting (Figure 2's simulation: tests/figures).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>

#include "build_paths.hpp"
#include "dp_hype/private_vote.hpp"
#include "dptune/testing.hpp"
#include "support.hpp"
#include "tuner_fixtures.hpp"

namespace {

// Ten candidates c = 0..9; 3 and 7 are good everywhere, the rest poor, with client-specific jitter.
double quality(std::int64_t c) { return c == 3 ? 0.9 : c == 7 ? 0.85 : 0.1 + 0.01 * c; }

/// What the evaluator is asked for, counted after a run (EvaluationRequest predicates).
bool is_private(const dptune::EvaluationRequest& r) { return r.private_run; }
bool on_a_client(const dptune::EvaluationRequest& r) {
  return r.scope.kind == dptune::DataScope::Kind::Client;
}
bool on_the_whole(const dptune::EvaluationRequest& r) {
  return r.scope.kind == dptune::DataScope::Kind::Whole;
}

/// The federation's data.  `replace_client0`: a neighbouring federation, client 0's data replaced
/// (its ranking reversed).  `whole_shift`: other whole-data utilities (the non-private baselines
/// must not reach a public field).
struct Federation {
  bool replace_client0 = false;
  double whole_shift = 0;

  double utility(const dptune::EvaluationRequest& r) const {
    const std::int64_t c = r.candidate.get_int("c");
    double u = quality(c);
    if (on_a_client(r))
      u += 0.02 * std::sin(static_cast<double>(r.scope.index * 7 + static_cast<std::size_t>(c)));
    if (on_a_client(r) && r.scope.index == 0 && replace_client0) u = 1 - u;
    if (on_the_whole(r)) u += whole_shift;
    return u;
  }
};

class LaplaceLike final : public dptune::Mechanism {
 public:
  std::vector<double> release(std::span<const double> v, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator&) const override {
    return {v.begin(), v.end()};
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::laplace(1); }
};

class FakeContext final : public dptune::testing::StubTunerContext {
 public:
  explicit FakeContext(std::uint64_t seed, bool gaussian = true)
      : StubTunerContext(dptune::testing::integer_choices("c", 10), seed), gaussian_(gaussian) {}
  dptune::Evaluator& evaluator() override { return evaluator_; }
  const dptune::Accountant& accountant() const override {
    return use_rdp_plugin ? static_cast<const dptune::Accountant&>(rdp_) : accountant_;
  }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    requested_noise_multiplier = overrides.get_double("noise_multiplier");
    if (!gaussian_) return std::make_shared<LaplaceLike>();
    if (scale_free)
      return std::make_shared<dp_hype_test::ScaleFreeDiscreteMechanism>(
          overrides.get_double("noise_multiplier"));
    if (secure)
      return std::make_shared<dp_hype_test::SecureGaussianMechanism>(
          overrides.get_double("noise_multiplier"));
    return std::make_shared<dptune_test::GaussianNoise>(requested_noise_multiplier);
  }
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    dp_hype_test::two_threads(n, body);
  }
  std::size_t scopes_changed_by_one_record(const dptune::DataScope& layout) const override {
    asked_layout = layout;
    return clients_changed;
  }
  Federation federation;
  std::size_t clients_changed = 1;  // 2: the pipeline's clients are Dirichlet shards by label
  mutable dptune::DataScope asked_layout;
  dptune::testing::ScriptedEvaluator evaluator_{
      [this](const dptune::EvaluationRequest& r, std::size_t) { return federation.utility(r); }};
  double requested_noise_multiplier = 0;
  bool use_rdp_plugin = false;  // the project's rdp accountant instead of the paper's formula
  bool secure = false;          // the gaussian mechanism's noise: secure (discrete shares)
  bool scale_free = false;      // a discrete mechanism that states no scale

 private:
  dp_hype_test::PaperAccountant accountant_;
  dp_hype_test::RealRdpAccountant rdp_;
  bool gaussian_;
};

struct Loaded : dptune_test::LoadedTuners {
  Loaded() : LoadedTuners("dp_hype", {dptune_test::build_paths::dp_hype_plugin}) {}
};

using dptune_test::has_note;

}  // namespace

TEST_CASE("dp_hype tuner: federated run releases the argmax, the guarantee and the vote vector") {
  Loaded plugin;
  FakeContext context(11);
  auto tuner = plugin.tuner({{"clients", std::int64_t{30}},
                             {"k", std::int64_t{2}},
                             {"epsilon", 1.0},
                             {"baselines", true}});
  const dptune::TuningResult r = tuner->tune(context);
  // Only non-private, client-scoped local evaluations, then the whole-data baselines (opt-in).
  CHECK(context.evaluator_.requests(is_private) == 0);
  CHECK(context.evaluator_.requests(on_a_client) == 30 * 10);
  CHECK(context.evaluator_.requests(on_the_whole) == 10);
  // σ for (1, 1e-5, k = 2) and per-client noise multiplier σ / (√(2k) √h): the default
  // secagg_corrupt_rate 0.05 lets ⌊1.5⌋ = 1 client collude, so h = 29 honest shares.
  dp_hype_test::PaperAccountant accountant;
  const double sigma = dptune::dp_hype::calibrate_sigma(accountant, 1.0, 1e-5, 2).noise;
  CHECK(context.requested_noise_multiplier ==
        doctest::Approx(sigma / (std::sqrt(4.0) * std::sqrt(29.0))));
  REQUIRE(r.selected.has_value());
  const auto c = r.selected->params.get_int("c");
  CHECK((c == 3 || c == 7));  // 30 votes each against 0: γ = 30 ≫ σ ≈ 9
  // The DP release is the candidate: no (non-private) utility next to its ε.
  CHECK(std::isnan(r.selected->utility_mean));
  CHECK(r.selected->privacy.epsilon == r.guarantee->epsilon);
  REQUIRE(r.guarantee.has_value());
  CHECK(r.guarantee->epsilon <= 1.0 + 1e-9);
  CHECK(r.guarantee->epsilon == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(r.guarantee->derivation.find("sqrt(2k)") != std::string::npos);
  CHECK(has_note(r, "noisy vote vector"));
  CHECK(has_note(r, "Theorem IV.1"));
  CHECK(has_note(r, "fractional bits"));
  CHECK(has_note(r,
                 "threat model: honest-but-curious server colluding with up to floor(gamma "
                 "n) = 1 clients"));
  // Baselines: one trial per candidate with its whole-data utility, marked sensitive (the host
  // writes them only to trials.SENSITIVE.csv on opt-in), non-private and labelled.
  CHECK(r.trials_sensitive);
  REQUIRE(r.trials.size() == 10);
  for (const auto& t : r.trials) {
    CAPTURE(t.id);
    CHECK(t.params.get_int("c") == static_cast<std::int64_t>(t.id));
    CHECK(t.utility_mean == doctest::Approx(quality(t.params.get_int("c"))));
    CHECK(std::isinf(t.privacy.epsilon));
    CHECK(t.privacy.delta == 1.0);
    CHECK(t.privacy.derivation == "non-private baseline (not covered by the guarantee)");
  }
  CHECK(has_note(r,
                 "non-private baselines (not covered by the guarantee), written only as "
                 "trials marked sensitive"));
  CHECK_FALSE(has_note(r, "Opt ="));
  CHECK_FALSE(has_note(r, "RandGuess ="));
}

TEST_CASE("dp_hype tuner: without baselines nothing per candidate or per client is released") {
  Loaded plugin;
  FakeContext context(21);
  auto tuner = plugin.tuner({{"clients", std::int64_t{12}}, {"k", std::int64_t{2}}});
  const auto r = tuner->tune(context);
  CHECK(r.trials.empty());
  CHECK_FALSE(r.trials_sensitive);
  CHECK(context.evaluator_.requests(on_the_whole) == 0);
  CHECK(r.series.empty());
}

TEST_CASE(
    "dp_hype tuner: dropouts within xi n keep the target, beyond it the guarantee is weaker") {
  Loaded plugin;
  {
    FakeContext context(12);
    auto tuner = plugin.tuner({{"clients", std::int64_t{20}},
                               {"k", std::int64_t{1}},
                               {"xi", 0.2},
                               {"dropouts", std::int64_t{4}}});
    const auto r = tuner->tune(context);
    // h = 20 − ⌊0.05 · 20⌋ − ⌊0.2 · 20⌋ = 15; 16 survive, at most 1 of them colludes: 15 honest.
    CHECK(r.guarantee->epsilon == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(has_note(r, "16 of 20 clients in the sum"));
    CHECK_FALSE(has_note(r, "clients dropped, more than"));
  }
  {
    FakeContext context(13);
    auto tuner = plugin.tuner({{"clients", std::int64_t{20}},
                               {"k", std::int64_t{1}},
                               {"xi", 0.0},
                               {"dropouts", std::int64_t{4}}});
    const auto r = tuner->tune(context);
    CHECK(r.guarantee->epsilon > 1.05);  // never under-report: σ_h = σ √(15/19)
    CHECK(has_note(r, "WARNING: 4 clients dropped"));
  }
}

TEST_CASE("dp_hype tuner: a warning when the vote noise swamps the votes, from the configuration") {
  Loaded plugin;
  for (const double epsilon : {1.0, 50.0}) {
    CAPTURE(epsilon);
    FakeContext context(14);
    auto tuner =
        plugin.tuner({{"clients", std::int64_t{20}}, {"k", std::int64_t{1}}, {"epsilon", epsilon}});
    const auto r = tuner->tune(context);
    // The note states sigma; the warning is given exactly when Phi(-(n/2) / (sigma sqrt 2)) >=
    // 0.05, i.e. sigma >= (n/2) / (1.6449 sqrt 2) = 4.2988 for n = 20.
    const std::string sigma_key = "sigma = ";
    double sigma = 0;
    for (const auto& n : r.notes)
      if (n.rfind("DP-Hype: ", 0) == 0) sigma = std::stod(n.substr(n.find(sigma_key) + 8));
    REQUIRE(sigma > 0);
    const bool swamped = sigma >= 10.0 / (1.6448536269514722 * std::sqrt(2.0));
    CHECK(swamped == (epsilon == 1.0));
    CHECK(has_note(r, "WARNING: the vote noise swamps the votes") == swamped);
    if (swamped) {
      const double p = 0.5 * std::erfc(10.0 / (2 * sigma));
      CHECK(has_note(r, "is still ranked below it with probability"));
      CHECK(p >= 0.05);
    }
  }
}

TEST_CASE("dp_hype tuner: SecAgg+ graph from Bell et al. by default, complete graph on request") {
  Loaded plugin;
  {
    FakeContext context(16);
    auto tuner = plugin.tuner({{"clients", std::int64_t{100}}, {"k", std::int64_t{1}}});
    const auto r = tuner->tune(context);
    // n = 100, 5% corrupt and 5% dropouts: degree 12, t = 6 (see the SecAgg+ parameter test).
    CHECK(has_note(r,
                   "SecAgg+ random Harary graph (Bell et al. 2020), degree 12, Shamir "
                   "threshold t = 6"));
    CHECK(has_note(r, "100 of 100 clients in the sum"));
  }
  {
    FakeContext context(17);
    auto tuner = plugin.tuner({{"clients", std::int64_t{100}},
                               {"k", std::int64_t{1}},
                               {"xi", 0.2},
                               {"dropouts", std::int64_t{20}}});
    const auto r = tuner->tune(context);
    // ξ = 0.2 > the default 5% dropout assumption: the graph is sized for 20 dropouts.
    CHECK(has_note(r, "<= 20 dropouts"));
    CHECK(has_note(r, "80 of 100 clients in the sum"));
  }
  {
    FakeContext context(18);
    auto tuner = plugin.tuner({{"clients", std::int64_t{20}},
                               {"k", std::int64_t{1}},
                               {"secagg", std::string("complete")}});
    const auto r = tuner->tune(context);
    CHECK(has_note(r, "complete graph (Bonawitz et al. 2017)"));
  }
}

TEST_CASE("dp_hype tuner: a non-Gaussian mechanism is refused with a clear error") {
  Loaded plugin;
  FakeContext context(14, /*gaussian=*/false);
  auto tuner = plugin.tuner({{"clients", std::int64_t{5}}, {"k", std::int64_t{1}}});
  CHECK_THROWS_WITH(tuner->tune(context), doctest::Contains("must be a Gaussian mechanism"));
}

TEST_CASE("dp_hype tuner: the printed epsilon is the closed form of the honest survivors' noise") {
  // Independently of the tuner's σ: the per-client standard deviation is the noise multiplier it
  // asked the mechanism for times √(2k); at most ⌊γn⌋ survivors collude, so the noise the server
  // cannot subtract has variance (survivors − ⌊γn⌋) · (m √(2k))², and Theorem III.1 + I.1 give
  // ε = min_α α k / v + log((α−1)/α) − (log δ + log α)/(α − 1).
  Loaded plugin;
  const std::size_t k = 2;
  struct Setting {
    std::int64_t clients;
    double gamma, xi;
    std::int64_t dropouts;
    std::size_t honest_survivors;
  };
  double previous_multiplier = 0;
  for (const Setting& s : {Setting{20, 0.0, 0.0, 0, 20}, Setting{20, 0.1, 0.0, 0, 18},
                           Setting{20, 0.2, 0.0, 0, 16}, Setting{40, 0.1, 0.1, 2, 34}}) {
    CAPTURE(s.clients);
    CAPTURE(s.gamma);
    FakeContext context(41);
    auto tuner = plugin.tuner({{"clients", s.clients},
                               {"k", static_cast<std::int64_t>(k)},
                               {"secagg_corrupt_rate", s.gamma},
                               {"xi", s.xi},
                               {"dropouts", s.dropouts}});
    const auto r = tuner->tune(context);
    const double share = context.requested_noise_multiplier * std::sqrt(2.0 * k);
    const double variance = static_cast<double>(s.honest_survivors) * share * share;
    REQUIRE(r.guarantee.has_value());
    CHECK(r.guarantee->epsilon ==
          doctest::Approx(dp_hype_test::closed_form_epsilon(k, variance, 1e-5)).epsilon(1e-4));
    if (s.dropouts == 0) {
      // No dropouts: the honest noise meets the target exactly, and more colluders cost more
      // noise per client (monotone in γ).
      CHECK(r.guarantee->epsilon == doctest::Approx(1.0).epsilon(1e-6));
      CHECK(context.requested_noise_multiplier > previous_multiplier);
      previous_multiplier = context.requested_noise_multiplier;
    } else {
      CHECK(r.guarantee->epsilon < 1.0);  // 2 of the 4 tolerated dropouts happened
    }
    if (s.gamma == 0.0) {
      // γ = 0, ξ = 0: per-client σ / (√(2k) √n) and ε = 1, as before the collusion fix.
      dp_hype_test::PaperAccountant accountant;
      const double sigma = dptune::dp_hype::calibrate_sigma(accountant, 1.0, 1e-5, k).noise;
      CHECK(context.requested_noise_multiplier ==
            doctest::Approx(sigma / (std::sqrt(2.0 * k) * std::sqrt(20.0))));
    }
  }
  // A threat model with no honest share left is a configuration error.
  CHECK_THROWS_AS(
      plugin.tuner({{"clients", std::int64_t{10}}, {"secagg_corrupt_rate", 0.5}, {"xi", 0.5}}),
      dptune::Error);
}

TEST_CASE(
    "dp_hype tuner: on Dirichlet shards one record changes two clients: sensitivity 2 sqrt(2k)") {
  // The host says one record's replacement can change two clients' data (a Dirichlet shard by
  // label may move the record between clients).  Both votes may move one vote between the same
  // two candidates, so the sum moves by 2 sqrt(2k) in L2: the printed epsilon must be the closed
  // form for that sensitivity, ALPHA (2 sqrt(2k))^2 / (2 v) = ALPHA 4k / v, i.e.
  // closed_form_epsilon with 4k, at the target; and the noise per client is exactly twice the iid
  // one.
  Loaded plugin;
  const std::size_t k = 2;
  const dptune::Params params{{"clients", std::int64_t{20}},
                              {"k", static_cast<std::int64_t>(k)},
                              {"secagg_corrupt_rate", 0.0}};
  FakeContext iid(41), dirichlet(41);
  dirichlet.clients_changed = 2;
  const auto r1 = plugin.tuner(params)->tune(iid);
  const auto r2 = plugin.tuner(params)->tune(dirichlet);
  CHECK(dirichlet.asked_layout.kind == dptune::DataScope::Kind::Client);
  CHECK(dirichlet.asked_layout.count == 20);
  // The mechanism is asked for its multiplier relative to the doubled sensitivity.
  const double share1 = iid.requested_noise_multiplier * std::sqrt(2.0 * k);
  const double share2 = dirichlet.requested_noise_multiplier * 2 * std::sqrt(2.0 * k);
  CHECK(share2 == doctest::Approx(2 * share1).epsilon(1e-6));
  REQUIRE(r2.guarantee.has_value());
  CHECK(r2.guarantee->epsilon == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(r2.guarantee->epsilon ==
        doctest::Approx(dp_hype_test::closed_form_epsilon(4 * k, 20 * share2 * share2, 1e-5))
            .epsilon(1e-4));
  // Priced as if one client changed, the same noise would claim far less than the truth.
  CHECK(dp_hype_test::closed_form_epsilon(k, 20 * share2 * share2, 1e-5) < 0.6);
  CHECK(r2.guarantee->derivation.find("L2 sensitivity 2 sqrt(2k) = 4 (") != std::string::npos);
  CHECK(r1.guarantee->derivation.find("L2 sensitivity sqrt(2k) = 2 (") != std::string::npos);
  // A host answer the tuner cannot price is refused, never read as one client.
  FakeContext odd(41);
  odd.clients_changed = 3;
  CHECK_THROWS_WITH(plugin.tuner(params)->tune(odd), doctest::Contains("prices 1 or 2"));
}

namespace {
// Everything of a TuningResult that the host makes public without the SENSITIVE opt-in, except the
// DP outputs (the noisy vote vector, the selected candidate and its noisy vote count).
std::vector<std::string> public_non_dp_fields(const dptune::TuningResult& r) {
  std::vector<std::string> out;
  for (const auto& n : r.notes)
    if (n.rfind(dptune::kDpOutputNote, 0) != 0) out.push_back("note: " + n);
  if (r.guarantee)
    out.push_back("guarantee: " + std::to_string(r.guarantee->epsilon) + " " +
                  std::to_string(r.guarantee->delta) + " " + r.guarantee->derivation);
  if (r.selected) {
    out.push_back("selected.utility: " + std::to_string(r.selected->utility_mean) + " " +
                  std::to_string(r.selected->utility_min) + " " +
                  std::to_string(r.selected->utility_max) + " " +
                  std::to_string(r.selected->repetitions));
    out.push_back("selected.epsilon: " + std::to_string(r.selected->privacy.epsilon));
  }
  out.push_back("trials_sensitive: " + std::to_string(r.trials_sensitive));
  out.push_back("trials_count: " + std::to_string(r.trials.size()));
  if (!r.trials_sensitive)
    for (const auto& t : r.trials) out.push_back("trial: " + std::to_string(t.utility_mean));
  out.push_back("series: " + std::to_string(r.series.size()));
  return out;
}
}  // namespace

TEST_CASE("dp_hype tuner: a neighbouring federation changes only the DP outputs") {
  // Same seed (same noise, tie-breaks, dropouts); client 0's data replaced and every whole-data
  // (baseline) utility moved.  Every public field but the noisy votes and the argmax must match.
  Loaded plugin;
  const dptune::Params params{
      {"clients", std::int64_t{16}}, {"k", std::int64_t{3}}, {"xi", 0.125},
      {"dropouts", std::int64_t{1}}, {"epsilon", 4.0},       {"baselines", true}};
  FakeContext d(51), neighbour(51);
  neighbour.federation.replace_client0 = true;
  neighbour.federation.whole_shift = 0.05;
  const auto r = plugin.tuner(params)->tune(d);
  const auto r2 = plugin.tuner(params)->tune(neighbour);
  const auto a = public_non_dp_fields(r), b = public_non_dp_fields(r2);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i]);
    CHECK(a[i] == b[i]);
  }
  // The neighbour did change the DP output (the vote vector), and the sensitive baselines.
  CHECK(r.notes != r2.notes);
  REQUIRE(r.trials.size() == 10);  // one per candidate
  REQUIRE(r2.trials.size() == 10);
  CHECK(r.trials[0].utility_mean != r2.trials[0].utility_mean);
}

TEST_CASE("dp_hype tuner: with the project's rdp accountant the honest-noise epsilon is printed") {
  // dp_hype_digits_iid's privacy setting (n = 50, k = 5, ε = 1, δ = 1e-5, γ = 0.05) on the fake
  // federation: ⌊2.5⌋ = 2 colluders, h = 48.  The printed ε is the rdp accountant's price of the
  // 48 honest shares (≤ 1, and the closed form up to the accountant's order grid); main printed
  // 1.000 for all 50 shares, whose honest part was worth ≈ 1.023.
  Loaded plugin;
  FakeContext context(61);
  context.use_rdp_plugin = true;
  auto tuner = plugin.tuner({{"clients", std::int64_t{50}}, {"k", std::int64_t{5}}});
  const auto r = tuner->tune(context);
  const double share = context.requested_noise_multiplier * std::sqrt(10.0);
  const double closed = dp_hype_test::closed_form_epsilon(5, 48 * share * share, 1e-5);
  REQUIRE(r.guarantee.has_value());
  CHECK(r.guarantee->accountant == "rdp");
  CHECK(r.guarantee->epsilon <= 1.0 + 1e-9);
  CHECK(r.guarantee->epsilon >= closed - 1e-9);
  CHECK(r.guarantee->epsilon == doctest::Approx(closed).epsilon(5e-3));
  CHECK(closed == doctest::Approx(1.0).epsilon(5e-3));
}

TEST_CASE("dp_hype tuner: exact discrete shares are stated as a sum of discrete Gaussians") {
  // The same setting with the secure gaussian mechanism (discrete_gaussian_on_grid(z, 2^22)): the
  // vote adds 50 clients' discrete shares, which is not a discrete Gaussian, so its event is
  // replace_one(discrete_gaussian_sum(σ_h/√(2k), 2^22, 50 clients, 10 candidates)), priced by rdp
  // with Kairouz, Liu & Steinke 2021's Proposition 14: α/(2σ²) + τd with τ below e^{-10^13}, zero
  // in double, so the same closed form (Theorem III.1).
  Loaded plugin;
  FakeContext context(61);
  context.use_rdp_plugin = true;
  context.secure = true;
  auto tuner = plugin.tuner({{"clients", std::int64_t{50}}, {"k", std::int64_t{5}}});
  const auto r = tuner->tune(context);
  const double share = context.requested_noise_multiplier * std::sqrt(10.0);
  const double closed = dp_hype_test::closed_form_epsilon(5, 48 * share * share, 1e-5);
  REQUIRE(r.guarantee.has_value());
  CHECK(r.guarantee->epsilon <= 1.0 + 1e-9);
  CHECK(r.guarantee->epsilon == doctest::Approx(closed).epsilon(5e-3));
  CHECK(r.guarantee->derivation.find("sum of discrete Gaussians") != std::string::npos);
  CHECK(has_note(r, "on discrete_gaussian_sum(sigma / sqrt(2k))"));
  CHECK(has_note(r, "every client's share is exact discrete Gaussian noise"));
  REQUIRE(r.event.has_value());
  REQUIRE(r.event->kind() == dptune::DpEvent::Kind::ReplaceOne);
  const dptune::DpEvent& sum = r.event->inner();
  REQUIRE(sum.kind() == dptune::DpEvent::Kind::DiscreteGaussianSum);
  CHECK(sum.min_scale() == dptune::kGaussianGridMinScale);
  CHECK(sum.summands() == 50);
  CHECK(sum.dimension() == 10);  // the 10 candidates of the search space
  CHECK(sum.noise_multiplier() == doctest::Approx(std::sqrt(48.0) * share / std::sqrt(10.0)));
}

TEST_CASE("dp_hype tuner: a discrete mechanism that states no scale is refused before voting") {
  // The sum's bound needs the shares' scale (Kairouz, Liu & Steinke 2021, Proposition 14).
  Loaded plugin;
  FakeContext context(61);
  context.use_rdp_plugin = true;
  context.scale_free = true;
  auto tuner = plugin.tuner({{"clients", std::int64_t{50}}, {"k", std::int64_t{5}}});
  CHECK_THROWS_WITH_AS(tuner->tune(context),
                       doctest::Contains("states discrete Gaussian noise without its scale"),
                       dptune::ConfigError);
  CHECK(context.evaluator_.requests(on_a_client) == 0);
}

TEST_CASE("dp_hype tuner: over MPI ranks its stated worst case is the threshold's honest noise") {
  // Over ranks a client lost to a round timeout is a dropout the dry run cannot see; the fewest
  // survivors of a released sum are max(t, c + 1) (secure aggregation aborts below t).  The worst
  // case stated before the run must be the guarantee of exactly that many survivors (closed form,
  // Theorem III.1 + I.1), and no run with more survivors may print more.
  Loaded plugin;
  const std::size_t k = 2;
  const std::int64_t clients = 10, threshold = 5;
  const dptune::Params params{{"clients", clients},
                              {"k", static_cast<std::int64_t>(k)},
                              {"secagg", std::string("complete")},
                              {"threshold", threshold},
                              {"secagg_corrupt_rate", 0.1}};  // c = 1 colluder
  FakeContext context(5);
  auto tuner = plugin.tuner(params);
  // In one process the only dropouts are the simulated ones, the dry run's too: nothing to state.
  CHECK_FALSE(tuner->worst_case_event(context, false).has_value());
  const auto worst = tuner->worst_case_event(context, true);
  REQUIRE(worst.has_value());
  const double share = context.requested_noise_multiplier * std::sqrt(2.0 * k);
  dp_hype_test::PaperAccountant accountant;
  const double worst_epsilon = accountant.epsilon(*worst, 1e-5).epsilon;
  CHECK(worst_epsilon ==
        doctest::Approx(dp_hype_test::closed_form_epsilon(k, (threshold - 1) * share * share, 1e-5))
            .epsilon(1e-4));
  // Runs that lose 0 .. n - t + 1 clients (simulated dropouts, the same arithmetic as timeouts):
  // each one that releases prints at most the worst case.  A client's self-mask seed is shared
  // with its neighbours, not with itself, so with exactly t survivors each has only t - 1 holders
  // among them and the vote aborts: the worst case at t is sound and one survivor conservative.
  std::int64_t fewest_released = clients + 1;
  for (std::int64_t dropouts = 0; dropouts <= clients - threshold + 1; ++dropouts) {
    CAPTURE(dropouts);
    FakeContext run(7);
    dptune::Params with = params;
    with.set("dropouts", dropouts);
    std::optional<dptune::TuningResult> r;
    try {
      r = plugin.tuner(with)->tune(run);
    } catch (const dptune::Error& e) {
      CHECK(std::string(e.what()).find("secure aggregation aborted") != std::string::npos);
      continue;
    }
    REQUIRE(r->guarantee.has_value());
    CHECK(r->guarantee->epsilon < worst_epsilon);
    fewest_released = std::min(fewest_released, clients - dropouts);
  }
  CHECK(fewest_released == threshold + 1);
}
