// Composition of discrete PLDs (convolution by FFT), tail truncation, the dominating PLD of
// several, and δ(ε) / ε(δ) of one PLD.  See pld/calculator.hpp.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "dptune/errors.hpp"
#include "pld/calculator.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dptune::pld {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Complex = std::complex<double>;

/// Plain complex product: std::complex's operator* also handles infinities (a library call per
/// product), which finite spectra never need.
inline Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

/// A zeroed complex array for a composition's spectrum.  From 2 MiB up it is 2 MiB aligned and
/// advised to use transparent huge pages (Linux): a million-point transform then misses the TLB
/// far less and faults 512 times fewer pages (its FFTs ran about 30% faster here).
class Spectrum {
 public:
  explicit Spectrum(std::size_t n) : n_(n) {
    constexpr std::size_t kHuge = std::size_t{1} << 21;
    const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(Complex);
    const std::size_t align = bytes >= kHuge ? kHuge : 64;
    const std::size_t rounded = (bytes + align - 1) / align * align;  // aligned_alloc's rule
    void* raw = std::aligned_alloc(align, rounded);
    if (raw == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == kHuge) madvise(raw, rounded, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
    data_.reset(static_cast<Complex*>(raw));
    std::uninitialized_fill_n(data_.get(), n_, Complex(0, 0));
  }
  Complex* data() { return data_.get(); }
  const Complex* data() const { return data_.get(); }
  std::size_t size() const { return n_; }
  Complex& operator[](std::size_t i) { return data_[i]; }

 private:
  struct Free {
    void operator()(Complex* p) const { std::free(p); }
  };
  std::unique_ptr<Complex[], Free> data_;
  std::size_t n_;
};

std::size_t power_of_two_at_least(std::size_t n) {
  std::size_t size = 1;
  while (size < n) size <<= 1;
  return size;
}

/// The norm |z|² below which power() returns 0 for z^k: |z|^k < 1e-30.  The inverse transform
/// divides by N, so each dropped term moves every output bin by less than 1e-30/N, far below the
/// double rounding (~1e-16 of the largest bin) already in every bin; skipping the binary powers of
/// the many small coefficients of a wide, smooth PLD saves most of the pointwise work.
double negligible_norm(std::int64_t k) { return std::exp(-2 * 69.1 / static_cast<double>(k)); }

Complex power(Complex z, std::int64_t k, double negligible) {
  if (std::norm(z) < negligible) return {0, 0};
  Complex result(1, 0);
  while (k > 0) {
    if ((k & 1) != 0) result = mul(result, z);
    z = mul(z, z);
    k >>= 1;
  }
  return result;
}

/// log Σ_j p_j e^{λ l_j} over the finite part (the log moment generating function at λ ≠ 0).
/// One exp per block of 256 points: within a block each term is the next one times e^{−|λ|h},
/// walking away from the block's largest exponent, so nothing overflows and only terms below
/// 1e-300 of a larger one can underflow.  The walk runs in kLanes interleaved chains (lane r
/// takes every kLanes-th term, stepping by e^{−kLanes·|λ|h}), so that the multiplications do not
/// wait on each other; the Chernoff windows call this a few hundred times per composition.
double log_mgf(const Pld& pld, double h, double lambda) {
  const auto n = static_cast<std::int64_t>(pld.mass.size());
  if (n == 0) return -kInf;
  const double top = lambda > 0 ? lambda * static_cast<double>(pld.offset + n - 1) * h
                                : lambda * static_cast<double>(pld.offset) * h;
  const double step = std::exp(-std::abs(lambda) * h);
  constexpr std::int64_t kBlock = 256, kLanes = 8;
  double lane_step[kLanes];  // e^{−r|λ|h}
  lane_step[0] = 1;
  for (std::int64_t r = 1; r < kLanes; ++r) lane_step[r] = lane_step[r - 1] * step;
  const double stride = lane_step[kLanes - 1] * step;
  const double* mass = pld.mass.data();
  double sums[kLanes] = {};
  for (std::int64_t begin = 0; begin < n; begin += kBlock) {
    const std::int64_t end = std::min(n, begin + kBlock);
    const std::int64_t lead = lambda > 0 ? end - 1 : begin;  // the block's largest exponent
    const double w0 = std::exp(lambda * static_cast<double>(pld.offset + lead) * h - top);
    double w[kLanes];
    for (std::int64_t r = 0; r < kLanes; ++r) w[r] = w0 * lane_step[r];
    const std::int64_t count = end - begin;
    std::int64_t i = 0;
    if (lambda > 0) {
      for (; i + kLanes <= count; i += kLanes)
        for (std::int64_t r = 0; r < kLanes; ++r) {
          sums[r] += mass[lead - i - r] * w[r];
          w[r] *= stride;
        }
    } else {
      for (; i + kLanes <= count; i += kLanes)
        for (std::int64_t r = 0; r < kLanes; ++r) {
          sums[r] += mass[lead + i + r] * w[r];
          w[r] *= stride;
        }
    }
    for (std::int64_t r = 0; i < count; ++i, ++r)  // the last block's remainder
      sums[r] += mass[lambda > 0 ? lead - i : lead + i] * w[r];
  }
  double sum = 0;
  for (const double part : sums) sum += part;
  return sum > 0 ? top + std::log(sum) : -kInf;
}

/// min over λ > 0 of objective(λ), searched on a coarse log grid (factors of 8 from 2^-18 to 2^30)
/// then refined by golden section in log λ over the grid point's neighbours.  The objectives here
/// are quasi-convex (a Chernoff exponent (k·K(λ) − log τ)/λ, K convex with K(0) = 0, or a convex
/// k·K(λ) − λt), so twelve golden steps bring log λ within 0.013 of the minimiser (on the nine
/// cases of the transform test in pld_test.cpp ε is bit for bit that of 30 steps on a grid twice
/// as fine); and any λ gives a valid bound anyway, so the search only decides how tight a window
/// is, never whether it is sound.
double minimise_over_lambda(const std::function<double(double)>& objective) {
  const double grid_step = 3 * std::log(2.0);
  double best_nu = 0, best = kInf;
  for (int m = -6; m <= 10; ++m) {
    const double nu = m * grid_step;
    const double v = objective(std::exp(nu));
    if (v < best) best = v, best_nu = nu;
  }
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double a = best_nu - grid_step, b = best_nu + grid_step;
  double c = b - ratio * (b - a), d = a + ratio * (b - a);
  double fc = objective(std::exp(c)), fd = objective(std::exp(d));
  for (int i = 0; i < 12; ++i) {
    if (fc < fd) {
      b = d, d = c, fd = fc, c = b - ratio * (b - a), fc = objective(std::exp(c));
    } else {
      a = c, c = d, fc = fd, d = a + ratio * (b - a), fd = objective(std::exp(d));
    }
  }
  return std::min({best, fc, fd});
}

}  // namespace

std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return {};
  const std::size_t n = a.size() + b.size() - 1;
  std::vector<double> out(n, 0.0);
  if (std::min(a.size(), b.size()) <= 64) {
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t j = 0; j < b.size(); ++j) out[i + j] += a[i] * b[j];
    return out;
  }
  const std::size_t size = power_of_two_at_least(n);
  std::vector<Complex> fa(size), fb(size);
  std::copy(a.begin(), a.end(), fa.begin());
  std::copy(b.begin(), b.end(), fb.begin());
  spectrum_forward(fa.data(), size);
  spectrum_forward(fb.data(), size);
  for (std::size_t i = 0; i < size; ++i) fa[i] = mul(fa[i], fb[i]);
  spectrum_inverse(fa.data(), size);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = std::max(0.0, fa[i].real() / static_cast<double>(size));
  return out;
}

namespace {

/// truncate_tails' rule, in place: `mass` (the finite part, from pld.offset up) becomes pld.mass,
/// its kept range only, and pld.offset moves with it.
void keep_truncated(Pld& pld, std::vector<double> mass, const Options& options, Estimate estimate) {
  const double half_tail = options.tail_mass_truncation / 2;
  const bool pessimistic = estimate == Estimate::Pessimistic;
  std::size_t first = 0, last = mass.size();
  double below = 0;
  while (last > first && mass[last - 1] == 0) --last;  // exact zeros only: the upper tail
  // is never moved to +∞ here, which would lose a finite ε at δ = 0 (pure DP compositions)
  while (first < last && below + mass[first] <= half_tail) below += mass[first++];
  if (first == last) {  // everything was lower tail: keep it at the top (pessimistic) or drop it
    if (pessimistic && last > 0) {
      pld.mass = {below};
      pld.offset += static_cast<std::int64_t>(last) - 1;
    } else {
      pld.mass.clear();
    }
    return;
  }
  if (pessimistic) mass[first] += below;  // rounding a loss up dominates
  std::copy(mass.begin() + static_cast<std::ptrdiff_t>(first),
            mass.begin() + static_cast<std::ptrdiff_t>(last), mass.begin());
  mass.resize(last - first);
  pld.mass = std::move(mass);
  pld.offset += static_cast<std::int64_t>(first);
}

}  // namespace

void truncate_tails(Pld& pld, const Options& options, Estimate estimate) {
  std::vector<double> mass = std::move(pld.mass);
  keep_truncated(pld, std::move(mass), options, estimate);
}

Pld compose(const Pld& a, const Pld& b, const Options& options, Estimate estimate) {
  Pld out;
  out.offset = a.offset + b.offset;
  if (a.mass.size() + b.mass.size() > options.max_points)
    throw GridTooWide("composing two PLDs needs more than " + std::to_string(options.max_points) +
                      " grid points; raise value_discretization_interval");
  out.mass = convolve(a.mass, b.mass);
  out.infinity = std::min(1.0, a.infinity + b.infinity - a.infinity * b.infinity);
  truncate_tails(out, options, estimate);
  return out;
}

namespace {

/// Where a k-fold composition is read: the window [w_lo, w_lo + N) of composed grid indices.
struct Window {
  std::int64_t w_lo = 0, support_hi = 0;
  std::size_t width = 1;
};

Window plan_window(const Pld& pld, std::int64_t k, const Options& options) {
  // The window [w_lo, w_hi] outside which the finite part has at most τ/2 on each side, by
  // Chernoff: P(S > t) ≤ M(λ)^k e^{−λt}, P(S < t) ≤ M(−λ)^k e^{λt}.
  const double h = options.value_discretization_interval, kd = static_cast<double>(k);
  const double log_target = std::log(options.tail_mass_truncation / 2);
  const double t_hi = minimise_over_lambda(
      [&](double lambda) { return (kd * log_mgf(pld, h, lambda) - log_target) / lambda; });
  const double t_lo = -minimise_over_lambda(
      [&](double lambda) { return (kd * log_mgf(pld, h, -lambda) - log_target) / lambda; });
  const auto n = static_cast<std::int64_t>(pld.mass.size());
  // Composed grid indices must stay far inside int64 (k · index, then differences of those).
  const double reach = kd * std::max(std::abs(static_cast<double>(pld.offset)),
                                     std::abs(static_cast<double>(pld.offset + n - 1)));
  if (!(reach < 1e15))
    throw GridTooWide("composing " + std::to_string(k) +
                      " times reaches losses beyond 1e15 grid steps; raise "
                      "value_discretization_interval");
  Window w;
  w.support_hi = k * (pld.offset + n - 1);
  w.w_lo = std::max(k * pld.offset, static_cast<std::int64_t>(std::floor(t_lo / h)));
  std::int64_t w_hi = std::min(w.support_hi, static_cast<std::int64_t>(std::ceil(t_hi / h)));
  // Keep the whole upper support when that at most doubles the work (bounded losses, e.g. pure
  // DP, then keep their exact top and a finite ε at δ = 0).
  if (w.support_hi - w.w_lo + 1 <= 2 * (w_hi - w.w_lo + 1)) w_hi = w.support_hi;
  w.width = static_cast<std::size_t>(std::max<std::int64_t>(w_hi - w.w_lo + 1, 1));
  if (w.width > options.max_points)
    throw GridTooWide("composing " + std::to_string(k) + " times needs " + std::to_string(w.width) +
                      " grid points (more than " + std::to_string(options.max_points) +
                      "); raise value_discretization_interval");
  return w;
}

/// The input folded modulo N (a circular convolution of size N sees only residues), into the real
/// (`part` 0) or imaginary (`part` 1) parts of `out`.
void fold_into(const Pld& pld, Spectrum& out, int part) {
  auto* flat = reinterpret_cast<double*>(out.data());  // std::complex is an array of two doubles
  const std::size_t size = out.size();
  for (std::size_t j = 0, m = 0; j < pld.mass.size(); ++j) {
    flat[2 * m + static_cast<std::size_t>(part)] += pld.mass[j];
    if (++m == size) m = 0;
  }
}

/// Reads the k-fold composition of `pld` off the circular result: bin m is the real (`part` 0) or
/// imaginary (`part` 1) part of `circular[m]`, times `scale` (1/N).  Bin m holds the composed mass
/// of every index ≡ m + k·offset (mod N).
Pld read_window(const Pld& pld, std::int64_t k, const Window& w, const Spectrum& circular, int part,
                double scale, const Options& options, Estimate estimate) {
  const double h = options.value_discretization_interval, kd = static_cast<double>(k);
  const auto modulus = static_cast<std::int64_t>(circular.size());
  const auto* flat = reinterpret_cast<const double*>(circular.data());
  Pld out;
  out.infinity = -std::expm1(kd * std::log1p(-pld.infinity));
  out.offset = w.w_lo;
  const std::size_t n = circular.size();
  const auto start =
      static_cast<std::size_t>(((w.w_lo - k * pld.offset) % modulus + modulus) % modulus);
  const auto bin = [&](std::size_t i) {
    const std::size_t m = start + i < n ? start + i : start + i - n;
    return std::max(0.0, flat[2 * m + static_cast<std::size_t>(part)] * scale);
  };
  // Bins above the support can only hold mass wrapped from below the window: put it back at the
  // window's bottom (a loss rounded up) or drop it (optimistic).
  const auto end =
      static_cast<std::size_t>(std::clamp<std::int64_t>(w.support_hi - w.w_lo + 1, 1, modulus));
  double bottom = bin(0);
  if (estimate == Estimate::Pessimistic)
    for (std::size_t i = end; i < n; ++i) bottom += bin(i);
  // The window's bins in order, in two straight runs (before and after the wrap of the circle).
  std::vector<double> mass(end);
  const std::size_t before_wrap = std::min(end, n - start);
  for (std::size_t i = 0; i < before_wrap; ++i)
    mass[i] = std::max(0.0, flat[2 * (start + i) + static_cast<std::size_t>(part)] * scale);
  for (std::size_t i = before_wrap; i < end; ++i)
    mass[i] = std::max(0.0, flat[2 * (start + i - n) + static_cast<std::size_t>(part)] * scale);
  mass[0] = bottom;
  // Mass below the window wraps onto its top (raising δ: harmless for the pessimistic estimate);
  // mass above it wraps onto its bottom, where δ does not see it, so its Chernoff bound goes to +∞.
  const std::int64_t top = w.w_lo + modulus - 1;
  if (estimate == Estimate::Pessimistic && top < w.support_hi) {
    const double log_above = minimise_over_lambda([&](double lambda) {
      return kd * log_mgf(pld, h, lambda) - lambda * static_cast<double>(top) * h;
    });
    out.infinity = std::min(1.0, out.infinity + std::exp(log_above));
  }
  keep_truncated(out, std::move(mass), options, estimate);
  return out;
}

bool trivial_self_composition(const Pld& pld, std::int64_t k, Pld& out) {
  if (k == 1) {
    out = pld;
    return true;
  }
  if (!pld.mass.empty() && k != 0) return false;
  out = Pld{};
  out.infinity = -std::expm1(static_cast<double>(k) * std::log1p(-pld.infinity));
  if (k == 0) out.mass = {1.0};
  return true;
}

}  // namespace

Pld self_compose(const Pld& pld, std::int64_t k, const Options& options, Estimate estimate) {
  if (Pld out; trivial_self_composition(pld, k, out)) return out;
  const Window w = plan_window(pld, k, options);
  Spectrum spectrum(power_of_two_at_least(w.width));
  fold_into(pld, spectrum, 0);
  spectrum_forward(spectrum.data(), spectrum.size());
  const double negligible = negligible_norm(k);
  for (std::size_t j = 0; j < spectrum.size(); ++j) spectrum[j] = power(spectrum[j], k, negligible);
  spectrum_inverse(spectrum.data(), spectrum.size());
  return read_window(pld, k, w, spectrum, 0, 1 / static_cast<double>(spectrum.size()), options,
                     estimate);
}

std::pair<Pld, Pld> self_compose_both(const Pld& a, const Pld& b, std::int64_t k,
                                      const Options& options, Estimate estimate) {
  Pld ta, tb;
  if (trivial_self_composition(a, k, ta) || trivial_self_composition(b, k, tb))
    return {self_compose(a, k, options, estimate), self_compose(b, k, options, estimate)};
  // Two real sequences in one complex FFT (a in the real part, b in the imaginary part):
  // A_j = (Z_j + conj Z_{N−j})/2, B_j = (Z_j − conj Z_{N−j})/(2i); then A^k + i B^k transforms
  // back to (a^{*k}, b^{*k}) in the real and imaginary parts.  Z_j and Z_{N−j} are read together
  // and both overwritten, so the spectrum is powered in place (in spectrum order: the pairs are
  // found by for_each_mirror_pair).
  const Window wa = plan_window(a, k, options), wb = plan_window(b, k, options);
  const std::size_t size = power_of_two_at_least(std::max(wa.width, wb.width));
  Spectrum z(size);
  fold_into(a, z, 0);
  fold_into(b, z, 1);
  spectrum_forward(z.data(), size);
  const double negligible = negligible_norm(k);
  const auto powered = [&](Complex zj, Complex mirror) {
    const Complex sa = (zj + mirror) * 0.5, sb = (zj - mirror) * Complex(0, -0.5);
    return power(sa, k, negligible) + Complex(0, 1) * power(sb, k, negligible);
  };
  for_each_mirror_pair(size, [&](std::size_t p, std::size_t pm) {
    const Complex zj = z[p], zm = z[pm];
    z[p] = powered(zj, std::conj(zm));
    if (pm != p) z[pm] = powered(zm, std::conj(zj));
  });
  spectrum_inverse(z.data(), size);
  const double scale = 1 / static_cast<double>(size);
  return {read_window(a, k, wa, z, 0, scale, options, estimate),
          read_window(b, k, wb, z, 1, scale, options, estimate)};
}

Pld dominate_all(const std::vector<Pld>& plds, const Options& options) {
  // δ_a as a function of x = e^ε is convex and decreasing with δ_a(0) ≤ 1, so F = max_a δ_a is
  // too; the piecewise-linear interpolation of F on the grid points x_i = e^{ih} (through (0, 1)
  // below the grid and flat at F(x_top) above it) lies above F, and is the hockey-stick curve of
  // the PLD with mass p_i = x_i (s_i − s_{i−1}) at ih (s_i: the slope after x_i) and F(x_top) at
  // +∞ — the profile-to-PLD correspondence of Zhu, Dong & Wang 2022.  It dominates every input.
  const double h = options.value_discretization_interval;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  for (const auto& p : plds) {
    if (p.mass.empty()) continue;
    lo = std::min(lo, p.offset);
    hi = std::max(hi, p.offset + static_cast<std::int64_t>(p.mass.size()) - 1);
  }
  Pld out;
  if (hi < lo) {  // only atoms at +∞
    for (const auto& p : plds) out.infinity = std::max(out.infinity, p.infinity);
    out.mass = {1 - out.infinity};
    return out;
  }
  const auto n = static_cast<std::size_t>(hi - lo + 1);
  std::vector<double> f(n, 0.0);
  const double decay = std::exp(-h);
  for (const auto& p : plds) {
    // δ(ih) = A_i − S_i with A_i = P(L > ih), S_i = Σ_{j>i} p_j e^{(i−j)h}, from the top down.
    double a = p.infinity, s = 0;
    for (std::int64_t i = hi; i >= lo; --i) {
      f[static_cast<std::size_t>(i - lo)] = std::max(f[static_cast<std::size_t>(i - lo)], a - s);
      const std::int64_t j = i - p.offset;
      const double pj = j >= 0 && j < static_cast<std::int64_t>(p.mass.size())
                            ? p.mass[static_cast<std::size_t>(j)]
                            : 0.0;
      a += pj;
      s = decay * (s + pj);
    }
  }
  const double gap = std::expm1(h);  // e^h − 1
  out.offset = lo;
  out.mass.assign(n, 0.0);
  out.infinity = f[n - 1];
  if (n == 1) {
    out.mass[0] = std::max(0.0, 1 - f[0]);
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double after = i + 1 < n ? (f[i + 1] - f[i]) / gap : 0.0;
    const double before = i > 0 ? std::exp(h) * (f[i] - f[i - 1]) / gap : f[i] - 1;
    out.mass[i] = std::max(0.0, after - before);
  }
  truncate_tails(out, options, Estimate::Pessimistic);
  return out;
}

double Pld::delta(double h, double epsilon) const {
  double delta = infinity;
  for (std::size_t j = mass.size(); j-- > 0;) {
    const double loss = static_cast<double>(offset + static_cast<std::int64_t>(j)) * h;
    if (loss <= epsilon) break;
    delta += mass[j] * -std::expm1(epsilon - loss);
  }
  return std::min(1.0, delta);
}

FastProfile::FastProfile(const Pld& loss, double h)
    : offset_(loss.offset),
      h_(h),
      infinity_(loss.infinity),
      above_(loss.mass.size() + 1, 0.0),
      weighted_(loss.mass.size() + 1, 0.0) {
  const double decay = std::exp(-h);
  for (std::size_t i = loss.mass.size(); i-- > 0;) {
    above_[i] = above_[i + 1] + loss.mass[i];
    weighted_[i] = loss.mass[i] + decay * weighted_[i + 1];
  }
}

double FastProfile::loss(std::size_t j) const {
  return static_cast<double>(offset_ + static_cast<std::int64_t>(j)) * h_;
}

double FastProfile::operator()(double epsilon) const {
  const std::size_t n = above_.size() - 1;
  // The first index whose loss (offset_ + j)·h_ is > ε.
  const double at = std::floor(epsilon / h_) + 1 - static_cast<double>(offset_);
  std::size_t j = at <= 0 ? 0 : at >= static_cast<double>(n) ? n : static_cast<std::size_t>(at);
  while (j > 0 && loss(j - 1) > epsilon) --j;
  while (j < n && loss(j) <= epsilon) ++j;
  if (j == n) return std::min(1.0, infinity_);
  const double factor = std::exp(epsilon - loss(j));  // < 1
  const double value = above_[j] - factor * weighted_[j];
  const double rounding = 2.0 * static_cast<double>(n - j + 2) *
                          std::numeric_limits<double>::epsilon() * (above_[j] + weighted_[j]);
  return std::min(1.0, infinity_ + std::max(0.0, value) + rounding);
}

double Pld::epsilon(double h, double delta) const {
  if (infinity > delta) return kInf;
  // From the top down, δ at the grid point ih is A_i − S_i (see dominate_all); between (i−1)h and
  // ih it is A − e^{ε−(i−1)h} S with the sums taken over the points ≥ ih, solved exactly in the
  // first gap where it crosses `delta`.  Invariant: δ(loss) ≤ delta at the top of each step.
  double a = infinity, s = 0, at = kInf;
  const double decay = std::exp(-h);
  for (std::size_t j = mass.size(); j-- > 0;) {
    const double loss = static_cast<double>(offset + static_cast<std::int64_t>(j)) * h;
    if (loss <= 0) return 0;  // δ(0) ≤ δ(loss) ≤ delta
    a += mass[j];
    s = decay * (s + mass[j]);
    at = loss - h;
    if (a - s > delta)  // δ(at) > delta ≥ δ(loss): a − e^{ε − at} s = delta in (at, loss]
      return std::max(0.0, std::clamp(at + std::log((a - delta) / s), at, loss));
  }
  // Below the lowest point: δ(ε) = a − e^{ε − at} s, with δ(at) ≤ delta.
  if (!(at > 0) || a <= delta || !(s > 0)) return 0;
  return std::max(0.0, at + std::log((a - delta) / s));
}

}  // namespace dptune::pld
