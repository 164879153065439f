// The pld accountant and `best` against exact privacy curves computed here, independently of the
// accountant's code: Poisson-subsampled and fixed-size-lot (sampling without replacement,
// replace-one) Gaussians composed up to 50 times, and the dominating pair of fixed-size lots
// checked against brute-force enumeration of every lot of small datasets.
//
// The independent computation.  A pair (P, Q) on the real line whose privacy loss L(o) =
// log(dP/dQ)(o) is monotone in o is cut into cells of o; a cell's P-mass (exact, from normal
// tails) is put at the largest loss of the cell rounded UP to the grid h·Z (upper) or at the
// smallest rounded DOWN (lower).  δ(ε) = E_P[(1 − e^{ε − L})₊] is non-decreasing in L and sums of
// losses compose, so the T-fold convolutions (by an FFT written here) bracket the composed δ(ε),
// hence ε(δ): lower ≤ exact ≤ upper.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "accounting_helpers.hpp"
#include "built_plugins.hpp"
#include "pld/calculator.hpp"
#include "pld/discrete_on_grid.hpp"
#include "rdp/calculator.hpp"

using dptune::DpEvent;
namespace pld = dptune::pld;

namespace {

using dptune_test::normal_upper;

/// A loss distribution on the grid h·Z: mass[k] at (offset + k)·h, `infinity` at +∞.
struct GridLoss {
  std::int64_t offset = 0;
  std::vector<double> mass;
  double infinity = 0;
};

/// A two-component output law: w₁·N(a₁, s²) + w₀·N(a₀, s²) (w₀ = 1 − w₁).
struct Mixture {
  double w1, a1, a0, s;
  double upper(double o) const {  // P(O > o)
    return w1 * normal_upper((o - a1) / s) + (1 - w1) * normal_upper((o - a0) / s);
  }
};

/// The loss law under P of the pair (P, Q) with loss(o) non-decreasing, bracketed on h·Z; the
/// outputs o ∈ [lo, hi] are cut into `cells` equal cells, the tails beyond go to the ends.
GridLoss loss_law(const Mixture& p, const std::function<double(double)>& loss, double lo, double hi,
                  double h, int cells, bool upper) {
  const double l_lo = loss(lo), l_hi = loss(hi);
  GridLoss g;
  g.offset = static_cast<std::int64_t>(std::floor(l_lo / h)) - 1;
  const auto top = static_cast<std::int64_t>(std::ceil(l_hi / h)) + 1;
  g.mass.assign(static_cast<std::size_t>(top - g.offset + 1), 0.0);
  auto put = [&](double l, double m) {
    const auto k = static_cast<std::int64_t>(upper ? std::ceil(l / h) : std::floor(l / h));
    g.mass[static_cast<std::size_t>(std::clamp(k, g.offset, top) - g.offset)] += m;
  };
  put(upper ? l_lo : l_lo - h, 1 - p.upper(lo));  // below lo: losses ≤ loss(lo)
  if (upper) g.infinity = p.upper(hi);            // above hi: unknown losses, +∞ is above them
  double tail = p.upper(lo), before = lo;
  for (int i = 1; i <= cells; ++i) {
    const double o = lo + (hi - lo) * i / cells, next = p.upper(o);
    put(upper ? loss(o) : loss(before), std::max(0.0, tail - next));
    tail = next;
    before = o;
  }
  return g;
}

void fft(std::vector<std::complex<double>>& a, bool inverse) {
  const std::size_t n = a.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  std::vector<std::complex<double>> twiddle;
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const double angle = 2 * std::numbers::pi / static_cast<double>(len) * (inverse ? 1 : -1);
    twiddle.resize(len / 2);
    for (std::size_t k = 0; k < len / 2; ++k)
      twiddle[k] = std::polar(1.0, angle * static_cast<double>(k));
    for (std::size_t i = 0; i < n; i += len)
      for (std::size_t k = 0; k < len / 2; ++k) {
        const std::complex<double> u = a[i + k], v = a[i + k + len / 2] * twiddle[k];
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
  }
}

/// The T-fold composition (convolution power) of a grid loss law.
GridLoss compose(const GridLoss& g, int t) {
  const std::size_t width = (g.mass.size() - 1) * static_cast<std::size_t>(t) + 1;
  std::size_t n = 1;
  while (n < width) n <<= 1;
  std::vector<std::complex<double>> a(n);
  for (std::size_t k = 0; k < g.mass.size(); ++k) a[k] = g.mass[k];
  fft(a, false);
  for (auto& x : a) x = std::pow(x, t);
  fft(a, true);
  GridLoss out;
  out.offset = g.offset * t;
  out.mass.resize(width);
  for (std::size_t k = 0; k < width; ++k)
    out.mass[k] = std::max(0.0, a[k].real() / static_cast<double>(n));
  out.infinity = 1 - std::pow(1 - g.infinity, t);
  return out;
}

/// k steps of law `a` composed with `rest` steps of law `b` (the product of their spectra).
GridLoss compose_mixed(const GridLoss& a, int k, const GridLoss& b, int rest) {
  const std::size_t width = (a.mass.size() - 1) * static_cast<std::size_t>(k) +
                            (b.mass.size() - 1) * static_cast<std::size_t>(rest) + 1;
  std::size_t n = 1;
  while (n < width) n <<= 1;
  std::vector<std::complex<double>> fa(n), fb(n);
  for (std::size_t i = 0; i < a.mass.size(); ++i) fa[i] = a.mass[i];
  for (std::size_t i = 0; i < b.mass.size(); ++i) fb[i] = b.mass[i];
  fft(fa, false);
  fft(fb, false);
  for (std::size_t i = 0; i < n; ++i) fa[i] = std::pow(fa[i], k) * std::pow(fb[i], rest);
  fft(fa, true);
  GridLoss out;
  out.offset = a.offset * k + b.offset * rest;
  out.mass.resize(width);
  for (std::size_t i = 0; i < width; ++i)
    out.mass[i] = std::max(0.0, fa[i].real() / static_cast<double>(n));
  out.infinity = 1 - std::pow(1 - a.infinity, k) * std::pow(1 - b.infinity, rest);
  return out;
}

double delta_of(const GridLoss& g, double h, double epsilon) {
  double delta = g.infinity;
  for (std::size_t k = g.mass.size(); k-- > 0;) {
    const double l = static_cast<double>(g.offset + static_cast<std::int64_t>(k)) * h;
    if (l <= epsilon) break;
    delta += g.mass[k] * -std::expm1(epsilon - l);
  }
  return delta;
}

/// Moves the top of `g` holding at most `mass` to +∞ (upper: δ only rises) or drops it (lower: δ
/// only falls), so that ε(δ) scans fewer points.
GridLoss without_top(GridLoss g, double mass, bool upper) {
  double above = 0;
  while (g.mass.size() > 1 && above + g.mass.back() <= mass) {
    above += g.mass.back();
    g.mass.pop_back();
  }
  if (upper) g.infinity += above;
  return g;
}

double epsilon_of(const GridLoss& g, double h, double delta) {
  double lo = 0, hi = 1;
  while (delta_of(g, h, hi) > delta) hi *= 2;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (delta_of(g, h, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

struct Bracket {
  double lower, upper;
};

/// One step's loss law of the subsampled Gaussian pair (w = sampling probability, shift `a`,
/// noise stddev s) on h·Z, rounded up (`upper`) or down: direction "remove" (P = wN(a) + (1 −
/// w)N(0) against Q = N(0)) or "add" (P = N(0) against Q = wN(a) + (1 − w)N(0)).
GridLoss subsampled_loss_law(double w, double a, double s, bool remove, double h, bool upper) {
  // log(dN(a)/dN(0))(o) = (2ao − a²)/(2s²); the mixture's loss is log(w e^g + 1 − w).
  const auto log_mix = [=](double o) {
    const double g = (2 * a * o - a * a) / (2 * s * s);
    return g > 0 ? g + std::log(w + (1 - w) * std::exp(-g)) : std::log1p(w * std::expm1(g));
  };
  const double lo = std::min(0.0, a) - 10 * s, hi = std::max(0.0, a) + 10 * s;
  const int cells = static_cast<int>(std::min(4e6, (hi - lo) * std::abs(a) / (s * s) / h * 2));
  if (remove) return loss_law(Mixture{w, a, 0, s}, log_mix, lo, hi, h, cells, upper);
  // P = N(0): the loss −log_mix(o) decreases in o; read it on −o (a → −a)
  const auto minus = [&](double o) { return -log_mix(-o); };
  return loss_law(Mixture{0, 0, 0, s}, minus, -hi, -lo, h, cells, upper);
}

/// One step's loss law of the pair (γN(a) + (1 − γ)N(0), γN(b) + (1 − γ)N(0)), a ≥ 0 ≥ b (noise
/// stddev s), whose loss increases with the output, rounded up or down on h·Z.
GridLoss two_sided_loss_law(double w, double a, double b, double s, double h, bool upper) {
  const auto log_part = [=](double o, double shift) {  // log(w e^g + 1 − w), g the shift's loss
    const double g = (2 * shift * o - shift * shift) / (2 * s * s);
    return g > 0 ? g + std::log(w + (1 - w) * std::exp(-g)) : std::log1p(w * std::expm1(g));
  };
  const auto loss = [=](double o) { return log_part(o, a) - log_part(o, b); };
  const double lo = b - 10 * s, hi = a + 10 * s;
  const int cells = static_cast<int>(std::min(4e6, (hi - lo) * (a - b) / (s * s) / h * 2));
  return loss_law(Mixture{w, a, 0, s}, loss, lo, hi, h, cells, upper);
}

/// ε(δ) of T compositions of the subsampled Gaussian pair (see subsampled_loss_law).
Bracket subsampled_epsilon(double w, double a, double s, int t, double delta, bool remove,
                           double h) {
  Bracket b{};
  for (const bool upper : {false, true}) {
    GridLoss g = subsampled_loss_law(w, a, s, remove, h, upper);
    g = without_top(std::move(g), 1e-12 * delta / t, upper);  // T·(this) is below δ's digits
    (upper ? b.upper : b.lower) =
        epsilon_of(without_top(compose(g, t), 1e-9 * delta, upper), h, delta);
  }
  return b;
}

/// The same bracket for the discrete Gaussian (Canonne, Kamath & Steinke 2020) on the integers:
/// P = w·N_Z(μ, s²) + (1 − w)·N_Z(0, s²) against Q = N_Z(0, s²) ("remove") or the reverse ("add"),
/// with the pmfs summed exactly over |k| ≤ 40s + |μ| (the rest, below 1e-300, is dropped).
Bracket discrete_subsampled_epsilon(double w, int mu, double s, int t, double delta, bool remove,
                                    double h) {
  const int radius = static_cast<int>(std::ceil(40 * s)) + std::abs(mu);
  std::vector<double> base(static_cast<std::size_t>(2 * radius + 1));
  double total = 0;
  for (int k = -radius; k <= radius; ++k)
    total += base[static_cast<std::size_t>(k + radius)] = std::exp(-k * k / (2 * s * s));
  const auto pmf = [&](int k) {  // N_Z(0, s²) at k, 0 outside the summed range
    return std::abs(k) > radius ? 0.0 : base[static_cast<std::size_t>(k + radius)] / total;
  };
  Bracket b{};
  for (const bool upper : {false, true}) {
    std::vector<std::pair<double, double>> points;  // (loss, P-mass)
    for (int k = -radius; k <= radius; ++k) {
      const double mixture = w * pmf(k - mu) + (1 - w) * pmf(k), null = pmf(k);
      if (mixture <= 0 || null <= 0) continue;
      const double loss = std::log(mixture) - std::log(null);
      if (remove)
        points.emplace_back(loss, mixture);
      else
        points.emplace_back(-loss, null);
    }
    double l_lo = points.front().first, l_hi = l_lo;
    for (const auto& [l, m] : points) l_lo = std::min(l_lo, l), l_hi = std::max(l_hi, l);
    GridLoss g;
    g.offset = static_cast<std::int64_t>(std::floor(l_lo / h)) - 1;
    g.mass.assign(static_cast<std::size_t>(std::ceil(l_hi / h) + 2 - static_cast<double>(g.offset)),
                  0.0);
    for (const auto& [l, m] : points) {
      const auto k = static_cast<std::int64_t>(upper ? std::ceil(l / h) : std::floor(l / h));
      g.mass[static_cast<std::size_t>(k - g.offset)] += m;
    }
    g = without_top(std::move(g), 1e-12 * delta / t, upper);
    (upper ? b.upper : b.lower) =
        epsilon_of(without_top(compose(g, t), 1e-9 * delta, upper), h, delta);
  }
  return b;
}

/// The δ(ε) that one pair of datasets realises when, before each of T steps, the gradient function
/// chooses from the outputs so far whether the step is the pair R (law `r` of its loss) or its
/// reverse R′ (law `r_reverse`), each choice the best for the adversary: backward induction
///     V_T(ℓ) = (1 − e^{ε − ℓ})₊,   V_t(ℓ) = max(E V_{t+1}(ℓ + L_R), E V_{t+1}(ℓ + L_R′)),
/// δ = V_0(0), over the privacy loss ℓ accumulated so far.  With `r` and `r_reverse` rounded down
/// the result is a lower bound of that δ: V_t is non-decreasing in ℓ, and outside the window
/// [lo, hi] of ℓ it is replaced by 0 (below) and by 1 − e^{ε − ℓ} (above), both below the true
/// V_t, which is ≥ E_P[1 − e^{ε − ℓ − L}] = 1 − e^{ε − ℓ}·Q(dP > 0) for the rest's loss L.
/// `upper`: laws rounded up give an upper bound of the same maximum instead: below the window V is
/// replaced by its value at the window's lower end (V_t is non-decreasing), above it by 1 (V_t ≤
/// 1), and each law's mass at +∞ counts with V = 1.
double adaptive_delta(const std::vector<const GridLoss*>& laws, int t, double h, double epsilon,
                      double lo, double hi, bool upper = false) {
  std::int64_t kernel_lo = laws.front()->offset, kernel_hi = kernel_lo;
  std::size_t widest = 0;
  for (const GridLoss* law : laws) {
    kernel_lo = std::min(kernel_lo, law->offset);
    kernel_hi = std::max(kernel_hi, law->offset + static_cast<std::int64_t>(law->mass.size()));
    widest = std::max(widest, law->mass.size());
  }
  const auto window_lo = static_cast<std::int64_t>(std::floor(lo / h));
  const auto window_hi = static_cast<std::int64_t>(std::ceil(hi / h));
  // V on the grid points base, base + 1, …: the window and, around it, every point a step from
  // the window can reach.
  const std::int64_t base = window_lo + kernel_lo - 1;
  const auto points = static_cast<std::size_t>(window_hi + kernel_hi - base + 2);
  const auto final_value = [&](std::size_t i) {
    const double l = static_cast<double>(base + static_cast<std::int64_t>(i)) * h;
    return std::max(0.0, -std::expm1(epsilon - l));
  };
  std::size_t n = 1;
  while (n < points + widest) n <<= 1;
  // E V(ℓ + L) at ℓ = (base + i)h is Σ_j mass[j]·V[i + offset + j]: a correlation, by the FFT
  // of V times that of the reversed law.
  std::vector<std::vector<std::complex<double>>> spectra;
  for (const GridLoss* law : laws) {
    std::vector<std::complex<double>> a(n);
    for (std::size_t j = 0; j < law->mass.size(); ++j) a[law->mass.size() - 1 - j] = law->mass[j];
    fft(a, false);
    spectra.push_back(std::move(a));
  }
  std::vector<double> value(points);
  for (std::size_t i = 0; i < points; ++i) value[i] = final_value(i);
  std::vector<std::complex<double>> v(n), a(n);
  for (int step = 0; step < t; ++step) {
    std::fill(v.begin(), v.end(), std::complex<double>(0, 0));
    for (std::size_t i = 0; i < points; ++i) v[i] = value[i];
    fft(v, false);
    std::vector<double> best(points, 0.0);
    for (std::size_t c = 0; c < laws.size(); ++c) {
      for (std::size_t i = 0; i < n; ++i) a[i] = v[i] * spectra[c][i];
      fft(a, true);
      const std::int64_t shift =
          laws[c]->offset + static_cast<std::int64_t>(laws[c]->mass.size()) - 1;
      for (std::size_t i = 0; i < points; ++i) {
        const std::int64_t k = static_cast<std::int64_t>(i) + shift;
        if (k >= 0 && k < static_cast<std::int64_t>(n))
          best[i] =
              std::max(best[i], a[static_cast<std::size_t>(k)].real() / static_cast<double>(n) +
                                    (upper ? laws[c]->infinity : 0.0));
      }
    }
    const auto lowest = static_cast<std::size_t>(window_lo - base);
    for (std::size_t i = 0; i < points; ++i) {
      const std::int64_t g = base + static_cast<std::int64_t>(i);
      if (upper)
        value[i] = g < window_lo   ? std::max(0.0, best[lowest])
                   : g > window_hi ? 1.0
                                   : std::max(0.0, best[i]);
      else
        value[i] = g < window_lo ? 0.0 : g > window_hi ? final_value(i) : std::max(0.0, best[i]);
    }
  }
  return value[static_cast<std::size_t>(-base)];
}

}  // namespace

TEST_CASE("fixed-size lots: the pair R dominates every ordered pair of neighbours (every lot)") {
  // Datasets of n scalar records in [−1, 1] (clipped, C = 1); a lot of m records; the released sum
  // plus N(0, s²).  D and D' differ in the last record.  Every lot is enumerated, the two output
  // mixtures integrated numerically, and compared with max(δ_R, δ_R') of the Gaussian of shift 2
  // (the replace-one sensitivity 2C): computed here by the same quadrature on R itself.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> record(-1, 1);
  const double step = 5e-4;
  const auto density = [](double o, double mean, double s) {
    return std::exp(-(o - mean) * (o - mean) / (2 * s * s)) / (s * std::sqrt(2 * std::numbers::pi));
  };
  // ∫(p − x q)₊ by a Riemann sum on the common output grid.
  const auto hockey_stick = [&](const std::vector<double>& p, const std::vector<double>& q,
                                double x) {
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += std::max(0.0, p[i] - x * q[i]);
    return sum * step;
  };
  for (const auto& [n, m, s] :
       {std::tuple{5, 2, 1.0}, std::tuple{6, 3, 2.0}, std::tuple{4, 1, 0.7}}) {
    const double gamma = static_cast<double>(m) / n;
    std::vector<double> grid;
    for (double o = -m - 12 * s - 2; o <= m + 12 * s + 2; o += step) grid.push_back(o);
    std::vector<double> r_p, r_q;  // R, translated by −m (the realising configuration's lots)
    for (const double o : grid) {
      r_p.push_back(gamma * density(o, 2 - m, s) + (1 - gamma) * density(o, -m, s));
      r_q.push_back(density(o, -m, s));
    }
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<double> d(static_cast<std::size_t>(n));
      for (auto& x : d) x = record(rng);
      if (trial == 0) {  // the realising configuration: every other record equal to the replacement
        std::fill(d.begin(), d.end(), -1.0);
        d.back() = 1;
      }
      std::vector<double> d2 = d;
      d2.back() = trial == 0 ? -1.0 : record(rng);
      std::vector<double> sums, sums2;  // every lot's sum
      for (int mask = 0; mask < (1 << n); ++mask) {
        if (__builtin_popcount(static_cast<unsigned>(mask)) != m) continue;
        double a = 0, b = 0;
        for (int i = 0; i < n; ++i)
          if (mask >> i & 1)
            a += d[static_cast<std::size_t>(i)], b += d2[static_cast<std::size_t>(i)];
        sums.push_back(a);
        sums2.push_back(b);
      }
      const auto mix = [&](const std::vector<double>& centres) {
        std::vector<double> out;
        for (const double o : grid) {
          double sum = 0;
          for (const double c : centres) sum += density(o, c, s);
          out.push_back(sum / static_cast<double>(centres.size()));
        }
        return out;
      };
      const auto p = mix(sums), q = mix(sums2);
      for (const double eps : {-1.0, -0.3, 0.0, 0.2, 0.7, 1.5}) {
        const double x = std::exp(eps);
        const double bound = std::max(hockey_stick(r_p, r_q, x), hockey_stick(r_q, r_p, x));
        CAPTURE(n);
        CAPTURE(trial);
        CAPTURE(eps);
        CHECK(hockey_stick(p, q, x) <= bound + 1e-7);
        CHECK(hockey_stick(q, p, x) <= bound + 1e-7);
        if (trial == 0) CHECK(hockey_stick(p, q, x) == doctest::Approx(hockey_stick(r_p, r_q, x)));
      }
    }
  }
}

TEST_CASE("pld and best against exact composed curves: Poisson and fixed-size lots") {
  // (sampling, σ = noise stddev ÷ clipping norm, q, T) at δ = 1e-5: the table's settings
  // of at most 50 steps with the continuous Gaussian.  Poisson: both directions, each realised by
  // adding or removing one record (the exact ε is the larger).  Fixed-size lots: the pair R of
  // shift 2C, realised by one pair of datasets, so no sound bound is below it.
  struct Case {
    bool poisson;
    double sigma, q;
    int steps;
  };
  const auto pld_plugin = dptune_test::built_accountant("pld");
  const auto best = dptune_test::built_accountant("best");
  const double delta = 1e-5;
  for (const Case c : {Case{true, 1, 0.1, 10}, Case{true, 0.7, 0.5, 5}, Case{false, 1, 0.1, 10},
                       Case{false, 2, 0.2, 20}, Case{false, 4, 0.1, 50}}) {
    Bracket exact{};
    DpEvent event;
    const double h = c.steps >= 50 ? 1e-4 : 2e-4;  // the bracket is about steps·h wide
    if (c.poisson) {
      const Bracket remove = subsampled_epsilon(c.q, 1, c.sigma, c.steps, delta, true, h);
      const Bracket add = subsampled_epsilon(c.q, 1, c.sigma, c.steps, delta, false, h);
      exact = {std::max(remove.lower, add.lower), std::max(remove.upper, add.upper)};
      event = DpEvent::self_composed(DpEvent::poisson_sampled(c.q, DpEvent::gaussian(c.sigma)),
                                     c.steps);
    } else {
      exact = subsampled_epsilon(c.q, 2, c.sigma, c.steps, delta, true, h);
      const auto n = static_cast<std::int64_t>(std::lround(1000 / c.q));
      event = DpEvent::self_composed(
          DpEvent::sampled_without_replacement(n, 1000, DpEvent::gaussian(c.sigma)), c.steps);
    }
    const double by_pld = pld_plugin->epsilon(event, delta).epsilon;
    const double by_best = best->epsilon(event, delta).epsilon;
    MESSAGE(event.to_string() << ": exact in [" << exact.lower << ", " << exact.upper << "], pld "
                              << by_pld << ", best " << by_best);
    CHECK(exact.upper - exact.lower < 0.005 * exact.lower);  // the bracket is informative
    CHECK(by_pld >= exact.lower);
    CHECK(by_best >= exact.lower);
    // Poisson: the two directions are tight.  Fixed-size lots: R alone does not compose (one pair
    // of datasets can realise R at some steps and its reverse at others, plugins/accountant/pld/
    // src/without_replacement.cpp), so pld composes the symmetric pair max(R, R'), which lies
    // 1.8–6.6% above R's composition on these settings.
    const double slack = c.poisson ? 1.02 : 1.07;
    CHECK(by_pld <= slack * exact.lower);
    CHECK(by_best <= slack * exact.lower);
  }
}

TEST_CASE("fixed-size lots: the values docs/accounting.md shows") {
  // pld (= best: below rdp on every row), the pair R alone composed (pessimistic discretisation,
  // pld's own machinery), the value one pair of datasets realises, and rdp.
  const pld::Options options;
  const dptune::rdp::Calculator rdp_calculator{dptune::rdp::Options{}};
  const pld::Calculator calculator{options};
  struct Row {
    std::int64_t n, m, steps;
    double sigma;  // relative to the replace-one sensitivity
    bool stated_replace_one;
    double delta, symmetric, alone, rdp;
  };
  for (const Row& r : {
           Row{1200, 64, 93, 4, true, 1e-5, 0.5034, 0.4770, 1.1116},
           Row{5000, 500, 500, 4, true, 1e-6, 2.8321, 2.6482, 6.1779},
           Row{341, 32, 44, 3, true, 1e-5, 0.8911, 0.8494, 1.9211},
           Row{60000, 256, 60 * 235, 0.55, false, 1e-5, 18.4830, 14.7384, 24.1191},
           Row{10000, 1000, 10, 0.5, false, 1e-5, 12.4822, 12.2612, 17.5077},
           Row{5000, 1000, 20, 1, false, 1e-5, 6.9041, 6.6161, 11.6011},
           Row{10000, 1000, 50, 2, false, 1e-5, 1.7615, 1.6525, 3.6803},
       }) {
    const DpEvent step = r.stated_replace_one ? DpEvent::replace_one(DpEvent::gaussian(r.sigma))
                                              : DpEvent::gaussian(2 * r.sigma);
    const DpEvent e =
        DpEvent::self_composed(DpEvent::sampled_without_replacement(r.n, r.m, step), r.steps);
    CAPTURE(e.to_string());
    CHECK(calculator.epsilon(e, r.delta).epsilon == doctest::Approx(r.symmetric).epsilon(2e-4));
    CHECK(rdp_calculator.epsilon(e, r.delta).epsilon == doctest::Approx(r.rdp).epsilon(2e-4));
    const double gamma = static_cast<double>(r.m) / static_cast<double>(r.n);
    const pld::Pld pair =
        pld::poisson_sampled(gamma, r.sigma, false, options, pld::Estimate::Pessimistic).remove;
    const pld::Pld alone = pld::self_compose(pair, r.steps, options, pld::Estimate::Pessimistic);
    CHECK(alone.epsilon(options.value_discretization_interval, r.delta) ==
          doctest::Approx(r.alone).epsilon(2e-4));
  }
}

TEST_CASE("fixed-size lots: R dominates in two dimensions too (records in the unit disc)") {
  // The proof bounds ‖a‖, ‖b‖, ‖a − b‖ by the replace-one sensitivity 2 for vector records; here
  // 4 records in the unit disc, lots of 2, the sum plus N(0, I), every lot enumerated, the
  // hockey-stick divergence by a Riemann sum on a 2-D grid (step 0.02, so a looser tolerance), R
  // evaluated on the same grid.
  const int n = 4, m = 2;
  const double gamma = 0.5, step = 0.02, lo = -7, hi = 7;
  std::vector<std::pair<double, double>> grid;
  for (double x = lo; x <= hi; x += step)
    for (double y = lo; y <= hi; y += step) grid.emplace_back(x, y);
  const auto mixture = [&](const std::vector<std::pair<double, double>>& centres,
                           const std::vector<double>& weights) {
    std::vector<double> out(grid.size(), 0.0);
    for (std::size_t g = 0; g < grid.size(); ++g)
      for (std::size_t c = 0; c < centres.size(); ++c) {
        const double dx = grid[g].first - centres[c].first, dy = grid[g].second - centres[c].second;
        out[g] += weights[c] * std::exp(-(dx * dx + dy * dy) / 2) / (2 * std::numbers::pi);
      }
    return out;
  };
  const auto hockey_stick = [&](const std::vector<double>& p, const std::vector<double>& q,
                                double x) {
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += std::max(0.0, p[i] - x * q[i]);
    return sum * step * step;
  };
  const auto r_p = mixture({{2, 0}, {0, 0}}, {gamma, 1 - gamma}), r_q = mixture({{0, 0}}, {1});
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> angle(0, 2 * std::numbers::pi), radius(0, 1);
  for (int trial = 0; trial < 8; ++trial) {
    std::vector<std::pair<double, double>> d(n);
    for (auto& x : d) {
      const double r = trial < 4 ? 1.0 : std::sqrt(radius(rng)), t = angle(rng);
      x = {r * std::cos(t), r * std::sin(t)};
    }
    auto d2 = d;
    const double t = angle(rng);
    d2.back() = {std::cos(t), std::sin(t)};
    if (trial == 0) {  // the realising pair: every other record equal to the replacement
      std::fill(d.begin(), d.end(), std::pair{-1.0, 0.0});
      d.back() = {1, 0};
      d2 = std::vector<std::pair<double, double>>(n, {-1.0, 0.0});
    }
    std::vector<std::pair<double, double>> sums, sums2;
    for (int mask = 0; mask < (1 << n); ++mask) {
      if (__builtin_popcount(static_cast<unsigned>(mask)) != m) continue;
      std::pair<double, double> a{0, 0}, b{0, 0};
      for (int i = 0; i < n; ++i)
        if (mask >> i & 1) {
          const auto k = static_cast<std::size_t>(i);
          a = {a.first + d[k].first, a.second + d[k].second};
          b = {b.first + d2[k].first, b.second + d2[k].second};
        }
      sums.push_back(a);
      sums2.push_back(b);
    }
    const std::vector<double> uniform(sums.size(), 1.0 / static_cast<double>(sums.size()));
    const auto p = mixture(sums, uniform), q = mixture(sums2, uniform);
    for (const double eps : {-0.5, 0.0, 0.3, 1.0}) {
      const double x = std::exp(eps);
      const double bound = std::max(hockey_stick(r_p, r_q, x), hockey_stick(r_q, r_p, x));
      CAPTURE(trial);
      CAPTURE(eps);
      CHECK(hockey_stick(p, q, x) <= bound + 2e-4);
      CHECK(hockey_stick(q, p, x) <= bound + 2e-4);
      if (trial == 0)
        CHECK(hockey_stick(p, q, x) == doctest::Approx(hockey_stick(r_p, r_q, x)).epsilon(1e-3));
    }
  }
}

TEST_CASE("best never prices the default noise below the exact discrete curves") {
  // Exact discrete Gaussian noise (the secure default) at a small scale s = σ·Δ′ = 4 grid units,
  // where it differs most from the continuous Gaussian; Δ′ = 4 with the integer shift μ = Δ′
  // (Poisson, add/remove) or 2Δ′ (fixed-size lots, replace-one: the realising pair).  pld declines
  // the discrete Gaussian, so best is rdp's integer-order bound: sound, not tight.
  const auto best = dptune_test::built_accountant("best");
  const auto pld_plugin = dptune_test::built_accountant("pld");
  const double delta = 1e-5, h = 2e-4;
  const int shift = 4;
  for (const auto& [poisson, sigma, q, steps] :
       {std::tuple{true, 1.0, 0.1, 10}, std::tuple{false, 1.0, 0.1, 10},
        std::tuple{false, 2.0, 0.2, 20}}) {
    const double s = sigma * shift;
    double lower = 0;
    DpEvent event;
    if (poisson) {
      lower = std::max(discrete_subsampled_epsilon(q, shift, s, steps, delta, true, h).lower,
                       discrete_subsampled_epsilon(q, shift, s, steps, delta, false, h).lower);
      event = DpEvent::self_composed(DpEvent::poisson_sampled(q, DpEvent::discrete_gaussian(sigma)),
                                     steps);
    } else {
      lower = discrete_subsampled_epsilon(q, 2 * shift, s, steps, delta, true, h).lower;
      const auto n = static_cast<std::int64_t>(std::lround(1000 / q));
      event = DpEvent::self_composed(
          DpEvent::sampled_without_replacement(n, 1000, DpEvent::discrete_gaussian(sigma)), steps);
    }
    const double priced = best->epsilon(event, delta).epsilon;
    MESSAGE(event.to_string() << ": exact discrete >= " << lower << ", best " << priced);
    CHECK(lower > 0.5);  // the exact curve is informative
    CHECK(priced >= lower);
    // The same noise with its scale stated (s = 4 > s₂ = 3): pld's surrogate has multiplier
    // σ·√(1 − 9/16), far looser here, and must still be above the exact curve.
    const DpEvent on_grid = DpEvent::self_composed(
        poisson ? DpEvent::poisson_sampled(q, DpEvent::discrete_gaussian_on_grid(sigma, s))
                : DpEvent::sampled_without_replacement(
                      std::lround(1000 / q), 1000, DpEvent::discrete_gaussian_on_grid(sigma, s)),
        steps);
    const double by_pld = pld_plugin->epsilon(on_grid, delta).epsilon;
    MESSAGE(on_grid.to_string() << ": pld " << by_pld);
    CHECK(by_pld >= lower);
    const double best_on_grid = best->epsilon(on_grid, delta).epsilon;
    CHECK(best_on_grid >= lower);
    CHECK(best_on_grid <= priced * (1 + 1e-12));  // rdp prices both kinds alike
  }
}

namespace {

/// A setting of discrete_gaussian_on_grid's exact-curve check: Poisson or fixed-size lots, σ, q,
/// steps.
struct KnownScaleCase {
  bool poisson;
  double sigma, q;
  int steps;
};

// discrete_gaussian_on_grid(σ, s) at s = σ·Δ′ with Δ′ = 40 grid units: a scale small enough for
// the exact pmf sums above, where the surrogate's noise (s² − 3²)^½ is a relative 0.28% below s
// at σ = 1 (0.57% at σ = 0.7) and the additive δ (about 2.4e-39 (1 + e^ε)) is far below δ.
// Poisson: both directions of shift Δ′; fixed-size lots: the realising pair of shift 2Δ′ (the
// add/remove σ restated for replace-one).
void check_known_scale_against_exact_curves(const std::vector<KnownScaleCase>& cases) {
  const auto pld_plugin = dptune_test::built_accountant("pld");
  const auto best = dptune_test::built_accountant("best");
  const double delta = 1e-5;
  const int shift = 40;
  for (const KnownScaleCase c : cases) {
    const double s = c.sigma * shift, h = c.steps >= 50 ? 1e-4 : 2e-4;
    const DpEvent leaf = DpEvent::discrete_gaussian_on_grid(c.sigma, s);
    Bracket exact{};
    DpEvent event;
    if (c.poisson) {
      const Bracket remove = discrete_subsampled_epsilon(c.q, shift, s, c.steps, delta, true, h);
      const Bracket add = discrete_subsampled_epsilon(c.q, shift, s, c.steps, delta, false, h);
      exact = {std::max(remove.lower, add.lower), std::max(remove.upper, add.upper)};
      event = DpEvent::self_composed(DpEvent::poisson_sampled(c.q, leaf), c.steps);
    } else {
      exact = discrete_subsampled_epsilon(c.q, 2 * shift, s, c.steps, delta, true, h);
      const auto n = static_cast<std::int64_t>(std::lround(1000 / c.q));
      event = DpEvent::self_composed(DpEvent::sampled_without_replacement(n, 1000, leaf), c.steps);
    }
    const auto by_pld = pld_plugin->epsilon(event, delta);
    const double by_best = best->epsilon(event, delta).epsilon;
    MESSAGE(event.to_string() << ": exact in [" << exact.lower << ", " << exact.upper << "], pld "
                              << by_pld.epsilon << ", best " << by_best);
    CHECK(exact.upper - exact.lower < 0.005 * exact.lower);  // the bracket is informative
    CHECK(by_pld.derivation.find("discrete_gaussian_on_grid priced as the continuous") !=
          std::string::npos);
    CHECK(by_pld.epsilon >= exact.lower);
    CHECK(by_best >= exact.lower);
    // As for the continuous Gaussian: fixed-size lots compose the symmetric pair (1.8–6.6% above
    // the realising pair's composition, see the test above).
    const double slack = c.poisson ? 1.02 : 1.07;
    CHECK(by_pld.epsilon <= slack * exact.lower);
    CHECK(by_best <= slack * exact.lower);
  }
}

}  // namespace

// One setting of each kind of lots; the slow set checks the table's other settings (at
// most 50 steps).
TEST_CASE("the discrete Gaussian of known scale: pld and best within 2% of its exact curves") {
  check_known_scale_against_exact_curves({{true, 1, 0.1, 10}, {false, 1, 0.1, 10}});
}

TEST_CASE("the discrete Gaussian of known scale: the table's other settings against exact curves") {
  check_known_scale_against_exact_curves(
      {{true, 0.7, 0.5, 5}, {false, 2, 0.2, 20}, {false, 4, 0.1, 50}});
}

TEST_CASE(
    "the discrete Gaussian's surrogate: total variation within θ/(1 − θ), checked at small s₂") {
  // The lemma behind discrete_gaussian_on_grid (plugins/accountant/pld/src/discrete_on_grid.cpp):
  // with Y ~ N(0, s₁²) and K ~ N_Z(Y, s₂²), TV(K, N_Z(0, s₁² + s₂²)) ≤ θ/(1 − θ), θ = 2 Σ_{j≥1}
  // e^{−2π² s₂² j²}.  At s₂ = 3 both sides are far below double precision, so the lemma is checked
  // where they are not: s₂ ≤ 0.6, P(K = k) by Simpson's rule over y in long double.
  using Real = long double;
  const Real pi = std::numbers::pi_v<long double>;
  for (const auto& [s1, s2] : {std::pair{1.5L, 0.35L}, std::pair{1.5L, 0.45L},
                               std::pair{0.8L, 0.6L}, std::pair{0.5L, 0.4L}}) {
    Real theta = 0;
    for (int j = 1; j < 40; ++j) theta += 2 * std::exp(-2 * pi * pi * s2 * s2 * j * j);
    const auto lattice_mass = [&](Real y) {  // Θ(y) = Σ_k e^{−(k−y)²/(2 s₂²)}
      Real total = 0;
      for (int k = static_cast<int>(std::floor(y)) - 40; k <= static_cast<int>(std::floor(y)) + 41;
           ++k)
        total += std::exp(-(k - y) * (k - y) / (2 * s2 * s2));
      return total;
    };
    const int radius = static_cast<int>(std::ceil(14 * (s1 + s2)));
    const Real y_lo = -14 * s1, y_hi = 14 * s1;
    const int cells = 40000;  // even
    const Real step = (y_hi - y_lo) / cells;
    std::vector<Real> surrogate(static_cast<std::size_t>(2 * radius + 1), 0);
    for (int i = 0; i <= cells; ++i) {
      const Real y = y_lo + step * i;
      const Real weight = (i == 0 || i == cells) ? 1 : (i % 2 ? 4 : 2);
      const Real density = std::exp(-y * y / (2 * s1 * s1)) / (std::sqrt(2 * pi) * s1);
      const Real norm = lattice_mass(y);
      for (int k = -radius; k <= radius; ++k)
        surrogate[static_cast<std::size_t>(k + radius)] +=
            weight * step / 3 * density * std::exp(-(k - y) * (k - y) / (2 * s2 * s2)) / norm;
    }
    const Real s_sq = s1 * s1 + s2 * s2;
    Real z = 0;
    for (int k = -radius; k <= radius; ++k) z += std::exp(-k * k / (2 * s_sq));
    Real tv = 0;
    for (int k = -radius; k <= radius; ++k)
      tv += std::abs(surrogate[static_cast<std::size_t>(k + radius)] -
                     std::exp(-k * k / (2 * s_sq)) / z) /
            2;
    const Real bound = theta / (1 - theta);
    MESSAGE("s1 " << static_cast<double>(s1) << ", s2 " << static_cast<double>(s2) << ": TV "
                  << static_cast<double>(tv) << " <= " << static_cast<double>(bound));
    CHECK(tv <= bound);
    // Informative: the surrogate differs from the discrete Gaussian here, by 0.2–6% of the bound
    // (an independent Python sum over the same grid gives the same TVs).
    CHECK(tv >= 2e-3 * bound);
  }
  // The constant the accountant adds: ln(2^127 θ/(1 − θ)) at s₂ = 3 is 128 ln 2 − 18π² (the j ≥ 2
  // terms and θ in the denominator are below e^{−500}).
  CHECK(pld::log_draws_total_variation(3) ==
        doctest::Approx(128 * std::log(2.0) - 18 * std::numbers::pi * std::numbers::pi)
            .epsilon(1e-12));
  CHECK(pld::surrogate_multiplier(2, 30) ==
        doctest::Approx(2 * std::sqrt(1 - 9.0 / 900)).epsilon(1e-14));
  CHECK(pld::surrogate_multiplier(2, 30) < 2 * std::sqrt(1 - 9.0 / 900));
}

TEST_CASE("the default path re-measured: secure noise priced by best, the issue's settings") {
  // What `dptune privacy` and a run state by default: the `gaussian` mechanism's secure noise,
  // discrete_gaussian_on_grid(σ, 2^22), priced by best.  `tight` is a lower bound of the exact
  // value: Poisson, the lower end of the exact brackets of both directions in "pld and best
  // against exact composed curves"; fixed-size lots, what one pair of datasets realises with R or
  // R′ chosen step by step ("fixed-size lots: R or R' chosen step by step …"), and at MNIST scale
  // R alone's lower bracket at h = 1e-5 (`bench_pld`).  The 12.459 for σ = 0.7, q = 0.5 is
  // below the exact bracket [12.6984, 12.6998] of both directions: one direction only.
  struct Row {
    bool poisson;
    std::int64_t n, m, steps;
    double sigma, tight, best, ratio;
  };
  const auto best = dptune_test::built_accountant("best");
  const double delta = 1e-5;
  for (const Row& r : {
           Row{true, 10000, 1000, 10, 1, 2.8534, 2.8545, 1.02},
           Row{true, 10000, 5000, 5, 0.7, 12.6984, 12.6991, 1.02},
           Row{false, 10000, 1000, 10, 1, 12.302, 12.4822, 1.015},
           Row{false, 5000, 1000, 20, 2, 6.642, 6.9041, 1.04},
           Row{false, 10000, 1000, 50, 4, 1.6558, 1.7615, 1.064},
           Row{false, 60000, 256, 60 * 235, 1.1, 14.668, 18.4830, 1.261},
       }) {
    const auto step = [&](const DpEvent& leaf) {
      return r.poisson ? DpEvent::poisson_sampled(
                             static_cast<double>(r.m) / static_cast<double>(r.n), leaf)
                       : DpEvent::sampled_without_replacement(r.n, r.m, leaf);
    };
    const DpEvent secure = DpEvent::self_composed(
        step(DpEvent::discrete_gaussian_on_grid(r.sigma, 4194304.0)), r.steps);
    const DpEvent continuous = DpEvent::self_composed(step(DpEvent::gaussian(r.sigma)), r.steps);
    const auto priced = best->epsilon(secure, delta);
    MESSAGE(secure.to_string() << ": best " << priced.epsilon << ", tight " << r.tight << ", ratio "
                               << priced.epsilon / r.tight);
    CHECK(priced.derivation.find("pld wins") != std::string::npos);
    // The surrogate's multiplier is a relative 2.6e-13 below σ: the continuous price to every
    // printed digit (the PLD grid moves ε by about 1e-8 relative between nearby σ).
    CHECK(priced.epsilon ==
          doctest::Approx(best->epsilon(continuous, delta).epsilon).epsilon(1e-7));
    CHECK(priced.epsilon == doctest::Approx(r.best).epsilon(2e-4));
    CHECK(priced.epsilon >= r.tight * (1 - 2e-4));
    // Poisson: within 2 % of exact (0.04 % and 0.01 %).  Fixed-size lots: the symmetric pair that
    // composes soundly is 1.5 %, 3.9 %, 6.4 % and 26 % above a realised value (docs/accounting.md):
    // the truth lies between the two.
    CHECK(priced.epsilon <= r.ratio * r.tight);
  }
}

namespace {

/// A fixed-size-lot setting for the realisable lower bounds: the pair R of shift 2C (C = 1) and
/// noise stddev σ (σ = noise stddev ÷ clipping norm), lot fraction q, T steps; the backward
/// induction's grid h and window [lo, hi]; `certified` an ε at which the adaptive choice of R or R′
/// realises δ > 1e-5 (bisected on the same grid, rounded down); `above` an ε at which that choice,
/// with losses rounded up, reaches δ ≤ 1e-5 (so its exact ε lies in [certified, above]); pld's
/// value.
struct Realisable {
  double sigma, q;
  int steps;
  double h, lo, hi, certified, above, by_pld;
};

void check_adaptive_lower_bound(const Realisable& c) {
  const double delta = 1e-5;
  const auto law = [&](bool remove) {  // rounded down: every δ computed from it is a lower bound
    return without_top(subsampled_loss_law(c.q, 2, c.sigma, remove, c.h, false),
                       1e-12 * delta / c.steps, false);
  };
  const GridLoss r = law(true), r_reverse = law(false);
  const double realised = adaptive_delta({&r, &r_reverse}, c.steps, c.h, c.certified, c.lo, c.hi);
  // R alone composed, on the same grid: its δ at the certified ε is below 1e-5 (so the choice
  // step by step realises more than R alone), and its ε is what the table calls "R alone".
  const double alone = delta_of(compose(r, c.steps), c.h, c.certified);
  MESSAGE("sigma " << c.sigma << ", q " << c.q << ", T " << c.steps << ": at eps " << c.certified
                   << " the adaptive choice realises delta " << realised << " (R alone " << alone
                   << "); pld " << c.by_pld << " = " << c.by_pld / c.certified << " x");
  CHECK(realised > delta);
  CHECK(alone < delta);
  // The same maximum with losses rounded up: an upper bound of the best adaptive choice of R or
  // R′.  The truth of the event is at least the bracket; it equals it if no other single-step
  // pair of neighbours ever serves the adversary better (docs/accounting.md, "Is a tighter sound
  // bound known?").
  const auto up = [&](bool remove) {
    return without_top(subsampled_loss_law(c.q, 2, c.sigma, remove, c.h, true),
                       1e-12 * delta / c.steps, true);
  };
  const GridLoss r_up = up(true), r_reverse_up = up(false);
  const double bound =
      adaptive_delta({&r_up, &r_reverse_up}, c.steps, c.h, c.above, c.lo, c.hi, true);
  MESSAGE("  rounded up, at eps " << c.above << " the adaptive choice has delta <= " << bound
                                  << "; pld / above = " << c.by_pld / c.above);
  CHECK(bound <= delta);
  CHECK(c.above - c.certified < 0.005 * c.certified);  // the bracket is informative
  const auto n = static_cast<std::int64_t>(std::lround(1000 / c.q));
  const DpEvent event = DpEvent::self_composed(
      DpEvent::sampled_without_replacement(n, 1000, DpEvent::gaussian(c.sigma)), c.steps);
  const double by_pld = dptune_test::built_accountant("pld")->epsilon(event, delta).epsilon;
  CHECK(by_pld == doctest::Approx(c.by_pld).epsilon(2e-4));
  CHECK(by_pld >= c.above);
}

}  // namespace

TEST_CASE("fixed-size lots: R or R' chosen step by step realises more than R alone (10 steps)") {
  // One pair of datasets realises R at a step (every other record's gradient equal to the
  // replacement's) or its reverse R′ (equal to the replaced record's), and the gradient function
  // may choose between them from the outputs so far: the event covers every adaptive sequence of
  // gradient functions (docs/accounting.md, "Fixed-size lots in `pld`").  The best such choice
  // (backward induction, adaptive_delta) is a lower bound of every sound ε: here 12.302, above R
  // alone (12.260) and 1.46 % below pld's symmetric pair (12.482).
  check_adaptive_lower_bound(Realisable{1, 0.1, 10, 5e-4, -10, 24, 12.302, 12.31, 12.4822});

  // Fixed sequences (k steps R, T − k steps R′, in any order) realise no more than R alone: the
  // upper end of their brackets stays below the lower end of R alone's.
  const double delta = 1e-5, h = 5e-4;
  const int steps = 10;
  const auto law = [&](bool remove, bool upper) {
    return without_top(subsampled_loss_law(0.1, 2, 1, remove, h, upper), 1e-12 * delta / steps,
                       upper);
  };
  const GridLoss r_lower = law(true, false), r_upper = law(true, true),
                 reverse_upper = law(false, true);
  const double alone = epsilon_of(compose(r_lower, steps), h, delta);
  for (const int k : {0, 1, 5, 9}) {
    const double mixed = epsilon_of(
        without_top(compose_mixed(r_upper, k, reverse_upper, steps - k), 1e-9 * delta, true), h,
        delta);
    CAPTURE(k);
    CHECK(mixed < alone);
  }
  CHECK(alone == doctest::Approx(12.26).epsilon(1e-3));
}

TEST_CASE("fixed-size lots: R or R' chosen step by step, 20 and 50 steps") {
  // As above on the two other short rows of docs/accounting.md's table: 6.642 (pld 6.904,
  // 3.9 % above) and 1.6558 (pld 1.7615, 6.4 % above).  The windows of accumulated loss are
  // narrower (any window gives a lower bound; these lose nothing at the digits shown).
  check_adaptive_lower_bound(Realisable{2, 0.2, 20, 2e-4, -6, 14, 6.642, 6.648, 6.9041});
  check_adaptive_lower_bound(Realisable{4, 0.1, 50, 1e-4, -4, 8, 1.6558, 1.662, 1.7615});
}

TEST_CASE("fixed-size lots: pairs between R and R' add nothing to the adaptive choice") {
  // One pair of datasets also realises, at a step, every pair (γN(a) + (1 − γ)N(0), γN(a − 2) +
  // (1 − γ)N(0)) with a ∈ [0, 2] (gradients x_i ↦ 1, x_i′ ↦ −1, every other record ↦ 1 − a): R at
  // a = 2, R′ (translated) at a = 0.  Offering a = ½, 1, 3⁄2 as further choices does not raise the
  // realised δ on the 10-step row (planar pairs can: over two steps at ε = 0 a right triangle in
  // the clipping disc beats every choice of R or R′, flagged_mixture_test.cpp; docs/accounting.md,
  // "Is a tighter sound bound known?").
  const double delta = 1e-5, h = 5e-4, epsilon = 12.302;
  const int steps = 10;
  std::vector<GridLoss> laws;
  for (const double a : {0.0, 0.5, 1.0, 1.5, 2.0})
    laws.push_back(
        without_top(two_sided_loss_law(0.1, a, a - 2, 1, h, false), 1e-12 * delta / steps, false));
  std::vector<const GridLoss*> ends{&laws.front(), &laws.back()}, all;
  for (const GridLoss& law : laws) all.push_back(&law);
  const double by_ends = adaptive_delta(ends, steps, h, epsilon, -10, 24);
  const double by_all = adaptive_delta(all, steps, h, epsilon, -10, 24);
  MESSAGE("delta at eps " << epsilon << ": R or R' " << by_ends << ", with pairs between "
                          << by_all);
  CHECK(by_ends > delta);  // the same certificate as from R's own loss law
  CHECK(by_all == doctest::Approx(by_ends).epsilon(1e-9));
}
