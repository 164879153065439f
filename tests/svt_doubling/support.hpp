// Test doubles and independent reference computations for the SVT doubling tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "dptune/dptune.hpp"
#include "test_mechanisms.hpp"

namespace svt_test {

/// Ding et al., Lemma 1, computed independently of the loop: in the noise-free world with
/// N = floor((u* - u0) / g) ladder levels below u*, the integer doubling passes K =
/// floor(log2(N+1)) times (1 + 2 + ... + 2^(K-1) = 2^K - 1 <= N), fails once at step 2^K, then
/// walks the bits of the remainder r = N - 2^K + 1 < 2^K from 2^(K-1) down to 1: one failing
/// iteration per clear bit, three (pass, fail at the doubled step, fail) per set bit.  T = K + 1 +
/// K + 2 popcount(r).
inline std::size_t lemma1_iterations(std::uint64_t n) {
  std::size_t k = 0;
  while ((std::uint64_t{2} << k) - 1 <= n) ++k;  // largest K with 2^K - 1 <= N
  const std::uint64_t r = n - ((std::uint64_t{1} << k) - 1);
  return 2 * k + 1 + 2 * static_cast<std::size_t>(__builtin_popcountll(r));
}

/// The paper's own count "2m + 2k" (proof of Lemma 1, with n = 2^k - 1 + n', m the set bits of n')
/// plus the final failing iteration at step 1 that it leaves implicit.
inline std::size_t lemma1_paper_bound(std::uint64_t n) {
  std::size_t k = 0;
  while ((std::uint64_t{2} << k) - 1 <= n) ++k;
  const std::uint64_t r = n - ((std::uint64_t{1} << k) - 1);
  return 2 * static_cast<std::size_t>(__builtin_popcountll(r)) + 2 * k + 1;
}

inline double sample_variance(const std::vector<double>& x) {
  const double n = static_cast<double>(x.size());
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return ss / (n - 1);
}

}  // namespace svt_test
