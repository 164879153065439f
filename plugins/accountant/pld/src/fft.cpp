// The discrete Fourier transform behind every PLD convolution.  See pld/calculator.hpp.
//
// The own transform is an iterative radix-4 FFT (Cooley & Tukey 1965; radix 4: Gentleman & Sande
// 1966) with exact twiddles: decimation in frequency forward, which leaves the spectrum at
// bit-reversed positions, and decimation in time backward, which reads it there.  A convolution
// only multiplies spectra pointwise, so it never reorders them (spectrum_forward/_inverse): the
// bit reversal, about 30% of the old transform's time, is skipped.  Each radix-4 butterfly does
// three complex multiplications where two radix-2 stages do four.  The wide levels sweep the array,
// the narrow ones run block by block inside the L2 cache.  fourier() (natural order both ways) adds
// a tiled bit reversal.  With -DDPTUNE_PLD_FFTW=ON (and FFTW found) fourier() and the spectrum
// functions run FFTW (Frigo & Johnson 2005) instead, in natural order.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <mutex>
#include <numbers>
#include <tuple>
#include <vector>

#include "pld/calculator.hpp"

#ifdef DPTUNE_PLD_FFTW
#include <fftw3.h>
#endif

namespace dptune::pld {

namespace {

using Complex = std::complex<double>;

inline Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
/// a · conj(w): the inverse transform's twiddles are the conjugates of the forward ones.
inline Complex mul_conj(Complex a, Complex w) {
  return {a.real() * w.real() + a.imag() * w.imag(), a.imag() * w.real() - a.real() * w.imag()};
}
inline Complex times_minus_i(Complex z) { return {z.imag(), -z.real()}; }
inline Complex times_i(Complex z) { return {-z.imag(), z.real()}; }

/// e^{−2πi m/n} (n a power of two ≥ 8, m < n) from `eighth` = e^{−2πi m/n} for m ≤ n/8, by the
/// exact symmetries e^{−iθ}·(−i) = e^{−i(θ + π/2)} and cos(π/2 − θ) = sin θ.
Complex root(const std::vector<Complex>& eighth, std::size_t m, std::size_t n) {
  const std::size_t quarter = n / 4;
  const std::size_t r = m % quarter;
  Complex z =
      r <= n / 8 ? eighth[r] : Complex(-eighth[quarter - r].imag(), -eighth[quarter - r].real());
  for (std::size_t turns = m / quarter; turns > 0; --turns) z = times_minus_i(z);
  return z;
}

/// The twiddles W^k, W^{2k}, W^{3k} (W = e^{−2πi/(4H)}, k < H) of one radix-4 level with quarter
/// span H.
struct Triplet {
  Complex w1, w2, w3;
};

/// The radix-4 levels of an n-point transform, widest first (quarter spans n/4, n/16, … down to
/// 1, or to 2 when log₂ n is odd, a radix-2 level then finishing), and their twiddles, level by
/// level.  Each twiddle is cos/sin of its own angle (n/8 of them evaluated, the rest by exact
/// symmetry), not a recurrence; cached per thread for the last size used.
struct Plan {
  std::size_t n = 0;
  std::vector<std::size_t> quarter;  // H of each level, widest first
  std::vector<std::size_t> offset;   // where each level's twiddles start in `table`
  std::vector<Triplet> table;
};

const Plan& plan(std::size_t n) {
  thread_local Plan p;
  if (p.n == n) return p;
  p = Plan{};
  std::vector<Complex> eighth(n / 8 + 1);
  for (std::size_t m = 0; m < eighth.size(); ++m) {
    const double angle = 2 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
    eighth[m] = Complex(std::cos(angle), -std::sin(angle));
  }
  const std::size_t last = std::countr_zero(n) % 2 == 0 ? 1 : 2;
  for (std::size_t h = n / 4; h >= last && h > 0; h /= 4) {
    p.quarter.push_back(h);
    p.offset.push_back(p.table.size());
    const std::size_t stride = n / (4 * h);  // W = e^{−2πi stride/n}
    for (std::size_t k = 0; k < h; ++k)
      p.table.push_back({root(eighth, k * stride, n), root(eighth, 2 * k * stride, n),
                         root(eighth, 3 * k * stride, n)});
  }
  p.n = n;
  return p;
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

/// One forward (decimation-in-frequency) radix-4 level with quarter span h over a[0..n): from
/// x₀..x₃ = a[k], a[k+h], a[k+2h], a[k+3h] it writes (x₀+x₂) ± (x₁+x₃) (the second times W^{2k})
/// and ((x₀−x₂) ± (−i)(x₁−x₃)) times W^k and W^{3k}, the two radix-2 stages of spans 4h and 2h
/// in one pass, in their places (so the output order stays bit-reversed).
[[gnu::always_inline]] inline void forward_level(Complex* a, std::size_t n, std::size_t h,
                                                 const Triplet* w) {
  for (std::size_t start = 0; start < n; start += 4 * h) {
    Complex* x = a + start;
    for (std::size_t k = 0; k < h; ++k) {
      const Complex x0 = x[k], x1 = x[h + k], x2 = x[2 * h + k], x3 = x[3 * h + k];
      const Complex s = x0 + x2, d = x0 - x2, t = x1 + x3, e = times_minus_i(x1 - x3);
      x[k] = s + t;
      x[h + k] = mul(s - t, w[k].w2);
      x[2 * h + k] = mul(d + e, w[k].w1);
      x[3 * h + k] = mul(d - e, w[k].w3);
    }
  }
}

/// The transpose of forward_level with conjugate twiddles (the inverse transform's level): reads
/// y₀..y₃, multiplies y₁, y₂, y₃ by conj W^{2k}, W^k, W^{3k}, and writes the two radix-2
/// decimation-in-time stages of spans 2h and 4h.
[[gnu::always_inline]] inline void inverse_level(Complex* a, std::size_t n, std::size_t h,
                                                 const Triplet* w) {
  for (std::size_t start = 0; start < n; start += 4 * h) {
    Complex* x = a + start;
    for (std::size_t k = 0; k < h; ++k) {
      const Complex y0 = x[k], t1 = mul_conj(x[h + k], w[k].w2);
      const Complex t2 = mul_conj(x[2 * h + k], w[k].w1), t3 = mul_conj(x[3 * h + k], w[k].w3);
      const Complex s = y0 + t1, d = y0 - t1, t = t2 + t3, e = times_i(t2 - t3);
      x[k] = s + t;
      x[h + k] = d + e;
      x[2 * h + k] = s - t;
      x[3 * h + k] = d - e;
    }
  }
}

/// The radix-2 level of span 2 (twiddle 1) that finishes (forward) or starts (inverse) a
/// transform of odd log₂ n; it is its own transpose.
[[gnu::always_inline]] inline void radix2_level(Complex* a, std::size_t n) {
  for (std::size_t k = 0; k < n; k += 2) {
    const Complex u = a[k], v = a[k + 1];
    a[k] = u + v;
    a[k + 1] = u - v;
  }
}

/// Cache blocking: levels of span ≤ kBlock (512 KiB, within an L2 cache) run block by block, each
/// block through all of them while it is cached; wider levels sweep the whole array.
constexpr std::size_t kBlock = std::size_t{1} << 15;

/// Forward DFT of a[0..n) (n a power of two) left at bit-reversed positions.
[[gnu::always_inline]] inline void forward_body(Complex* a, std::size_t n) {
  const Plan& p = plan(n);
  const std::size_t block = std::min(n, kBlock);
  std::size_t level = 0;
  for (; level < p.quarter.size() && 4 * p.quarter[level] > block; ++level)
    forward_level(a, n, p.quarter[level], p.table.data() + p.offset[level]);
  for (std::size_t start = 0; start < n; start += block) {
    for (std::size_t l = level; l < p.quarter.size(); ++l)
      forward_level(a + start, block, p.quarter[l], p.table.data() + p.offset[l]);
    if (std::countr_zero(n) % 2 == 1) radix2_level(a + start, block);
  }
}

/// Inverse DFT (without the 1/n) of a spectrum at bit-reversed positions, into natural order.
[[gnu::always_inline]] inline void inverse_body(Complex* a, std::size_t n) {
  const Plan& p = plan(n);
  const std::size_t block = std::min(n, kBlock);
  std::size_t wide = 0;  // levels wider than a block, the first `wide` of p.quarter
  while (wide < p.quarter.size() && 4 * p.quarter[wide] > block) ++wide;
  for (std::size_t start = 0; start < n; start += block) {
    if (std::countr_zero(n) % 2 == 1) radix2_level(a + start, block);
    for (std::size_t l = p.quarter.size(); l-- > wide;)
      inverse_level(a + start, block, p.quarter[l], p.table.data() + p.offset[l]);
  }
  for (std::size_t l = wide; l-- > 0;)
    inverse_level(a, n, p.quarter[l], p.table.data() + p.offset[l]);
}

// The transforms compiled twice: for the baseline instruction set, and (x86-64) for AVX2, which
// holds two complex numbers per register and runs them about 1.4 times as fast.  The AVX2 copy
// is chosen at run time, not by -march (the plugin must run on any x86-64).  FMA stays off: every
// output is then the same sequence of IEEE double additions and multiplications, only more of
// them at once, so both copies give the same results bit for bit (tested).
void forward_portable(Complex* a, std::size_t n) { forward_body(a, n); }
void inverse_portable(Complex* a, std::size_t n) { inverse_body(a, n); }
#if defined(__x86_64__) && defined(__GNUC__)
#define DPTUNE_PLD_AVX2 1
[[gnu::target("avx2")]] void forward_avx2(Complex* a, std::size_t n) { forward_body(a, n); }
[[gnu::target("avx2")]] void inverse_avx2(Complex* a, std::size_t n) { inverse_body(a, n); }
#endif

std::atomic<bool> avx2_allowed{true};

bool avx2_in_use() {
#ifdef DPTUNE_PLD_AVX2
  static const bool supported = [] {
    __builtin_cpu_init();  // harmless after start-up, needed if first called before it
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return supported && avx2_allowed.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

void forward_scrambled(Complex* a, std::size_t n) {
  if (n < 2) return;
#ifdef DPTUNE_PLD_AVX2
  if (avx2_in_use()) return forward_avx2(a, n);
#endif
  forward_portable(a, n);
}

void inverse_scrambled(Complex* a, std::size_t n) {
  if (n < 2) return;
#ifdef DPTUNE_PLD_AVX2
  if (avx2_in_use()) return inverse_avx2(a, n);
#endif
  inverse_portable(a, n);
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

void fourier_own(Complex* a, std::size_t n, bool inverse) {
  if (inverse) {
    bit_reverse(a, n);
    inverse_scrambled(a, n);
  } else {
    forward_scrambled(a, n);
    bit_reverse(a, n);
  }
}

bool fourier_allow_avx2(bool allowed) {
  avx2_allowed.store(allowed, std::memory_order_relaxed);
  return avx2_in_use();
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
  fourier_own(a, n, inverse);
}

void spectrum_forward(Complex* a, std::size_t n) {
#ifdef DPTUNE_PLD_FFTW
  fourier(a, n, false);
#else
  forward_scrambled(a, n);
#endif
}

void spectrum_inverse(Complex* a, std::size_t n) {
#ifdef DPTUNE_PLD_FFTW
  fourier(a, n, true);
#else
  inverse_scrambled(a, n);
#endif
}

std::size_t spectrum_position(std::size_t j, std::size_t n) {
#ifdef DPTUNE_PLD_FFTW
  return j;
#else
  return n < 2 ? j : reversed(j, std::countr_zero(n));
#endif
}

std::size_t spectrum_mirror(std::size_t p, std::size_t n) {
#ifdef DPTUNE_PLD_FFTW
  return p == 0 ? 0 : n - p;
#else
  // Position p ∈ [2^m, 2^{m+1}) holds frequency j = rev(p), an odd multiple of n/2^{m+1}; so is
  // n − j, and reversing it gives 3·2^m − 1 − p (the block read backwards).  p = 0 is j = 0.
  if (p == 0 || n < 2) return p;
  const std::size_t low = std::bit_floor(p);
  return 3 * low - 1 - p;
#endif
}

}  // namespace dptune::pld
