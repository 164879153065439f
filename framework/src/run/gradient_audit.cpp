// `dptune audit trainer PIPELINE --canary-kind gradient`: the one-run game of Steinke, Nasr &
// Jagielski (NeurIPS 2023) with white-box gradient canaries (their Section 7): Dirac canary
// gradients inserted into the clipped-gradient sums of a trainer that declares the hook
// (dptune/gradient_canaries.hpp), each canary scored by its coordinate of the sum of the released
// noisy sums (docs/audit.md, "Gradient canaries").
//
// Why the bound is tighter than with input canaries.  DP-SGD's guarantee is a statement about the
// sequence of released noisy sums; the model is post-processing of them.  An input canary is
// scored on the final model only, through the gradient the model happens to compute for it, so
// much of what the released sums reveal about it is lost (and canaries interfere through shared
// features).  A gradient canary is worst-case for the analysis: its clipped gradient has the full
// norm L at every step it is sampled, is orthogonal to every other canary, and its score sums
// exactly the released coordinates it moves, which is the likelihood-ratio statistic of one
// Gaussian coordinate per step (Neyman–Pearson), up to the real rows' gradients on that
// coordinate.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>

#include "dptune/errors.hpp"
#include "dptune/gradient_canaries.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/trainer_audit.hpp"
#include "plugins/plugin_proxies.hpp"
#include "run/evaluator.hpp"
#include "run/trainer_audit_parts.hpp"

namespace dptune::host {

namespace {

/// The audit's own draws and the training run: the streams the input-space audit uses.
constexpr std::uint64_t kAuditStream = 0;
constexpr std::uint64_t kTrainingStream = std::uint64_t{1} << 32;

/// The host's training context with the audit's canaries offered: everything else is the host's.
/// It exists only inside run_gradient_trainer_audit, for its one training run.
class CanaryContext final : public dptune::TrainingContext, public dptune::GradientCanaryContext {
 public:
  CanaryContext(dptune::TrainingContext& host, const dptune::GradientCanaries& canaries)
      : host_(host), canaries_(canaries) {}
  dptune::RandomBitGenerator& rng() override { return host_.rng(); }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    return host_.mechanism(overrides);
  }
  const dptune::Accountant& accountant() const override { return host_.accountant(); }
  double delta() const override { return host_.delta(); }
  bool private_run() const override { return host_.private_run(); }
  const dptune::GradientCanaries& gradient_canaries() const override { return canaries_; }

 private:
  dptune::TrainingContext& host_;
  const dptune::GradientCanaries& canaries_;
};

/// The audited trainer as the evaluator sees it: every call forwarded, train() given the host's
/// context wrapped in a CanaryContext.  So the audit run goes through the evaluator's own checks
/// (the predicted event, the mechanism's refusals) and no production context ever offers canaries.
class CanaryTrainer final : public dptune::Trainer {
 public:
  CanaryTrainer(const dptune::Trainer& inner, const dptune::GradientCanaries& canaries)
      : inner_(inner), canaries_(canaries) {}
  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    CanaryContext offering(context, canaries_);
    return inner_.train(data, offering);
  }
  dptune::DpEvent event(std::size_t rows) const override { return inner_.event(rows); }
  dptune::DpEvent exact_event(std::size_t rows, const dptune::Accountant& accountant,
                              double delta) const override {
    return inner_.exact_event(rows, accountant, delta);
  }
  std::optional<dptune::MechanismRequest> mechanism_request() const override {
    return inner_.mechanism_request();
  }
  std::vector<dptune::MechanismRelease> mechanism_releases(
      const dptune::DataShape& shape) const override {
    return inner_.mechanism_releases(shape);
  }

 private:
  const dptune::Trainer& inner_;
  const dptune::GradientCanaries& canaries_;
};

void check_declared(const PipelineConfig& config, const dptune::Trainer& trainer) {
  if (!takes_gradient_canaries(trainer))
    throw ConfigDiagnostic(config.algorithm.use_where, "algorithm.use",
                           "trainer '" + config.algorithm.use +
                               "' does not take gradient canaries (it does not implement "
                               "dptune::GradientCanaryTrainer); audit it with --canary-kind input");
}

/// The one release a step the trainer declares for data of this shape: (p, L2 sensitivity).
std::pair<std::size_t, double> released_sum(const PipelineConfig& config,
                                            const dptune::Trainer& trainer,
                                            const dptune::DataShape& shape, std::size_t m) {
  const auto releases = trainer.mechanism_releases(shape);
  if (releases.size() != 1 || releases[0].count == 0 || !(releases[0].sensitivity.l2 > 0))
    throw ConfigDiagnostic(config.algorithm.use_where, "algorithm.use",
                           "trainer '" + config.algorithm.use +
                               "' does not declare one noisy gradient sum per step "
                               "(Trainer::mechanism_releases); gradient canaries need its length "
                               "and sensitivity");
  if (releases[0].count < m)
    throw ConfigDiagnostic(config.algorithm.use_where, "algorithm.use",
                           "the trainer's gradient has " + std::to_string(releases[0].count) +
                               " parameters, fewer than the " + std::to_string(m) +
                               " gradient canaries (one coordinate each): lower --canaries");
  return {releases[0].count, releases[0].sensitivity.l2};
}

/// The training set: the real rows and one all-zero placeholder row per canary record, in a
/// uniformly random order; `canaries.rows` (ascending) and its coordinates and values are filled.
/// `record_of[k]`: the canary whose value the k-th placeholder carries.
dptune::Dataset assemble(const dptune::Dataset& real, const std::vector<std::size_t>& record_of,
                         const std::vector<std::size_t>& coordinate,
                         const std::vector<double>& value, dptune::GradientCanaries& canaries,
                         dptune::RandomBitGenerator& rng) {
  const std::size_t d = real.cols, total = real.rows + record_of.size();
  std::vector<std::size_t> permutation(total);
  std::iota(permutation.begin(), permutation.end(), std::size_t{0});
  dptune::shuffle(rng, permutation);
  const dptune::FloatRows rows = dptune::as_float_rows(real);
  auto values = std::make_shared<std::vector<float>>();
  values->reserve(total * d);
  dptune::Dataset out;
  out.name = real.name;
  out.cols = d;
  out.num_classes = real.num_classes;
  out.feature_names = real.feature_names;
  out.rows = total;
  for (std::size_t position = 0; position < total; ++position) {
    const std::size_t source = permutation[position];
    if (source < real.rows) {
      values->insert(values->end(), rows.row(source), rows.row(source) + d);
      out.labels.push_back(real.labels[source]);
      continue;
    }
    values->insert(values->end(), d, 0.0f);
    out.labels.push_back(0.0);
    const std::size_t canary = record_of[source - real.rows];
    canaries.rows.push_back(position);
    canaries.coordinates.push_back(coordinate[canary]);
    canaries.values.push_back(value[source - real.rows]);
  }
  out.float_rows = dptune::FloatRows(std::move(values), d);
  return out;
}

/// The canaries' draws.  Canary i: coordinate c_i (distinct), sign s_i, in with probability 1/2.
/// Add/remove: a record s_i · norm · e_{c_i} when in, none when out.  Replace-one: slot i always
/// holds a record, s_i · norm · e_{c_i} when in and its twin −s_i · norm · e_{c_i} when out (two
/// records whose clipped gradients differ by 2L, what the replace-one accounting allows).
struct CanaryGame {
  std::vector<std::size_t> coordinate;
  std::vector<double> sign;
  std::vector<bool> included;
  std::vector<std::size_t> record_of;  // per record: its canary
  std::vector<double> record_value;    // per record: its gradient's value
};

CanaryGame draw_game(std::size_t m, std::size_t parameters, bool replace_game, double norm,
                     dptune::RandomBitGenerator& rng) {
  CanaryGame g;
  g.coordinate.resize(parameters);
  std::iota(g.coordinate.begin(), g.coordinate.end(), std::size_t{0});
  dptune::shuffle(rng, g.coordinate);
  g.coordinate.resize(m);
  g.sign.resize(m);
  g.included.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    g.sign[i] = (rng.next_u64() & 1) ? 1.0 : -1.0;
    g.included[i] = dptune::bernoulli(rng, 0.5);
    if (g.included[i] || replace_game) {
      g.record_of.push_back(i);
      g.record_value.push_back((g.included[i] ? 1.0 : -1.0) * g.sign[i] * norm);
    }
  }
  return g;
}

}  // namespace

TrainerAuditResult run_gradient_trainer_audit(const PipelineConfig& config,
                                              const PluginRegistry& registry,
                                              const TrainerAuditOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t m = options.canaries;
  dptune::require(m >= 2, "audit trainer: at least 2 canaries");
  EvaluationStack stack(config, registry, "inline", 1, options.seed);
  check_auditable(config, stack);
  HostEvaluator& evaluator = stack.evaluator;
  TrainerAuditResult r;
  r.canary_kind = "gradient";
  r.params = audited_params(config, evaluator, options);
  const auto trainer = registry.create_trainer(config.algorithm.use, r.params);
  check_declared(config, *trainer);
  const bool replace_game = describe_audited_run(config, registry, stack, *trainer, m, r) ==
                            dptune::Neighbouring::ReplaceOne;
  const dptune::Dataset& real = evaluator.splits().train;
  const auto release =
      released_sum(config, *trainer, {real.rows + m, real.cols, real.num_classes}, m);
  const std::size_t parameters = release.first;
  r.parameters = parameters;
  r.canary_norm = options.canary_scale * release.second;

  auto rng = stack.random.make(kAuditStream);
  const CanaryGame game = draw_game(m, parameters, replace_game, r.canary_norm, *rng);
  dptune::GradientCanaries canaries;
  const dptune::Dataset train =
      assemble(real, game.record_of, game.coordinate, game.record_value, canaries, *rng);
  r.trained_rows = train.rows;
  // The white-box observation: the sum over steps of every released sum's canary coordinates.
  std::vector<double> released_total(m, 0.0);
  std::size_t steps = 0;
  canaries.observe = [&](const std::vector<double>& released) {
    dptune::require(released.size() == parameters,
                    "audit trainer: a released gradient sum has the wrong length");
    for (std::size_t i = 0; i < m; ++i) released_total[i] += released[game.coordinate[i]];
    ++steps;
  };
  const CanaryTrainer audited(*trainer, canaries);
  const dptune::TrainedModel trained = evaluator.train_once(audited, train, kTrainingStream);
  if (steps == 0)
    throw dptune::PluginError("trainer '" + config.algorithm.use +
                              "' declares gradient canaries but reported no released sum");
  r.event = trained.event;
  const dptune::PrivacyGuarantee claim = stack.accountant->epsilon(trained.event, config.delta);
  r.epsilon_claimed = claim.epsilon;
  r.accountant = claim.accountant.empty() ? config.accountant.use : claim.accountant;
  r.claimed_profile = claimed_profile(*stack.accountant, trained.event, config.delta);

  std::vector<double> scores(m);
  for (std::size_t i = 0; i < m; ++i) scores[i] = game.sign[i] * released_total[i];
  r.score_kind = "canary direction of the sum of the " + std::to_string(steps) +
                 " released noisy gradient sums";
  analyse_canaries(scores, game.included, config, options, *rng, "white-box gradient canaries", r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dptune::host
