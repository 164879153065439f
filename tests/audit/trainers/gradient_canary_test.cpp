// The gradient-canary hook of the training loop (dptune/gradient_canaries.hpp), white-box: what
// train_dp_sgd adds for a canary row (its gradient clipped to L, in place of the row's), what it
// hands `observe` (the noised sum), and that without canaries, or with none named, it trains
// exactly as before.
#include <doctest/doctest.h>

#include <vector>

#include "dptune/errors.hpp"
#include "dptune/gradient_canaries.hpp"
#include "dptune/rng.hpp"
#include "training/network.hpp"
#include "training/training.hpp"

using namespace dptune;
using namespace dptune::trainers;

namespace {

/// Rows (x1, x2, label); a binary logistic model has p = 3 parameters (two weights, one bias).
Dataset rows(const std::vector<std::vector<double>>& values) {
  Dataset d;
  d.rows = values.size();
  d.cols = 2;
  d.num_classes = 2;
  for (const auto& v : values) {
    d.features.insert(d.features.end(), {v[0], v[1]});
    d.labels.push_back(v[2]);
  }
  return d;
}

/// Full-batch DP-SGD (one lot of all n rows a step), learning rate 0 so every step sees the same
/// weights: each released sum is the same function of the rows.  Returns every released sum.
std::vector<std::vector<double>> released_sums(const Dataset& data, const NoiseFunction& noise,
                                               GradientCanaries* canaries) {
  DpSgdOptions o;
  o.epochs = 2;
  o.lot_size = data.rows;
  o.learning_rate = 0;
  o.clipping_norm = 0.5;
  Network net(Architecture{2, 2, {}, LossKind::CrossEntropy});
  Xoshiro256 rng(7);
  std::vector<std::vector<double>> sums;
  GradientCanaries none;
  GradientCanaries& observed = canaries ? *canaries : none;
  observed.observe = [&](const std::vector<double>& sum) { sums.push_back(sum); };
  train_dp_sgd(net, data, o, rng, noise, &observed);
  return sums;
}

}  // namespace

TEST_CASE("gradient canaries: a canary row adds its clipped gradient in place of the row's") {
  const Dataset real = rows({{0.5, -1.0, 1}, {2.0, 0.25, 0}});
  // The same two rows with a placeholder between them whose own gradient must not count.
  const Dataset with_canary = rows({{0.5, -1.0, 1}, {9.0, 9.0, 1}, {2.0, 0.25, 0}});
  const auto base = released_sums(real, {}, nullptr);
  REQUIRE(base.size() == 2);
  for (const double value : {7.0, -0.2}) {
    CAPTURE(value);
    GradientCanaries canaries;
    canaries.rows = {1};
    canaries.coordinates = {1};
    canaries.values = {value};
    const auto sums = released_sums(with_canary, {}, &canaries);
    REQUIRE(sums.size() == 2);  // one per step: 2 epochs of one full lot
    // Clipped to L = 0.5 when larger (7 → 0.5), kept when smaller (−0.2).
    const double inserted = value > 0.5 ? 0.5 : value;
    for (std::size_t step = 0; step < 2; ++step) {
      CHECK(sums[step][0] == base[step][0]);
      CHECK(sums[step][2] == base[step][2]);
      CHECK(sums[step][1] == doctest::Approx(base[step][1] + inserted).epsilon(1e-15));
    }
  }
}

TEST_CASE("gradient canaries: observe receives the released, noised sum") {
  const Dataset data = rows({{0.5, -1.0, 1}, {2.0, 0.25, 0}});
  const auto clean = released_sums(data, {}, nullptr);
  const NoiseFunction shift = [](std::vector<double>& sum, double) {
    for (double& x : sum) x += 3.0;
  };
  const auto noised = released_sums(data, shift, nullptr);
  REQUIRE(noised.size() == clean.size());
  for (std::size_t k = 0; k < 3; ++k) CHECK(noised[0][k] == clean[0][k] + 3.0);
}

TEST_CASE("gradient canaries: none offered, or none named, trains exactly as before") {
  const Dataset data = rows({{0.5, -1.0, 1}, {2.0, 0.25, 0}, {-1.0, 1.5, 1}, {0.0, 2.0, 0}});
  DpSgdOptions o;
  o.epochs = 3;
  o.lot_size = 2;
  o.learning_rate = 0.3;
  o.clipping_norm = 0.5;
  const auto train = [&](const GradientCanaries* canaries) {
    Network net(Architecture{2, 2, {}, LossKind::CrossEntropy});
    Xoshiro256 rng(11);
    net.initialise(rng);
    const NoiseFunction noise = [&](std::vector<double>& sum, double l2) {
      for (double& x : sum) x += gaussian(rng, l2);
    };
    train_dp_sgd(net, data, o, rng, noise, canaries);
    return net.params();
  };
  const GradientCanaries empty;
  CHECK(train(nullptr) == train(&empty));
}

TEST_CASE("gradient canaries: malformed canaries are refused") {
  const Dataset data = rows({{0.5, -1.0, 1}, {2.0, 0.25, 0}});
  GradientCanaries bad;
  bad.rows = {0};
  bad.coordinates = {3};  // p = 3: coordinates 0..2
  bad.values = {1.0};
  CHECK_THROWS_AS(released_sums(data, {}, &bad), InvalidArgument);
  bad.rows = {0, 0};
  bad.coordinates = {0, 1};
  bad.values = {1.0, 1.0};
  CHECK_THROWS_AS(released_sums(data, {}, &bad), InvalidArgument);
}
