// The SVT doubling core: the loop of Ding et al. Algorithm 1 (with Ding & Wu's `u >= 1` break) in
// the noise-free world against Lemma 1, the iteration cap, the worst case and the noise scales (the
// simulation of §4.2 is dptune-figures', tested in tests/figures).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dptune/helpers/grid_noise.hpp"
#include "dptune/testing.hpp"
#include "support.hpp"
#include "svt_doubling/core.hpp"

namespace {

const dptune::svt_doubling::NoiseFn kZero = [] { return 0.0; };

dptune::svt_doubling::LoopResult noise_free(const std::vector<double>& u, double u0, double g,
                                            std::size_t t_max = 0) {
  dptune::svt_doubling::LoopOptions o;
  o.u0 = u0;
  o.g = g;
  o.t_max = t_max ? t_max : dptune::svt_doubling::worst_case_iterations(u0, g);
  return dptune::svt_doubling::run_loop(u, o, kZero, kZero);
}

/// First candidate in order whose utility reaches `level`.
std::size_t first_at_least(const std::vector<double>& u, double level) {
  for (std::size_t s = 0; s < u.size(); ++s)
    if (u[s] >= level) return s;
  return u.size();
}

/// A tuner context of which make_noise uses rng() and mechanism() only.
class NoiseContext final : public dptune::testing::StubTunerContext {
 public:
  enum class Mode { Laplace, Gaussian, None };
  NoiseContext(Mode mode, std::uint64_t seed)
      : StubTunerContext(dptune::SearchSpace(), seed), mode_(mode) {}
  dptune::Evaluator& evaluator() override { throw std::logic_error("unused"); }
  const dptune::Accountant& accountant() const override { throw std::logic_error("unused"); }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    const double b = overrides.get_double("noise_multiplier");
    requested.push_back(b);
    if (mode_ == Mode::Laplace) return std::make_shared<dptune_test::LaplaceNoise>(b);
    if (mode_ == Mode::Gaussian) return std::make_shared<dptune_test::GaussianNoise>(b);
    throw dptune::ConfigError("pipeline.yaml: mechanism: the pipeline names no mechanism");
  }
  std::vector<double> requested;

 private:
  Mode mode_;
};

}  // namespace

TEST_CASE("noise-free loop: exhaustively over the ladder, u reaches u* in Lemma 1's iterations") {
  for (const auto& [u0, g] :
       std::vector<std::pair<double, double>>{{0.0, 0.01}, {0.25, 0.01}, {0.6, 0.03}, {0.0, 0.1}}) {
    const std::int64_t m = dptune::svt_doubling::levels_to_one(u0, g);
    std::size_t most = 0;
    for (std::int64_t n = 0; n < m; ++n) {
      const double u_star = u0 + (static_cast<double>(n) + 0.5) * g;  // strictly between levels
      if (u_star >= 1) continue;
      const std::vector<double> u{0.3 * u_star, u_star, 0.5 * u_star, u_star - 0.4 * g};
      const auto r = noise_free(u, u0, g);
      const double start = u0, step = g;  // CAPTURE cannot name a structured binding
      CAPTURE(start);
      CAPTURE(step);
      CAPTURE(n);
      CHECK(r.stop == dptune::svt_doubling::Stop::StepZero);
      CHECK(r.units == n);  // the highest ladder level at or below u*
      CHECK(r.u <= u_star);
      CHECK(r.u > u_star - g);
      CHECK(r.iterations == svt_test::lemma1_iterations(static_cast<std::uint64_t>(n)));
      CHECK(r.iterations <= svt_test::lemma1_paper_bound(static_cast<std::uint64_t>(n)));
      if (n > 0) {
        REQUIRE(r.selected.has_value());
        // s* is the first candidate (in the public order) that reaches the last passed level.
        CHECK(*r.selected == first_at_least(u, r.u));
      } else {
        CHECK_FALSE(r.selected.has_value());  // nothing reaches u0 + g
      }
      most = std::max(most, r.iterations);
    }
    CHECK(most <= dptune::svt_doubling::noise_free_worst_iterations(u0, g));
    CHECK(most <= dptune::svt_doubling::default_t_max(u0, g));
  }
  // g = 0.01, u0 = 0: 100 levels; the noise-free loop needs at most 23 iterations (N = 94 =
  // 63 + 31: K = 6 and five set bits: 12 + 1 + 10), Lemma 1's 4 floor(log2 M) + 1 = 25.
  std::size_t most = 0;
  for (std::uint64_t n = 0; n < 100; ++n) most = std::max(most, svt_test::lemma1_iterations(n));
  CHECK(most == 23);
  CHECK(svt_test::lemma1_iterations(94) == 23);
  CHECK(dptune::svt_doubling::noise_free_worst_iterations(0, 0.01) == 25);
}

TEST_CASE("noise-free loop: random utility vectors") {
  dptune::Xoshiro256 rng(2024);
  for (std::size_t size : {1, 2, 7, 100}) {
    for (double u0 : {0.0, 0.2, 0.45}) {
      for (int rep = 0; rep < 10; ++rep) {
        std::vector<double> u(size);
        for (double& x : u) x = dptune::uniform01(rng);
        const double u_star = *std::max_element(u.begin(), u.end());
        const double g = 0.01;
        const auto r = noise_free(u, u0, g);
        CAPTURE(size);
        CAPTURE(u0);
        CAPTURE(u_star);
        if (u_star < u0 + g) {
          CHECK(r.iterations == 1);
          CHECK_FALSE(r.selected.has_value());
          continue;
        }
        CHECK(r.u <= u_star + 1e-12);
        CHECK(r.u > u_star - g);
        CHECK(r.iterations == svt_test::lemma1_iterations(static_cast<std::uint64_t>(r.units)));
        REQUIRE(r.selected.has_value());
        CHECK(u[*r.selected] > u_star - g);  // fidelity within one granule
        CHECK(*r.selected == first_at_least(u, r.u));
      }
    }
  }
}

TEST_CASE("the cap: the loop stops at T_max with the current s*") {
  const std::vector<double> u{0.05, 0.5, 0.9};
  // Without a cap: levels 1, 3 (candidate 0), 7, 15, 31, 63 (candidate 1), then candidate 2 on the
  // way down to 90 = floor(0.9 / 0.01).
  const auto full = noise_free(u, 0, 0.01);
  CHECK(full.units == 90);
  CHECK(*full.selected == 2);
  // Iterations 1-2 pass with candidate 0 (0.05 >= 0.01, 0.03), iteration 3 with candidate 1 (0.07).
  const auto one = noise_free(u, 0, 0.01, 1);
  CHECK(one.iterations == 1);
  CHECK(one.stop == dptune::svt_doubling::Stop::Cap);
  CHECK(*one.selected == 0);
  const auto three = noise_free(u, 0, 0.01, 3);
  CHECK(three.iterations == 3);
  CHECK(three.stop == dptune::svt_doubling::Stop::Cap);
  CHECK(three.units == 7);
  CHECK(*three.selected == 1);
  CHECK(three.step == 8);

  // With heavy noise the loop would wander; the cap is never exceeded.
  dptune::Xoshiro256 rng(5);
  const dptune::svt_doubling::NoiseFn thr = [&] { return dptune::laplace(rng, 2 / 0.05); };
  const dptune::svt_doubling::NoiseFn qry = [&] { return dptune::laplace(rng, 4 / 0.05); };
  std::size_t capped = 0;
  for (int rep = 0; rep < 500; ++rep) {
    dptune::svt_doubling::LoopOptions o;
    o.t_max = 10;
    const auto r = dptune::svt_doubling::run_loop(u, o, thr, qry);
    CHECK(r.iterations <= 10);
    if (r.stop == dptune::svt_doubling::Stop::Cap) {
      ++capped;
      CHECK(r.iterations == 10);
    }
  }
  CHECK(capped > 0);
}

TEST_CASE("worst case: alternating pass/fail reaches exactly 2M - 1 iterations, never more") {
  for (const auto& [u0, g] :
       std::vector<std::pair<double, double>>{{0.0, 0.01}, {0.5, 0.1}, {0.3, 0.07}, {0.95, 0.01}}) {
    const std::int64_t m = dptune::svt_doubling::levels_to_one(u0, g);
    CHECK(u0 + static_cast<double>(m) * g >= 1);
    CHECK(u0 + static_cast<double>(m - 1) * g < 1);
    const std::size_t worst = dptune::svt_doubling::worst_case_iterations(u0, g);
    CHECK(worst == static_cast<std::size_t>(2 * m - 1));
    CHECK(worst <=
          static_cast<std::size_t>(2 * std::ceil((1 - u0) / g) + 1));  // the doubling bound
    // Ding & Wu's zig-zag: one candidate, query noise +10, -10, +10, ...: every pass gains one
    // level (step 1 -> 2), every fail halves the step back to 1.
    bool pass = false;
    const dptune::svt_doubling::NoiseFn zigzag = [&] {
      pass = !pass;
      return pass ? 10.0 : -10.0;
    };
    dptune::svt_doubling::LoopOptions o;
    o.u0 = u0;
    o.g = g;
    o.t_max = worst + 50;
    const auto r = dptune::svt_doubling::run_loop(std::vector<double>{0.5}, o, kZero, zigzag);
    CHECK(r.iterations == worst);
    CHECK(r.stop == dptune::svt_doubling::Stop::ReachedOne);
    CHECK(r.units == m);
  }
  CHECK(dptune::svt_doubling::worst_case_iterations(0, 0.01) == 199);
  // Random heavy noise never exceeds the worst case either.
  dptune::Xoshiro256 rng(77);
  std::vector<double> u(20);
  for (double& x : u) x = dptune::uniform01(rng);
  const dptune::svt_doubling::NoiseFn thr = [&] { return dptune::laplace(rng, 0.5); };
  const dptune::svt_doubling::NoiseFn qry = [&] { return dptune::laplace(rng, 1.0); };
  dptune::svt_doubling::LoopOptions o;
  o.g = 0.05;
  o.t_max = 1000;
  std::size_t most = 0;
  for (int rep = 0; rep < 2000; ++rep) {
    const auto r = dptune::svt_doubling::run_loop(u, o, thr, qry);
    CHECK(r.iterations <= dptune::svt_doubling::worst_case_iterations(0, 0.05));
    most = std::max(most, r.iterations);
  }
  // Heavy noise does not lengthen runs here: most candidates pass, u races to 1 and breaks.
  CHECK(most < dptune::svt_doubling::noise_free_worst_iterations(0, 0.05));
}

TEST_CASE("default T_max: Lemma 1's noise-free worst case plus ceil(log2 M), capped") {
  CHECK(dptune::svt_doubling::levels_to_one(0, 0.01) == 100);
  CHECK(dptune::svt_doubling::default_t_max(0, 0.01) == 25 + 7);
  CHECK(dptune::svt_doubling::levels_to_one(0.5, 0.01) == 50);
  CHECK(dptune::svt_doubling::default_t_max(0.5, 0.01) == 4 * 5 + 1 + 6);
  CHECK(dptune::svt_doubling::levels_to_one(0, 0.0625) == 16);
  CHECK(dptune::svt_doubling::default_t_max(0, 0.0625) == 4 * 4 + 1 + 4);
  CHECK(dptune::svt_doubling::default_t_max(0, 0.125) ==
        15);  // M = 8: 4 * 3 + 1 + 3 = 16 > 2M - 1 = 15
  // Few levels: the worst case binds.
  CHECK(dptune::svt_doubling::levels_to_one(0.9, 0.05) == 2);
  CHECK(dptune::svt_doubling::default_t_max(0.9, 0.05) == 3);
  CHECK(dptune::svt_doubling::default_t_max(0.9, 0.05) ==
        dptune::svt_doubling::worst_case_iterations(0.9, 0.05));
  CHECK_THROWS_AS(dptune::svt_doubling::default_t_max(1.0, 0.01), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::svt_doubling::default_t_max(0, 0), dptune::InvalidArgument);
}

TEST_CASE("noise scales: 2 Delta / eps and 4 Delta / eps with Delta = 1/k or max(1/k, 1/n_val)") {
  const auto s = dptune::svt_doubling::laplace_scales(10, 0.5);
  CHECK(s.sensitivity == doctest::Approx(0.1));
  CHECK(s.threshold == doctest::Approx(2 / (10 * 0.5)));
  CHECK(s.query == doctest::Approx(4 / (10 * 0.5)));
  const auto small_val =
      dptune::svt_doubling::laplace_scales(10, 0.5, 1.0 / 4);  // accuracy on 4 rows: 1/4 > 1/10
  CHECK(small_val.sensitivity == doctest::Approx(0.25));
  CHECK(small_val.threshold == doctest::Approx(1.0));
  CHECK(small_val.query == doctest::Approx(2.0));
  const auto big_val =
      dptune::svt_doubling::laplace_scales(10, 0.5, 1.0 / 1000);  // 1/1000 < 1/10: k binds
  CHECK(big_val.sensitivity == doctest::Approx(0.1));
  CHECK(big_val.query == doctest::Approx(0.8));
  CHECK_THROWS_AS(dptune::svt_doubling::laplace_scales(0, 0.5), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::svt_doubling::laplace_scales(10, 0), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::svt_doubling::laplace_scales(10, 0.5, 1.5), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::svt_doubling::laplace_scales(10, 0.5, -0.1), dptune::InvalidArgument);
}

TEST_CASE("noise sources: sample variances 2 b^2 with b = 2 Delta / eps and 4 Delta / eps") {
  const double eps = 0.5;
  struct Case {
    NoiseContext::Mode mode;
    std::size_t validation_rows;
    bool from_mechanism;
  };
  for (const Case c :
       {Case{NoiseContext::Mode::Laplace, 0, true}, Case{NoiseContext::Mode::Gaussian, 0, false},
        Case{NoiseContext::Mode::None, 0, false}, Case{NoiseContext::Mode::Laplace, 4, true},
        Case{NoiseContext::Mode::None, 4, false}}) {
    NoiseContext context(c.mode, 99);
    const auto scales = dptune::svt_doubling::laplace_scales(
        10, eps, c.validation_rows ? 1.0 / static_cast<double>(c.validation_rows) : 0.0);
    const auto noise = dptune::svt_doubling::make_noise(context, scales, eps);
    CAPTURE(static_cast<int>(c.mode));
    CAPTURE(c.validation_rows);
    CHECK(noise.from_mechanism == c.from_mechanism);
    if (c.mode != NoiseContext::Mode::None) {
      REQUIRE(context.requested.size() == 2);
      CHECK(context.requested[0] == doctest::Approx(2 / eps));  // noise multipliers = scale / Delta
      CHECK(context.requested[1] == doctest::Approx(4 / eps));
    }
    if (!c.from_mechanism) {
      CHECK(noise.description.find("SDK sampler") != std::string::npos);
      CHECK(noise.description.find("not used") != std::string::npos);
    } else {
      CHECK(noise.description.find("pipeline's mechanism") != std::string::npos);
    }
    CHECK(noise.description.find("NOT cryptographically secure") != std::string::npos);
    // Var(Laplace(b)) = 2 b^2; with 100000 draws the relative sd of the sample variance is
    // sqrt((kurtosis - 1) / N) = sqrt(5 / 1e5) = 0.7%, so 4% is over 5 sd.
    std::vector<double> t(100000), q(100000);
    for (auto& x : t) x = noise.threshold();
    for (auto& x : q) x = noise.query();
    const double bt = 2 * scales.sensitivity / eps, bq = 4 * scales.sensitivity / eps;
    CHECK(svt_test::sample_variance(t) == doctest::Approx(2 * bt * bt).epsilon(0.04));
    CHECK(svt_test::sample_variance(q) == doctest::Approx(2 * bq * bq).epsilon(0.04));
  }
}

TEST_CASE("secure noise: exact discrete Laplace on the grid, scaled to the rounded sensitivity") {
  const double eps = 0.5;
  NoiseContext context(NoiseContext::Mode::Laplace, 7);
  const auto scales = dptune::svt_doubling::laplace_scales(10, eps);  // Δ = 1/10
  const auto noise = dptune::svt_doubling::make_secure_noise(context, scales, eps);
  CHECK(context.requested.empty());  // the pipeline's mechanism is not used on this path
  CHECK_FALSE(noise.from_mechanism);
  // The grid is laplace_grid(Δ, 2/ϵ, 1): a power of two with (2/ϵ)(Δ/g + 1) <= 2^30.
  REQUIRE(noise.grid == dptune::laplace_grid(0.1, 4.0, 1));
  int e = 0;
  CHECK(std::frexp(noise.grid, &e) == 0.5);
  CHECK(4.0 * (0.1 / noise.grid + 1) <= 1073741824.0);
  CHECK(4.0 * (0.1 / noise.grid + 1) > 536870912.0);  // the finest such grid
  CHECK(noise.description.find("exact discrete Laplace") != std::string::npos);
  // Every draw is an exact multiple of the grid; the variance is the discrete Laplace's for the
  // scale b (Δ/g + 1) grid steps = b (Δ + g), b = 2/ϵ and 4/ϵ (2 b'^2 up to O(g^2): relative
  // error below 2^-50 here), within 4% (over 5 sd of the sample variance, as above).
  std::vector<double> t(100000), q(100000);
  for (auto& x : t) x = noise.threshold();
  for (auto& x : q) x = noise.query();
  for (const double x : t) REQUIRE(std::nearbyint(x / noise.grid) * noise.grid == x);
  for (const double x : q) REQUIRE(std::nearbyint(x / noise.grid) * noise.grid == x);
  const double bt = 2 * (0.1 + noise.grid) / eps, bq = 4 * (0.1 + noise.grid) / eps;
  CHECK(svt_test::sample_variance(t) == doctest::Approx(2 * bt * bt).epsilon(0.04));
  CHECK(svt_test::sample_variance(q) == doctest::Approx(2 * bq * bq).epsilon(0.04));
}

TEST_CASE("secure noise: the transcript depends on the utilities only through the grid") {
  // The floating-point attack (Mironov 2012) reads low-order bits of noisy values; on the grid
  // every sum is an integer number of steps, so utilities that round to the same grid points
  // give bit-identical runs under the same random stream, and the comparisons are exact.
  const double eps = 2.0;
  const auto scales = dptune::svt_doubling::laplace_scales(5, eps);
  std::vector<double> u{0.31, 0.52, 0.47, 0.74, 0.66, 0.12, 0.93, 0.58};
  auto run = [&](const std::vector<double>& utilities) {
    NoiseContext context(NoiseContext::Mode::None, 2024);
    const auto noise = dptune::svt_doubling::make_secure_noise(context, scales, eps);
    dptune::svt_doubling::LoopOptions o;
    o.u0 = 0;
    o.g = 0.01;
    o.t_max = 40;
    o.trace = true;
    o.noise_grid = noise.grid;
    return std::make_pair(
        dptune::svt_doubling::run_loop(utilities, o, noise.threshold, noise.query), noise.grid);
  };
  const auto [base, grid] = run(u);
  std::vector<double> nudged = u;
  for (std::size_t i = 0; i < nudged.size(); ++i)  // stays within a quarter step of the grid point
    nudged[i] = std::nearbyint(u[i] / grid) * grid + (i % 2 ? 0.25 : -0.24) * grid;
  const auto [other, grid2] = run(nudged);
  CHECK(grid2 == grid);
  CHECK(other.selected == base.selected);
  CHECK(other.iterations == base.iterations);
  CHECK(other.units == base.units);
  CHECK(other.selected_after == base.selected_after);
  // A utility beyond 2^52 grid steps is refused rather than compared inexactly.
  std::vector<double> huge{std::ldexp(grid, 60)};
  CHECK_THROWS_AS(run(huge), dptune::InvalidArgument);
}

TEST_CASE("statistics: with large k eps the selection is within a few g of u*") {
  dptune::Xoshiro256 rng(31337);
  auto run = [&](double k_eps, int reps, double& mean_gap, double& within) {
    const dptune::svt_doubling::NoiseFn thr = [&] { return dptune::laplace(rng, 2 / k_eps); };
    const dptune::svt_doubling::NoiseFn qry = [&] { return dptune::laplace(rng, 4 / k_eps); };
    mean_gap = 0;
    within = 0;
    for (int rep = 0; rep < reps; ++rep) {
      std::vector<double> u(100);
      for (double& x : u) x = dptune::uniform_open01(rng);
      const double u_star = *std::max_element(u.begin(), u.end());
      dptune::svt_doubling::LoopOptions o;
      o.t_max = dptune::svt_doubling::default_t_max(0, 0.01);
      const auto r = dptune::svt_doubling::run_loop(u, o, thr, qry);
      const double gap = u_star - u[r.selected.value_or(0)];
      mean_gap += gap / reps;
      within += (gap <= 3 * 0.01) ? 1.0 / reps : 0.0;
    }
  };
  double gap_large = 0, within_large = 0, gap_small = 0, within_small = 0;
  run(1000, 200, gap_large, within_large);
  run(0.5, 200, gap_small, within_small);
  MESSAGE("k eps = 1000: mean gap " << gap_large << ", within 3g " << within_large);
  MESSAGE("k eps = 0.5: mean gap " << gap_small << ", within 3g " << within_small);
  CHECK(gap_large <= 0.01);  // noise scale 0.004: u_s* is within about one granule on average
  CHECK(within_large >= 0.95);
  CHECK(gap_small > 5 * gap_large);  // and the check can fail: small k eps selects far worse
}

TEST_CASE("candidate_list: typed by the search space, in the order written, checked") {
  dptune::SearchSpace space;
  space.add_float("lr", 1e-3, 1.0, true);
  space.add_int("epochs", 1, 32);
  space.add_categorical(
      "model", {dptune::Value{std::string("logistic")}, dptune::Value{std::string("svm")}});
  const auto list = dptune::svt_doubling::parse_candidate_list(
      "lr=0.1, epochs=5, model=svm; model=logistic,epochs=32,lr=1e-3;", space);
  REQUIRE(list.size() == 2);
  CHECK(list[0].get_double("lr") == 0.1);
  CHECK(list[0].get_int("epochs") == 5);
  CHECK(list[0].get_string("model") == "svm");
  CHECK(list[1].get_double("lr") == 0.001);
  CHECK(list[1].get_int("epochs") == 32);
  CHECK(list[1].get_string("model") == "logistic");
  using doctest::Contains;
  CHECK_THROWS_WITH(dptune::svt_doubling::parse_candidate_list("lr=0.1, epochs=5", space),
                    Contains("candidate 1: 'model' missing"));
  CHECK_THROWS_WITH(dptune::svt_doubling::parse_candidate_list(
                        "lr=0.1,epochs=5,model=svm; lr=2,epochs=5,model=svm", space),
                    Contains("candidate 2: {epochs: 5, lr: 2.0, model: svm} is outside"));
  CHECK_THROWS_WITH(
      dptune::svt_doubling::parse_candidate_list("lr=0.1,epochs=5.5,model=svm", space),
      Contains("epochs: '5.5' is not a value of the int dimension"));
  CHECK_THROWS_WITH(dptune::svt_doubling::parse_candidate_list("lr=0.1,epochs=5,model=tree", space),
                    Contains("model: 'tree' is not a value of the categorical dimension"));
  CHECK_THROWS_WITH(dptune::svt_doubling::parse_candidate_list("eta=0.1,epochs=5,model=svm", space),
                    Contains("'eta' is not a dimension of the search space (lr, epochs, model)"));
  CHECK_THROWS_WITH(
      dptune::svt_doubling::parse_candidate_list("lr=0.1,lr=0.2,epochs=5,model=svm", space),
      Contains("'lr' given twice"));
  CHECK_THROWS_WITH(
      dptune::svt_doubling::parse_candidate_list("; lr=0.1,epochs=5,model=svm", space),
      Contains("candidate 1: empty"));
  CHECK_THROWS_WITH(dptune::svt_doubling::parse_candidate_list("lr 0.1", space),
                    Contains("expected name=value"));
}

// Ding et al. §4.1: the adaptive loop.  O sees exactly the released transcript; a fixed batch is
// Algorithm 1; an empty batch ends the loop; the cap holds.
TEST_CASE("adaptive loop: O's feedback is the released transcript, and a fixed batch is run_loop") {
  const std::vector<double> u{0.2, 0.5, 0.83, 0.4};
  dptune::svt_doubling::LoopOptions o;
  o.g = 0.01;
  o.t_max = dptune::svt_doubling::worst_case_iterations(0, 0.01);
  o.trace = true;
  // Fixed batch: identical to run_loop in the noise-free world.
  std::vector<dptune::svt_doubling::Feedback> seen;
  const auto fixed = dptune::svt_doubling::run_adaptive_loop(
      o,
      [&](const dptune::svt_doubling::Feedback& f) {
        seen.push_back(f);
        dptune::svt_doubling::Batch b;
        for (std::size_t s = 0; s < u.size(); ++s) {
          b.ids.push_back(100 + s);  // the caller's ids come back as s*
          b.utilities.push_back(u[s]);
        }
        return b;
      },
      kZero, kZero);
  const auto plain = dptune::svt_doubling::run_loop(u, o, kZero, kZero);
  CHECK(fixed.iterations == plain.iterations);
  CHECK(fixed.units == plain.units);
  REQUIRE(plain.selected.has_value());
  CHECK(fixed.selected == std::optional<std::size_t>(100 + *plain.selected));
  // Before iteration t + 1, O saw t iterations done, s* after iteration t, and whether it passed.
  REQUIRE(seen.size() == fixed.iterations);
  CHECK(seen[0].iteration == 0);
  CHECK_FALSE(seen[0].selected.has_value());
  std::size_t passes_seen = 0;
  for (std::size_t t = 1; t < seen.size(); ++t) {
    CHECK(seen[t].iteration == t);
    CHECK(seen[t].selected == fixed.selected_after[t - 1]);
    // A change of s* is a pass (the converse need not hold: s* may pass again).
    if (seen[t].selected != seen[t - 1].selected) CHECK(seen[t].passed);
    passes_seen += seen[t].passed ? 1 : 0;
  }
  // O is told every outcome but the last one, which ended the loop (a fail taking step to 0).
  CHECK(fixed.stop == dptune::svt_doubling::Stop::StepZero);
  CHECK(passes_seen == fixed.passes);
  // Noise-free, u* = 0.83 is reached: the selection is the best candidate.
  CHECK(fixed.selected == std::optional<std::size_t>(102));

  // O revealing one new candidate per iteration, then stopping after 5 iterations.
  const auto grown = dptune::svt_doubling::run_adaptive_loop(
      o,
      [&](const dptune::svt_doubling::Feedback& f) {
        dptune::svt_doubling::Batch b;
        if (f.iteration == 5) return b;  // O terminates
        b.ids = {f.iteration};
        b.utilities = {0.1 * static_cast<double>(f.iteration + 1)};
        return b;
      },
      kZero, kZero);
  CHECK(grown.stop == dptune::svt_doubling::Stop::Optimizer);
  CHECK(grown.iterations == 5);
  // Levels 0.01, 0.03 (step 2), 0.07 (step 4), 0.15 (step 8), 0.31 (step 16): candidate t has
  // u = 0.1 (t + 1) >= u + step g at t = 0..3 (0.01, 0.03, 0.07, 0.15 <= 0.1 .. 0.4), and at t = 4
  // 0.5 >= 0.15 + 0.16 = 0.31: five passes, s* = 4.
  CHECK(grown.passes == 5);
  CHECK(grown.selected == std::optional<std::size_t>(4));

  // The cap binds whatever O does.
  o.t_max = 3;
  const auto capped = dptune::svt_doubling::run_adaptive_loop(
      o,
      [&](const dptune::svt_doubling::Feedback&) {
        dptune::svt_doubling::Batch b;
        b.ids = {0};
        b.utilities = {0.99};
        return b;
      },
      kZero, kZero);
  CHECK(capped.stop == dptune::svt_doubling::Stop::Cap);
  CHECK(capped.iterations == 3);
  // An empty first batch is an error, not a silent default.
  CHECK_THROWS_AS(
      dptune::svt_doubling::run_adaptive_loop(
          o, [](const dptune::svt_doubling::Feedback&) { return dptune::svt_doubling::Batch{}; },
          kZero, kZero),
      dptune::InvalidArgument);
}

TEST_CASE(
    "adaptive: LocalSearch draws, then perturbs the incumbent (last); radius doubles/halves") {
  dptune::SearchSpace space;
  space.add_float("lr", 1e-3, 1.0, true);
  space.add_int("epochs", 1, 10);
  dptune::Xoshiro256 rng(5);
  dptune::svt_doubling::LocalSearch search(space, 6, 0.1);
  const auto first = search.propose(nullptr, false, true, rng);
  REQUIRE(first.size() == 6);
  for (const auto& p : first) CHECK(space.contains(p));
  CHECK(search.radius() == doctest::Approx(0.1));  // unchanged before any outcome
  const dptune::Params& incumbent = first[2];
  const auto next = search.propose(&incumbent, true, false, rng);
  CHECK(search.radius() == doctest::Approx(0.2));
  REQUIRE(next.size() == 6);
  CHECK(next.back() == incumbent);
  for (const auto& p : next) CHECK(space.contains(p));
  // Perturbations stay near the incumbent in the unit cube (sd 0.2: within 5 sd).
  const auto centre = space.to_unit(incumbent);
  for (std::size_t i = 0; i + 1 < next.size(); ++i) {
    const auto x = space.to_unit(next[i]);
    for (std::size_t d = 0; d < x.size(); ++d) CHECK(std::abs(x[d] - centre[d]) <= 1.0 + 1e-12);
  }
  search.propose(&incumbent, true, false, rng);
  search.propose(&incumbent, true, false, rng);
  CHECK(search.radius() == doctest::Approx(0.5));  // capped
  for (int i = 0; i < 20; ++i) search.propose(&incumbent, false, false, rng);
  CHECK(search.radius() == doctest::Approx(1.0 / 1024));  // floored
  CHECK_THROWS_AS(dptune::svt_doubling::LocalSearch(space, 0, 0.1), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::svt_doubling::LocalSearch(space, 3, 0.7), dptune::InvalidArgument);
}
