#include "run/test_score.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/ledger.hpp"
#include "dptune/host/utility_sensitivity.hpp"
#include "run/evaluator.hpp"
#include "run/study_run.hpp"

namespace dptune::host {

namespace {

std::string rows_text(std::size_t rows) { return std::to_string(rows) + " rows"; }

/// The public test file, read as the data section reads its file, preprocessed like every split.
dptune::Dataset read_public_test(const PipelineConfig& config, const Preprocessing& prepared) {
  const dptune::Params& p = config.data.params;
  dptune::Dataset data;
  if (config.data.use == "csv") {
    CsvOptions o;
    o.header = p.get_bool("header");
    o.label_column = p.get_string("label_column");
    o.delimiter = p.get_string("delimiter").front();
    o.classification = p.get_bool("classification");
    o.classes.names = declared_class_names(config.data.use, p);
    data = read_csv(config.output.test_score->public_file, o);
  } else {
    // The declared schema applies to the public file as to the private one.
    LibsvmOptions o;
    o.num_features = static_cast<std::size_t>(p.get_int("num_features"));
    o.classes.names = declared_class_names(config.data.use, p);
    o.refuse_extra_features = p.get_string("unknown_features") == "refuse";
    data = read_libsvm(config.output.test_score->public_file, o);
  }
  prepared.apply(data);
  data.float_rows = dptune::as_float_rows(data);  // plugins read the float rows
  return data;
}

/// The public file must fit the model: the same feature count and, for classes, the same number
/// of classes (the reader numbers the labels of each file in ascending order, so the files must
/// hold the same label values for the numbers to agree).
void check_public_test(const PipelineConfig& config, const dptune::Dataset& test,
                       const dptune::Dataset& train) {
  const auto& t = *config.output.test_score;
  const std::string file = t.public_file.filename().string();
  auto refuse = [&](const std::string& why) {
    throw ConfigDiagnostic(t.value_where, "output.test_score.public", file + ": " + why);
  };
  if (test.rows == 0) refuse("no rows");
  if (test.cols != train.cols)
    refuse(std::to_string(test.cols) + " feature columns, but the data section's file has " +
           std::to_string(train.cols));
  if (test.num_classes != train.num_classes)
    refuse(std::to_string(test.num_classes) + " distinct labels, but the data section's file has " +
           std::to_string(train.num_classes) +
           " (classes are numbered by sorting each file's labels, so the test file must hold "
           "every label value of the data section's file)");
}

}  // namespace

TestScoreNoise test_score_noise(const PipelineConfig& config, std::size_t test_rows) {
  const TestScoreConfig& t = *config.output.test_score;
  const std::string key = "output.test_score.epsilon";
  if (test_rows == 0)
    throw ConfigDiagnostic(t.value_where, key, "the test split has no rows to score");
  const dptune::UtilitySensitivity s = utility_sensitivity(config.utility, test_rows);
  if (!s.per_record)
    throw ConfigDiagnostic(t.value_where, key,
                           "a private test score needs the utility's sensitivity: " + s.derivation);
  TestScoreNoise noise{*t.epsilon, *s.per_record, s.derivation, test_rows};
  try {
    (void)noise.scale();  // the grid rule refuses an epsilon too small for its range
  } catch (const dptune::InvalidArgument& e) {
    throw ConfigDiagnostic(t.value_where, key, e.what());
  }
  return noise;
}

namespace {

/// compose_test_score for a tuner that returned its event: two questions to the accountant, both
/// about events, and the smaller answer (each is a sound bound for the same release).
///  * composed({tuning_event, score event}): the accountant's own composition of what was
///    released, the tighter route when it composes better than per-part guarantees;
///  * composed({approx_dp(the tuning's guarantee), score event}): basic composition, which keeps a
///    tuning guarantee the accountant proved by a route that does not compose (the rdp accountant
///    prices a repeat-and-select alone by its privacy profile, Papernot & Steinke 2022, Theorem 6
///    with the selection's profile, but inside a composition only by its RDP curve).
/// The result keeps the RDP curve of the composed events, for the ledger's later composition.
dptune::PrivacyGuarantee price_with_test_score(const dptune::PrivacyGuarantee& tuning,
                                               const dptune::DpEvent& tuning_event,
                                               const TestScoreNoise& noise,
                                               const dptune::Accountant& accountant,
                                               double target) {
  // The event must price to at least the guarantee the tuner stated for it (the bundled tuners
  // state exactly its price): a tuner whose event claims less than its guarantee contradicts
  // itself, and the smaller answer below must not come from the contradiction.
  if (tuning.delta == target) {
    const double own = accountant.epsilon(tuning_event, target).epsilon;
    if (own < tuning.epsilon * (1 - 1e-9))
      throw dptune::PluginError(
          "the tuner's event " + tuning_event.to_string() + " prices to " + significant(own, 17) +
          " at delta " + significant(target, 17) + ", below the guarantee it states (" +
          significant(tuning.epsilon, 17) + "): the tuner's event and guarantee disagree");
  }
  const dptune::DpEvent whole = dptune::DpEvent::composed({tuning_event, noise.event()});
  const dptune::DpEvent basic_event = dptune::DpEvent::composed(
      {dptune::DpEvent::approx_dp(tuning.epsilon, tuning.delta), noise.event()});
  const dptune::PrivacyGuarantee basic = accountant.epsilon(basic_event, target);
  dptune::PrivacyGuarantee out = basic;
  out.epsilon = std::numeric_limits<double>::infinity();
  if (accountant.supports(whole)) out = accountant.epsilon(whole, target);
  const bool basic_wins = basic.epsilon < out.epsilon;
  const std::string how =
      basic_wins
          ? "basic composition, the accountant's price of " + basic_event.to_string() +
                " (below its price of the composed events, " + significant(out.epsilon, 17) + ")"
          : "the accountant's price of the composed events " + whole.to_string();
  if (basic_wins) out.epsilon = basic.epsilon;
  out.delta = target;
  out.derivation =
      "the tuning: (" + significant(tuning.epsilon, 17) + ", " + significant(tuning.delta, 17) +
      ") by " + tuning.derivation + "; then the private test score: " + noise.event().to_string() +
      ", pure " + significant(noise.epsilon, 17) +
      "-DP (Laplace mechanism, Dwork, McSherry, Nissim & Smith 2006) on the test "
      "split; composed sequentially (the score depends on the released model; "
      "conservative: no disjointness argument), " +
      how + ": epsilon " + significant(out.epsilon, 17) + " at delta " + significant(target, 17);
  return out;
}

}  // namespace

dptune::PrivacyGuarantee compose_test_score(const dptune::PrivacyGuarantee& tuning,
                                            const std::optional<dptune::DpEvent>& tuning_event,
                                            const TestScoreNoise& noise,
                                            const dptune::Accountant& accountant, double delta) {
  const double target = std::max(delta, tuning.delta);
  if (tuning_event) return price_with_test_score(tuning, *tuning_event, noise, accountant, target);
  const dptune::PrivacyGuarantee test = accountant.epsilon(noise.event(), target);
  const std::vector<std::vector<dptune::RdpPoint>> curves{tuning.rdp_curve, test.rdp_curve};
  const ComposedCharges c =
      compose_charges({dptune::DpEvent::approx_dp(tuning.epsilon, tuning.delta), noise.event()},
                      curves, target, accountant);
  dptune::PrivacyGuarantee out;
  out.epsilon = c.epsilon;
  out.delta = target;
  out.accountant = tuning.accountant.empty() ? test.accountant : tuning.accountant;
  if (!tuning.rdp_curve.empty() && !test.rdp_curve.empty()) out.rdp_curve = add_curves(curves);
  out.derivation =
      "the tuning: (" + significant(tuning.epsilon, 17) + ", " + significant(tuning.delta, 17) +
      ") by " + tuning.derivation + "; then the private test score: " + noise.event().to_string() +
      ", pure " + significant(noise.epsilon, 17) +
      "-DP (Laplace mechanism, Dwork, McSherry, Nissim & Smith 2006) on the test "
      "split; composed sequentially (the score depends on the released model; "
      "conservative: no disjointness argument), " +
      c.how + ": epsilon " + significant(c.epsilon, 17) + " at delta " + significant(target, 17);
  return out;
}

TestScore score_released_model(const PipelineConfig& config, const dptune::Utility& utility,
                               const DataSplits& splits, const Preprocessing& prepared,
                               const dptune::Model* model, dptune::RandomBitGenerator& rng) {
  const TestScoreConfig& t = *config.output.test_score;
  TestScore out;
  out.is_public = !t.epsilon;
  dptune::Dataset public_test;
  const dptune::Dataset* test = &splits.test;
  if (out.is_public) {
    public_test = read_public_test(config, prepared);
    check_public_test(config, public_test, splits.train);
    test = &public_test;
    out.public_file = t.public_file.string();
    out.source = "the test set " + out.public_file + " (" + rows_text(test->rows) + ")";
  } else {
    out.noise = test_score_noise(config, splits.test.rows);
    out.split_selected_on = config.score_split == ScoreSplit::Test;
    out.source = "the test split (" + rows_text(test->rows) + ")";
  }
  if (!model) return out;
  const double score = utility.score(test->labels, model->predict(*test));
  if (!(score >= 0.0 && score <= 1.0))
    throw dptune::PluginError("utility '" + config.utility.use + "' returned " +
                              significant(score, 5) + " on the test set, outside [0, 1]");
  if (!out.noise) {
    out.value = score;
    return out;
  }
  const std::vector<double> value{score};
  out.value = dptune::grid_laplace(value, out.noise->sensitivity, out.noise->multiplier(),
                                   out.noise->grid(), rng)
                  .front();
  return out;
}

std::string check_test_score(const PipelineConfig& config, EvaluationStack& stack,
                             const std::function<const PlannedCharge&()>& planned) {
  const TestScoreConfig& t = *config.output.test_score;
  if (stack.evaluator.data_varies_per_run())
    throw ConfigDiagnostic(t.where, "output.test_score",
                           "data '" + config.data.use +
                               "' draws new data for every run: there is no fixed test set "
                               "for the released model");
  const DataSplits& splits = stack.evaluator.splits();
  if (!t.epsilon) {
    const dptune::Dataset test = read_public_test(config, splits.preprocessing);
    check_public_test(config, test, splits.train);
    return "test score: the released model on the test set " + t.public_file.string() + " (" +
           rows_text(test.rows) + "), assumed public: no noise, no privacy cost";
  }
  const TestScoreNoise noise = test_score_noise(config, splits.test.rows);
  const PlannedCharge* plan = &planned();
  if (plan->trusted_analyst_only || !plan->guarantee)
    throw ConfigDiagnostic(t.value_where, "output.test_score.epsilon",
                           "tuner '" + config.tuner.use +
                               "' claims no privacy guarantee to compose a private test score "
                               "into; declare a public test file (test_score: {public: FILE})");
  const dptune::PrivacyGuarantee g =
      compose_test_score(*plan->guarantee, plan->event, noise, *stack.accountant, config.delta);
  return "test score: the released model on the test split (" + rows_text(noise.test_rows) +
         ") plus Laplace noise of scale " + significant(noise.scale(), 5) + " (sensitivity " +
         significant(noise.sensitivity, 5) + " / epsilon " + significant(noise.epsilon, 5) +
         "); the guarantee (epsilon, delta) = (" + significant(plan->guarantee->epsilon, 5) + ", " +
         significant(plan->guarantee->delta, 3) + ") of the tuning becomes (" +
         significant(g.epsilon, 5) + ", " + significant(g.delta, 3) + ")";
}

TestScoreNoise planned_test_score_noise(const PipelineConfig& config,
                                        const PluginRegistry& registry) {
  EvaluationStack stack(config, registry, "inline", 1, 0);
  if (stack.evaluator.data_varies_per_run())
    throw ConfigDiagnostic(config.output.test_score->where, "output.test_score",
                           "data '" + config.data.use + "' has no fixed test split");
  return test_score_noise(config, stack.evaluator.splits().test.rows);
}

}  // namespace dptune::host
