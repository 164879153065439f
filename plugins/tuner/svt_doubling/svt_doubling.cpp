// SVT doubling (Ding et al., Algorithm 1, with Ding & Wu's `u >= 1` termination break):
// private selection whose overhead grows with the log of the utility gained, not with the number of
// candidates.
//
//  * Candidates: a public, fixed, ordered list drawn before any data is touched (the search-space
//    grid in its row-major order, or `trials` draws from the space with the tuner's generator).
//  * Subsample and aggregate (Alg. 1 lines 1-11): every candidate is trained on each of k disjoint
//    parts of the training split (DataScope::partition(i, k); privately or not) and scored on the
//    held-out split; u_s = mean over parts has sensitivity 1/k (Lemma 2).  All k |S| runs go to the
//    evaluator in one call, which spreads them over the executor.
//  * The doubling AboveThreshold loop (lines 12-34) in svt_doubling/core.hpp, capped at T_max.
//  * Privacy: each iteration is ϵ-DP (Theorem 3, part I), so the tuning costs at most T_max
//    pure-ϵ events whatever the data; the final private training of s* on the whole training split
//    is composed in by the pipeline's accountant.  The paper's ε + O(log n)ϵ is reported, labelled
//    nominal.
//  * Ding et al. §4.2 (Figures 3 and 4, simulated utilities) is `dptune-figures`'s, not this
//    plugin's (tools/figures).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "dptune/dptune.hpp"
#include "dptune/helpers/events.hpp"
#include "dptune/helpers/format.hpp"
#include "svt_doubling/core.hpp"

namespace dptune::svt_doubling {
namespace {

using dptune::DpEvent;
using dptune::Params;

std::string fmt(double x, int digits = 6) { return dptune::significant_digits(x, digits); }

// The c of Figure 4 (T ≈ c log n, "sandwiched between 1 and 5, approximately equal to 3"); Ding
// et al. state no constant in Theorems 2-3 and no base, so the figure built from it is nominal
// only. Base 2: Lemma 1's doubling is binary, and our simulation of the (nearly) noise-free loop
// gives T / log2 n ≈ 2.8 (T / ln n ≈ 4).
constexpr double kNominalMultiplier = 3;

class SvtDoubling final : public dptune::Tuner {
 public:
  explicit SvtDoubling(const Params& p) : p_(p) {
    if (!p.get_bool("protect_validation") && p.get_int("validation_rows") != 0)
      throw dptune::InvalidArgument(
          "svt_doubling: validation_rows is only used with protect_validation: true (and is no "
          "longer needed: the host reports the held-out split's size)");
    levels_to_one(p.get_double("u0"), p.get_double("g"));  // validates u0 and g
    if ((p.get_string("candidates") == "list") != !p.get_string("candidate_list").empty())
      throw dptune::InvalidArgument(
          "svt_doubling: candidate_list is used exactly when candidates: list (got candidates: " +
          p.get_string("candidates") + " and " +
          (p.get_string("candidate_list").empty() ? "no" : "a") + " candidate_list)");
  }

  // Private: its guarantee covers the final model, trained on the whole training split, and the
  // SVT rounds on disjoint partitions of it.
  static dptune::TunerTraits traits() {
    return {.outputs = dptune::TunerOutputs::Private,
            .releases_model = true,
            .scopes = {dptune::DataScope::Kind::Whole, dptune::DataScope::Kind::Partition}};
  }

  static dptune::ParamSchema schema() {
    using std::int64_t;
    return dptune::ParamSchema{}
        .add_string(
            "candidates",
            "the public, ordered candidate list: grid (the search space grid, row-major), "
            "random (`trials` draws with the tuner's generator, before any data) or list "
            "(`candidate_list`, in the order written); adaptive: each iteration's candidates "
            "proposed by a local search that sees only the released s* (Ding et al. §4.1)")
        .one_of({"grid", "random", "list", "adaptive"})
        .default_to(std::string("grid"))
        .add_string("candidate_list",
                    "candidates: list: 'name=value, name=value; name=value, ...' covering every "
                    "search space dimension, one candidate per ';'")
        .default_to(std::string(""))
        .add_int("points_per_dimension", "grid points per float dimension (candidates: grid)")
        .min(1)
        .default_to(int64_t{5})
        .add_int("adaptive_batch", "candidates: adaptive: candidates proposed per iteration")
        .min(1)
        .default_to(int64_t{5})
        .add_float("adaptive_radius",
                   "candidates: adaptive: initial perturbation sd in the unit cube (doubles "
                   "after a pass, halves after a fail)")
        .min_exclusive(0)
        .max(0.5)
        .default_to(0.25)
        .add_int("trials", "number of random candidates (candidates: random)")
        .min(1)
        .default_to(int64_t{50})
        .add_int("k",
                 "partitions of the training split (Ding et al. suggests k >= 5 / epsilon_svt; its "
                 "simulation needs k epsilon ~ 50 for fidelity ~ 0.93)")
        .min(1)
        .default_to(int64_t{10})
        .add_float("g", "utility granularity of the ladder (Ding et al. Alg. 1)")
        .min_exclusive(0)
        .max_exclusive(1)
        .default_to(0.01)
        .add_float("epsilon_svt", "pure-DP epsilon of ONE AboveThreshold iteration")
        .min_exclusive(0)
        .default_to(0.5)
        .add_string("noise",
                    "secure: the loop's comparisons on a power-of-two grid with exact discrete "
                    "Laplace noise; fast: floating-point Laplace (insecure, Mironov 2012; "
                    "labelled in every report)")
        .one_of({"secure", "fast"})
        .default_to(std::string("secure"))
        .add_float("u0", "initial utility level (utility lower bound)")
        .min(0)
        .max_exclusive(1)
        .default_to(0.0)
        .add_int("t_max",
                 "iteration cap T_max, composed in the guarantee (0: Lemma 1's noise-free worst "
                 "case plus ceil(log2 M) slack; never above the worst case 2M - 1)")
        .min(0)
        .default_to(int64_t{0})
        .add_bool("private_partitions",
                  "train the k |S| partition models privately (not needed: their cost is added "
                  "to the guarantee as a parallel composition)")
        .default_to(false)
        .add_bool("protect_validation",
                  "protect the held-out split too: sensitivity max(1/k, the utility's sensitivity "
                  "to one of the n_val scored rows, from the host), and the final model's "
                  "held-out utility is withheld; on by default: false is Ding et al.'s "
                  "setting, where the held-out split is public")
        .default_to(true)
        .add_int("validation_rows",
                 "optional check with protect_validation: must equal the scored split's rows "
                 "(the host reports them; 0 = do not check)")
        .min(0)
        .default_to(int64_t{0})
        .add_bool("per_trial_output",
                  "release every candidate's partition-mean utility as trials (sensitive: written "
                  "only with output.sensitive_trials)")
        .default_to(false);
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override { return select(context); }

 private:
  std::size_t k() const { return static_cast<std::size_t>(p_.get_int("k")); }
  double g() const { return p_.get_double("g"); }
  double u0() const { return p_.get_double("u0"); }
  double eps() const { return p_.get_double("epsilon_svt"); }

  bool adaptive() const { return p_.get_string("candidates") == "adaptive"; }

  std::vector<Params> candidates(dptune::TunerContext& context, std::string& how) const {
    std::vector<Params> out;
    if (p_.get_string("candidates") == "list") {
      out = parse_candidate_list(p_.get_string("candidate_list"), context.space());
      how = "the candidate_list given in the pipeline, in its order";
    } else if (p_.get_string("candidates") == "random") {
      const auto n = static_cast<std::size_t>(p_.get_int("trials"));
      for (std::size_t i = 0; i < n; ++i) out.push_back(context.space().sample(context.rng()));
      how = std::to_string(n) +
            " random draws from the search space (tuner generator, drawn "
            "before any data was read)";
    } else if (adaptive()) {
      // Ding et al. §4.1: no list; the grid only probes that the final training's cost does not
      // depend on the candidate (see select()).
      how = "adaptive (Ding et al. §4.1): each iteration's " +
            std::to_string(p_.get_int("adaptive_batch")) +
            " candidates proposed by a local search in the unit cube that sees only the released "
            "s* and pass/fail of earlier iterations";
      return {};
    } else {
      const auto points = static_cast<std::size_t>(p_.get_int("points_per_dimension"));
      out = context.space().grid(points);
      how = "the search space grid with " + std::to_string(points) +
            " points per dimension, row-major (last dimension fastest)";
    }
    if (out.empty()) throw dptune::ConfigError("svt_doubling: no candidates");
    return out;
  }

  dptune::TuningResult select(dptune::TunerContext& context) const {
    Selection run(*this, context);
    return run.execute();
  }

  // Events keyed by their text, so that equal events are priced once.
  /// One private selection (Ding et al., Algorithm 1): what is fixed before any data is read (the
  /// candidates, T_max, every event), the scoring, the loop, the final training and the report.
  class Selection {
   public:
    Selection(const SvtDoubling& tuner, dptune::TunerContext& context)
        : t_(tuner),
          context_(context),
          kk_(tuner.k()),
          epsilon_(tuner.eps()),
          private_parts_(tuner.p_.get_bool("private_partitions")),
          protect_(tuner.p_.get_bool("protect_validation")) {}

    dptune::TuningResult execute() {
      if (protect_) read_utility_sensitivity();
      cands_ = t_.candidates(context_, how_);  // grows in adaptive mode
      m_ = cands_.size();
      // In adaptive mode m grows with the loop's answers: only the initial count is public (the
      // final count is in the declared DP-output note).
      initial_candidates_ = m_;
      if (t_.adaptive() && private_parts_)
        throw dptune::ConfigError(
            "svt_doubling: candidates: adaptive with private_partitions: true is not supported "
            "(the number of candidates each part is trained for is not known in advance)");
      fix_t_max();
      scales_ = laplace_scales(kk_, epsilon_, protect_ ? *util_sens_.per_record : 0.0);
      build_events();
      if (!t_.adaptive()) score(0);
      run_loop();
      const dptune::Evaluation fin = final_training();
      const dptune::PrivacyGuarantee guarantee = compose_guarantee();
      dptune::TuningResult result = make_result(fin, guarantee);
      add_notes(result, fin, guarantee);
      return result;
    }

   private:
    /// Threat model with protect_validation: one record of the scored split moves every part's
    /// score, hence u_s, by the utility's per-record sensitivity (host: split size and utility).
    void read_utility_sensitivity() {
      sizes_ = context_.data_sizes();
      const auto given = static_cast<std::size_t>(t_.p_.get_int("validation_rows"));
      if (given != 0 && given != sizes_.scored)
        throw dptune::ConfigError(
            "svt_doubling: validation_rows = " + std::to_string(given) + " does not match the " +
            std::to_string(sizes_.scored) +
            " rows of the held-out split the candidates are scored on (the host reports it; "
            "remove validation_rows)");
      util_sens_ = context_.utility_sensitivity(sizes_.scored);
      if (!util_sens_.per_record)
        throw dptune::ConfigError(
            "svt_doubling: protect_validation needs the utility's sensitivity to one held-out "
            "record, unknown for utility '" +
            util_sens_.utility + "': " + util_sens_.derivation +
            " (use accuracy, or protect_validation: false)");
      if (!(*util_sens_.per_record > 0 && *util_sens_.per_record <= 1))
        throw dptune::PluginError("svt_doubling: the host gave utility sensitivity " +
                                  fmt(*util_sens_.per_record) + ", not in (0, 1]");
    }

    /// T_max, fixed before any data is touched.
    void fix_t_max() {
      worst_ = worst_case_iterations(t_.u0(), t_.g());
      t_max_ = static_cast<std::size_t>(t_.p_.get_int("t_max"));
      if (t_max_ == 0) {
        t_max_ = default_t_max(t_.u0(), t_.g());
        t_max_how_ = "default: Ding et al., Lemma 1's noise-free worst case " +
                     std::to_string(noise_free_worst_iterations(t_.u0(), t_.g())) +
                     " plus ceil(log2 M) slack";
      } else if (t_max_ > worst_) {
        t_max_how_ =
            "t_max " + std::to_string(t_max_) + " lowered to the worst case the loop can reach";
        t_max_ = worst_;
      } else {
        t_max_how_ = "configured";
      }
    }

    /// The events, data-independent: priced now so a refusing accountant fails before training.
    /// Each iteration is ϵ-DP for replace-one neighbours (Ding et al., Lemma 2: one record moves
    /// one of the k parts, so u_s by 1/k): the event says so, and the accountant then refuses a
    /// trainer whose own theorem is add/remove only (Poisson lots) instead of mixing relations.
    void build_events() {
      const DpEvent svt_event = DpEvent::replace_one(
          DpEvent::self_composed(DpEvent::pure_dp(epsilon_), static_cast<std::int64_t>(t_max_)));
      final_of_.resize(m_);
      for (std::size_t c = 0; c < m_; ++c)
        final_of_[c] = context_.evaluator().event_of(cands_[c], dptune::DataScope::whole());
      finals_ = dptune::distinct_events(final_of_);
      if (t_.adaptive()) check_adaptive_finals();
      if (private_parts_) {  // per part: its events composed over the candidates
        std::vector<DpEvent> per_part;
        per_part.reserve(kk_);
        for (std::size_t i = 0; i < kk_; ++i) {
          std::vector<DpEvent> per_candidate;
          per_candidate.reserve(cands_.size());
          for (const auto& c : cands_)
            per_candidate.push_back(
                context_.evaluator().event_of(c, dptune::DataScope::partition(i, kk_)));
          per_part.push_back(DpEvent::composed(std::move(per_candidate)));
        }
        parts_ = dptune::distinct_events(per_part);
      }
      // The whole run as one event, priced once (the maximum of separately converted ε is not a
      // bound where the candidates' RDP curves cross): the SVT loop, then (parallel
      // composition: each record lies in one part) the worst part's trainings, then the training
      // of whichever candidate is selected: adaptive composition with the pointwise worst RDP
      // curve, i.e. one_of over the possible parts and finals.
      std::vector<DpEvent> events{svt_event};
      if (private_parts_) events.push_back(dptune::one_of_distinct(parts_));
      events.push_back(dptune::one_of_distinct(finals_));
      total_ = DpEvent::composed(std::move(events));
      const std::string why = context_.accountant().unsupported_reason(total_);
      if (!why.empty())
        throw dptune::ConfigError(
            "svt_doubling: its guarantee holds for replace-one neighbours (subsample and "
            "aggregate, Ding et al., Lemma 2), and the pipeline's accountant cannot price " +
            total_.to_string() + ": " + why);
    }

    /// Any point of the space may be proposed and selected, so the guarantee needs the final
    /// training's event to be the same for all of them: probed on the grid now, checked again
    /// for every proposed candidate (a mismatch is refused, never priced after the fact).
    void check_adaptive_finals() {
      const auto points = static_cast<std::size_t>(t_.p_.get_int("points_per_dimension"));
      std::vector<DpEvent> probed = finals_;
      for (const auto& c : context_.space().grid(points))
        probed.push_back(context_.evaluator().event_of(c, dptune::DataScope::whole()));
      finals_ = dptune::distinct_events(probed);
      if (finals_.size() != 1)
        throw dptune::ConfigError(
            "svt_doubling: candidates: adaptive needs the final training's privacy cost to be "
            "the same for every candidate, but the search space changes it (" +
            std::to_string(finals_.size()) +
            " different events on its grid): fix the privacy-relevant hyperparameters (noise "
            "multiplier, epochs, lot size) in algorithm.params");
    }

    /// Subsample and aggregate: scores cands[first..] with k runs per candidate in one evaluator
    /// call (appends to u, u_min, u_max, seconds, part_privacy).
    void score(std::size_t first) {
      std::vector<dptune::EvaluationRequest> requests;
      for (std::size_t c = first; c < cands_.size(); ++c)
        for (std::size_t i = 0; i < kk_; ++i) {
          dptune::EvaluationRequest r;
          r.candidate = cands_[c];
          r.scope = dptune::DataScope::partition(i, kk_);
          r.private_run = private_parts_;
          r.repetitions = 1;
          requests.push_back(std::move(r));
        }
      if (requests.empty()) return;
      context_.progress().start("svt_doubling: scoring on " + std::to_string(kk_) + " partitions",
                                requests.size());
      const auto evaluations = context_.evaluator().evaluate(requests);
      if (evaluations.size() != requests.size())
        throw dptune::PluginError("svt_doubling: the evaluator returned " +
                                  std::to_string(evaluations.size()) + " evaluations for " +
                                  std::to_string(requests.size()) + " requests");
      context_.progress().advance(requests.size(), std::nullopt);
      trainings_ += requests.size();
      for (std::size_t c = 0; c + first < cands_.size(); ++c) {
        double mean = 0, lo = 1, hi = 0, sec = 0;
        for (std::size_t i = 0; i < kk_; ++i) {
          const auto& e = evaluations[c * kk_ + i];
          // Lemma 2's sensitivity 1/k needs every part's score in [0, 1].
          if (!(e.utility_mean >= 0 && e.utility_mean <= 1))
            throw dptune::PluginError("svt_doubling: a partition score " +
                                      std::to_string(e.utility_mean) +
                                      " is outside [0, 1]; the sensitivity 1/k would not hold");
          mean += e.utility_mean / static_cast<double>(kk_);  // Alg. 1 line 9
          lo = std::min(lo, e.utility_mean);
          hi = std::max(hi, e.utility_mean);
          sec += e.seconds;
        }
        u_.push_back(std::clamp(mean, lo, hi));
        u_min_.push_back(lo);
        u_max_.push_back(hi);
        seconds_.push_back(sec);
        part_privacy_.push_back(evaluations[c * kk_].privacy);
      }
    }

    /// The doubling AboveThreshold loop (Ding et al., Algorithm 1, lines 12-34).
    void run_loop() {
      noise_ = t_.p_.get_string("noise") == "secure"
                   ? make_secure_noise(context_, scales_, epsilon_)
                   : make_noise(context_, scales_, epsilon_);
      LoopOptions options;
      options.noise_grid = noise_.grid;
      options.u0 = t_.u0();
      options.g = t_.g();
      options.t_max = t_max_;
      context_.progress().message("svt_doubling: AboveThreshold doubling loop");
      if (!t_.adaptive()) {
        loop_ = svt_doubling::run_loop(u_, options, noise_.threshold, noise_.query);
        return;
      }
      // Ding et al. §4.1 (Fig. 2): O proposes, one AboveThreshold iteration answers with s*.  O
      // gets the transcript only (Feedback), and its own generator draws are independent of
      // the data, so its proposals are post-processing of ϵ-DP outputs.
      LocalSearch search(context_.space(),
                         static_cast<std::size_t>(t_.p_.get_int("adaptive_batch")),
                         t_.p_.get_double("adaptive_radius"));
      loop_ = run_adaptive_loop(
          options,
          [&](const Feedback& f) {
            const std::vector<Params> batch =
                search.propose(f.selected ? &cands_[*f.selected] : nullptr, f.passed,
                               f.iteration == 0, context_.rng());
            proposals_ += batch.size();
            return add_proposals(batch);
          },
          noise_.threshold, noise_.query);
      m_ = cands_.size();
      if (m_ == 0) throw dptune::PluginError("svt_doubling: the adaptive search proposed nothing");
    }

    /// Adaptive mode: the proposals not seen before are checked, trained and scored.
    Batch add_proposals(const std::vector<Params>& batch) {
      const std::size_t first_new = cands_.size();
      Batch b;
      for (const auto& p : batch) {
        const auto it = std::find(cands_.begin(), cands_.end(), p);
        b.ids.push_back(static_cast<std::size_t>(it - cands_.begin()));
        if (it == cands_.end()) {
          const DpEvent e = context_.evaluator().event_of(p, dptune::DataScope::whole());
          if (!(e == finals_.front()))
            throw dptune::ConfigError(
                "svt_doubling: candidates: adaptive proposed " + p.to_string() +
                " whose final training event " + e.to_string() + " differs from " +
                finals_.front().to_string() +
                ": fix the privacy-relevant hyperparameters in algorithm.params");
          cands_.push_back(p);
          final_of_.push_back(e);
        }
      }
      score(first_new);  // only the new candidates are trained
      for (const std::size_t id : b.ids) b.utilities.push_back(u_[id]);
      return b;
    }

    std::size_t chosen() const { return loop_.selected.value_or(0); }

    /// The final private training of s* on the whole training split.
    dptune::Evaluation final_training() {
      dptune::EvaluationRequest final_request;
      final_request.candidate = cands_[chosen()];
      final_request.scope = dptune::DataScope::whole();
      final_request.private_run = true;
      final_request.repetitions = 1;
      final_request.keep_output = true;
      context_.progress().start("svt_doubling: final private training", 1);
      auto final_eval = context_.evaluator().evaluate({final_request});
      context_.progress().advance(1, std::nullopt);
      if (final_eval.size() != 1 || !(final_eval[0].event == final_of_[chosen()]))
        throw dptune::PluginError(
            "svt_doubling: the final run's event " +
            (final_eval.empty() ? std::string("(none)") : final_eval[0].event.to_string()) +
            " differs from event_of() " + final_of_[chosen()].to_string());
      return std::move(final_eval[0]);
    }

    /// The guarantee: composition over T_max (not T), worst case over what could be released.
    dptune::PrivacyGuarantee compose_guarantee() const {
      dptune::PrivacyGuarantee guarantee = context_.accountant().epsilon(total_, context_.delta());
      std::string derivation =
          "SVT doubling (Ding et al. Alg. 1 + Ding & Wu break): " + std::to_string(t_max_) +
          " AboveThreshold iterations of pure " + fmt(epsilon_) +
          "-DP each for replace-one neighbours (T_max, composed whatever the data)";
      if (private_parts_)
        derivation += ", the private partition trainings (parallel composition over the " +
                      std::to_string(kk_) + " disjoint parts, composed over the " +
                      std::to_string(m_) + " candidates)";
      derivation +=
          ", and one private training of the selected candidate on the whole training split";
      if (finals_.size() > 1 || parts_.size() > 1)
        derivation +=
            "; the candidates' trainings differ in privacy cost, so the worst of them at every "
            "Renyi order (one_of: any candidate may be selected) is composed";
      guarantee.derivation =
          derivation + "; event " + total_.to_string() + "; " + guarantee.derivation;
      return guarantee;
    }

    dptune::TuningResult make_result(const dptune::Evaluation& fin,
                                     const dptune::PrivacyGuarantee& guarantee) const {
      dptune::TuningResult result;
      dptune::Trial selected;
      selected.id = chosen();
      selected.params = cands_[chosen()];
      selected.privacy = guarantee;
      selected.repetitions = 1;
      selected.seconds = 0;  // run times are not covered by the guarantee: never published
      if (protect_) {
        selected.utility_mean = selected.utility_min = selected.utility_max =
            std::numeric_limits<double>::quiet_NaN();
      } else {
        selected.utility_mean = fin.utility_mean;
        selected.utility_min = fin.utility_min;
        selected.utility_max = fin.utility_max;
      }
      result.selected = selected;
      result.guarantee = guarantee;
      result.event = total_;  // what compose_guarantee() priced
      result.trials_sensitive = true;
      if (t_.p_.get_bool("per_trial_output"))
        for (std::size_t c = 0; c < m_; ++c) {
          dptune::Trial t;
          t.id = c;
          t.params = cands_[c];
          t.privacy = part_privacy_[c];  // one partition run (non-private: infinite)
          t.utility_mean = u_[c];
          t.utility_min = u_min_[c];
          t.utility_max = u_max_[c];
          t.repetitions = kk_;
          t.seconds = seconds_[c];
          result.trials.push_back(std::move(t));
        }
      return result;
    }

    void add_notes(dptune::TuningResult& result, const dptune::Evaluation& fin,
                   const dptune::PrivacyGuarantee& guarantee) const {
      auto& notes = result.notes;
      notes.push_back(
          "SVT doubling (Ding et al., Algorithm 1 with Ding & Wu's u >= 1 "
          "break): " +
          (t_.adaptive() ? std::to_string(initial_candidates_) + " initial candidates, "
                         : std::to_string(m_) + " candidates, ") +
          how_ +
          (t_.adaptive() ? std::string("; candidates proposed adaptively from the loop's answers")
                         : std::string("; the order is public and fixed before any data is read")));
      if (t_.adaptive())
        notes.push_back(std::string(dptune::kDpOutputNote) + std::to_string(proposals_) +
                        " proposals, " + std::to_string(trainings_) +
                        " partition trainings (functions of the loop's answers)");
      notes.push_back("subsample and aggregate: each candidate trained " +
                      std::string(private_parts_ ? "PRIVATELY" : "non-privately") +
                      " on each of k = " + std::to_string(kk_) +
                      " disjoint parts of the training split and scored on the held-out "
                      "split; u_s = mean over parts, sensitivity " +
                      fmt(scales_.sensitivity) +
                      (protect_ ? " = max(1/k, " + fmt(*util_sens_.per_record) +
                                      " = the utility's sensitivity to one of the " +
                                      std::to_string(sizes_.scored) + " held-out rows)"
                                : std::string(" = 1/k (Ding et al., Lemma 2)")));
      notes.push_back("loop: g = " + fmt(t_.g()) + ", u0 = " + fmt(t_.u0()) +
                      ", epsilon_svt = " + fmt(epsilon_) + " per iteration (k * epsilon_svt = " +
                      fmt(static_cast<double>(kk_) * epsilon_) + "), Laplace scales " +
                      fmt(scales_.threshold) + " (threshold, 2 Delta / epsilon) and " +
                      fmt(scales_.query) + " (queries, 4 Delta / epsilon)");
      notes.push_back(std::string(dptune::kDpOutputNote) +
                      "iterations: T = " + std::to_string(loop_.iterations) +
                      " used, T_max = " + std::to_string(t_max_) + " (" + t_max_how_ +
                      "; worst case 2M - 1 = " + std::to_string(worst_) + "); stopped because " +
                      to_string(loop_.stop) + " at level u = " + fmt(loop_.u, 4) + " after " +
                      std::to_string(loop_.passes) + " passes");
      if (loop_.selected)
        notes.push_back(std::string(dptune::kDpOutputNote) + "selected candidate " +
                        std::to_string(chosen()) + " " + cands_[chosen()].to_string() +
                        " (the last candidate to pass the threshold)");
      else
        notes.push_back(std::string(dptune::kDpOutputNote) +
                        "no candidate ever passed the noisy threshold: fell back to the "
                        "data-independent default, the first candidate " +
                        cands_[chosen()].to_string());
      notes.push_back("noise: " + noise_.description);
      notes.push_back(
          protect_
              ? "threat model: neighbouring datasets differ in one record of the training OR the "
                "held-out split (protect_validation; " +
                    std::to_string(sizes_.scored) + " held-out rows, utility '" +
                    util_sens_.utility + "': " + util_sens_.derivation +
                    "); the final model's held-out utility is withheld"
              : "threat model: the held-out (validation) split is treated as PUBLIC, as in Ding "
                "et al.; only the training split is protected (set protect_validation to protect "
                "it too)");
      notes.push_back("guarantee (accountant " + guarantee.accountant + "): (epsilon, delta) = (" +
                      fmt(guarantee.epsilon) + ", " + fmt(guarantee.delta) + ") composes T_max = " +
                      std::to_string(t_max_) + " iterations, whatever number the loop used");
      {
        const double n = (loop_.u - t_.u0()) / t_.g();
        const double ke = static_cast<double>(kk_) * epsilon_;
        std::string nominal =
            std::string(dptune::kDpOutputNote) +
            "NOMINAL, NOT A GUARANTEE: Ding et al. Theorem 3 states "
            "(epsilon + O(log n) epsilon_svt, delta + O(n^(-g k epsilon_svt / 4) log n)) "
            "with n = (u* - u0) / g and no constant; ";
        if (n > 1) {
          const double eps_nominal =
              fin.privacy.epsilon + kNominalMultiplier * std::log2(n) * epsilon_;
          nominal += "with c = 3 (Figure 4), log base 2, n = (u - u0) / g = " + fmt(n, 4) +
                     " at the reached level and the final training's epsilon " +
                     fmt(fin.privacy.epsilon) + ": epsilon = " + fmt(eps_nominal) +
                     ", delta' = " + fmt(nominal_delta_prime(n, t_.g(), ke), 3);
        } else {
          nominal += "undefined here (no level gained, n <= 1)";
        }
        notes.push_back(nominal);
      }
      if (t_.p_.get_bool("per_trial_output"))
        notes.push_back(
            "per-candidate partition-mean utilities are SENSITIVE (not covered by the "
            "guarantee); written only with output.sensitive_trials: true");
    }

    const SvtDoubling& t_;
    dptune::TunerContext& context_;
    const std::size_t kk_;
    const double epsilon_;
    const bool private_parts_, protect_;
    dptune::DataSizes sizes_;
    dptune::UtilitySensitivity util_sens_;
    std::string how_;
    std::vector<Params> cands_;
    std::size_t m_ = 0, initial_candidates_ = 0;
    std::size_t worst_ = 0, t_max_ = 0;
    std::string t_max_how_;
    Scales scales_;
    // The distinct final-training events over every possible s*, and the distinct per-part events.
    std::vector<DpEvent> finals_, parts_;
    std::vector<DpEvent> final_of_;
    DpEvent total_;
    std::vector<double> u_, u_min_, u_max_, seconds_;
    std::vector<dptune::PrivacyGuarantee> part_privacy_;
    std::size_t trainings_ = 0, proposals_ = 0;
    Noise noise_;
    LoopResult loop_;
  };

  Params p_;
};

}  // namespace
}  // namespace dptune::svt_doubling

DPTUNE_PLUGIN(tuner, svt_doubling, dptune::svt_doubling::SvtDoubling, "1.0.0",
              "SVT doubling: private selection by subsample-and-aggregate and a doubling "
              "AboveThreshold ladder (Ding & Wu; Ding, Wu, Xu & Pan)")
