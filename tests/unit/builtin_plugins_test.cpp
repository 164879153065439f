// The built-in plugins of the first pipeline, loaded through the registry as the host loads them.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "build_paths.hpp"
#include "dptune/dptune.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/host/plugin_registry.hpp"

using namespace dptune;

namespace {

const host::PluginRegistry& builtins() {
  static host::PluginRegistry* registry = [] {
    auto* r = new host::PluginRegistry();
    r->scan(dptune_test::build_paths::built_plugin_dir);
    return r;
  }();
  return *registry;
}

std::shared_ptr<Mechanism> svt(double b, std::int64_t c) {
  const auto* info = builtins().find(PluginKind::Mechanism, "sparse_vector");
  REQUIRE(info != nullptr);
  return builtins().create_mechanism("sparse_vector", info->schema.complete({{"b", b}, {"C", c}}));
}

// Avent et al. 2020, Appendix B: Algorithm 1 is Lyu et al.'s Algorithm 7 with ε1 = 1/b1 and ε2 =
// 2C/b2, where b1 = b / (1 + (2C)^{1/3}) and b2 = b − b1.  Computed here from that parametrisation,
// not from the simplified closed form the plugin uses.
double svt_epsilon_from_alg5(double b, double c) {
  const double b1 = b / (1 + std::cbrt(2 * c)), b2 = b - b1;
  return 1 / b1 + 2 * c / b2;
}

// P(Laplace(a) + Laplace(b) > t) for t >= 0 (partial fractions of the characteristic function).
double laplace_sum_tail(double a, double b, double t) {
  return (a * a * std::exp(-t / a) - b * b * std::exp(-t / b)) / (2 * (a * a - b * b));
}

}  // namespace

TEST_CASE("builtin: sparse_vector privacy is the closed form of Avent et al. 2020 Appendix B") {
  for (double b : {0.01, 0.5, 1.0, 7.3, 100.0})
    for (std::int64_t c : {1, 2, 10, 30}) {
      const DpEvent e = svt(b, c)->event();
      REQUIRE(e.kind() == DpEvent::Kind::PureDp);
      const double closed = (1 + std::cbrt(2.0 * c)) * (1 + std::cbrt(4.0 * c * c)) / b;
      CHECK(e.epsilon() == doctest::Approx(closed).epsilon(1e-13));
      CHECK(e.epsilon() ==
            doctest::Approx(svt_epsilon_from_alg5(b, static_cast<double>(c))).epsilon(1e-12));
    }
  // b = 1, C = 1: (1 + 2^{1/3})(1 + 2^{2/3}) = 5.8473221...
  CHECK(svt(1.0, 1)->event().epsilon() == doctest::Approx(5.847322101863072).epsilon(1e-14));
  // Monotone: more noise, less ε; larger C, more ε.
  CHECK(svt(2.0, 5)->event().epsilon() < svt(1.0, 5)->event().epsilon());
  CHECK(svt(1.0, 6)->event().epsilon() > svt(1.0, 5)->event().epsilon());
}

TEST_CASE("builtin: sparse_vector noisy threshold test, empirically") {
  // One query with true answer 1 against T = 1/2: released iff 1 + ν ≥ 1/2 + ρ, i.e. ρ − ν ≤ 1/2,
  // with ν ~ Lap(b2), ρ ~ Lap(b1).  P = 1 − P(Lap(b1) + Lap(b2) > 1/2).
  const double b = 1.0, c = 1.0;
  const double b1 = b / (1 + std::cbrt(2 * c)), b2 = b - b1;
  const double expected = 1 - laplace_sum_tail(b1, b2, 0.5);
  auto mechanism = svt(b, 1);
  Xoshiro256 rng(11);
  const int n = 200000;
  int released = 0;
  const std::vector<double> answer = {1.0};
  for (int i = 0; i < n; ++i) released += mechanism->release(answer, Sensitivity{}, rng)[0] == 1.0;
  const double sd = std::sqrt(expected * (1 - expected) / n);
  CHECK(std::abs(released / double(n) - expected) < 5 * sd);

  // The threshold noise ρ is drawn once and shared by all queries: with two queries at the
  // threshold, P(both) = ∫ f_ρ(r) P(ν ≥ r)² dr, which is > 1/4 (independent thresholds would give
  // exactly 1/4).
  const double b_two = 1.0, c_two = 2.0;
  const double t1 = b_two / (1 + std::cbrt(2 * c_two)), t2 = b_two - t1;
  auto survival = [&](double r) {
    return r >= 0 ? 0.5 * std::exp(-r / t2) : 1 - 0.5 * std::exp(r / t2);
  };
  double both_expected = 0;
  const int steps = 200000;
  const double lo = -60 * t1, hi = 60 * t1, h = (hi - lo) / steps;
  for (int k = 0; k <= steps; ++k) {  // Simpson's rule
    const double r = lo + k * h;
    const double w = (k == 0 || k == steps) ? 1 : (k % 2 ? 4 : 2);
    both_expected += w * std::exp(-std::abs(r) / t1) / (2 * t1) * survival(r) * survival(r);
  }
  both_expected *= h / 3;
  CHECK(both_expected > 0.3);
  auto two = svt(b_two, 2);
  int both = 0, first = 0;
  const std::vector<double> at_threshold = {0.5, 0.5};
  for (int i = 0; i < n; ++i) {
    auto w = two->release(at_threshold, Sensitivity{}, rng);
    both += w[0] == 1.0 && w[1] == 1.0;
    first += w[0] == 1.0;
  }
  CHECK(std::abs(both / double(n) - both_expected) <
        5 * std::sqrt(both_expected * (1 - both_expected) / n));
  CHECK(std::abs(first / double(n) - 0.5) < 5 * std::sqrt(0.25 / n));
}

TEST_CASE("builtin: sparse_vector halts after C positives") {
  auto mechanism = svt(1e-6, 3);  // negligible noise
  Xoshiro256 rng(5);
  const std::vector<double> answers = {0, 1, 1, 0, 1, 1, 1, 0};
  CHECK(mechanism->release(answers, Sensitivity{}, rng) ==
        std::vector<double>{0, 1, 1, 0, 1, 0, 0, 0});
}

TEST_CASE("builtin: f1 utility") {
  const auto* info = builtins().find(PluginKind::Utility, "f1");
  REQUIRE(info != nullptr);
  auto f1 = builtins().create_utility("f1", info->schema.complete({}));
  const std::vector<double> truth = {1, 1, 1, 0, 0, 0};
  Predictions p;
  p.values = {1, 1, 0, 1, 0, 0};  // tp 2, fp 1, fn 1: F1 = 4 / 6
  CHECK(f1->score(truth, p) == doctest::Approx(2.0 / 3.0));
  p.values = {1, 1, 1, 0, 0, 0};
  CHECK(f1->score(truth, p) == 1.0);
  p.values = {0, 0, 0, 0, 0, 0};
  CHECK(f1->score(truth, p) == 0.0);
  p.values = {0, 0, 0};
  CHECK_THROWS_AS(f1->score(truth, p), PluginError);  // wrapped: names the plugin and the call
  p.values = {0, 0, 0, 0, 0, 0};
  CHECK(f1->score(std::vector<double>(6, 0.0), p) == 1.0);  // nothing to find, nothing released
}

TEST_CASE("builtin: pure_dp accountant (the rdp core restricted to pure/approximate DP events)") {
  const auto* info = builtins().find(PluginKind::Accountant, "pure_dp");
  REQUIRE(info != nullptr);
  auto acc = builtins().create_accountant("pure_dp", info->schema.complete({}));
  CHECK(acc->epsilon(DpEvent::pure_dp(0.7), 0).epsilon == 0.7);
  CHECK(acc->epsilon(DpEvent::laplace(4.0), 0).epsilon == 0.25);
  const auto composed = DpEvent::composed({DpEvent::self_composed(DpEvent::pure_dp(0.1), 10),
                                           DpEvent::approx_dp(0.5, 1e-6), DpEvent::no_op()});
  // At δ = 1e-6 the approx part takes all of δ: basic composition, 10·0.1 + 0.5.
  const auto exact = acc->epsilon(composed, 1e-6);
  CHECK(exact.epsilon == doctest::Approx(1.5));
  CHECK(exact.delta == 1e-6);
  // With δ to spare, the leftover 9e-6 buys an RDP conversion of the ten 0.1-DP steps: tighter.
  const auto g = acc->epsilon(composed, 1e-5);
  CHECK(g.epsilon < 1.5);
  CHECK(g.epsilon > 1.45);
  CHECK(g.delta == 1e-5);
  CHECK(g.accountant == "pure_dp");
  CHECK(g.derivation.find("basic composition") != std::string::npos);
  // The event needs δ = 1e-6: a smaller pipeline δ cannot be met.
  CHECK_THROWS_AS(acc->epsilon(composed, 1e-7), PrivacyError);
  // Gaussian noise cannot be accounted as pure DP: refused, not guessed.
  CHECK(acc->unsupported_reason(DpEvent::gaussian(1)).find("rdp") != std::string::npos);
  CHECK_THROWS_AS(acc->epsilon(DpEvent::gaussian(1), 1e-5), PrivacyError);
  CHECK_THROWS_AS(acc->epsilon(DpEvent::non_private(), 1e-5), PrivacyError);
  // δ(ε) of a 1-DP event: ε ≥ 1 costs nothing; ε = 0 needs (e − 1)/(e + 1) = tanh(1/2)
  // (randomised response is the worst 1-DP mechanism; Kairouz, Oh & Viswanath 2015).
  CHECK(acc->delta(DpEvent::pure_dp(1), 1.0).delta == 0.0);
  CHECK(acc->delta(DpEvent::pure_dp(1), 0.0).delta ==
        doctest::Approx(std::tanh(0.5)).epsilon(1e-14));
  const double e0 = 2.0, e = 0.5;
  CHECK(acc->delta(DpEvent::pure_dp(e0), e).delta ==
        doctest::Approx((std::exp(e0) - std::exp(e)) / (1 + std::exp(e0))).epsilon(1e-14));
}

namespace {
std::shared_ptr<Mechanism> noise_mechanism(const std::string& name, double multiplier,
                                           const std::string& noise) {
  const auto* info = builtins().find(PluginKind::Mechanism, name);
  REQUIRE(info != nullptr);
  return builtins().create_mechanism(
      name, info->schema.complete({{"noise_multiplier", multiplier}, {"noise", noise}}));
}
}  // namespace

TEST_CASE("builtin: laplace and gaussian, noise: secure — stated events, grid outputs, scale") {
  // the secure default releases on a power-of-two grid with exact discrete noise, and
  // the gaussian mechanism states the discrete mechanism's event (priced by its own theorems);
  // laplace's event holds for the discrete Laplace as it is.  The noise scale is multiplier ×
  // sensitivity up to the grid's tiny inflation (sdk/include/dptune/helpers/grid_noise.hpp).
  CHECK(noise_mechanism("gaussian", 1.3, "secure")->event() ==
        DpEvent::discrete_gaussian_on_grid(1.3, 4194304));
  CHECK(noise_mechanism("gaussian", 1.3, "fast")->event() == DpEvent::gaussian(1.3));
  for (const std::string noise : {"secure", "fast"})
    CHECK(noise_mechanism("laplace", 0.7, noise)->event() == DpEvent::laplace(0.7));
  const auto* info = builtins().find(PluginKind::Mechanism, "gaussian");
  CHECK(info->schema.complete({}).get_string("noise") == "secure");  // the default

  Xoshiro256 rng(15);
  Sensitivity s;
  s.l1 = 3.0;
  s.l2 = 2.0;
  const std::vector<double> values(40000, 0.125);
  const std::vector<double> g = noise_mechanism("gaussian", 1.5, "secure")->release(values, s, rng);
  const double step = gaussian_grid(2.0, 1.5, values.size());
  double squares = 0;
  for (double x : g) {
    REQUIRE(std::ldexp(x, -std::ilogb(step)) == std::nearbyint(std::ldexp(x, -std::ilogb(step))));
    squares += (x - 0.125) * (x - 0.125);
  }
  // sd σ Δ₂ = 3; relative standard error of the sample sd 1/sqrt(2n) = 0.35%, allow 5 of them.
  CHECK(std::sqrt(squares / 40000) == doctest::Approx(3.0).epsilon(0.018));
  const std::vector<double> l = noise_mechanism("laplace", 0.5, "secure")->release(values, s, rng);
  double absolute = 0;
  for (double x : l) absolute += std::abs(x - 0.125);
  // E|Laplace(b Δ₁)| = b Δ₁ = 1.5; sd of |X| is 1.5 too: relative standard error 0.5%, 5 of them.
  CHECK(absolute / 40000 == doctest::Approx(1.5).epsilon(0.025));
}

namespace {

/// Whether `mechanism` throws when it releases `count` zeros with sensitivity `s` (the values do
/// not matter to a data-independent refusal; zeros are on every grid).
bool release_throws(const Mechanism& mechanism, std::size_t count, const Sensitivity& s) {
  Xoshiro256 rng(3);
  const std::vector<double> zeros(count, 0.0);
  try {
    (void)mechanism.release(zeros, s, rng);
  } catch (const Error&) {
    return true;
  }
  return false;
}

}  // namespace

TEST_CASE("builtin: release_refusal says exactly what release refuses before looking at a value") {
  // The secure Gaussian refuses σ·√d > 2^21 (grid_noise.hpp); the boundary is met from both sides
  // for counts whose square root is exact, and the refusal matches what release() does.
  Sensitivity s;
  s.l2 = 1;
  s.l1 = 1;
  s.linf = 1;
  for (const std::size_t count : {std::size_t{1}, std::size_t{4}, std::size_t{1024}}) {
    const double boundary = 2097152.0 / std::sqrt(static_cast<double>(count));
    for (const double sigma :
         {boundary / 2, boundary, std::nextafter(boundary, 1e300), boundary * 2}) {
      CAPTURE(count);
      CAPTURE(sigma);
      const auto gaussian = noise_mechanism("gaussian", sigma, "secure");
      const bool refused = !gaussian->release_refusal(count, s).empty();
      CHECK(refused == (sigma > boundary));
      CHECK(refused == release_throws(*gaussian, count, s));
      // The floating-point sampler has no grid: nothing to refuse.
      CHECK(noise_mechanism("gaussian", sigma, "fast")->release_refusal(count, s).empty());
    }
  }
  CHECK(noise_mechanism("gaussian", 1e5, "secure")->release_refusal(1024, s).find("2^21") !=
        std::string::npos);
  // The secure Laplace refuses b·d > 2^28.
  for (const std::size_t count : {std::size_t{1}, std::size_t{64}}) {
    const double boundary = 268435456.0 / static_cast<double>(count);
    for (const double b : {boundary / 2, boundary, boundary * 2}) {
      CAPTURE(count);
      CAPTURE(b);
      const auto laplace = noise_mechanism("laplace", b, "secure");
      const bool refused = !laplace->release_refusal(count, s).empty();
      CHECK(refused == (b > boundary));
      CHECK(refused == release_throws(*laplace, count, s));
    }
  }
  // A sensitivity no release accepts is refused the same way, whatever the count.
  Sensitivity infinite = s;
  infinite.l2 = infinite.l1 = infinite.linf = std::numeric_limits<double>::infinity();
  for (const std::string noise : {"secure", "fast"}) {
    CHECK_FALSE(noise_mechanism("gaussian", 1, noise)->release_refusal(3, infinite).empty());
    CHECK(release_throws(*noise_mechanism("gaussian", 1, noise), 3, infinite));
    CHECK_FALSE(noise_mechanism("laplace", 1, noise)->release_refusal(3, infinite).empty());
  }
  // sparse_vector: b beyond 2^28 for one coordinate, and a sensible b, C.
  CHECK(svt(1.0, 2)->release_refusal(10, s).empty());
  CHECK_FALSE(release_throws(*svt(1.0, 2), 10, s));
  CHECK_FALSE(svt(1e9, 2)->release_refusal(10, s).empty());
  CHECK(release_throws(*svt(1e9, 2), 10, s));
}

TEST_CASE("builtin: trainers declare the releases they make through the mechanism") {
  auto trainer = [](const std::string& name, Params params) {
    const auto* info = builtins().find(PluginKind::Trainer, name);
    REQUIRE(info != nullptr);
    return builtins().create_trainer(name, info->schema.complete(params));
  };
  // DP-SGD's noisy sum has one value per network parameter: an MLP 30 -> 8 -> 1 has
  // 30·8 + 8 + 8·1 + 1 = 257 parameters; 3 classes, logistic: (30 + 1)·3 = 93.
  const auto mlp = trainer(
      "dp_sgd",
      {{"model", std::string("mlp")}, {"hidden1", std::int64_t{8}}, {"clipping_norm", 2.0}});
  const auto releases = mlp->mechanism_releases({100, 30, 2});
  REQUIRE(releases.size() == 1);
  CHECK(releases[0].count == 257);
  // Its sensitivity is the clipping norm widened by the proven rounding bound (about 2^-24).
  CHECK(releases[0].sensitivity.l2 > 2.0);
  CHECK(releases[0].sensitivity.l2 < 2.0 * (1 + 1e-6));
  const auto logistic = trainer("dp_adam", {{"model", std::string("logistic")}});
  REQUIRE(logistic->mechanism_releases({100, 30, 3}).size() == 1);
  CHECK(logistic->mechanism_releases({100, 30, 3})[0].count == 93);
  CHECK(logistic->mechanism_releases({0, 30, 3}).empty());
  // Output perturbation releases the weights of its binary models: 3 one-vs-rest models of
  // d + 1 = 31 weights, at the joint sensitivity √3 · 2L/(nλ), L = 2 (Wu et al. 2017).
  const auto op = trainer("output_perturbation", {{"regularization", 0.5}});
  const auto weights = op->mechanism_releases({200, 30, 3});
  REQUIRE(weights.size() == 1);
  CHECK(weights[0].count == 93);
  CHECK(weights[0].sensitivity.l2 == doctest::Approx(std::sqrt(3.0) * 4.0 / (200 * 0.5)));
  // A trainer that draws no noise through the mechanism declares nothing.
  CHECK(trainer("sgd", {})->mechanism_releases({100, 30, 2}).empty());
}
