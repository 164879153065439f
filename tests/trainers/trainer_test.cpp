// Training loops and trainer plugins: schedules, the DpEvent of a run against the composition of
// the steps it actually took, the mechanism hand-off, target-ε mode, and learning on synthetic
// data.
#include <doctest/doctest.h>

#include <cmath>

#include "support.hpp"
#include "training/trainer_plugin.hpp"
#include "training/training.hpp"

using namespace dptune;
using namespace dptune::trainers;
using trainer_tests::RecordingMechanism;
using trainer_tests::ScriptedContext;

TEST_CASE("dp_sgd: schedule and event of Avent et al. 2020 Alg. 3") {
  DpSgdOptions o;
  o.epochs = 3;
  o.lot_size = 10;
  DpSchedule s = dp_schedule(100, o);
  CHECK(s.steps == 30);
  CHECK(s.lot == 10);
  CHECK(dp_sgd_event(s, DpEvent::gaussian(1.5)) ==
        DpEvent::self_composed(
            DpEvent::sampled_without_replacement(100, 10, DpEvent::gaussian(1.5)), 30));
  s = dp_schedule(105, o);  // ⌈105 / 10⌉ = 11 steps per epoch
  CHECK(s.steps == 33);
  o.lot_size = 500;  // m > n: one lot of all n per step
  s = dp_schedule(105, o);
  CHECK(s.lot == 105);
  CHECK(s.steps == 3);
  o.lot_size = 10;
  o.sampling = Sampling::Poisson;
  s = dp_schedule(200, o);
  CHECK(dp_sgd_event(s, DpEvent::gaussian(2.0)) ==
        DpEvent::self_composed(DpEvent::poisson_sampled(0.05, DpEvent::gaussian(2.0)), 60));
  // σ is noise stddev ÷ L for both samplings (the Opacus / TF Privacy convention): the noise
  // scale is L; the replace-one factor 2 of fixed-size lots (Alg. 3's 2L) is the accountant's.
  o.clipping_norm = 0.7;
  CHECK(dp_step_sensitivity(o) == 0.7);
  o.sampling = Sampling::WithoutReplacement;
  CHECK(dp_step_sensitivity(o) == 0.7);
}

TEST_CASE("dp_sgd / dp_adam plugins: the run's event is the composition of its noisy steps") {
  const Dataset data = trainer_tests::blobs(103, 4, 3, 2.0, 1);
  for (const char* name : {"dp_sgd", "dp_adam"})
    for (const char* sampling : {"without_replacement", "poisson"}) {
      CAPTURE(name);
      CAPTURE(sampling);
      auto t = trainer_tests::trainer(name, {{"epochs", std::int64_t{2}},
                                             {"lot_size", std::int64_t{16}},
                                             {"noise_multiplier", 1.3},
                                             {"clipping_norm", 0.5},
                                             {"sampling", std::string(sampling)},
                                             {"model", std::string("mlp")},
                                             {"hidden1", std::int64_t{8}}});
      std::shared_ptr<RecordingMechanism> recorder;
      ScriptedContext ctx(42, [&](double sigma) {
        recorder = std::make_shared<RecordingMechanism>(DpEvent::gaussian(sigma));
        return recorder;
      });
      const TrainedModel trained = t->train(data, ctx);
      REQUIRE(recorder);
      CHECK(ctx.requested == std::vector<double>{1.3});
      const bool poisson = std::string(sampling) == "poisson";
      // What the run did: one noisy release per step, each of the same sampled Gaussian.
      CHECK(recorder->calls == 2 * 7);  // ⌈103 / 16⌉ = 7 steps per epoch
      // Stddev σ · L either way, L widened by the proven float error bound (dp_sum_sensitivity:
      // about 2^-24 relative).
      for (double s : recorder->sensitivities) {
        CHECK(s > 0.5);
        CHECK(s < 0.5 * (1 + 1e-7));
      }
      const DpEvent step =
          poisson ? DpEvent::poisson_sampled(16.0 / 103, DpEvent::gaussian(1.3))
                  : DpEvent::sampled_without_replacement(103, 16, DpEvent::gaussian(1.3));
      const DpEvent composed =
          DpEvent::self_composed(step, static_cast<std::int64_t>(recorder->calls));
      CHECK(trained.event == composed);
      CHECK(t->event(103) == composed);
      CHECK(trained.model->predict(data).values.size() == 103);
    }
}

TEST_CASE("dp_sgd: a mechanism that is not the claimed Gaussian is refused with a clear error") {
  const Dataset data = trainer_tests::blobs(50, 3, 2, 2.0, 2);
  auto t = trainer_tests::trainer("dp_sgd", {{"noise_multiplier", 2.0}});
  ScriptedContext ctx(1, [](double sigma) {
    return std::make_shared<RecordingMechanism>(DpEvent::laplace(sigma));
  });
  CHECK_THROWS_WITH_AS(
      t->train(data, ctx),
      doctest::Contains("needs the Gaussian mechanism {gaussian: {noise_multiplier: 2.0}}"),
      PluginError);
}

TEST_CASE("trainers: a non-private run adds no noise and reports NonPrivate") {
  const Dataset data = trainer_tests::blobs(60, 3, 2, 2.0, 3);
  for (const char* name : {"dp_sgd", "dp_adam", "output_perturbation", "sgd"}) {
    CAPTURE(name);
    auto t = trainer_tests::trainer(name, {});
    ScriptedContext ctx(
        5,
        [](double) -> std::shared_ptr<const Mechanism> {
          throw Error("no mechanism may be asked for in a non-private run");
        },
        nullptr, 1e-5, false);
    const TrainedModel trained = t->train(data, ctx);
    CHECK(trained.event == DpEvent::non_private());
    CHECK(ctx.requested.empty());
  }
  CHECK(trainer_tests::trainer("sgd", {})->event(10) == DpEvent::non_private());
}

TEST_CASE("output_perturbation: Δ₂ = 2L / (γ B c_min), L = 2 (Wu et al. 2017), √K for K classes") {
  // Wu et al.'s 2L/(γ n) whenever the B balanced batches are all full (B | n).
  CHECK(output_perturbation_sensitivity(200, 0.01) == doctest::Approx(4.0 / (0.01 * 200)));
  CHECK(output_perturbation_sensitivity(200, 0.01, 1) == doctest::Approx(2.0));
  CHECK(output_perturbation_sensitivity(200, 0.01, 10) == doctest::Approx(2.0));    // B = 20
  CHECK(output_perturbation_sensitivity(200, 0.01, 1000) == doctest::Approx(2.0));  // B = 1
  // b = 32 on 200 rows: B = ⌈200/32⌉ = 7 batches of 28 or 29, c_min = 28: 4 / (0.01 · 7 · 28).
  CHECK(output_perturbation_sensitivity(200, 0.01, 32) == doctest::Approx(4.0 / (0.01 * 196)));
  // b = 64 on 341 rows: B = 6, c_min = 56: 4 / (0.5 · 336).
  CHECK(output_perturbation_sensitivity(341, 0.5, 64) == doctest::Approx(4.0 / (0.5 * 336)));
  CHECK(output_perturbation_models(2) == 1);
  CHECK(output_perturbation_models(3) == 3);
  CHECK(output_perturbation_joint_sensitivity(200, 0.01, 1, 2) == doctest::Approx(2.0));
  CHECK(output_perturbation_joint_sensitivity(200, 0.01, 1, 10) ==
        doctest::Approx(std::sqrt(10.0) * 2.0));

  const Dataset data = trainer_tests::blobs(200, 4, 2, 2.0, 4);
  auto t = trainer_tests::trainer("output_perturbation",
                                  {{"regularization", 0.05}, {"noise_multiplier", 0.8}});
  std::shared_ptr<RecordingMechanism> recorder;
  ScriptedContext ctx(3, [&](double sigma) {
    recorder = std::make_shared<RecordingMechanism>(DpEvent::gaussian(sigma));
    return recorder;
  });
  const TrainedModel trained = t->train(data, ctx);
  REQUIRE(recorder);
  CHECK(recorder->calls == 1);
  CHECK(recorder->sensitivities[0] == doctest::Approx(4.0 / (0.05 * 200)));
  CHECK(trained.event == DpEvent::replace_one(DpEvent::gaussian(0.8)));
  CHECK(t->event(200) == DpEvent::replace_one(DpEvent::gaussian(0.8)));
  // Without noise (recorder adds none) the projected SGD solves the problem: blobs are separable.
  CHECK(trainer_tests::accuracy(data, trained.model->predict(data)) > 0.9);
  // The iterate stays in the ball of radius 1/γ (γ = 0.05, so the projection is active).
  OutputPerturbationOptions op;
  op.regularization = 0.05;
  Xoshiro256 rng(1);
  const std::vector<double> w = train_output_perturbation(data, op, rng);
  double n2 = 0;
  for (double v : w) n2 += v * v;
  CHECK(std::sqrt(n2) <= 1 / 0.05 + 1e-9);
}

TEST_CASE("output_perturbation: multiclass one-vs-rest, released with √K Δ₂") {
  const Dataset all = trainer_tests::blobs(600, 5, 3, 3.0, 21);
  const Dataset train = trainer_tests::slice(all, 0, 450),
                test = trainer_tests::slice(all, 450, 600);
  auto t = trainer_tests::trainer(
      "output_perturbation",
      {{"regularization", 0.01}, {"noise_multiplier", 1.5}, {"batch_size", std::int64_t{16}}});
  std::shared_ptr<RecordingMechanism> recorder;
  ScriptedContext ctx(5, [&](double sigma) {
    recorder = std::make_shared<RecordingMechanism>(DpEvent::gaussian(sigma));
    return recorder;
  });
  const TrainedModel trained = t->train(train, ctx);
  REQUIRE(recorder);
  CHECK(trained.event == DpEvent::replace_one(DpEvent::gaussian(1.5)));
  // B = ⌈450/16⌉ = 29 batches, c_min = ⌊450/29⌋ = 15: Δ₂ = 4 / (0.01 · 29 · 15), times √3.
  CHECK(recorder->sensitivities[0] == doctest::Approx(std::sqrt(3.0) * 4.0 / (0.01 * 435)));
  // (The model's class lives in the plugin: identified by its description, not dynamic_cast.)
  CHECK(trained.model->describe() ==
        "one-vs-rest logistic regression 5-3 (output perturbation, features scaled to the unit "
        "ball)");
  const Predictions p = trained.model->predict(test);
  CHECK(p.num_classes == 3);
  REQUIRE(p.probabilities.size() == 3 * test.rows);
  CHECK(p.probabilities[0] + p.probabilities[1] + p.probabilities[2] == doctest::Approx(1.0));
  CHECK(trainer_tests::accuracy(test, p) > 0.9);
}

TEST_CASE("output_perturbation: neighbouring data sets move the weights by at most Δ₂") {
  // The sensitivity is a bound for every fixed sequence of permutations (the same seed gives the
  // same permutations on both data sets): replace one example and measure ‖w − w'‖ against the
  // bound, for full and uneven mini-batches, binary and one-vs-rest.
  for (const std::size_t classes : {std::size_t{2}, std::size_t{3}}) {
    for (const std::size_t batch : {std::size_t{1}, std::size_t{7}, std::size_t{32}}) {
      CAPTURE(classes);
      CAPTURE(batch);
      const Dataset data = trainer_tests::blobs(150, 3, classes, 1.0, 30 + classes);
      Dataset neighbour = data;
      // Replace the example with the largest norm by a far point of another class.
      for (std::size_t j = 0; j < data.cols; ++j) neighbour.features[17 * data.cols + j] = -40.0;
      neighbour.labels[17] =
          static_cast<double>((static_cast<std::size_t>(data.labels[17]) + 1) % classes);
      OutputPerturbationOptions op;
      op.regularization = 0.02;
      op.epochs = 3;
      op.batch_size = batch;
      Xoshiro256 r1(9), r2(9);
      const std::vector<double> w = train_output_perturbation(data, op, r1),
                                w2 = train_output_perturbation(neighbour, op, r2);
      REQUIRE(w.size() == w2.size());
      double d2 = 0;
      for (std::size_t i = 0; i < w.size(); ++i) d2 += (w[i] - w2[i]) * (w[i] - w2[i]);
      const double bound =
          output_perturbation_joint_sensitivity(data.rows, op.regularization, batch, classes);
      MESSAGE("‖w − w'‖ = " << std::sqrt(d2) << ", Δ₂ = " << bound);
      CHECK(std::sqrt(d2) > 0);
      CHECK(std::sqrt(d2) <= bound);
    }
  }
}

TEST_CASE("output_perturbation: on a tiny data set the bound is within a small factor of the gap") {
  // n = 4, γ = 1 (R = 1), batch 1, one pass: Δ₂ = 4 / (γ n) = 1.  Replacing one example by its
  // mirror image with the opposite label moves the weights by about a sixth of the bound (the
  // worst case needs saturated margins, L = 2 is for the whole ball), so a sensitivity
  // underestimated ten times or more would fail here.
  Dataset data;
  data.rows = 4;
  data.cols = 2;
  data.num_classes = 2;
  data.features = {3.0, 0.0, 0.0, 3.0, -3.0, 0.0, 0.0, -3.0};
  data.labels = {1, 1, 0, 0};
  Dataset neighbour = data;
  neighbour.features[0] = -3.0;
  neighbour.labels[0] = 0;
  OutputPerturbationOptions op;
  op.regularization = 1.0;
  op.epochs = 1;
  double largest = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Xoshiro256 r1(seed), r2(seed);
    const std::vector<double> w = train_output_perturbation(data, op, r1),
                              w2 = train_output_perturbation(neighbour, op, r2);
    double d2 = 0;
    for (std::size_t i = 0; i < w.size(); ++i) d2 += (w[i] - w2[i]) * (w[i] - w2[i]);
    largest = std::max(largest, std::sqrt(d2));
  }
  const double bound = output_perturbation_sensitivity(4, 1.0, 1);
  MESSAGE("largest ‖w − w'‖ over 20 permutations " << largest << ", Δ₂ = " << bound);
  CHECK(bound == doctest::Approx(1.0));
  CHECK(largest <= bound);
  CHECK(largest >= 0.1 * bound);
}

TEST_CASE("target-ε mode: σ calibrated through the accountant, train() reports the exact event") {
  // n = 2000 and lots of 32: without-replacement accounting (WBK19 Thm 9) has an ε floor that grows
  // with the sampling ratio m/n, so a small ratio keeps ε = 1 reachable.
  const Dataset data = trainer_tests::blobs(2000, 3, 2, 2.0, 6);
  auto rdp = trainer_tests::accountant("rdp");
  for (const char* name : {"dp_sgd", "dp_adam", "output_perturbation"}) {
    CAPTURE(name);
    const bool op = std::string(name) == "output_perturbation";
    Params params{{"target_epsilon", 1.0}, {"target_delta", 1e-5}};
    if (!op) params.set("lot_size", std::int64_t{32});
    auto t = trainer_tests::trainer(name, params);
    // Without an accountant: the sound summary, the target stated for replace-one neighbours (the
    // relation of fixed-size lots and of output perturbation).
    INFO("event(2000) = " << t->event(2000).to_string());
    CHECK(t->event(2000) == DpEvent::replace_one(DpEvent::approx_dp(1.0, 1e-5)));
    ScriptedContext ctx(
        8,
        [](double sigma) { return std::make_shared<RecordingMechanism>(DpEvent::gaussian(sigma)); },
        rdp.get());
    const TrainedModel trained = t->train(data, ctx);
    REQUIRE(ctx.requested.size() == 1);
    const double sigma = ctx.requested[0];
    DpSgdOptions o;  // the plugin's defaults (10 epochs, without replacement), lots of 32
    o.lot_size = 32;
    auto event_of = [&](double s) {
      return op ? DpEvent::replace_one(DpEvent::gaussian(s))
                : dp_sgd_event(dp_schedule(2000, o), DpEvent::gaussian(s));
    };
    // train() reports the exact event of what it did, and exact_event (what the host prices and
    // checks) predicts exactly it; the target δ is target_delta, not the pipeline's (1e-7 here).
    INFO("trained " << trained.event.to_string() << " expected " << event_of(sigma).to_string());
    CHECK(trained.event == event_of(sigma));
    CHECK(t->exact_event(2000, *rdp, 1e-7) == event_of(sigma));
    // The calibrated σ meets the target, and 1% less noise would not.
    CHECK(rdp->epsilon(event_of(sigma), 1e-5).epsilon <= 1.0);
    CHECK(rdp->epsilon(event_of(sigma * 0.99), 1e-5).epsilon > 1.0);
  }
}

TEST_CASE("target-ε mode: target_delta defaults to the pipeline's δ") {
  auto rdp = trainer_tests::accountant("rdp");
  const Params common{{"target_epsilon", 2.0}, {"lot_size", std::int64_t{32}}};
  auto implicit = trainer_tests::trainer("dp_sgd", common);
  Params explicit_params = common;
  explicit_params.set("target_delta", 1e-6);
  auto explicit_delta = trainer_tests::trainer("dp_sgd", explicit_params);
  // The pipeline's δ = 1e-6 gives the very σ* that target_delta = 1e-6 gives.
  CHECK(implicit->exact_event(1500, *rdp, 1e-6) == explicit_delta->exact_event(1500, *rdp, 1e-3));
  // A different pipeline δ, a different (larger) σ*.
  CHECK_FALSE(implicit->exact_event(1500, *rdp, 1e-9) == implicit->exact_event(1500, *rdp, 1e-6));
  // event(n) cannot state the guarantee without knowing δ.
  CHECK_THROWS_WITH_AS(implicit->event(1500), doctest::Contains("target_delta"), PluginError);
}

TEST_CASE("target-ε mode: the exact event is within 1% of the target, also for Poisson lots") {
  // exact_event(): SelfComposed(Sampled…(Gaussian(σ*)), steps).  Its ε by the accountant is ≤ the
  // target and within 1% of it; train() adds exactly this σ and reports exactly this event.
  auto rdp = trainer_tests::accountant("rdp");
  const Dataset data = trainer_tests::blobs(2000, 3, 2, 2.0, 6);
  for (const Optimizer optimizer : {Optimizer::Sgd, Optimizer::Adam}) {
    for (const auto& [sampling, target] : {std::pair{std::string("without_replacement"), 1.0},
                                           std::pair{std::string("poisson"), 0.5}}) {
      CAPTURE(sampling);
      CAPTURE(optimizer == Optimizer::Adam);
      const Params params = dp_sgd_schema(optimizer).complete({{"target_epsilon", target},
                                                               {"target_delta", 1e-5},
                                                               {"lot_size", std::int64_t{32}},
                                                               {"epochs", std::int64_t{4}},
                                                               {"sampling", sampling}});
      const DpSgdTrainer trainer(params, optimizer);
      const DpEvent exact = trainer.exact_event(2000, *rdp, 1e-5);
      const double sigma = trainer.calibrated_sigma(2000, *rdp, 1e-5);
      const DpSgdOptions o = trainer.options();
      const DpEvent step =
          sampling == "poisson"
              ? DpEvent::poisson_sampled(32.0 / 2000.0, DpEvent::gaussian(sigma))
              : DpEvent::sampled_without_replacement(2000, 32, DpEvent::gaussian(sigma));
      CHECK(exact == dp_sgd_event(dp_schedule(2000, o), DpEvent::gaussian(sigma)));
      CHECK(exact == DpEvent::self_composed(step, 4 * 63));  // T · ceil(2000 / 32) steps
      const double eps = rdp->epsilon(exact, 1e-5).epsilon;
      MESSAGE(exact.to_string() << " -> ε = " << eps);
      CHECK(eps <= target);
      CHECK(eps >= 0.99 * target);
      ScriptedContext ctx(
          8, [](double s) { return std::make_shared<RecordingMechanism>(DpEvent::gaussian(s)); },
          rdp.get());
      CHECK(trainer.train(data, ctx).event == exact);
      REQUIRE(ctx.requested.size() == 1);
      CHECK(ctx.requested[0] == sigma);
      // One root-find for exact_event, calibrated_sigma and train() together.
      CHECK(trainer.calibration_cache().calibrations() == 1);
    }
  }
  // Not in target mode: no calibration, and exact_event is event(n).
  const DpSgdTrainer plain(dp_sgd_schema(Optimizer::Sgd).complete({}), Optimizer::Sgd);
  CHECK_THROWS_AS(plain.calibrated_sigma(100, *rdp, 1e-5), InvalidArgument);
  CHECK(plain.exact_event(100, *rdp, 1e-5) == plain.event(100));
  CHECK(plain.calibration_cache().calibrations() == 0);
}

TEST_CASE("target-ε mode: k runs compose under RDP well below k · target") {
  // The point of the exact event: a tuner that runs a target-ε trainer k times (the repetition
  // tuner's RepeatAndSelect, a grid, ...) composes the runs' RDP curves, not k ApproxDp(target)
  // guarantees (which compose to about k · target at best).
  auto rdp = trainer_tests::accountant("rdp");
  for (const char* name : {"dp_sgd", "output_perturbation"}) {
    CAPTURE(name);
    const bool op = std::string(name) == "output_perturbation";
    Params params{{"target_epsilon", 1.0}, {"target_delta", 1e-5}};
    if (!op) params.set("lot_size", std::int64_t{32});
    auto t = trainer_tests::trainer(name, params);
    const DpEvent one = t->exact_event(2000, *rdp, 1e-5);
    const std::int64_t k = 10;
    const double composed = rdp->epsilon(DpEvent::self_composed(one, k), 1e-5).epsilon;
    const double summary =
        rdp->epsilon(DpEvent::self_composed(DpEvent::approx_dp(1.0, 1e-5), k), 1e-5 * (k + 1))
            .epsilon;
    MESSAGE(std::string(name) << ": " << k
                              << " runs of ε = 1: exact events compose to ε = " << composed
                              << ", the ApproxDp summaries (even at δ = (k + 1) · 1e-5) to "
                              << summary);
    // √k scaling of Gaussian-type RDP: about √10 · 1 ≈ 3.2 plus the conversion's overhead.
    CHECK(composed < 0.5 * static_cast<double>(k));
    CHECK(composed > 1.0);
    CHECK(summary >= 0.99 * static_cast<double>(k));
  }
}

TEST_CASE("sgd: learns separable blobs, momentum and decay follow their formulas") {
  const Dataset all = trainer_tests::blobs(600, 8, 3, 2.0, 9);
  const Dataset train = trainer_tests::slice(all, 0, 400),
                test = trainer_tests::slice(all, 400, 600);
  for (const char* model : {"logistic", "svm", "mlp"}) {
    CAPTURE(model);
    auto t = trainer_tests::trainer("sgd", {{"model", std::string(model)},
                                            {"momentum", 0.9},
                                            {"learning_rate", 0.01},
                                            {"hidden1", std::int64_t{16}}});
    ScriptedContext ctx(1, nullptr, nullptr, 1e-5, false);
    const TrainedModel trained = t->train(train, ctx);
    CHECK(trainer_tests::accuracy(test, trained.model->predict(test)) > 0.9);
  }
  // One full-batch step from w = 0 with η = 0.5 on a binary linear model: w = −η ∇ = −η mean(δ x),
  // δ = σ(0) − y = 1/2 − y.  Two epochs with decay 1 and momentum 0.5: η₁ = η / 2 and
  // w₂ = w₁ − η₁ (0.5 v₁ + g₂).
  Dataset d;
  d.rows = 2;
  d.cols = 1;
  d.num_classes = 2;
  d.features = {1.0, -2.0};
  d.labels = {1, 0};
  Network net(Architecture{1, 2, {}, LossKind::CrossEntropy});
  SgdOptions o;
  o.epochs = 2;
  o.batch_size = 2;
  o.learning_rate = 0.5;
  o.momentum = 0.5;
  o.lr_decay = 1.0;
  Xoshiro256 rng(1);
  train_sgd(net, d, o, rng);
  auto grad = [&](double w, double b) {
    const double d0 = 1 / (1 + std::exp(-(w * 1 + b))) - 1, d1 = 1 / (1 + std::exp(-(w * -2 + b)));
    return std::pair{(d0 * 1 + d1 * -2) / 2, (d0 + d1) / 2};
  };
  auto [g1w, g1b] = grad(0, 0);
  const double w1 = -0.5 * g1w, b1 = -0.5 * g1b;
  auto [g2w, g2b] = grad(w1, b1);
  const double v2w = 0.5 * g1w + g2w, v2b = 0.5 * g1b + g2b;
  CHECK(net.params()[0] == doctest::Approx(w1 - 0.25 * v2w).epsilon(1e-14));
  CHECK(net.params()[1] == doctest::Approx(b1 - 0.25 * v2b).epsilon(1e-14));
}

TEST_CASE("dp_sgd: with noise it still learns separable blobs, DP-Adam follows Alg. 4") {
  const Dataset all = trainer_tests::blobs(3000, 10, 2, 1.5, 12);
  const Dataset train = trainer_tests::slice(all, 0, 2500),
                test = trainer_tests::slice(all, 2500, 3000);
  auto gaussian = trainer_tests::mechanism("gaussian", {});
  for (const char* name : {"dp_sgd", "dp_adam"}) {
    CAPTURE(name);
    auto t = trainer_tests::trainer(name, {{"noise_multiplier", 1.0}, {"epochs", std::int64_t{5}}});
    ScriptedContext ctx(2, [&](double sigma) {
      return trainer_tests::mechanism("gaussian", {{"noise_multiplier", sigma}});
    });
    const TrainedModel trained = t->train(train, ctx);
    CHECK(trainer_tests::accuracy(test, trained.model->predict(test)) > 0.9);
  }
  // One DP-Adam step without noise on a single example with L large: µ̂ = g, ν̂ = g², so every
  // coordinate moves by η g / (|g| + κ) ≈ η sign(g).
  Dataset d;
  d.rows = 1;
  d.cols = 2;
  d.num_classes = 2;
  d.features = {0.5, -1.0};
  d.labels = {1};
  Network net(Architecture{2, 2, {}, LossKind::CrossEntropy});
  DpSgdOptions o;
  o.epochs = 1;
  o.lot_size = 1;
  o.learning_rate = 0.1;
  o.clipping_norm = 100;
  o.optimizer = Optimizer::Adam;
  Xoshiro256 rng(1);
  train_dp_sgd(net, d, o, rng, {});
  // g = (σ(0) − 1) (x, 1) = −0.5 · (0.5, −1, 1).
  CHECK(net.params()[0] == doctest::Approx(0.1 * 0.25 / (0.25 + 1e-8)).epsilon(1e-12));
  CHECK(net.params()[1] == doctest::Approx(-0.1 * 0.5 / (0.5 + 1e-8)).epsilon(1e-12));
  CHECK(net.params()[2] == doctest::Approx(0.1 * 0.5 / (0.5 + 1e-8)).epsilon(1e-12));
}

namespace {

/// `data` with its features rounded to float and held twice over: as doubles, and as float rows
/// (a view through an index, as the host hands a scope of its shared storage).
std::pair<Dataset, Dataset> as_doubles_and_float_rows(const Dataset& data) {
  Dataset doubles = data, floats = data;
  for (double& x : doubles.features) x = static_cast<float>(x);
  // Stored in reverse order behind an index, so row i is really looked up through the view.
  auto values = std::make_shared<std::vector<float>>();
  std::vector<std::size_t> index(data.rows);
  for (std::size_t i = data.rows; i-- > 0;)
    values->insert(values->end(), data.row(i), data.row(i) + data.cols);
  for (std::size_t i = 0; i < data.rows; ++i) index[i] = data.rows - 1 - i;
  floats.features.clear();
  floats.float_rows = FloatRows(values, data.cols).select(index);
  return {doubles, floats};
}

}  // namespace

TEST_CASE("float rows: DP-SGD in float agrees with DP-SGD in double within its noise") {
  const Dataset data = trainer_tests::blobs(600, 12, 3, 2.0, 5);
  const auto [doubles, floats] = as_doubles_and_float_rows(data);
  REQUIRE(floats.features.empty());
  for (const Sampling sampling : {Sampling::Poisson, Sampling::WithoutReplacement}) {
    CAPTURE(static_cast<int>(sampling));
    DpSgdOptions o;
    o.epochs = 3;
    o.lot_size = 32;
    o.learning_rate = 0.5;
    o.sampling = sampling;
    const auto run = [&](const Dataset& d) {
      Network net(make_architecture("mlp", 16, 0, d));
      Xoshiro256 rng(9);
      net.initialise(rng);
      // Gaussian noise of stddev σ L from the same seeded stream in both runs.
      const NoiseFunction noise = [&](std::vector<double>& sum, double l2) {
        for (double& x : sum) x += gaussian(rng, o.noise_multiplier * l2);
      };
      train_dp_sgd(net, d, o, rng, noise);
      return std::pair{net.params(), net.predict(d)};
    };
    // The same inputs (rounded to float) and the same random stream: double rows train in
    // double, float rows in float.  The noise added per step has stddev σ L / m = 1/32 per
    // coordinate; float rounding (2^-24 relative) moves the weights by orders of magnitude less,
    // so the two runs end with nearly the same weights and the same accuracy.
    const auto [w_double, p_double] = run(doubles);
    const auto [w_float, p_float] = run(floats);
    REQUIRE(w_float.size() == w_double.size());
    double largest = 0, scale = 0;
    for (std::size_t k = 0; k < w_double.size(); ++k) {
      largest = std::max(largest, std::abs(w_double[k] - w_float[k]));
      scale = std::max(scale, std::abs(w_double[k]));
    }
    MESSAGE("largest weight difference float vs double: " << largest << " (largest weight " << scale
                                                          << ")");
    CHECK(largest < 1e-4);
    CHECK(scale > 0.1);
    const double a_double = trainer_tests::accuracy(data, p_double),
                 a_float = trainer_tests::accuracy(data, p_float);
    CHECK(std::abs(a_double - a_float) <= 0.01);
    CHECK(a_float > 0.8);
  }
}

TEST_CASE("float rows: the plugins train and predict on a view of shared float rows") {
  const Dataset data = trainer_tests::blobs(300, 6, 2, 3.0, 8);
  const auto [doubles, floats] = as_doubles_and_float_rows(data);
  for (const char* name : {"dp_sgd", "sgd", "output_perturbation"}) {
    CAPTURE(name);
    Params p{{"epochs", std::int64_t{2}}};
    if (std::string(name) == "dp_sgd") p = p.merged({{"noise_multiplier", 1.0}});
    auto t = trainer_tests::trainer(name, p);
    const auto fit = [&](const Dataset& d) {
      ScriptedContext ctx(3, [](double sigma) {
        return trainer_tests::mechanism(
            "gaussian", {{"noise_multiplier", sigma}, {"noise", std::string("fast")}});
      });
      return t->train(d, ctx).model->predict(d);
    };
    const Predictions a = fit(doubles), b = fit(floats);
    CHECK(a.values == b.values);
    REQUIRE(a.probabilities.size() == b.probabilities.size());
    for (std::size_t k = 0; k < a.probabilities.size(); ++k)
      CHECK(a.probabilities[k] == doctest::Approx(b.probabilities[k]).epsilon(1e-12).scale(1));
    CHECK(trainer_tests::accuracy(data, b) > 0.8);
  }
}

TEST_CASE(
    "float rows: float layers give the double ghost norms and clipped sums to float accuracy") {
  const Dataset data = trainer_tests::blobs(64, 20, 4, 2.0, 12);
  const auto [doubles, floats] = as_doubles_and_float_rows(data);
  Network net(make_architecture("mlp", 24, 0, data));
  Xoshiro256 rng(2);
  net.initialise(rng);
  for (double& w : net.params()) w += gaussian(rng, 0.1);  // nonzero output layer and biases
  std::vector<std::size_t> index(40);
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = (7 * i) % data.rows;
  BatchGradient in_double(net, 40), in_float(net, 40);
  in_double.compute(net, doubles, index.data(), index.size(), false);
  in_float.compute(net, floats, index.data(), index.size(), false);
  const auto n_double = in_double.squared_norms(), n_float = in_float.squared_norms();
  REQUIRE(n_float.size() == 40);
  std::vector<double> factors(40);
  clip_factors(n_float, 0.5, factors);
  std::size_t clipped = 0;
  for (std::size_t i = 0; i < 40; ++i) {
    CHECK(n_float[i] == doctest::Approx(n_double[i]).epsilon(1e-5));
    clipped += factors[i] < 1 ? 1 : 0;
    // Example i's float gradient, materialised, has the norm the ghost-norm trick gave.
    std::vector<double> g(net.num_params());
    in_float.example_gradient(i, g.data());
    double norm2 = 0;
    for (double x : g) norm2 += x * x;
    CHECK(norm2 == doctest::Approx(n_float[i]).epsilon(1e-5));
  }
  CHECK(clipped > 10);  // the case exercises clipping
  std::vector<double> sum_double(net.num_params(), 0.0), sum_float(net.num_params(), 0.0);
  in_double.accumulate(factors.data(), sum_double.data());
  in_float.accumulate(factors.data(), sum_float.data());
  double largest = 0, difference = 0;
  for (std::size_t k = 0; k < sum_double.size(); ++k) {
    largest = std::max(largest, std::abs(sum_double[k]));
    difference = std::max(difference, std::abs(sum_double[k] - sum_float[k]));
  }
  CHECK(largest > 0.1);
  CHECK(difference < 1e-5 * largest * 40);
}
