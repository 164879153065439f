// The discrete Fourier transform behind every PLD convolution.  See pld_core.hpp.
//
// FFTW (Frigo & Johnson 2005) when the build found it: its codelets and cache-oblivious plans are
// several times faster than a plain radix-2 transform on the million-point windows of long
// compositions.  The own radix-2 transform is always built: it is the fallback without FFTW and
// the independent reference the FFTW path is tested against.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <mutex>
#include <numbers>
#include <tuple>
#include <vector>

#include "pld_core.hpp"

#ifdef DPTUNE_PLD_FFTW
#include <fftw3.h>
#endif

namespace dptune::pld {

namespace {

using Complex = std::complex<double>;

inline Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

/// Forward twiddles e^{−πik/half} for every stage, stage `half` at [half, 2·half), so that the
/// butterflies read them contiguously.  Each is cos/sin of its angle directly (no recurrence), for
/// accuracy, taken from the largest stage's table; cached per thread for the last size used.
const std::vector<Complex>& twiddles(std::size_t n) {
  thread_local std::vector<Complex> table;
  thread_local std::size_t table_n = 0;
  if (table_n == n) return table;
  table.assign(std::max<std::size_t>(n, 2), Complex(1, 0));
  const std::size_t top = n / 2;
  for (std::size_t k = 0; k < top; ++k) {
    const double angle = std::numbers::pi * static_cast<double>(k) / static_cast<double>(top);
    table[top + k] = Complex(std::cos(angle), -std::sin(angle));
  }
  for (std::size_t half = top / 2; half >= 1; half /= 2)
    for (std::size_t k = 0; k < half; ++k) table[half + k] = table[top + k * (top / half)];
  table_n = n;
  return table;
}

#ifdef DPTUNE_PLD_FFTW
/// FFTW's planner is not thread-safe (its execution is): plans are made under a lock and kept per
/// (size, direction, alignment), since a plan may only run on arrays aligned as its own were.
/// FFTW_ESTIMATE plans without touching the arrays, so the caller's data survives planning.
fftw_plan plan_for(Complex* data, std::size_t n, bool inverse) {
  static std::mutex lock;
  static std::map<std::tuple<std::size_t, bool, int>, fftw_plan> plans;
  auto* raw = reinterpret_cast<fftw_complex*>(data);
  const auto key = std::make_tuple(n, inverse, fftw_alignment_of(reinterpret_cast<double*>(raw)));
  const std::scoped_lock guard(lock);
  auto& plan = plans[key];
  if (plan == nullptr)
    plan = fftw_plan_dft_1d(static_cast<int>(n), raw, raw, inverse ? FFTW_BACKWARD : FFTW_FORWARD,
                            FFTW_ESTIMATE);
  return plan;
}
#endif

}  // namespace

void fourier_radix2(Complex* a, std::size_t n, bool inverse) {
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; (j & bit) != 0; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  // The inverse transform is the forward one of the conjugate, conjugated.
  if (inverse)
    for (std::size_t i = 0; i < n; ++i) a[i] = std::conj(a[i]);
  const std::vector<Complex>& twiddle = twiddles(n);
  for (std::size_t half = 1; half < n; half <<= 1) {
    const Complex* w = twiddle.data() + half;
    for (std::size_t start = 0; start < n; start += 2 * half) {
      Complex* lo = a + start;
      Complex* hi = lo + half;
      for (std::size_t k = 0; k < half; ++k) {
        const Complex u = lo[k], v = mul(hi[k], w[k]);
        lo[k] = u + v;
        hi[k] = u - v;
      }
    }
  }
  if (inverse)
    for (std::size_t i = 0; i < n; ++i) a[i] = std::conj(a[i]);
}

bool fourier_uses_fftw() {
#ifdef DPTUNE_PLD_FFTW
  return true;
#else
  return false;
#endif
}

void fourier(Complex* a, std::size_t n, bool inverse) {
#ifdef DPTUNE_PLD_FFTW
  if (n > 1 && n <= static_cast<std::size_t>(INT32_MAX)) {
    auto* raw = reinterpret_cast<fftw_complex*>(a);
    fftw_execute_dft(plan_for(a, n, inverse), raw, raw);
    return;
  }
#endif
  fourier_radix2(a, n, inverse);
}

}  // namespace dptune::pld
