#include "dptune/host/runner.hpp"

#include <cmath>
#include <optional>

#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"
#include "dptune/helpers/calibration.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/configured.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/ledger.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/utility_sensitivity.hpp"
#include "dptune/rng.hpp"
#include "run/evaluator.hpp"
#include "run/preflight.hpp"
#include "run/test_score.hpp"

namespace dptune::host {

namespace {

using dptune::DpEvent;

[[noreturn]] void fail(const SourceLocation& where, const std::string& key_path,
                       const std::string& message) {
  throw ConfigDiagnostic(where, key_path, message);
}

/// Where a parameter of `c` was given; the section when it was not (a default or a dimension).
SourceLocation where_of(const ComponentConfig& c, const std::string& param) {
  const auto found = c.param_where.find(param);
  return found != c.param_where.end() ? found->second : c.where;
}

dptune::Params centre_candidate(const PipelineConfig& config) {
  return config.space.from_unit(std::vector<double>(config.space.size(), 0.5));
}

/// The pipeline's trainer configured with the centre of the search space (for what it declares).
std::shared_ptr<dptune::Trainer> centre_trainer(const PipelineConfig& config,
                                                const PluginRegistry& registry) {
  const dptune::ParamSchema* schema = registry.schema(ComponentKind::Trainer, config.algorithm.use);
  return registry.create_trainer(
      config.algorithm.use,
      schema->complete(config.algorithm.params.merged(centre_candidate(config))));
}

/// "noise_multiplier 1, noise secure"
std::string describe_params(const dptune::Params& params) {
  std::string text;
  for (const auto& [name, value] : params)
    text += (text.empty() ? "" : ", ") + name + " " + dptune::to_string(value);
  return text;
}

/// "noise_multiplier, noise" (a calibrated value would make the message depend on the accountant)
std::string keys_of(const dptune::Params& params) {
  std::string text;
  for (const auto& entry : params) text += (text.empty() ? "" : ", ") + entry.first;
  return text;
}

// ---- the mechanism a trainer asks for ---------------------------------------------------------

/// What mechanism `name` configured with `params` and the request's overrides states: whether it
/// is the event the trainer requires, and otherwise what it says instead.
struct Statement {
  bool fits = false;
  std::string said;
};

Statement statement_of(const PluginRegistry& registry, const std::string& name,
                       const dptune::Params& params, const dptune::MechanismRequest& request) {
  const dptune::ParamSchema* schema = registry.schema(ComponentKind::Mechanism, name);
  for (const auto& entry : request.overrides)
    if (!schema || !schema->find(entry.first))
      return {false, "takes no parameter '" + entry.first + "'"};
  try {
    const DpEvent stated =
        registry.create_mechanism(name, schema->complete(params.merged(request.overrides)))
            ->event();
    return {MechanismNoise::fits(stated, request.expected), "states " + stated.to_string()};
  } catch (const dptune::Error& e) {
    return {false, std::string("cannot be made so: ") + e.what()};
  }
}

/// The installed mechanisms that state what the trainer requires with their defaults otherwise.
std::vector<std::string> fitting_mechanisms(const PluginRegistry& registry,
                                            const dptune::MechanismRequest& request) {
  std::vector<std::string> out;
  for (const auto& name : registry.names(ComponentKind::Mechanism))
    if (statement_of(registry, name, {}, request).fits) out.push_back(name);
  return out;
}

/// The trainer draws its noise from the pipeline's mechanism (Trainer::mechanism_request): it
/// must be named, state the event the trainer's analysis assumes, and not be given parameters the
/// trainer overrides on every run (refused like every other key that would be ignored).
void check_mechanism(const PipelineConfig& config, const PluginRegistry& registry,
                     const dptune::Trainer& trainer) {
  const auto request = trainer.mechanism_request();
  if (!request) return;
  const std::string& algo = config.algorithm.use;
  const auto fits = fitting_mechanisms(registry, *request);
  const std::string needs = algo + " needs a " + DpEvent::kind_name(request->expected.kind()) +
                            " mechanism (its privacy analysis assumes the event " +
                            request->expected.to_string() + " for " +
                            describe_params(request->overrides) + ")";
  const std::string which = fits.empty() ? std::string("no installed mechanism plugin states it")
                                         : "`mechanism: {use: " + fits.front() + "}`";
  if (!config.mechanism)
    fail(config.algorithm.where, "mechanism",
         needs + ", and the pipeline names none: " + (fits.empty() ? which : "add " + which));
  const ComponentConfig& mechanism = *config.mechanism;
  const Statement stated = statement_of(registry, mechanism.use, mechanism.params, *request);
  if (!stated.fits)
    fail(mechanism.use_where, "mechanism.use",
         needs + ", but '" + mechanism.use + "' " + stated.said + "; " +
             (fits.empty() ? which : "use " + which));
  const dptune::ParamSchema* schema = registry.schema(ComponentKind::Trainer, algo);
  for (const auto& entry : request->overrides) {
    const auto given = mechanism.param_where.find(entry.first);
    if (given == mechanism.param_where.end()) continue;
    fail(given->second, "mechanism.params." + entry.first,
         "algorithm '" + algo + "' sets the mechanism's " + entry.first +
             " for every run, so this value would be ignored; remove it" +
             (schema && schema->find(entry.first)
                  ? " (set " + entry.first + " in algorithm.params or search_space)"
                  : std::string()));
  }
}

// ---- the privacy of one run -------------------------------------------------------------------

/// The kinds of `event`'s leaves that have no pure-DP bound, in order (e.g. gaussian, zcdp).
void impure_leaves(const DpEvent& event, std::vector<std::string>& out) {
  using Kind = DpEvent::Kind;
  dptune::for_each_event(event, [&out](const DpEvent& e) {
    const bool impure = e.kind() == Kind::Gaussian || e.kind() == Kind::DiscreteGaussian ||
                        e.kind() == Kind::DiscreteGaussianOnGrid ||
                        e.kind() == Kind::DiscreteGaussianSum || e.kind() == Kind::Zcdp ||
                        (e.kind() == Kind::ApproxDp && e.delta() != 0);
    if (impure && std::find(out.begin(), out.end(), DpEvent::kind_name(e.kind())) == out.end())
      out.emplace_back(DpEvent::kind_name(e.kind()));
  });
}

/// δ = 0 asks for pure ε-DP: refused unless the accountant proves a finite ε at δ = 0 for one run
/// (Gaussian noise has none: Dwork & Roth 2014, Thm A.1 needs δ > 0), rather than reporting ε =
/// ∞.
void check_pure_dp(const PipelineConfig& config, const dptune::Accountant& accountant,
                   const DpEvent& event, std::size_t train_rows) {
  if (config.delta != 0 || event.kind() == DpEvent::Kind::NonPrivate ||
      event.kind() == DpEvent::Kind::NoOp)
    return;
  bool finite = false;
  try {
    finite = std::isfinite(accountant.epsilon(event, 0).epsilon);
  } catch (const dptune::PrivacyError&) {
    finite = false;
  }
  if (finite) return;
  std::vector<std::string> leaves;
  impure_leaves(event, leaves);
  std::string noise;
  for (std::size_t i = 0; i < leaves.size(); ++i) noise += (i ? " and " : "") + leaves[i];
  fail(config.delta_where, "accountant.delta",
       "δ = 0 asks for pure ε-DP, but one run of " + config.algorithm.use +
           (noise.empty() ? std::string(" has no finite ε")
                          : " uses " + noise + " noise, which has no pure-DP bound") +
           " (the " + config.accountant.use +
           " accountant's ε at δ = 0 is infinite): set δ > 0, e.g. 1e-5" +
           (train_rows ? ", well below 1/n for n = " + std::to_string(train_rows) + " training rows"
                       : std::string()));
}

/// The pipeline's accountant refuses one run's `event` for reason `why`.  Exact discrete Gaussian
/// noise (the `gaussian` mechanism's `noise: secure`) has no PLD here: say which accountants
/// price it, and what `noise: fast` would cost.
[[noreturn]] void fail_unpriced(const PipelineConfig& config, const dptune::Accountant& accountant,
                                const DpEvent& event, const std::string& why) {
  std::vector<std::string> leaves;
  impure_leaves(event, leaves);
  // The hint helps only where the discrete noise is what the accountant refuses (pld), not where
  // it refuses any Gaussian (pure_dp).
  const bool discrete =
      std::find(leaves.begin(), leaves.end(),
                DpEvent::kind_name(DpEvent::Kind::DiscreteGaussian)) != leaves.end() &&
      !accountant.supports(DpEvent::discrete_gaussian(1)) &&
      accountant.supports(DpEvent::gaussian(1));
  std::string message = "the " + config.accountant.use + " accountant cannot price one run of " +
                        config.algorithm.use + ": " + why;
  if (discrete && config.mechanism)
    message += ". Its noise, from mechanism '" + config.mechanism->use +
               "' (noise: secure, the default), is exact discrete Gaussian noise on a grid: use "
               "`accountant: {use: rdp}` or `{use: best}` (best prices it with rdp), or the "
               "mechanism's `noise: fast`, priced as the continuous Gaussian but floating-point "
               "and labelled INSECURE NOISE in every report (Mironov 2012)";
  fail(config.accountant.use_where, "accountant.use", message);
}

/// ε of the algorithm with `params` (target-ε mode off, the calibration's largest noise) on
/// `rows` rows at `delta`: the floor no noise goes below.  An accountant that cannot price that
/// event at all is reported as such (what the calibration failed on).
double epsilon_floor(const PipelineConfig& config, const PluginRegistry& registry,
                     const dptune::TrainerTraits& declared, dptune::Params params, std::size_t rows,
                     EvaluationStack& stack, double delta) {
  params.set(declared.target_epsilon, 0.0);
  params.set(declared.noise_multiplier, dptune::CalibrationOptions{}.upper);
  const DpEvent event =
      stack.evaluator.trainer_event(*registry.create_trainer(config.algorithm.use, params), rows);
  if (const std::string why = stack.accountant->unsupported_reason(event); !why.empty())
    fail_unpriced(config, *stack.accountant, event, why);
  return stack.accountant->epsilon(event, delta).epsilon;
}

/// The privacy parameters the trainer declares (TrainerTraits), kept only when its schema has
/// them with the declared types: the explanation below sets and reads them.
std::optional<dptune::TrainerTraits> declared_privacy_params(const PipelineConfig& config,
                                                             const PluginRegistry& registry,
                                                             const dptune::Params& params) {
  const dptune::ParamSchema* schema = registry.schema(ComponentKind::Trainer, config.algorithm.use);
  auto declared = registry.traits(ComponentKind::Trainer, config.algorithm.use, params).trainer;
  if (!schema || !declared) return std::nullopt;
  auto has = [&](const std::string& name, dptune::ParamType type) {
    const dptune::ParamSpec* spec = name.empty() ? nullptr : schema->find(name);
    return spec && spec->type == type;
  };
  if (!has(declared->target_epsilon, dptune::ParamType::Float) ||
      !has(declared->noise_multiplier, dptune::ParamType::Float))
    return std::nullopt;
  if (!has(declared->target_delta, dptune::ParamType::Float)) declared->target_delta.clear();
  if (!has(declared->sampling, dptune::ParamType::String)) declared->sampling.clear();
  return declared;
}

/// A target ε the calibration cannot reach (calibrate_noise found no noise up to its largest):
/// say how low ε goes with the configured sampling, and which other sampling reaches the target.
/// Uses the privacy parameters the trainer declares: target ε and δ, noise and sampling.
void explain_unreachable_target(const PipelineConfig& config, const PluginRegistry& registry,
                                EvaluationStack& stack, const dptune::Params& params,
                                std::size_t rows, const std::string& at = "") {
  const auto declared = declared_privacy_params(config, registry, params);
  if (!declared || !(params.get_double(declared->target_epsilon) > 0)) return;
  const double target = params.get_double(declared->target_epsilon);
  const double delta =
      !declared->target_delta.empty() && params.get_double(declared->target_delta) > 0
          ? params.get_double(declared->target_delta)
          : config.delta;
  const dptune::ParamSpec* sampling =
      declared->sampling.empty()
          ? nullptr
          : registry.schema(ComponentKind::Trainer, config.algorithm.use)->find(declared->sampling);
  const std::string current = sampling && params.contains(sampling->name)
                                  ? params.get_string(sampling->name)
                                  : std::string();
  const auto floor = epsilon_floor(config, registry, *declared, params, rows, stack, delta);
  std::string message = at + "no noise reaches ε = " + significant(target) +
                        " at δ = " + significant(delta) +
                        (current.empty() ? std::string() : " with sampling " + current);
  message += ": ε stays at " + significant(floor) + " or above even with " +
             declared->noise_multiplier + " " + significant(dptune::CalibrationOptions{}.upper) +
             " (" + config.accountant.use + " accountant, " + std::to_string(rows) +
             " training rows)";
  std::vector<std::string> reaching;
  if (sampling)
    for (const auto& other : sampling->choices) {
      if (other == current) continue;
      dptune::Params changed = params;
      changed.set(sampling->name, other);
      try {
        if (epsilon_floor(config, registry, *declared, changed, rows, stack, delta) < target)
          reaching.push_back(other);
      } catch (const dptune::Error&) {
        // that sampling cannot be priced here (e.g. another neighbouring relation): not offered
      }
    }
  if (!reaching.empty())
    message += "; " + sampling->name + ": " + reaching.front() + " reaches it";
  else
    message += "; raise " + declared->target_epsilon + " above " + significant(floor) +
               (sampling ? " (no " + sampling->name + " reaches it)" : std::string());
  fail(where_of(config.algorithm, declared->target_epsilon),
       "algorithm.params." + declared->target_epsilon, message);
}

/// "noise_multiplier 3.1e+07" for each noise leaf of `event` (gaussian, laplace, discrete).
std::string noise_scales(const DpEvent& event) {
  using Kind = DpEvent::Kind;
  std::string text;
  dptune::for_each_event(event, [&text](const DpEvent& e) {
    if (e.kind() == Kind::Gaussian || e.kind() == Kind::Laplace ||
        e.kind() == Kind::DiscreteGaussian || e.kind() == Kind::DiscreteGaussianOnGrid ||
        e.kind() == Kind::DiscreteGaussianSum)
      text += std::string(text.empty() ? "" : ", ") + DpEvent::kind_name(e.kind()) +
              " noise_multiplier " + significant(e.noise_multiplier(), 4);
  });
  return text;
}

/// A warning when one run's ε is so small that its output barely depends on the data at all.
/// Group privacy (Dwork & Roth 2014, Theorem 2.2 for δ = 0): an (ε, δ)-DP output changes by at
/// most a factor e^{gε}, plus g e^{(g-1)ε} δ, between data sets D_0 and D_g that are g neighbour
/// steps apart.  Proof by induction over the steps: P[M(D_0) ∈ S] ≤ e^ε P[M(D_1) ∈ S] + δ ≤ ... ≤
/// e^{gε} P[M(D_g) ∈ S] + δ (1 + e^ε + ... + e^{(g-1)ε}), and the sum is at most g e^{(g-1)ε}.  Any
/// two training sets of n rows are at most g = 2n add/remove steps apart (n replacements under
/// replace-one), so with 2nε ≤ 1 every output is within a factor e of what any other data set of
/// the same size would give: the run learns next to nothing.  Public inputs only (the configuration
/// and the row count the refusals above already state).
std::optional<std::string> negligible_epsilon_warning(const PipelineConfig& config,
                                                      const dptune::Accountant& accountant,
                                                      const DpEvent& event, std::size_t rows) {
  double epsilon = 0;
  try {
    epsilon = accountant.epsilon(event, config.delta).epsilon;
  } catch (const dptune::Error&) {
    return std::nullopt;  // unpriced events were refused above; nothing to add here
  }
  const double steps = 2.0 * static_cast<double>(rows);
  if (!(epsilon >= 0) || steps * epsilon > 1) return std::nullopt;
  const double additive = steps * std::exp((steps - 1) * epsilon) * config.delta;
  const std::string noise = noise_scales(event);
  return "one run of " + config.algorithm.use + " has ε = " + significant(epsilon, 4) +
         " at δ = " + significant(config.delta, 4) +
         (noise.empty() ? std::string() : " (" + noise + ")") +
         ": its output is nearly independent of the data.  Any two training sets of " +
         std::to_string(rows) +
         " rows give every output with probabilities within a factor e^(2nε) = " +
         significant(std::exp(steps * epsilon), 4) +
         (config.delta > 0 ? " (plus " + significant(additive, 2) + ")" : std::string()) +
         " of each other (group privacy), so the trained models are noise; raise ε unless this "
         "is what you want";
}

std::vector<dptune::Params> extreme_candidates(const PipelineConfig& config);

/// The target ε of every corner of the search space (extreme_candidates) calibrated as the run
/// will calibrate it: a dimension such as target_epsilon itself, the epochs or the lot size moves
/// the calibration, so a corner can be out of its reach where the centre is not, and the run would
/// fail there after the ledger was charged.  Refused naming the corner.
void check_corner_calibrations(const PipelineConfig& config, const PluginRegistry& registry,
                               EvaluationStack& stack, std::size_t rows) {
  if (config.algorithm.kind != ComponentKind::Trainer) return;
  for (const auto& candidate : extreme_candidates(config)) {
    try {
      (void)stack.evaluator.event_of(candidate, dptune::DataScope::whole());
    } catch (const dptune::PrivacyError& e) {
      const std::string at = "at the search space's corner " + candidate.to_string() + ": ";
      explain_unreachable_target(config, registry, stack,
                                 stack.evaluator.complete_params(candidate), rows, at);
      fail(config.algorithm.use_where, "algorithm.use",
           at + e.what() + ". Nothing was charged or trained");
    } catch (const dptune::Error&) {
      // not a calibration's failure: a candidate refused where that is checked
    }
  }
}

/// One private run of the search space's centre, priced as the run will price it: δ = 0 without
/// a pure-DP bound and an unreachable target ε are refused here; then the space's corners'
/// calibrations.
void check_run_privacy(const PipelineConfig& config, const PluginRegistry& registry,
                       EvaluationStack& stack, std::vector<std::string>* warnings) {
  const std::size_t rows =
      stack.evaluator.data_varies_per_run() ? 0 : stack.evaluator.splits().train.rows;
  const dptune::Params candidate = centre_candidate(config);
  DpEvent event;
  try {
    event = stack.evaluator.event_of(candidate, dptune::DataScope::whole());
  } catch (const dptune::Error& e) {
    if (config.algorithm.kind == ComponentKind::Trainer) {
      if (config.delta == 0)
        fail(config.delta_where, "accountant.delta",
             "δ = 0 asks for pure ε-DP, but " + config.algorithm.use +
                 " cannot state one run's privacy at δ = 0 (its calibration needs δ > 0): set "
                 "δ > 0, e.g. 1e-5");
      // calibrate_noise's PrivacyError: even its largest noise misses the target.
      if (dynamic_cast<const dptune::PrivacyError*>(&e))
        explain_unreachable_target(config, registry, stack,
                                   stack.evaluator.complete_params(candidate), rows);
    }
    throw;
  }
  // Every evaluation is priced by the accountant (HostEvaluator::evaluate): one it cannot price
  // would fail the run at its first evaluation.
  if (event.kind() != DpEvent::Kind::NonPrivate && event.kind() != DpEvent::Kind::NoOp)
    if (const std::string why = stack.accountant->unsupported_reason(event); !why.empty())
      fail_unpriced(config, *stack.accountant, event, why);
  check_pure_dp(config, *stack.accountant, event, rows);
  check_corner_calibrations(config, registry, stack, rows);
  if (warnings && rows && event.kind() != DpEvent::Kind::NonPrivate &&
      event.kind() != DpEvent::Kind::NoOp)
    if (auto warning = negligible_epsilon_warning(config, *stack.accountant, event, rows))
      warnings->push_back(std::move(*warning));
}

// ---- the tuner --------------------------------------------------------------------------------

/// Thrown by the probe when the tuner starts its work (a progress phase or an evaluation): every
/// check it makes before that has passed.  It leaves the tuner's call as a PluginError (the proxy
/// attributes what is not the SDK's), so the probe also remembers that it threw.
struct ProbeDone final : std::exception {
  const char* what() const noexcept override { return "preflight: the tuner's checks passed"; }
};

class ProbeEvaluator final : public ForwardingEvaluator {
 public:
  ProbeEvaluator(const HostEvaluator& real, bool& done) : ForwardingEvaluator(real), done_(done) {}
  std::vector<dptune::Evaluation> evaluate(
      const std::vector<dptune::EvaluationRequest>& requests) override {
    done_ = true;
    first_batch_ = requests;
    throw ProbeDone();
  }
  /// What the tuner asked first (its candidates and data scopes), when it asked.
  const std::vector<dptune::EvaluationRequest>& first_batch() const { return first_batch_; }

 private:
  bool& done_;
  std::vector<dptune::EvaluationRequest> first_batch_;
};

/// A tuner's "WARNING: ..." message before its first piece of work is a preflight warning: it
/// can only depend on the configuration (nothing was evaluated yet).
class ProbeProgress final : public dptune::ProgressSink {
 public:
  ProbeProgress(bool& done, std::vector<std::string>* warnings)
      : done_(done), warnings_(warnings) {}
  void start(std::string_view, std::size_t) override {
    done_ = true;
    throw ProbeDone();
  }
  void advance(std::size_t, std::optional<double>) override {}
  void message(std::string_view text) override {
    constexpr std::string_view kPrefix = "WARNING: ";
    if (warnings_ && text.substr(0, kPrefix.size()) == kPrefix)
      warnings_->emplace_back(text.substr(kPrefix.size()));
  }

 private:
  bool& done_;
  std::vector<std::string>* warnings_;
};

/// The tuner's context up to its first piece of work: the real space, δ, accountant, events,
/// sizes and mechanism (a missing one is reported at the tuner), a public stream of its own.
class ProbeContext final : public ForwardingTunerContext {
 public:
  ProbeContext(const PipelineConfig& config, HostTunerContext& real, const HostEvaluator& evaluator,
               std::vector<std::string>* warnings)
      : ForwardingTunerContext(real),
        config_(config),
        evaluator_(evaluator, done_),
        progress_(done_, warnings) {}
  bool done() const { return done_; }
  const std::vector<dptune::EvaluationRequest>& first_batch() const {
    return evaluator_.first_batch();
  }
  dptune::Evaluator& evaluator() override { return evaluator_; }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    if (!config_.mechanism)
      fail(config_.tuner.where, "mechanism",
           "tuner '" + config_.tuner.use + "' draws noise from the pipeline's mechanism (it sets " +
               keys_of(overrides) +
               "), and the pipeline names none: add a `mechanism: {use: ...}` section");
    for (const auto& entry : overrides)
      if (const auto given = config_.mechanism->param_where.find(entry.first);
          given != config_.mechanism->param_where.end())
        fail(given->second, "mechanism.params." + entry.first,
             "tuner '" + config_.tuner.use + "' sets the mechanism's " + entry.first +
                 " itself, so this value would be ignored; remove it");
    return ForwardingTunerContext::mechanism(overrides);
  }
  dptune::ProgressSink& progress() override { return progress_; }
  dptune::RandomBitGenerator& rng() override { return rng_; }
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    for (std::size_t i = 0; i < n; ++i) body(i);
  }

 private:
  const PipelineConfig& config_;
  bool done_ = false;
  ProbeEvaluator evaluator_;
  ProbeProgress progress_;
  dptune::Xoshiro256 rng_{0x5eedULL, 0};
};

/// Runs the tuner until it starts working (its first progress phase or evaluation): what it
/// checks before that (δ, the grid's size, the accountant's support, its mechanism, files it
/// reads) is met before any data is trained on.  A ConfigError there names the tuner section.
/// Returns the tuner's first batch of requests (empty when it evaluated nothing).
std::vector<dptune::EvaluationRequest> probe_tuner(const PipelineConfig& config,
                                                   const PluginRegistry& registry,
                                                   EvaluationStack& stack,
                                                   std::vector<std::string>* warnings) {
  auto tuner = create_configured_tuner(config, registry);
  SilentProgress unused_progress;
  dptune::Xoshiro256 unused_rng(0);
  HostTunerContext real(config, stack.evaluator, *stack.accountant, stack.mechanisms,
                        unused_progress, unused_rng, *stack.executor);
  ProbeContext context(config, real, stack.evaluator, warnings);
  try {
    tuner->tune(context);
  } catch (const ConfigDiagnostic&) {
    throw;
  } catch (const dptune::ConfigError& e) {
    // Located at the parameter the refusal names, as a constructor's refusal is; any other at
    // the tuner section.
    const std::string message =
        "tuner '" + config.tuner.use + "' refuses the pipeline: " + e.what();
    if (const auto* at = parameter_named_by(config.tuner, e.what()))
      fail(at->second, "tuner.params." + at->first, message);
    fail(config.tuner.where, "tuner", message);
  } catch (const dptune::Error&) {
    if (!context.done()) throw;  // a failure of its own, as the run would meet it
  }
  return context.first_batch();
}

// ---- what the mechanism refuses whatever the data ----------------------------------------------

/// The candidates whose releases preflight asks the mechanism about: the centre of the search
/// space and its corners (every dimension at its low or high end), so that what grows along a
/// dimension (a noise multiplier, a layer's width; the σ a smaller target ε calibrates) is met at
/// its extreme.  With more than kCornerDimensions dimensions, each one's two ends with the others
/// at the centre.
std::vector<dptune::Params> extreme_candidates(const PipelineConfig& config) {
  constexpr std::size_t kCornerDimensions = 4;
  const std::size_t k = config.space.size();
  const std::vector<double> centre(k, 0.5);
  std::vector<std::vector<double>> units{centre};
  if (k <= kCornerDimensions) {
    for (std::size_t corner = 0; corner < (std::size_t{1} << k); ++corner) {
      std::vector<double> unit(k);
      for (std::size_t i = 0; i < k; ++i) unit[i] = ((corner >> i) & 1U) ? 1.0 : 0.0;
      units.push_back(std::move(unit));
    }
  } else {
    for (std::size_t i = 0; i < k; ++i)
      for (const double end : {0.0, 1.0}) {
        std::vector<double> unit = centre;
        unit[i] = end;
        units.push_back(std::move(unit));
      }
  }
  std::vector<dptune::Params> candidates;
  for (const auto& unit : units) {
    dptune::Params candidate = config.space.from_unit(unit);
    if (std::find(candidates.begin(), candidates.end(), candidate) == candidates.end())
      candidates.push_back(std::move(candidate));
  }
  return candidates;
}

/// A release the mechanism refuses whatever the values (secure Gaussian noise with σ·√d above
/// 2^21, Laplace with b·d above 2^28: dptune/helpers/grid_noise.hpp) would fail the run at its
/// first training, after the ledger was charged: refused here, naming the mechanism, for the
/// space's extreme candidates on the whole data and for the tuner's first request on each other
/// scope (a client's or partition's row count).  Public inputs only.
void check_mechanism_releases(const PipelineConfig& config, EvaluationStack& stack,
                              const std::vector<dptune::EvaluationRequest>& first_batch) {
  const bool trainer = config.algorithm.kind == ComponentKind::Trainer;
  if (trainer && !config.mechanism) return;
  std::vector<std::pair<dptune::Params, dptune::DataScope>> asked;
  for (auto& candidate : extreme_candidates(config))
    asked.emplace_back(std::move(candidate), dptune::DataScope::whole());
  // The first request on each other scope the tuner asks about (a grid's whole grid is one batch:
  // its corners are asked above).
  std::vector<std::string> scopes{dptune::DataScope::whole().to_string()};
  for (const auto& request : first_batch) {
    const std::string scope = request.scope.to_string();
    if (!request.private_run || std::find(scopes.begin(), scopes.end(), scope) != scopes.end())
      continue;
    scopes.push_back(scope);
    asked.emplace_back(request.candidate, request.scope);
  }
  for (const auto& [candidate, scope] : asked) {
    std::string why;
    try {
      why = stack.evaluator.release_refusal(candidate, scope);
    } catch (const dptune::Error&) {
      continue;  // a candidate the run cannot price or build: refused where that is checked
    }
    if (why.empty()) continue;
    if (trainer)
      fail(config.mechanism->use_where, "mechanism.use",
           why +
               ". Nothing was charged or trained: use less noise or a smaller model, or the "
               "mechanism's `noise: fast` (floating-point, labelled INSECURE NOISE)");
    fail(config.algorithm.use_where, "algorithm.use", why + ". Nothing was charged or run");
  }
}

/// A private tuner's own releases through the pipeline's mechanism (DP-Hype's noisy votes,
/// svt_doubling's noisy threshold and queries) are asked of the mechanism in the tuner's dry run
/// (plan_charge: the counts and sensitivities are the real run's, functions of the configuration
/// and the public row counts): a release the mechanism refuses whatever the values is refused
/// here, naming the mechanism, before any charge; so is a configuration error the tuner raises in
/// its dry run (a noise scale its own sampler cannot draw).  Any other failure of the dry run is
/// reported as before: here only when the run needs the dry run anyway (a ledger, a private test
/// score).
template <class Planned>
void check_tuner_releases(const PipelineConfig& config, Planned&& planned) {
  try {
    planned();
  } catch (const ConfigDiagnostic&) {
    throw;
  } catch (const dptune::ConfigError& e) {
    // The tuner's own refusal of its configuration (a noise scale its sampler cannot draw), met
    // where the dry run reaches it: data-independent, so the real run would meet it too.
    fail(config.tuner.where, "tuner",
         "tuner '" + config.tuner.use + "' refuses the pipeline: " + e.what() +
             ". Nothing was charged or run");
  } catch (const dptune::Error&) {
    if (needs_dry_run(config)) throw;
  }
}

// ---- audit verdicts of third-party mechanisms
// --------------------------------------------------

/// The pipeline's algorithm as a mechanism use: the given values and defaults are fixed, the
/// search space's dimensions vary.
std::optional<MechanismUse> algorithm_use(const PipelineConfig& config,
                                          const PluginRegistry& registry) {
  const auto* info = registry.find(dptune::PluginKind::Mechanism, config.algorithm.use);
  if (!info || is_builtin_library(info->library)) return std::nullopt;
  MechanismUse use{info->name, info->library, {}, {}, config.algorithm.use_where, "algorithm.use"};
  for (const auto& dim : config.space.dimensions())
    if (info->schema.find(dim.name)) use.varied.insert(dim.name);
  for (const auto& spec : info->schema.specs()) {
    if (config.algorithm.params.contains(spec.name))
      use.fixed.set(spec.name, config.algorithm.params.at(spec.name));
    else if (!use.varied.count(spec.name) && spec.default_value)
      use.fixed.set(spec.name, *spec.default_value);
  }
  return use;
}

/// The mechanism a trainer draws its noise from: its own parameters are complete, and the trainer
/// sets the request's overrides (e.g. noise_multiplier) on every run.
std::optional<MechanismUse> noise_source_use(const PipelineConfig& config,
                                             const PluginRegistry& registry) {
  if (!config.mechanism || config.mechanism->use == config.algorithm.use) return std::nullopt;
  const auto* info = registry.find(dptune::PluginKind::Mechanism, config.mechanism->use);
  if (!info || is_builtin_library(info->library)) return std::nullopt;
  MechanismUse use{
      info->name,     info->library, config.mechanism->params, {}, config.mechanism->use_where,
      "mechanism.use"};
  if (config.algorithm.kind == ComponentKind::Trainer) {
    if (const auto request = centre_trainer(config, registry)->mechanism_request())
      for (const auto& entry : request->overrides) use.varied.insert(entry.first);
  }
  return use;
}

/// A certified violation in a configuration the run may use refuses the run before anything is
/// evaluated, unless the user accepts it explicitly (the report then says so).
void check_audit_verdicts(const PipelineConfig& config, const PluginRegistry& registry,
                          bool allow_violation) {
  const auto uses = mechanism_uses(config, registry);
  if (uses.empty() || allow_violation) return;
  const auto records = read_audit_records(audit_store_path());
  for (const auto& use : uses) {
    const AuditVerdict verdict = audit_verdict(use, records);
    if (verdict.violation)
      fail(use.where, use.key_path,
           "`dptune audit` certified a privacy violation of '" + use.plugin +
               "' in a configuration this run may use, so its printed guarantee would not hold: " +
               verdict.statement +
               ". Fix the plugin and audit it again, or pass --allow-audit-violation to run "
               "anyway "
               "(the report will say so)");
  }
}

}  // namespace

std::vector<MechanismUse> mechanism_uses(const PipelineConfig& config,
                                         const PluginRegistry& registry) {
  std::vector<MechanismUse> uses;
  if (auto use = algorithm_use(config, registry)) uses.push_back(std::move(*use));
  if (auto use = noise_source_use(config, registry)) uses.push_back(std::move(*use));
  return uses;
}

namespace {

/// A ledger's refusal as a diagnostic at ledger.budget (exit 2), before anything is written.
[[noreturn]] void refuse_at_ledger(const PipelineConfig& config, const LedgerRefused& e) {
  // The ledger named as the pipeline names it (relative to its folder), not by absolute path.
  std::string message = e.what();
  const std::string absolute = config.ledger->path.string();
  const std::string written =
      std::filesystem::relative(config.ledger->path, config.file.parent_path()).string();
  for (auto at = message.find(absolute); at != std::string::npos;
       at = message.find(absolute, at + written.size()))
    message.replace(at, absolute.size(), written);
  fail(config.ledger->where, "ledger.budget", message);
}

}  // namespace

std::string check_ledger_before_charge(const PipelineConfig& config,
                                       const PluginRegistry& registry) {
  try {
    return check_ledger_fit(config, registry);
  } catch (const LedgerRefused& e) {
    refuse_at_ledger(config, e);
  }
}

Preflight preflight(const PipelineConfig& config, const PluginRegistry& registry,
                    std::shared_ptr<const DataSource>* data, bool allow_audit_violation,
                    std::vector<std::string>* warnings, bool with_ledger) {
  create_configured_tuner(config, registry);
  check_configured_algorithm(config, registry);
  if (config.algorithm.kind == ComponentKind::Trainer)
    check_mechanism(config, registry, *centre_trainer(config, registry));
  // After the constructors' checks, which name the pipeline's own mistakes first.
  check_audit_verdicts(config, registry, allow_audit_violation);
  // The run's seed, so that a seeded run reuses this split (make_fixed); without one, any fixed
  // seed: only the sizes of this split are used (the run draws its own from the files' rows).
  EvaluationStack stack(config, registry, "inline", 1, config.execution.seed.value_or(0));
  if (data) *data = stack.data;
  // Public statistics must have one value per feature, which only the data can tell (a
  // ConfigError naming the list's file:line:col when the lengths differ).
  if (!stack.evaluator.data_varies_per_run()) stack.evaluator.splits();
  check_run_privacy(config, registry, stack, warnings);
  const auto first_batch = probe_tuner(config, registry, stack, warnings);
  check_mechanism_releases(config, stack, first_batch);
  // The tuner's dry run, made once (when asked for) and shared by the private test score's
  // pricing and the ledger's write-ahead plan.
  std::optional<PlannedCharge> plan;
  auto planned = [&]() -> const PlannedCharge& {
    if (!plan) plan = plan_charge(config, registry, stack);
    return *plan;
  };
  Preflight out;
  if (!declared_map(config)) check_tuner_releases(config, planned);
  if (config.output.test_score) out.lines.test_score = check_test_score(config, stack, planned);
  if (with_ledger && config.ledger) {
    out.ledger_plan = ledger_charge_of(config, stack, planned());
    try {
      out.lines.ledger = ledger_fit(config, *stack.accountant, *out.ledger_plan);
    } catch (const LedgerRefused& e) {
      refuse_at_ledger(config, e);
    }
  }
  return out;
}

std::string check_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                           std::shared_ptr<const DataSource>* data, bool allow_audit_violation,
                           std::vector<std::string>* warnings) {
  return preflight(config, registry, data, allow_audit_violation, warnings, false).lines.test_score;
}

PreflightLines validate_pipeline(const PipelineConfig& config, const PluginRegistry& registry,
                                 bool allow_audit_violation, std::vector<std::string>* warnings) {
  return preflight(config, registry, nullptr, allow_audit_violation, warnings, true).lines;
}

}  // namespace dptune::host
