// `dptune audit trainer PIPELINE`: the one-run game of Steinke, Nasr & Jagielski (NeurIPS 2023) on
// the pipeline's trainer and data with input-space canaries (black-box: any trainer, `command`
// included), trained once through the evaluator's own training call (dptune/host/trainer_audit.hpp;
// docs/audit.md, "Auditing a trainer").
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/trainer_audit.hpp"
#include "run/evaluator.hpp"
#include "run/trainer_audit_parts.hpp"

namespace dptune::host {

namespace {

/// The audit's own draws (canaries, inclusions, tie-breaks) and the training run use two streams
/// of the pipeline's random source that no tuner run uses in this process (there is no tuner).
constexpr std::uint64_t kAuditStream = 0;
constexpr std::uint64_t kTrainingStream = std::uint64_t{1} << 32;
constexpr double kMaxCanaryNorm = 1e3;

/// m canary rows (or 2m: canaries then their twins for the replace-one game): x = a · u with u a
/// random sign vector ÷ √d (unit norm) and a uniformly random label.  Random sign vectors in d
/// dimensions are nearly orthogonal (|cos| ~ 1/√d), so canaries interfere little while m ≲ d.
dptune::Dataset make_canaries(std::size_t count, std::size_t d, std::size_t classes, double norm,
                              dptune::RandomBitGenerator& rng) {
  dptune::Dataset c;
  c.rows = count;
  c.cols = d;
  c.num_classes = classes;
  c.features.resize(count * d);
  c.labels.resize(count);
  // Rounded to float, as the host stores every feature: a canary's values then look like any
  // row's to the trainer (a `command` program reads them from the same CSV).
  const double entry = static_cast<float>(norm / std::sqrt(static_cast<double>(d)));
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t j = 0; j < d; ++j)
      c.features[i * d + j] = (rng.next_u64() & 1) ? entry : -entry;
    c.labels[i] = static_cast<double>(dptune::uniform_index(rng, classes));
  }
  return c;
}

double largest_row_norm(const dptune::Dataset& data) {
  const dptune::FloatRows rows = dptune::as_float_rows(data);
  double largest = 0;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    double s = 0;
    for (std::size_t j = 0; j < rows.cols(); ++j) s += double(rows.row(i)[j]) * rows.row(i)[j];
    largest = std::max(largest, std::sqrt(s));
  }
  return largest;
}

/// The training set of the game: every real row, and canary i (or its twin) as S says, in a
/// uniformly random order so that a trainer cannot tell canaries by their position.
dptune::Dataset assemble(const dptune::Dataset& real, const dptune::Dataset& canaries,
                         const std::vector<bool>& included, bool replace_game,
                         dptune::RandomBitGenerator& rng) {
  const std::size_t m = included.size(), d = real.cols;
  const dptune::FloatRows rows = dptune::as_float_rows(real);
  std::vector<std::pair<bool, std::size_t>> order;  // (canary?, index)
  for (std::size_t i = 0; i < real.rows; ++i) order.push_back({false, i});
  for (std::size_t i = 0; i < m; ++i) {
    if (included[i])
      order.push_back({true, i});
    else if (replace_game)
      order.push_back({true, m + i});
  }
  std::vector<std::size_t> permutation(order.size());
  for (std::size_t i = 0; i < permutation.size(); ++i) permutation[i] = i;
  dptune::shuffle(rng, permutation);
  // Float storage, as the host hands every trainer its rows.
  auto values = std::make_shared<std::vector<float>>();
  values->reserve(order.size() * d);
  dptune::Dataset out;
  out.name = real.name;
  out.cols = d;
  out.num_classes = real.num_classes;
  out.feature_names = real.feature_names;
  out.rows = order.size();
  for (const std::size_t p : permutation) {
    const auto [is_canary, index] = order[p];
    if (is_canary) {
      values->insert(values->end(), canaries.row(index), canaries.row(index) + d);
      out.labels.push_back(canaries.labels[index]);
    } else {
      values->insert(values->end(), rows.row(index), rows.row(index) + d);
      out.labels.push_back(real.labels[index]);
    }
  }
  out.float_rows = dptune::FloatRows(std::move(values), d);
  return out;
}

/// Per canary row: log p_model(label | x) when the model gives probabilities, else 1 when it
/// predicts the label and 0 otherwise.
std::vector<double> canary_scores(const dptune::Model& model, const dptune::Dataset& canaries,
                                  std::string& kind) {
  const dptune::Predictions p = model.predict(canaries);
  std::vector<double> scores(canaries.rows);
  const std::size_t k = p.num_classes ? p.num_classes : canaries.num_classes;
  const bool probabilities = k > 0 && p.probabilities.size() == canaries.rows * k;
  kind = probabilities ? "log-probability of the canary's label" : "correct-label indicator";
  for (std::size_t i = 0; i < canaries.rows; ++i) {
    const auto label = static_cast<std::size_t>(canaries.labels[i]);
    if (probabilities)
      scores[i] = std::log(std::max(p.probabilities[i * k + label], 1e-300));
    else
      scores[i] = (i < p.values.size() && p.values[i] == canaries.labels[i]) ? 1.0 : 0.0;
  }
  return scores;
}

}  // namespace

TrainerAuditResult run_trainer_audit(const PipelineConfig& config, const PluginRegistry& registry,
                                     const TrainerAuditOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  dptune::require(options.canaries >= 2, "audit trainer: at least 2 canaries");
  EvaluationStack stack(config, registry, "inline", 1, options.seed);
  check_auditable(config, stack);
  HostEvaluator& evaluator = stack.evaluator;
  TrainerAuditResult r;
  r.params = audited_params(config, evaluator, options);
  const auto trainer = registry.create_trainer(config.algorithm.use, r.params);
  const dptune::Dataset& real = evaluator.splits().train;
  const std::size_t m = options.canaries;
  const bool replace_game = describe_audited_run(config, registry, stack, *trainer, m, r) ==
                            dptune::Neighbouring::ReplaceOne;

  auto rng = stack.random.make(kAuditStream);
  r.canary_norm =
      std::min(kMaxCanaryNorm, options.canary_scale * std::max(largest_row_norm(real), 1.0));
  const dptune::Dataset canaries =
      make_canaries(replace_game ? 2 * m : m, real.cols, real.num_classes, r.canary_norm, *rng);
  std::vector<bool> included(m);
  for (std::size_t i = 0; i < m; ++i) included[i] = dptune::bernoulli(*rng, 0.5);
  const dptune::Dataset train = assemble(real, canaries, included, replace_game, *rng);
  r.trained_rows = train.rows;

  const dptune::TrainedModel trained = evaluator.train_once(*trainer, train, kTrainingStream);
  r.event = trained.event;
  const dptune::PrivacyGuarantee claim = stack.accountant->epsilon(trained.event, config.delta);
  r.epsilon_claimed = claim.epsilon;
  r.accountant = claim.accountant.empty() ? config.accountant.use : claim.accountant;
  r.claimed_profile = claimed_profile(*stack.accountant, trained.event, config.delta);

  std::vector<double> scores = canary_scores(*trained.model, canaries, r.score_kind);
  if (replace_game) {
    // Canary i against its twin: how much likelier the model finds c_i than c'_i.
    for (std::size_t i = 0; i < m; ++i) scores[i] -= scores[m + i];
    scores.resize(m);
    r.score_kind += ", canary minus its twin";
  }
  analyse_canaries(scores, included, config, options, *rng, "", r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dptune::host
