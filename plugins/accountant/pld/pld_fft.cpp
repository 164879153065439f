// The discrete Fourier transform behind every PLD convolution.  See pld_core.hpp.
//
// The own transform is an iterative radix-2 FFT (Cooley & Tukey 1965) with exact twiddles, made
// cache-friendly without changing a single rounding: a tiled bit reversal, the narrow stages run
// block by block inside the cache, and the wide ones two per pass over memory.  On the
// two-million-point windows of long compositions that halves its time, and every ε is the same,
// bit for bit, as with the plain loop.  With -DDPTUNE_PLD_FFTW=ON (and FFTW found) fourier() runs
// FFTW (Frigo & Johnson 2005) instead: about 10% faster there, same ε up to rounding.
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

namespace {

inline void butterfly(Complex& lo, Complex& hi, Complex w) {
  const Complex u = lo, v = mul(hi, w);
  lo = u + v;
  hi = u - v;
}

/// The radix-2 stages half = half_begin, 2·half_begin, … < half_end over a[0..n), two stages per
/// pass over memory where it can: the four points of one radix-4 group stay in registers, and
/// every butterfly is the one the stage-by-stage loop would do, so the result is bit for bit the
/// same.
void stages(Complex* a, std::size_t n, std::size_t half_begin, std::size_t half_end,
            const Complex* twiddle) {
  std::size_t half = half_begin;
  for (; 2 * half < half_end; half <<= 2) {
    const Complex *w1 = twiddle + half, *w2 = twiddle + 2 * half;
    for (std::size_t start = 0; start < n; start += 4 * half) {
      Complex* x = a + start;
      for (std::size_t k = 0; k < half; ++k) {
        Complex c0 = x[k], c1 = x[half + k], c2 = x[2 * half + k], c3 = x[3 * half + k];
        butterfly(c0, c1, w1[k]);
        butterfly(c2, c3, w1[k]);
        butterfly(c0, c2, w2[k]);
        butterfly(c1, c3, w2[half + k]);
        x[k] = c0, x[half + k] = c1, x[2 * half + k] = c2, x[3 * half + k] = c3;
      }
    }
  }
  for (; half < half_end; half <<= 1)
    for (std::size_t start = 0; start < n; start += 2 * half)
      for (std::size_t k = 0; k < half; ++k)
        butterfly(a[start + k], a[start + half + k], twiddle[half + k]);
}

}  // namespace

namespace {

/// The `bits`-bit reversal of x.
std::size_t reversed(std::size_t x, int bits) {
  std::size_t r = 0;
  for (int b = 0; b < bits; ++b, x >>= 1) r = (r << 1) | (x & 1);
  return r;
}

/// Puts a[i] at the bit-reversed index of i (n = 2^m), by tiles: an index is (high, middle, low)
/// with `low` and `high` of kTileBits bits each, and reversal maps tile `middle` onto tile
/// rev(middle) with (high, low) → (rev low, rev high).  Each tile is 2^kTileBits rows of
/// 2^kTileBits contiguous points, so a pair of tiles is read and written through a small buffer
/// instead of a million scattered swaps.  Small n: the plain swap loop.
void bit_reverse(Complex* a, std::size_t n) {
  constexpr int kTileBits = 5;
  constexpr std::size_t kSide = std::size_t{1} << kTileBits;
  int m = 0;
  while ((std::size_t{1} << m) < n) ++m;
  if (m < 2 * kTileBits + 2) {
    for (std::size_t i = 1, j = 0; i < n; ++i) {
      std::size_t bit = n >> 1;
      for (; (j & bit) != 0; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(a[i], a[j]);
    }
    return;
  }
  const int middle_bits = m - 2 * kTileBits;
  std::size_t rev_side[kSide];
  for (std::size_t x = 0; x < kSide; ++x) rev_side[x] = reversed(x, kTileBits);
  const auto at = [&](std::size_t high, std::size_t middle, std::size_t low) {
    return (high << (m - kTileBits)) | (middle << kTileBits) | low;
  };
  std::vector<Complex> tile_a(kSide * kSide), tile_b(kSide * kSide);
  for (std::size_t middle = 0; middle < (std::size_t{1} << middle_bits); ++middle) {
    const std::size_t partner = reversed(middle, middle_bits);
    if (partner < middle) continue;  // done with its partner
    for (std::size_t high = 0; high < kSide; ++high)
      for (std::size_t low = 0; low < kSide; ++low) {
        tile_a[high * kSide + low] = a[at(high, middle, low)];
        tile_b[high * kSide + low] = a[at(high, partner, low)];
      }
    for (std::size_t high = 0; high < kSide; ++high)
      for (std::size_t low = 0; low < kSide; ++low) {
        a[at(rev_side[low], partner, rev_side[high])] = tile_a[high * kSide + low];
        a[at(rev_side[low], middle, rev_side[high])] = tile_b[high * kSide + low];
      }
  }
}

}  // namespace

void fourier_radix2(Complex* a, std::size_t n, bool inverse) {
  bit_reverse(a, n);
  const Complex* twiddle = twiddles(n).data();
  // Cache blocking: the stages with 2·half ≤ block stay inside aligned blocks of `block` points
  // (256 KiB, an L2 cache), so each block runs through all of them while it is cached; the wider
  // stages then sweep the whole array.  The inverse transform is the forward one of the
  // conjugate, conjugated (negation is exact, so conjugating block by block changes nothing).
  constexpr std::size_t kBlock = std::size_t{1} << 14;
  const std::size_t block = std::min(n, kBlock);
  for (std::size_t start = 0; start < n; start += block) {
    if (inverse)
      for (std::size_t i = start; i < start + block; ++i) a[i] = std::conj(a[i]);
    stages(a + start, block, 1, block, twiddle);
  }
  stages(a, n, block, n, twiddle);
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
