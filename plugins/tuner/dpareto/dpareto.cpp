// DPareto (Avent et al. 2020: Avent et al., "Automatic Discovery of Privacy–Utility Pareto Fronts",
// §3, Algorithm 2, Appendix A): maps the privacy–utility Pareto front of the pipeline's algorithm
// by multi-objective Bayesian optimisation.  Objectives, both minimised (§3.2, "A Note on Output
// Domains"): p = log ε (ε from the pipeline's accountant at its δ, normalised as the paper's code
// does by the largest log ε of the initial design) and u = logit(error), error = 1 − mean utility
// over R runs.  Not a private tuner: its front is for trusted analysts ("Threat Model Discussion").
//
// This file is the thin plugin layer: parameters, the unit cube of the search space, the oracles
// through the host's evaluator, the hypervolume trace.  The GPs, HVPoI and the loop live in the
// core library (include/dpareto, src).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>

#include "dpareto/halton.hpp"
#include "dpareto/mobo.hpp"
#include "dptune/dptune.hpp"
#include "dptune/helpers/pareto.hpp"
#include "dptune/helpers/trials_csv.hpp"
#include "dptune/helpers/tuning.hpp"

namespace {

using dptune::dpareto::BatchStrategy;
using dptune::dpareto::ReferenceMode;

constexpr double kEpsilonFloor = 1e-10, kEpsilonCeiling = 1e10;

double log_epsilon(double epsilon) {
  if (std::isnan(epsilon)) return std::log(kEpsilonCeiling);
  return std::log(std::clamp(epsilon, kEpsilonFloor, kEpsilonCeiling));
}

double logit(double error, double clamp) {
  const double e = std::clamp(error, clamp, 1.0 - clamp);
  return std::log(e) - std::log1p(-e);
}

// Hypervolume of the observed (ε, 1 − mean utility) front w.r.t. (reference ε, reference error), in
// raw units: the same quantity the host's report states.
double raw_hypervolume(const std::vector<dptune::Trial>& trials, double ref_eps, double ref_err) {
  std::vector<dptune::Point> points;
  for (const auto& t : trials)
    if (std::isfinite(t.privacy.epsilon))
      points.push_back({t.privacy.epsilon, 1.0 - t.utility_mean});
  return dptune::hypervolume(points, {ref_eps, ref_err});
}

// Variability of the front (Avent et al. 2020, §4.3, Fig. 7: "the Pareto fronts recovered from
// considering the best and worst runs in addition to the Pareto front obtained from the average
// over runs"): the empirical fronts of (ε, 1 − utility) with the utility of each trial taken as the
// worst of its R runs, their mean, and the best.  Three series of one group, so the host draws them
// in one plot (variability_front.svg); x is log10 ε since fronts span decades of ε.
std::vector<dptune::Series> variability_front(const std::vector<dptune::Trial>& trials,
                                              std::size_t repetitions) {
  const char* names[] = {"variability_front.worst_run", "variability_front.mean",
                         "variability_front.best_run"};
  std::vector<dptune::Series> out;
  for (std::size_t k = 0; k < 3; ++k) {
    auto utility = [k](const dptune::Trial& t) {
      return k == 0 ? t.utility_min : k == 1 ? t.utility_mean : t.utility_max;
    };
    std::vector<dptune::Point> points;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < trials.size(); ++i)
      if (std::isfinite(trials[i].privacy.epsilon) && trials[i].privacy.epsilon > 0) {
        points.push_back({trials[i].privacy.epsilon, 1.0 - utility(trials[i])});
        index.push_back(i);
      }
    if (points.empty()) return {};
    std::vector<std::size_t> front = dptune::pareto_front(points);
    std::sort(front.begin(), front.end(),
              [&](std::size_t a, std::size_t b) { return points[a][0] < points[b][0]; });
    dptune::Series series;
    series.name = names[k];
    series.x_label = "epsilon";  // the host draws budgets on a log axis
    series.y_label = "error = 1 - utility: fronts of the worst, mean and best of R = " +
                     std::to_string(repetitions) + " runs";
    for (std::size_t f : front) {
      series.x.push_back(points[f][0]);
      series.y.push_back(points[f][1]);
    }
    out.push_back(std::move(series));
  }
  return out;
}

// Seconds of one run of a trial (the evaluator sums its R runs), floored away from 0 for the log.
double seconds_per_run(const dptune::Trial& t) {
  return std::max(t.seconds / static_cast<double>(std::max<std::size_t>(t.repetitions, 1)), 1e-9);
}

// (ε, error, seconds per run) of every trial, in trial order (ε NaN treated as the ceiling).
std::vector<dptune::Point> runtime_points(const std::vector<dptune::Trial>& trials) {
  std::vector<dptune::Point> points;
  points.reserve(trials.size());
  for (const auto& t : trials)
    points.push_back({std::isfinite(t.privacy.epsilon) ? t.privacy.epsilon : kEpsilonCeiling,
                      1.0 - t.utility_mean, seconds_per_run(t)});
  return points;
}

// The candidates of an earlier study: the param.<name> columns of its trials.csv (re-evaluated
// here, so only the hyperparameters are read), through the SDK's one reader of that file.
std::vector<dptune::Params> read_previous_candidates(const std::string& path,
                                                     const dptune::SearchSpace& space) {
  try {
    return dptune::read_trial_candidates(path, space);
  } catch (const dptune::ConfigError& e) {
    throw dptune::ConfigError(std::string("dpareto: initial_trials: ") + e.what());
  }
}

// A relative `initial_trials` names a file beside the pipeline, as every path in a pipeline does.
std::string in_pipeline_dir(const std::string& pipeline_dir, const std::string& path) {
  if (path.empty() || pipeline_dir.empty() || std::filesystem::path(path).is_absolute())
    return path;
  return (std::filesystem::path(pipeline_dir) / path).string();
}

class DPareto final : public dptune::Tuner {
 public:
  explicit DPareto(const dptune::Params& p)
      : initial_(static_cast<std::size_t>(p.get_int("initial_points"))),
        iterations_(static_cast<std::size_t>(p.get_int("iterations"))),
        batch_(static_cast<std::size_t>(p.get_int("batch"))),
        batch_strategy_(p.get_string("batch_strategy")),
        starts_(static_cast<int>(p.get_int("restarts"))),
        fast_(p.get_bool("fast")),
        refit_every_(static_cast<int>(p.get_int("refit_every"))),
        reference_(p.get_string("reference")),
        reference_epsilon_(p.get_double("reference_epsilon")),
        reference_error_(p.get_double("reference_error")),
        clamp_(p.get_double("error_clamp")),
        candidates_(static_cast<std::size_t>(p.get_int("candidates"))),
        local_starts_(static_cast<std::size_t>(p.get_int("local_starts"))),
        normalise_(p.get_bool("normalise_privacy")),
        initial_trials_(
            in_pipeline_dir(p.get_string("pipeline_dir"), p.get_string("initial_trials"))),
        privacy_model_(p.get_string("privacy_model")),
        improvement_units_(p.get_string("improvement_units")),
        privacy_screen_(static_cast<std::size_t>(p.get_int("privacy_screen"))),
        optimism_(p.get_double("optimism")),
        initial_design_(p.get_string("initial_design")),
        initial_within_reference_(p.get_bool("initial_within_reference")),
        observation_noise_(p.get_bool("observation_noise")),
        observed_front_(p.get_bool("observed_front")),
        utility_noise_(p.get_double("utility_noise")),
        runtime_objective_(p.get_bool("runtime_objective")),
        reference_seconds_(p.get_double("reference_seconds")) {}

  // A privacy-utility map for trusted analysts: no guarantee, no model released.
  static dptune::TunerTraits traits() { return {.outputs = dptune::TunerOutputs::Map}; }

  static dptune::ParamSchema schema() {
    dptune::ParamSchema s;
    add_design_params(s);
    add_reference_params(s);
    add_acquisition_params(s);
    add_model_params(s);
    return s;
  }
  /// The initial design, the iterations and the GP fits (Avent et al. 2020, Algorithm 2).
  static void add_design_params(dptune::ParamSchema& s) {
    s.add_int("initial_points", "k0: random initial candidates (Algorithm 2)")
        .min(1)
        .default_to(std::int64_t{16})
        .add_int("iterations", "k: Bayesian-optimisation iterations after the initial design")
        .min(0)
        .default_to(std::int64_t{64})
        .add_int("batch", "q: candidates per iteration, evaluated in parallel")
        .min(1)
        .default_to(std::int64_t{1})
        .add_string("batch_strategy", "how a batch fantasises its pending points")
        .one_of({"kriging_believer", "constant_liar"})
        .default_to(std::string("kriging_believer"))
        .add_int("restarts", "GP hyperparameter-optimisation starts per fit (warm + random)")
        .min(1)
        .default_to(std::int64_t{5})
        .add_bool("fast", "fast mode: warm-start fits only, every refit_every iterations")
        .default_to(false)
        .add_int("refit_every",
                 "fast mode: re-optimise GP hyperparameters every this many iterations")
        .min(1)
        .default_to(std::int64_t{5});
  }
  /// The hypervolume reference point and the error transform.
  static void add_reference_params(dptune::ParamSchema& s) {
    s.add_string("reference", "HVPoI reference: fixed anti-ideal point or GPflowOpt's estimate")
        .one_of({"fixed", "adaptive"})
        .default_to(std::string("fixed"))
        .add_float("reference_epsilon", "anti-ideal epsilon (Avent et al. 2020 §4.1: 10)")
        .min_exclusive(0)
        .default_to(10.0)
        .add_float("reference_error", "anti-ideal error (Avent et al. 2020 §4.1: 1, clamped)")
        .min_exclusive(0)
        .max(1)
        .default_to(1.0)
        .add_float("error_clamp", "errors are clamped into [c, 1 - c] before the logit")
        .min_exclusive(0)
        .max_exclusive(0.5)
        .default_to(1e-4);
  }
  /// The acquisition sweep, its refinement and the initial trials.
  static void add_acquisition_params(dptune::ParamSchema& s) {
    s.add_int("candidates", "space-filling candidates per acquisition optimisation")
        .min(16)
        .default_to(std::int64_t{3000})
        .add_int("local_starts", "box-bounded L-BFGS refinements from the best candidates")
        .min(0)
        .default_to(std::int64_t{2})
        .add_bool(
            "normalise_privacy",
            "divide log epsilon by the largest log epsilon of the initial design (paper code)")
        .default_to(true)
        .add_string("initial_trials",
                    "trials.csv of an earlier study whose candidates replace the random initial "
                    "design (empty: none; relative to the pipeline's folder)")
        .default_to(std::string())
        .add_string("pipeline_dir",
                    "filled in by dptune with the pipeline file's folder, against which a "
                    "relative initial_trials is resolved (do not set it)")
        .default_to(std::string())
        .add_string("privacy_model",
                    "gp: model log epsilon by a GP (Avent et al. 2020); accountant: price every "
                    "acquisition candidate's epsilon exactly with the pipeline's accountant")
        .one_of({"gp", "accountant"})
        .default_to(std::string("accountant"))
        .add_string("improvement_units",
                    "units of the acquisition's hypervolume improvement: transformed (log "
                    "epsilon, logit error; Avent et al. 2020) or raw (epsilon, error: the reported "
                    "hypervolume's units)")
        .one_of({"transformed", "raw"})
        .default_to(std::string("raw"))
        .add_int("privacy_screen",
                 "privacy_model accountant: price only the best this many sweep candidates by "
                 "the all-GP acquisition, then re-rank them exactly (0: price every candidate)")
        .min(0)
        .default_to(std::int64_t{300});
  }
  /// The objectives' models: optimism, initial design kind, noise, runtime.
  static void add_model_params(dptune::ParamSchema& s) {
    s.add_float("optimism",
                "kappa: hypervolume improvement at the optimistic mean - kappa sd (SMS-EGO's "
                "lower confidence bound); 0: HVPoI as published")
        .min(0)
        .default_to(0.0)
        .add_string("initial_design",
                    "random (Algorithm 2) or halton (scrambled Halton points: space-filling)")
        .one_of({"random", "halton"})
        .default_to(std::string("random"))
        .add_bool("initial_within_reference",
                  "privacy_model accountant: initial points with epsilon beyond "
                  "reference_epsilon (priced before running) are redrawn")
        .default_to(false)
        .add_bool("observation_noise",
                  "PoI with the spread of a new noisy observation (latent variance + learned "
                  "noise) rather than of the latent mean (Avent et al. 2020)")
        .default_to(false)
        .add_bool("observed_front",
                  "HVPoI's front from the observed values (the reported front) rather than the "
                  "GP means at the observed inputs (GPflowOpt)")
        .default_to(false)
        .add_float("utility_noise",
                   "fixed noise variance of the utility GP in logit units (0: learned)")
        .min(0)
        .default_to(0.0)
        .add_bool(
            "runtime_objective",
            "a third objective, log seconds per run (Avent et al. 2020 §3.1: running time traded "
            "off against privacy and utility); HVPoI then uses the exact 3-D cells")
        .default_to(false)
        .add_float("reference_seconds",
                   "runtime_objective: the reference point's seconds per run (0: twice the "
                   "slowest run of the initial design)")
        .min(0)
        .default_to(0.0);
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    const dptune::SearchSpace& space = context.space();
    const std::size_t dims = space.size();
    dptune::dpareto::MoboOptions options = mobo_options(context, needs_snap(space));
    const std::size_t objectives = options.gps.size();
    EventPricer price(context);
    // With exact pricing the initial design skips candidates beyond the reference ε: they add
    // nothing to the hypervolume the study maximises (up to 50 draws per point, then any).
    const bool screen_initial = privacy_model_ == "accountant" && initial_within_reference_;
    const auto admissible = [&](const dptune::Params& c) {
      return !screen_initial || price(c) < reference_epsilon_;
    };

    // ---- initial design (Algorithm 2, lines 2–5) ----
    const std::vector<dptune::Params> initial = initial_design(context, admissible);
    const std::size_t total = initial.size() + iterations_ * batch_;
    context.progress().start("dpareto", total);
    dptune::TuningResult result;
    result.trusted_analyst_only = true;
    double best = -1;
    auto evaluate = [&](const std::vector<dptune::Params>& candidates) {
      std::vector<dptune::EvaluationRequest> requests;
      for (const auto& c : candidates) {
        dptune::EvaluationRequest r;
        r.candidate = c;
        requests.push_back(std::move(r));
      }
      std::vector<dptune::Trial> out;
      for (const auto& e : context.evaluator().evaluate(requests)) {
        out.push_back(dptune::to_trial(e, result.trials.size() + out.size()));
        best = std::max(best, e.utility_mean);
      }
      return out;
    };
    for (auto& t : evaluate(initial)) result.trials.push_back(std::move(t));
    context.progress().advance(result.trials.size(), best);

    const double scale = epsilon_scale(result.trials);
    const double reference_seconds = set_reference(options, result.trials, scale);
    // Acquisition candidates' ε priced exactly (through the cache of `price`), not by a GP.
    if (privacy_model_ == "accountant") {
      options.known_screen = privacy_screen_;
      options.known.resize(2);
      options.known[0] = [&, scale](const Eigen::MatrixXd& X, Eigen::VectorXd& out) {
        out.resize(X.rows());
        for (Eigen::Index i = 0; i < X.rows(); ++i) {
          const Eigen::RowVectorXd row = X.row(i);
          const dptune::Params candidate =
              space.from_unit(std::vector<double>(row.data(), row.data() + row.size()));
          out(i) = log_epsilon(price(candidate)) / scale;
        }
      };
    }
    dptune::dpareto::Mobo mobo(dims, options);
    auto observe = [&](const dptune::Trial& t) {
      const auto u = space.to_unit(t.params);
      Eigen::VectorXd x(static_cast<Eigen::Index>(dims)), y(static_cast<Eigen::Index>(objectives));
      for (std::size_t j = 0; j < dims; ++j) x(static_cast<Eigen::Index>(j)) = u[j];
      y(0) = log_epsilon(t.privacy.epsilon) / scale;
      y(1) = logit(1.0 - t.utility_mean, clamp_);
      if (runtime_objective_) y(2) = std::log(seconds_per_run(t));
      mobo.add(x, y);
    };
    for (const auto& t : result.trials) observe(t);

    HypervolumeSeries hv(
        reference_epsilon_, reference_error_,
        runtime_objective_ ? std::optional<double>(reference_seconds) : std::nullopt);
    hv.record(result.trials);

    // ---- Bayesian optimisation (Algorithm 2, lines 6–10) ----
    for (std::size_t it = 0; it < iterations_; ++it) {
      const auto proposals = mobo.propose(batch_, context.rng());
      std::vector<dptune::Params> candidates;
      candidates.reserve(proposals.size());
      for (const auto& pr : proposals)
        candidates.push_back(
            space.from_unit(std::vector<double>(pr.x.data(), pr.x.data() + pr.x.size())));
      for (auto& t : evaluate(candidates)) {
        observe(t);
        result.trials.push_back(std::move(t));
      }
      hv.record(result.trials);
      context.progress().advance(result.trials.size(), best);
    }

    hv.move_into(result.series);
    if (runtime_objective_) add_runtime_front_note(result, reference_seconds);
    for (auto& band : variability_front(result.trials, context.evaluator().default_repetitions()))
      result.series.push_back(std::move(band));
    add_notes(result, initial.size(), price.calls(), mobo, space, scale);
    return result;
  }

 private:
  /// Caches the accountant's ε by event: ε is a deterministic function of the candidate (Avent et
  /// al. 2020 §3.2), priced without running anything, and candidates that differ only in
  /// dimensions the event ignores (learning rate, clipping, regularisation...) share one event.
  class EventPricer {
   public:
    explicit EventPricer(dptune::TunerContext& context) : context_(context) {}
    double operator()(const dptune::Params& candidate) {
      const dptune::DpEvent event =
          context_.evaluator().event_of(candidate, dptune::DataScope::whole());
      std::string key = event.to_string();
      auto it = priced_.find(key);
      if (it == priced_.end()) {
        double epsilon = kEpsilonCeiling;
        try {
          epsilon = context_.accountant().epsilon(event, context_.delta()).epsilon;
        } catch (const dptune::PrivacyError&) {
          // Unpriceable: as bad as the worst ε, as log_epsilon treats a NaN ε.
        }
        it = priced_.emplace(std::move(key), epsilon).first;
      }
      return it->second;
    }
    std::size_t calls() const { return priced_.size(); }

   private:
    dptune::TunerContext& context_;
    std::unordered_map<std::string, double> priced_;
  };

  /// The hypervolume after each batch, in (ε, error) and, with the runtime objective, in
  /// (ε, error, seconds per run).
  class HypervolumeSeries {
   public:
    HypervolumeSeries(double ref_eps, double ref_err, std::optional<double> ref_seconds)
        : ref_eps_(ref_eps), ref_err_(ref_err), ref_seconds_(ref_seconds) {
      const std::string eps = dptune::to_string(dptune::Value{ref_eps});
      const std::string err = dptune::to_string(dptune::Value{ref_err});
      hv_.name = "hypervolume";
      hv_.x_label = runtime_.x_label = "evaluations";
      hv_.y_label = "hypervolume w.r.t. (epsilon, error) = (" + eps + ", " + err + ")";
      runtime_.name = "hypervolume_runtime";
      runtime_.y_label = "hypervolume w.r.t. (epsilon, error, seconds per run) = (" + eps + ", " +
                         err + ", " + dptune::to_string(dptune::Value{ref_seconds.value_or(0)}) +
                         ")";
    }
    void record(const std::vector<dptune::Trial>& trials) {
      hv_.x.push_back(static_cast<double>(trials.size()));
      hv_.y.push_back(raw_hypervolume(trials, ref_eps_, ref_err_));
      if (ref_seconds_) {
        runtime_.x.push_back(static_cast<double>(trials.size()));
        runtime_.y.push_back(
            dptune::hypervolume(runtime_points(trials), {ref_eps_, ref_err_, *ref_seconds_}));
      }
    }
    void move_into(std::vector<dptune::Series>& series) {
      series.push_back(std::move(hv_));
      if (ref_seconds_) series.push_back(std::move(runtime_));
    }

   private:
    double ref_eps_, ref_err_;
    std::optional<double> ref_seconds_;
    dptune::Series hv_, runtime_;
  };

  /// DPareto's GPs need ordered inputs; integer and stepped dimensions are snapped.
  static bool needs_snap(const dptune::SearchSpace& space) {
    bool snap = false;
    for (const auto& d : space.dimensions()) {
      if (d.kind == dptune::Dimension::Kind::Categorical)
        throw dptune::ConfigError(
            "dpareto: search-space dimension '" + d.name +
            "' is categorical; DPareto's GPs need ordered inputs (float or int dimensions). Fix "
            "it in the pipeline, or run one DPareto study per choice");
      if (d.kind == dptune::Dimension::Kind::Int || d.float_step > 0) snap = true;
    }
    return snap;
  }

  dptune::dpareto::MoboOptions mobo_options(dptune::TunerContext& context, bool needs_snap) const {
    const dptune::SearchSpace& space = context.space();
    dptune::dpareto::MoboOptions options;
    dptune::dpareto::GpOptions privacy_gp;
    privacy_gp.learn_noise = false;  // ε is deterministic: a nugget only (jitter on failure)
    privacy_gp.noise = 1e-6;
    dptune::dpareto::GpOptions utility_gp;
    utility_gp.learn_noise = true;  // mean utility over R noisy runs
    utility_gp.noise = 0.01;
    if (utility_noise_ > 0) {
      utility_gp.learn_noise = false;
      utility_gp.noise = utility_noise_;
    }
    options.gps = {privacy_gp, utility_gp};
    if (runtime_objective_) {
      // Running time (Avent et al. 2020 §3.1) is measured, so noisy: its GP learns its noise.
      dptune::dpareto::GpOptions runtime_gp;
      runtime_gp.learn_noise = true;
      runtime_gp.noise = 0.01;
      options.gps.push_back(runtime_gp);
    }
    options.starts = fast_ ? 1 : starts_;
    options.refit_every = fast_ ? refit_every_ : 1;
    options.reference_mode =
        reference_ == "adaptive" ? ReferenceMode::Adaptive : ReferenceMode::Fixed;
    options.batch = batch_strategy_ == "constant_liar" ? BatchStrategy::ConstantLiar
                                                       : BatchStrategy::KrigingBeliever;
    options.candidates = candidates_;
    options.local_starts = local_starts_;
    options.optimism = optimism_;
    options.observation_noise = observation_noise_;
    options.observed_front = observed_front_;
    // The two GP fits are independent: run them on the executor's threads.
    options.parallel_for = [&context](std::size_t n, const std::function<void(std::size_t)>& body) {
      context.parallel_for(n, body);
    };
    if (needs_snap)
      options.snap = [&space](Eigen::VectorXd& x) {
        const auto u =
            space.to_unit(space.from_unit(std::vector<double>(x.data(), x.data() + x.size())));
        for (std::size_t j = 0; j < u.size(); ++j) x(static_cast<Eigen::Index>(j)) = u[j];
      };

    return options;
  }

  std::vector<dptune::Params> initial_design(
      dptune::TunerContext& context,
      const std::function<bool(const dptune::Params&)>& admissible) const {
    const dptune::SearchSpace& space = context.space();
    const std::size_t dims = space.size();
    std::vector<dptune::Params> initial;
    if (!initial_trials_.empty()) {
      initial = read_previous_candidates(initial_trials_, space);
    } else if (initial_design_ == "halton") {
      // The first admissible points of one scrambled Halton sequence (50 × longer than needed).
      const Eigen::MatrixXd H =
          dptune::dpareto::scrambled_halton(50 * initial_, dims, context.rng());
      std::vector<dptune::Params> rest;
      for (Eigen::Index i = 0; i < H.rows() && initial.size() < initial_; ++i) {
        const Eigen::RowVectorXd row = H.row(i);
        auto c = space.from_unit(std::vector<double>(row.data(), row.data() + row.size()));
        if (admissible(c))
          initial.push_back(std::move(c));
        else if (rest.size() < initial_)
          rest.push_back(std::move(c));
      }
      for (std::size_t i = 0; initial.size() < initial_; ++i) initial.push_back(rest[i]);
    } else {
      for (std::size_t i = 0; i < initial_; ++i) {
        dptune::Params c = space.sample(context.rng());
        for (int tries = 1; tries < 50 && !admissible(c); ++tries) c = space.sample(context.rng());
        initial.push_back(std::move(c));
      }
    }
    return initial;
  }

  /// log ε normalisation of the paper's code (divide by the largest initial log ε), guarded: a
  /// largest log ε ≤ 0 (every initial ε ≤ 1) would flip or blow up the scale, so it is left at 1.
  double epsilon_scale(const std::vector<dptune::Trial>& initial) const {
    if (!normalise_) return 1;
    double largest = -INFINITY;
    for (const auto& t : initial) largest = std::max(largest, log_epsilon(t.privacy.epsilon));
    return largest > 0 ? largest : 1;
  }

  /// The reference point in GP units and the improvement maps; returns the reference seconds per
  /// run (given, or twice the slowest initial run: a fixed anti-ideal point from then on, as v†
  /// is for ε and error).
  double set_reference(dptune::dpareto::MoboOptions& options,
                       const std::vector<dptune::Trial>& initial, double scale) const {
    options.reference = {log_epsilon(reference_epsilon_) / scale, logit(reference_error_, clamp_)};
    double reference_seconds = reference_seconds_;
    if (runtime_objective_) {
      if (reference_seconds <= 0)
        for (const auto& t : initial)
          reference_seconds = std::max(reference_seconds, 2 * seconds_per_run(t));
      options.reference.push_back(std::log(reference_seconds));
    }
    if (improvement_units_ == "raw") {
      // ΔPF in (ε, error): p = log ε / scale ↦ exp(scale · p), u = logit(error) ↦ logistic(u);
      // runtime: log seconds ↦ seconds.
      using Map = dptune::dpareto::ObjectiveMap;
      options.improvement_maps = {Map{Map::Kind::Exp, scale}, Map{Map::Kind::Logistic, 1.0}};
      if (runtime_objective_) options.improvement_maps.push_back(Map{Map::Kind::Exp, 1.0});
    }
    return reference_seconds;
  }

  /// The three-objective front (the host's front and report are the (ε, error) ones).
  void add_runtime_front_note(dptune::TuningResult& result, double reference_seconds) const {
    const std::vector<dptune::Point> points = runtime_points(result.trials);
    std::vector<std::size_t> front = dptune::pareto_front(points);
    std::sort(front.begin(), front.end());
    std::string ids;
    for (std::size_t f : front) {
      if (!ids.empty()) ids += ' ';
      ids += std::to_string(f);
    }
    result.notes.push_back(
        "runtime objective (Avent et al. 2020 §3.1): log(seconds per run) by a third GP, HVPoI "
        "over the exact 3-D cells; reference seconds per run " +
        dptune::to_string(dptune::Value{reference_seconds}) +
        (reference_seconds_ > 0 ? "" : " (twice the slowest initial run)") +
        "; trials on the (epsilon, error, seconds per run) front: " + ids);
  }

  void add_notes(dptune::TuningResult& result, std::size_t initial_count, std::size_t pricing_calls,
                 const dptune::dpareto::Mobo& mobo, const dptune::SearchSpace& space,
                 double scale) const {
    const std::size_t dims = space.size();
    result.notes.push_back(
        "DPareto (Avent et al. 2020, Algorithm 2): " + std::to_string(initial_count) +
        (initial_trials_.empty() ? " random initial candidates"
                                 : " initial candidates from " + initial_trials_) +
        ", " + std::to_string(iterations_) + " iterations of " + std::to_string(batch_) +
        " (HVPoI, Matern 5/2 GPs" + (fast_ ? ", fast mode" : "") + ")");
    result.notes.push_back(
        privacy_model_ == "accountant"
            ? "privacy model: epsilon of every acquisition candidate priced by the accountant (" +
                  std::to_string(pricing_calls) + " distinct events priced)"
            : std::string("privacy model: a GP on log(epsilon) (Avent et al. 2020)"));
    {
      // The utility GP's last hyperparameters (diagnostics: length-scales in unit-cube units).
      const auto& g = mobo.gp(1);
      std::ostringstream o;
      o << "utility GP (last fit): signal variance " << g.kernel().signal_variance
        << ", noise variance " << g.noise_variance() << ", length-scales";
      for (std::size_t j = 0; j < dims; ++j)
        o << ' ' << space.dimensions()[j].name << '='
          << g.kernel().lengthscales(static_cast<Eigen::Index>(j));
      result.notes.push_back(o.str());
    }
    result.notes.push_back(std::string("acquisition: hypervolume improvement measured in ") +
                           (improvement_units_ == "raw" ? "raw (epsilon, error) units"
                                                        : "transformed (log epsilon, logit "
                                                          "error) units (Avent et al. 2020)"));
    result.notes.push_back(
        "threat model (Avent et al. 2020): the front is computed from the private data and is "
        "not differentially private; it is for trusted analysts only");
    result.notes.push_back(
        "GP objectives: log(epsilon)/" + dptune::to_string(dptune::Value{scale}) +
        " and logit(error) with error clamped to [" + dptune::to_string(dptune::Value{clamp_}) +
        ", 1 - " + dptune::to_string(dptune::Value{clamp_}) + "]; reference " +
        (reference_ == "adaptive"
             ? std::string("adaptive (GPflowOpt)")
             : "fixed (" + dptune::to_string(dptune::Value{reference_epsilon_}) + ", " +
                   dptune::to_string(dptune::Value{reference_error_}) + ")"));
  }

  std::size_t initial_, iterations_, batch_;
  std::string batch_strategy_;
  int starts_;
  bool fast_;
  int refit_every_;
  std::string reference_;
  double reference_epsilon_, reference_error_, clamp_;
  std::size_t candidates_, local_starts_;
  bool normalise_;
  std::string initial_trials_;
  std::string privacy_model_, improvement_units_;
  std::size_t privacy_screen_;
  double optimism_;
  std::string initial_design_;
  bool initial_within_reference_;
  bool observation_noise_, observed_front_;
  double utility_noise_;
  bool runtime_objective_;
  double reference_seconds_;
};

}  // namespace

DPTUNE_PLUGIN(tuner, dpareto, DPareto, "1.0.0",
              "DPareto: privacy-utility Pareto front by multi-objective Bayesian optimisation "
              "(trusted analysts only)")
