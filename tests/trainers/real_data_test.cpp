// Accuracy on the bundled real data (the trainers' accuracy targets), through the plugins as the
// host runs them: builtin:breast_cancer and builtin:digits, standardised on the training split,
// scored on the test split (60/20/20, stratified, fixed split seed).
#include <doctest/doctest.h>

#include "dptune/helpers/calibration.hpp"
#include "dptune/host/data_source.hpp"
#include "support.hpp"

using namespace dptune;

namespace {

host::DataSplits load(const std::string& name) {
  const auto* info = host::find_data_source(name);
  REQUIRE(info != nullptr);
  auto source =
      host::make_data_source(name, info->schema.complete({{"split_seed", std::int64_t{7}}}));
  Xoshiro256 rng(1);
  return source->make(rng);
}

double test_accuracy(const std::string& trainer, const Params& params, const host::DataSplits& d,
                     trainer_tests::ScriptedContext& context) {
  auto t = trainer_tests::trainer(trainer, params);
  const TrainedModel trained = t->train(d.train, context);
  // The secure gaussian mechanism's noise: the discrete Gaussian of the trainer's σ.
  CHECK(trained.event == (context.private_run()
                              ? trainer_tests::secure_noise(t->event(d.train.rows))
                              : DpEvent::non_private()));
  return trainer_tests::utility("accuracy", {})
      ->score(d.test.labels, trained.model->predict(d.test));
}

trainer_tests::ScriptedContext::Factory gaussian_plugin() {
  return [](double sigma) {
    return trainer_tests::mechanism("gaussian", {{"noise_multiplier", sigma}});
  };
}

}  // namespace

TEST_CASE("breast cancer: non-private logistic regression >= 95% test accuracy") {
  const host::DataSplits d = load("builtin:breast_cancer");
  REQUIRE(d.train.cols == 30);
  trainer_tests::ScriptedContext context(3, nullptr, nullptr, 1e-5, false);
  const double acc = test_accuracy(
      "sgd", {{"epochs", std::int64_t{20}}, {"learning_rate", 0.05}, {"l2", 1e-3}}, d, context);
  MESSAGE("sgd logistic regression, breast cancer test accuracy " << acc);
  CHECK(acc >= 0.95);
}

namespace {

// σ: the smallest noise whose event, with the secure gaussian mechanism's discrete noise, the rdp
// accountant proves (1, 1e-5)-DP, found through the plugin's own event(); then ε of that event
// through the accountant, and the mean test accuracy of 5 seeded runs.
void dp_sgd_at_epsilon_one(Params params, const host::DataSplits& d, double min_mean_accuracy) {
  auto rdp = trainer_tests::accountant("rdp");
  const double sigma =
      calibrate_noise(*rdp,
                      [&](double s) {
                        Params p = params;
                        p.set("noise_multiplier", s);
                        return trainer_tests::secure_noise(
                            trainer_tests::trainer("dp_sgd", p)->event(d.train.rows));
                      },
                      1.0, 1e-5, {0.1, 100.0, 1e-4})
          .noise;
  params.set("noise_multiplier", sigma);
  auto t = trainer_tests::trainer("dp_sgd", params);
  const DpEvent event = trainer_tests::secure_noise(t->event(d.train.rows));
  const PrivacyGuarantee g = rdp->epsilon(event, 1e-5);
  MESSAGE("DP-SGD breast cancer: " << event.to_string() << " -> ε = " << g.epsilon);
  CHECK(g.epsilon <= 1.0);
  CHECK(g.epsilon >= 0.99);
  double sum = 0;
  const int runs = 5;
  for (int r = 0; r < runs; ++r) {
    trainer_tests::ScriptedContext context(100 + r, gaussian_plugin(), rdp.get());
    const double acc = test_accuracy("dp_sgd", params, d, context);
    MESSAGE("run " << r << ": test accuracy " << acc);
    sum += acc;
  }
  MESSAGE("mean test accuracy " << sum / runs);
  CHECK(sum / runs >= min_mean_accuracy);
}

}  // namespace

TEST_CASE("breast cancer: DP-SGD, Poisson lots, ε = 1, δ = 1e-5 (rdp) >= 90% test accuracy") {
  // Poisson lots (Abadi et al. 2016), priced by the rdp accountant's exact Poisson-subsampled
  // Gaussian RDP: 5 epochs of expected lots of 64.
  dp_sgd_at_epsilon_one({{"epochs", std::int64_t{5}},
                         {"lot_size", std::int64_t{64}},
                         {"learning_rate", 1.0},
                         {"clipping_norm", 1.0},
                         {"sampling", std::string("poisson")}},
                        load("builtin:breast_cancer"), 0.90);
}

TEST_CASE(
    "breast cancer: DP-SGD, fixed-size lots without replacement (Avent et al. 2020 Alg. 3), ε = 1, "
    "δ = 1e-5 (rdp) >= 90% test accuracy") {
  // Fixed-size lots without replacement are priced by Wang, Balle & Kasiviswanathan's Thm 9, whose
  // bound keeps a σ-independent floor that grows with the lot ratio m/n and the number of epochs:
  // on the 341 training rows ε = 1 is out of reach at any σ for e.g. 3 epochs of lots of 16 or 2
  // epochs of 32 (ε ≥ 1.02 and 1.43).  Small lots keep it reachable: 2 epochs (86 steps) of lots
  // of m = 8, σ ≈ 2.25 (noise 2Lσ/m ≈ 0.28 per coordinate of the mean clipped gradient), L = 0.5,
  // η = 0.1.  (Over seeds 100..109 the test accuracy of this configuration was 0.912 to 0.947,
  // mean 0.932.)
  dp_sgd_at_epsilon_one({{"epochs", std::int64_t{2}},
                         {"lot_size", std::int64_t{8}},
                         {"learning_rate", 0.1},
                         {"clipping_norm", 0.5},
                         {"sampling", std::string("without_replacement")}},
                        load("builtin:breast_cancer"), 0.90);
}

TEST_CASE("digits: non-private MLP 64-128-10 >= 95% test accuracy") {
  const host::DataSplits d = load("builtin:digits");
  REQUIRE(d.train.cols == 64);
  REQUIRE(d.train.num_classes == 10);
  trainer_tests::ScriptedContext context(4, nullptr, nullptr, 1e-5, false);
  const double acc = test_accuracy("sgd",
                                   {{"model", std::string("mlp")},
                                    {"hidden1", std::int64_t{128}},
                                    {"epochs", std::int64_t{10}},
                                    {"learning_rate", 0.05},
                                    {"momentum", 0.9},
                                    {"batch_size", std::int64_t{32}}},
                                   d, context);
  MESSAGE("sgd MLP, digits test accuracy " << acc);
  CHECK(acc >= 0.95);
}
