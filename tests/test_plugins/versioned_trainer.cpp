// A trainer built twice (tests/test_plugins/CMakeLists.txt): for ABI 2.1, whose Trainer and Model
// end at event(n) and describe(), and for ABI 2.2, which appended Trainer::exact_event and
// Model::export_model.  The two builds report different, recognisable events so that a test can
// tell which call the host made:
//   event(n)                      PureDp(1)                   (both builds: the summary)
//   exact_event(n, accountant, δ) ApproxDp(n / 1000, δ)       (2.2 only)
//   train() reports               what the host should have predicted for that build.
// The 2.2 model also exports itself: one identity layer, weights {value}, bias {-0.5}.
// Both builds read `features` only (they predate ABI 2.7's float rows): train() and predict()
// refuse a dataset without them, and predict() echoes them as its "probabilities", so a test can
// see that the host gave such a plugin its float rows as doubles.
#include "test_support.hpp"

namespace {

void require_doubles(const dptune::Dataset& data) {
  if (data.features.size() != data.rows * data.cols)
    throw dptune::InvalidArgument("versioned trainer: the dataset holds no double features");
}

class ConstantModel final : public dptune::Model {
 public:
  explicit ConstantModel(double value) : value_(value) {}
  dptune::Predictions predict(const dptune::Dataset& data) const override {
    require_doubles(data);
    dptune::Predictions out;
    out.values.assign(data.rows, value_);
    out.probabilities = data.features;
    out.num_classes = data.num_classes;
    return out;
  }
  std::string describe() const override { return "constant " + std::to_string(value_); }
#if DPTUNE_PLUGIN_ABI_MINOR >= 2
  std::optional<dptune::ModelExport> export_model() const override {
    dptune::ModelExport e;
    e.kind = "test_constant";
    e.description = describe();
    e.features = 1;
    e.num_classes = 2;
    e.layers.push_back({1, 1, {value_}, {-0.5}, "identity"});
    e.output = "sigmoid";
    return e;
  }
#endif

 private:
  double value_;
};

class VersionedTrainer final : public dptune::Trainer {
 public:
  explicit VersionedTrainer(const dptune::Params& p) : lie_(p.get_bool("lie")) {}
  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_bool("lie", "train() reports PureDp(2), an event nothing predicted")
        .default_to(false);
    return schema;
  }

  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    require_doubles(data);
    dptune::TrainedModel trained;
    trained.model = std::make_shared<ConstantModel>(1.0);
#if DPTUNE_PLUGIN_ABI_MINOR >= 2
    trained.event = exact_event(data.rows, context.accountant(), context.delta());
#else
    (void)context;
    trained.event = event(data.rows);
#endif
    if (lie_) trained.event = dptune::DpEvent::pure_dp(2.0);
    return trained;
  }
  dptune::DpEvent event(std::size_t) const override { return dptune::DpEvent::pure_dp(1.0); }
#if DPTUNE_PLUGIN_ABI_MINOR >= 2
  dptune::DpEvent exact_event(std::size_t train_rows, const dptune::Accountant&,
                              double delta) const override {
    return dptune::DpEvent::approx_dp(static_cast<double>(train_rows) / 1000.0, delta);
  }
#endif

 private:
  bool lie_;
};

}  // namespace

#define DPTUNE_TEST_VERSIONED_PLUGIN(NAME)                \
  DPTUNE_PLUGIN(trainer, NAME, VersionedTrainer, "0.1.0", \
                "test: a trainer built for ABI 2." DPTUNE_TEST_STR(DPTUNE_PLUGIN_ABI_MINOR))
#define DPTUNE_TEST_STR_(x) #x
#define DPTUNE_TEST_STR(x) DPTUNE_TEST_STR_(x)
DPTUNE_TEST_VERSIONED_PLUGIN(DPTUNE_TEST_TRAINER_NAME)
