// Masked records (dptune::kMaskedLabel: a label outside the pipeline's declared label set,
// docs/data.md "A public schema") keep their slot and contribute nothing: a zero gradient in every
// model and loss, so every trainer's output is the same whatever the masked rows' features are.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "dptune/masked_label.hpp"
#include "support.hpp"
#include "training/network.hpp"
#include "training/training.hpp"

using namespace dptune;
using namespace dptune::trainers;

namespace {

constexpr std::size_t kMaskedRows[] = {5, 77, 140};

/// `data` with rows 5, 77 and 140 masked.
Dataset masked(Dataset data) {
  for (std::size_t r : kMaskedRows) data.labels[r] = kMaskedLabel;
  return data;
}

/// The same rows with the masked rows' features replaced by far, arbitrary values.
Dataset other_features(Dataset data) {
  for (std::size_t r : kMaskedRows)
    for (std::size_t j = 0; j < data.cols; ++j)
      data.features[r * data.cols + j] = (j % 2 ? -1.0 : 1.0) * (50.0 + static_cast<double>(r + j));
  return data;
}

struct MaskingCase {
  const char* trainer;
  Params params;
  std::size_t classes;
};

Predictions fit_and_predict(const MaskingCase& c, const Dataset& train, const Dataset& scored) {
  auto t = trainer_tests::trainer(c.trainer, c.params);
  trainer_tests::ScriptedContext ctx(17, [](double sigma) {
    return trainer_tests::mechanism("gaussian",
                                    {{"noise_multiplier", sigma}, {"noise", std::string("fast")}});
  });
  return t->train(train, ctx).model->predict(scored);
}

}  // namespace

TEST_CASE("masking: a masked example's gradient is exactly zero in every model and loss") {
  struct Shape {
    std::size_t classes;
    std::vector<std::size_t> hidden;
    LossKind loss;
  };
  const Shape shapes[] = {{2, {}, LossKind::CrossEntropy},  {2, {}, LossKind::Hinge},
                          {3, {}, LossKind::CrossEntropy},  {3, {}, LossKind::Hinge},
                          {2, {6}, LossKind::CrossEntropy}, {4, {6, 5}, LossKind::CrossEntropy}};
  for (const Shape& s : shapes) {
    CAPTURE(s.classes);
    CAPTURE(s.hidden.size());
    const Dataset data = other_features(masked(trainer_tests::blobs(160, 4, s.classes, 2.0, 3)));
    Network net(Architecture{data.cols, s.classes, s.hidden, s.loss});
    Xoshiro256 rng(4);
    net.initialise(rng);
    for (double& w : net.params()) w += 0.3;  // every output layer weight non-zero too
    const std::size_t index[] = {kMaskedRows[0], 6, kMaskedRows[1], 8};
    for (const bool with_loss : {true, false}) {
      BatchGradient batch(net, 4);
      const double loss = batch.compute(net, data, index, 4, with_loss);
      CHECK(std::isfinite(loss));
      std::vector<double> g(net.num_params());
      for (const std::size_t i : {std::size_t{0}, std::size_t{2}}) {
        batch.example_gradient(i, g.data());
        CHECK(std::all_of(g.begin(), g.end(), [](double v) { return v == 0.0; }));
        CHECK(batch.squared_norms()[i] == 0.0);
      }
      batch.example_gradient(1, g.data());  // an ordinary example next to them is not zero
      CHECK(std::any_of(g.begin(), g.end(), [](double v) { return v != 0.0; }));
      CHECK(batch.squared_norms()[1] > 0.0);
    }
  }
}

TEST_CASE("masking: every trainer's model ignores the masked rows' features") {
  const MaskingCase cases[] = {
      {"sgd", {{"epochs", std::int64_t{2}}}, 2},
      {"sgd", {{"epochs", std::int64_t{2}}, {"model", std::string("mlp")}}, 3},
      {"sgd", {{"epochs", std::int64_t{2}}, {"model", std::string("svm")}}, 3},
      {"dp_sgd", {{"epochs", std::int64_t{2}}, {"noise_multiplier", 1.0}}, 2},
      {"dp_sgd", {{"epochs", std::int64_t{2}}, {"noise_multiplier", 1.0}}, 3},
      {"dp_sgd",
       {{"epochs", std::int64_t{2}}, {"noise_multiplier", 1.0}, {"model", std::string("mlp")}},
       2},
      {"dp_adam", {{"epochs", std::int64_t{2}}, {"noise_multiplier", 1.0}}, 3},
      {"output_perturbation", {{"epochs", std::int64_t{2}}, {"noise_multiplier", 1.0}}, 2},
      {"output_perturbation", {{"epochs", std::int64_t{2}}, {"noise_multiplier", 1.0}}, 3},
  };
  for (const MaskingCase& c : cases) {
    CAPTURE(c.trainer);
    CAPTURE(c.classes);
    const Dataset clean = trainer_tests::blobs(200, 4, c.classes, 2.0, 11);
    const Dataset a = masked(clean), b = other_features(a);
    const Predictions pa = fit_and_predict(c, a, clean), pb = fit_and_predict(c, b, clean);
    CHECK(pa.probabilities == pb.probabilities);  // bit for bit
    CHECK(pa.values == pb.values);
    // Unmasked, the same far rows do move the model: the equality above is not vacuous.
    Dataset unmasked = b;
    for (std::size_t r : kMaskedRows) unmasked.labels[r] = clean.labels[r];
    CHECK(fit_and_predict(c, unmasked, clean).probabilities != pa.probabilities);
  }
}

TEST_CASE("masking: a model keeps the declared class count when no row has the last class") {
  // The declared schema sets num_classes; a data set whose rows of class 2 are all masked (or
  // absent) still trains a 3-class model: the shape is the schema's, not the rows'.
  Dataset data = trainer_tests::blobs(150, 3, 3, 2.0, 5);
  for (auto& label : data.labels)
    if (label == 2) label = kMaskedLabel;
  REQUIRE(data.num_classes == 3);
  const Predictions p = fit_and_predict(
      {"dp_sgd", {{"epochs", std::int64_t{1}}, {"noise_multiplier", 1.0}}, 3}, data, data);
  CHECK(p.num_classes == 3);
  CHECK(p.probabilities.size() == 3 * data.rows);
}

TEST_CASE("masking: utilities count a masked record in n and never as correct") {
  constexpr double m = kMaskedLabel;
  // Accuracy: 4 records, one masked whose prediction happens to be -1 too: 2 correct of 4.
  Predictions p;
  p.values = {0, 1, -1, 1};
  p.num_classes = 2;
  CHECK(trainer_tests::utility("accuracy", {})->score(std::vector<double>{0, 1, m, 0}, p) == 0.5);

  // Binary F1: the masked record adds no tp, fp or fn even when predicted positive.
  // truth {1, 0, m, 1}, predicted {1, 1, 1, 0}: tp 1, fp 1, fn 1 → 2/4.
  Predictions q;
  q.values = {1, 1, 1, 0};
  CHECK(trainer_tests::utility("f1", {})->score(std::vector<double>{1, 0, m, 1}, q) == 0.5);
  // Macro F1 over {0, 1, 2}: the masked record, predicted 2, makes class 2 appear nowhere.
  // truth {0, 1, m}, predicted {0, 1, 2}: classes 0 and 1 perfect → 1.
  Predictions r;
  r.values = {0, 1, 2};
  auto macro = trainer_tests::utility("f1", {{"average", std::string("macro")}});
  CHECK(macro->score(std::vector<double>{0, 1, m}, r) == 1.0);

  // Log-loss score: the masked record costs the largest per-record loss ln(1/floor), whatever the
  // model says: exp(-(ln(1/0.8) + ln(1/floor)) / 2) = √(0.8 · floor).
  Predictions s;
  s.values = {1, 0};
  s.num_classes = 2;
  s.probabilities = {0.2, 0.8, 0.9, 0.1};
  auto ll = trainer_tests::utility("log_loss_score", {{"floor", 1e-4}});
  CHECK(ll->score(std::vector<double>{1, m}, s) ==
        doctest::Approx(std::sqrt(0.8 * 1e-4)).epsilon(1e-14));
}
