// The geometric mechanism's own test, written with dptune's test kit (<dptune/testing.hpp>): its
// noise has the probabilities the comment of geometric_mechanism.cpp states, the same frequencies
// as dptune's exact discrete Laplace sampler (a helper: <dptune/helpers/discrete.hpp>, linked
// through dptune::helpers), and it refuses a non-integer value.  A plain program (exit code 0 =
// pass), run by `ctest` in the build folder.
//
// The plugin is one file whose class is internal to it, so the test compiles that file in.
#include "geometric_mechanism.cpp"  // NOLINT(bugprone-suspicious-include)

#include <cstdint>
#include <cstdio>
#include <dptune/helpers/discrete.hpp>
#include <dptune/testing.hpp>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  const double epsilon = 1.0;
  dptune::Params params;
  params.set("epsilon", epsilon);
  const GeometricMechanism mechanism(params);
  check(mechanism.event() == dptune::DpEvent::pure_dp(epsilon), "event() is pure_dp(epsilon)");

  // P(Z = k) = (1 - α) / (1 + α) · α^|k| with α = exp(-ε / Δ); each empirical frequency is a
  // binomial proportion, so 5 standard errors bound it with a false-alarm rate below 1e-6.
  dptune::Sensitivity sensitivity;
  sensitivity.l1 = 2;
  const double alpha = std::exp(-epsilon / sensitivity.l1);
  const std::size_t n = 200000;
  dptune::Xoshiro256 rng(42);
  const std::vector<double> released =
      dptune::testing::draw_releases(mechanism, 7, sensitivity, n, rng);
  // The same law is dptune's exact discrete Laplace of scale t = Δ/ε = 2 (Canonne, Kamath &
  // Steinke 2020, Algorithm 2): a second sample of n, whose frequencies must agree with the
  // mechanism's within 5 standard errors of a difference of two independent proportions.
  std::vector<std::int64_t> reference(n);
  dptune::discrete_laplace(rng, 2, 1, reference);
  for (int k = -3; k <= 3; ++k) {
    const double p = (1 - alpha) / (1 + alpha) * std::pow(alpha, std::abs(k));
    const auto hits = std::count(released.begin(), released.end(), 7.0 + k);
    const double frequency = static_cast<double>(hits) / static_cast<double>(n);
    const double tolerance = 5 * std::sqrt(p * (1 - p) / static_cast<double>(n));
    check(std::abs(frequency - p) <= tolerance, "P(Z = " + std::to_string(k) +
                                                    "): " + std::to_string(frequency) + " vs " +
                                                    std::to_string(p));
    const auto reference_hits = std::count(reference.begin(), reference.end(), k);
    const double reference_frequency = static_cast<double>(reference_hits) / static_cast<double>(n);
    check(std::abs(frequency - reference_frequency) <= std::sqrt(2.0) * tolerance,
          "P(Z = " + std::to_string(k) + "): " + std::to_string(frequency) +
              " vs the exact sampler's " + std::to_string(reference_frequency));
  }

  bool refused = false;
  try {
    const double half[1] = {0.5};
    mechanism.release(half, sensitivity, rng);
  } catch (const dptune::InvalidArgument&) {
    refused = true;
  }
  check(refused, "a non-integer value is refused");
  std::printf("%s\n", failures == 0 ? "geometric_test: ok" : "geometric_test: FAILED");
  return failures == 0 ? 0 : 1;
}
