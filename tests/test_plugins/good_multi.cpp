// One library exporting an accountant, a utility, a trainer and a tuner (all well-formed).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dptune/plugin.hpp"

namespace {

/// Defined in the plugin: its type_info and vtable live in this library only.
class ModelFailure : public std::exception {
 public:
  explicit ModelFailure(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

class PureAccountant final : public dptune::Accountant {
 public:
  explicit PureAccountant(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    return event.kind() == dptune::DpEvent::Kind::PureDp ? "" : "only PureDp events";
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    if (event.kind() != dptune::DpEvent::Kind::PureDp) {
      throw dptune::PrivacyError("test_accountant: cannot account " + event.to_string());
    }
    dptune::PrivacyGuarantee guarantee;
    guarantee.epsilon = event.epsilon();
    guarantee.delta = delta;
    guarantee.accountant = "test_accountant";
    return guarantee;
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    dptune::PrivacyGuarantee guarantee = this->epsilon(event, 0);
    if (guarantee.epsilon > epsilon)
      throw dptune::PrivacyError("test_accountant: epsilon too small");
    guarantee.epsilon = epsilon;
    return guarantee;
  }
};

class MatchUtility final : public dptune::Utility {
 public:
  explicit MatchUtility(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  /// Fraction of predicted values equal to the truth.
  double score(std::span<const double> truth, const dptune::Predictions& predicted) const override {
    if (truth.size() != predicted.values.size()) {
      throw dptune::InvalidArgument("test_utility: " + std::to_string(truth.size()) +
                                    " labels but " + std::to_string(predicted.values.size()) +
                                    " predictions");
    }
    if (truth.empty()) return 0;
    std::size_t hits = 0;
    for (std::size_t i = 0; i < truth.size(); ++i) hits += truth[i] == predicted.values[i];
    return static_cast<double>(hits) / static_cast<double>(truth.size());
  }
};

class ConstantModel final : public dptune::Model {
 public:
  ConstantModel(double value, bool fail) : value_(value), fail_(fail) {}
  dptune::Predictions predict(const dptune::Dataset& data) const override {
    if (fail_) throw ModelFailure("constant model refuses to predict");
    dptune::Predictions predictions;
    predictions.values.assign(data.rows, value_);
    return predictions;
  }
  std::string describe() const override { return "constant " + std::to_string(value_); }

 private:
  double value_;
  bool fail_;
};

class ConstantTrainer final : public dptune::Trainer {
 public:
  explicit ConstantTrainer(const dptune::Params& params)
      : value_(params.get_double("value")), fail_predict_(params.get_bool("fail_predict")) {}
  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_float("value", "the constant every prediction is").default_to(1.0);
    schema.add_bool("fail_predict", "the model throws in predict").default_to(false);
    return schema;
  }

  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    dptune::TrainedModel trained;
    // The control block of this shared_ptr is created here, in the plugin.
    trained.model = std::make_shared<ConstantModel>(value_, fail_predict_);
    trained.event = dptune::DpEvent::self_composed(dptune::DpEvent::pure_dp(context.delta() + 1),
                                                   static_cast<std::int64_t>(data.rows));
    return trained;
  }
  dptune::DpEvent event(std::size_t) const override { return dptune::DpEvent::no_op(); }

 private:
  double value_;
  bool fail_predict_;
};

class ProbeTuner final : public dptune::Tuner {
 public:
  explicit ProbeTuner(const dptune::Params& params) : probe_(params.get_string("probe")) {}
  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_string("probe", "what to call back")
        .one_of({"delta", "mechanism"})
        .default_to(std::string("delta"));
    return schema;
  }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    dptune::TuningResult result;
    if (probe_ == "delta") {
      result.notes.push_back("delta " + std::to_string(context.delta()));
    } else {
      auto mechanism = context.mechanism({});
      result.notes.push_back("mechanism " + mechanism->event().to_string());
    }
    return result;
  }

 private:
  std::string probe_;
};

}  // namespace

DPTUNE_PLUGIN(accountant, test_accountant, PureAccountant, "0.1.0", "test: PureDp only")
DPTUNE_PLUGIN(utility, test_utility, MatchUtility, "0.1.0", "test: fraction of exact matches")
DPTUNE_PLUGIN(trainer, test_trainer, ConstantTrainer, "0.1.0", "test: a constant model")
DPTUNE_PLUGIN(tuner, test_tuner, ProbeTuner, "0.1.0", "test: calls back into the host")
