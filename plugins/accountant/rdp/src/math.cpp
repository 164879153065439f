// Closed forms and series of the RDP accountant (see rdp/calculator.hpp for the references).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/helpers/recent_results.hpp"
#include "dptune/params.hpp"
#include "rdp/calculator.hpp"

namespace dptune::rdp {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
bool is_integer(double x) { return std::floor(x) == x; }
}  // namespace

std::vector<double> default_orders() {
  std::vector<double> orders;
  for (int i = 1; i <= 9; ++i) orders.push_back(1.0 + i / 100.0);
  for (int i = 1; i < 100; ++i) orders.push_back(1.0 + i / 10.0);
  for (int i = 11; i <= 64; ++i) orders.push_back(i);
  for (double a : {80.0, 96.0, 128.0, 192.0, 256.0, 384.0, 512.0, 1024.0}) orders.push_back(a);
  return orders;
}

std::vector<double> parse_orders(const std::string& text) {
  if (text == "default") return default_orders();
  std::vector<double> orders;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    double value = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || ptr != item.data() + item.size())
      throw InvalidArgument("orders: '" + item +
                            "' is not a number; expected \"default\" or a comma-separated list "
                            "of orders > 1");
    if (!(value > 1) || !std::isfinite(value))
      throw InvalidArgument("orders: every order must be a finite number > 1, got " + item);
    orders.push_back(value);
    start = end + 1;
  }
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
  return orders;
}

double log_add(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}

double log_sub(double a, double b) {
  if (b == -kInf) return a;
  if (a <= b) return -kInf;  // callers only subtract smaller terms; rounding may tie
  return a + std::log1p(-std::exp(b - a));
}

double log_erfc(double x) {
  if (x < 25) return std::log(std::erfc(x));
  // erfc(x) = e^{−x²}/(x√π) · (1 − 1/(2x²) + 3/(4x⁴) − 15/(8x⁶) + …) (Abramowitz & Stegun 7.1.23);
  // at x ≥ 25 the omitted terms are below 1e-13 relative.
  const double r = 1 / (x * x);
  return -x * x - std::log(x) - 0.5 * std::log(std::numbers::pi) +
         std::log1p(r * (-0.5 + r * (0.75 - r * 1.875)));
}

double gaussian_rdp(double sigma, double alpha) {
  if (sigma == 0) return kInf;
  return alpha / (2 * sigma * sigma);
}

// The distributed discrete Gaussian (Kairouz, Liu & Steinke 2021, "The Distributed Discrete
// Gaussian Mechanism for Federated Learning with Secure Aggregation", arXiv 2102.06387,
// Proposition 14).  For s >= 1/2, X_1, …, X_n independent with N_Z(0, s²) on each of d coordinates,
// Z = Σ X_i, every Δ ∈ Z^d and every α >= 1:
//   D_α(Z + Δ ‖ Z) <= min{ α‖Δ‖₂²/(2ns²) + τd,
//                          (α/2)(‖Δ‖₂²/(ns²) + 2τ‖Δ‖₁/(√n s) + τ²d),
//                          (α/2)(‖Δ‖₂/(√n s) + τ√d)² },   τ = 10 Σ_{k=1}^{n−1} e^{−2π²s²k/(k+1)}.
// (Their Proposition 13 puts the sum within e^{±τ} pointwise of N_Z(0, ns²) up to that order; the
// three forms are the ways of carrying τ through CKS 2020's Rényi bound.)  With the event's
// multiplier σ = √n·s/‖Δ‖₂ the first form is α/(2σ²) + τd; ‖Δ‖₁ <= √d‖Δ‖₂ makes the second equal
// to the third, (α/2)(1/σ + τ√d)².  The bound holds for −Δ as well, so for both orders of a
// neighbouring pair.  τ falls as s grows (each term does), so τ at min_scale bounds it for every
// s >= min_scale.
double discrete_gaussian_sum_tau(double min_scale, std::int64_t summands) {
  if (!(min_scale >= 0.5))
    throw PrivacyError(
        "discrete_gaussian_sum: each summand's scale must be at least 1/2 lattice unit "
        "(Kairouz, Liu & Steinke 2021, Proposition 14), got min_scale " +
        std::to_string(min_scale));
  const double c = 2 * std::numbers::pi * std::numbers::pi * min_scale * min_scale;
  // The terms fall with k (k/(k+1) grows), so beyond the first million the rest is at most their
  // count times the last term summed.
  const std::int64_t exact = std::min<std::int64_t>(summands - 1, 1000000);
  double tau = 0, term = 0;
  for (std::int64_t k = 1; k <= exact; ++k) {
    term = std::exp(-c * static_cast<double>(k) / static_cast<double>(k + 1));
    tau += term;
  }
  tau += static_cast<double>(summands - 1 - exact) * term;
  return 10 * tau;
}

double discrete_gaussian_sum_rdp(double sigma, double tau, std::int64_t dimension, double alpha) {
  if (sigma == 0) return kInf;
  const double d = static_cast<double>(dimension);
  const double additive = alpha / (2 * sigma * sigma) + tau * d;
  const double root = 1 / sigma + tau * std::sqrt(d);
  return std::min(additive, alpha / 2 * root * root);
}

double laplace_rdp(double b, double alpha) {
  if (b == 0) return kInf;
  // Mironov 2017, Proposition 6 (Table II), with b the scale per unit L1 sensitivity.
  const double log_value = log_add(std::log(alpha / (2 * alpha - 1)) + (alpha - 1) / b,
                                   std::log((alpha - 1) / (2 * alpha - 1)) - alpha / b);
  return std::min(log_value / (alpha - 1), 1 / b);
}

double pure_dp_rdp(double epsilon, double alpha) {
  if (epsilon == 0) return 0;
  if (std::isinf(epsilon)) return kInf;
  // Randomised response with p = e^ε/(1+e^ε) dominates every ε-DP pair (Kairouz, Oh & Viswanath
  // 2015), and Rényi divergence obeys data processing, so its divergence is the tightest bound:
  // D_α = [(α−1)ε + log1p(e^{(1−2α)ε}) − log1p(e^{−ε})] / (α−1).
  const double value =
      epsilon + (std::log1p(std::exp((1 - 2 * alpha) * epsilon)) - std::log1p(std::exp(-epsilon))) /
                    (alpha - 1);
  return std::clamp(value, 0.0, epsilon);
}

namespace {

// Mironov, Talwar & Zhang 2019, §3.3: for integer α,
// A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k exp((k² − k)/(2σ²)),  ε(α) = log A_α / (α − 1).
double sampled_gaussian_log_a_int(double q, double sigma, double alpha) {
  const auto a = static_cast<long>(alpha);
  double log_a = -kInf;
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  const double inv_two_var = 1 / (2 * sigma * sigma);
  double log_binom = 0;  // log C(α, 0); then C(α, k) = C(α, k−1)·(α − k + 1)/k
  for (long k = 0; k <= a; ++k) {
    const auto kk = static_cast<double>(k);
    if (k > 0) log_binom += std::log((alpha - kk + 1) / kk);
    const double term =
        log_binom + kk * log_q + (alpha - kk) * log_1mq + (kk * kk - kk) * inv_two_var;
    log_a = log_add(log_a, term);
  }
  return log_a;
}

// Mironov, Talwar & Zhang 2019, §3.4: for fractional α, A_α = A_0 + A_1 with
//   A_0 = Σ_i C(α,i) q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)} · ½ erfc((i − z0)/(√2 σ)),
//   A_1 = Σ_i C(α,i) q^{α−i} (1−q)^i e^{((α−i)²−(α−i))/(2σ²)} · ½ erfc((z0 − (α−i))/(√2 σ)),
// z0 = σ² log(1/q − 1) + ½; the binomial coefficients of a fractional α alternate in sign beyond α.
// Returns NaN when the series does not settle (the caller then falls back to convexity).
double sampled_gaussian_log_a_frac(double q, double sigma, double alpha) {
  double log_a0 = -kInf, log_a1 = -kInf;
  const double z0 = sigma * sigma * std::log(1 / q - 1) + 0.5;
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  const double scale = std::sqrt(2.0) * sigma, two_var = 2 * sigma * sigma;
  double log_abs_binom = 0;  // log|C(α, 0)|
  bool positive = true;
  for (int i = 0; i < 100000; ++i) {
    const double ii = i, j = alpha - ii;
    const double log_t0 = log_abs_binom + ii * log_q + j * log_1mq;
    const double log_t1 = log_abs_binom + j * log_q + ii * log_1mq;
    const double log_s0 =
        log_t0 + (ii * ii - ii) / two_var + std::log(0.5) + log_erfc((ii - z0) / scale);
    const double log_s1 =
        log_t1 + (j * j - j) / two_var + std::log(0.5) + log_erfc((z0 - j) / scale);
    if (positive) {
      log_a0 = log_add(log_a0, log_s0);
      log_a1 = log_add(log_a1, log_s1);
    } else {
      log_a0 = log_sub(log_a0, log_s0);
      log_a1 = log_sub(log_a1, log_s1);
    }
    if (ii > alpha && std::max(log_s0, log_s1) < std::max(log_a0, log_a1) - 40) {
      const double result = log_add(log_a0, log_a1);
      return std::isfinite(result) ? result : std::numeric_limits<double>::quiet_NaN();
    }
    // C(α, i+1) = C(α, i) · (α − i)/(i + 1).
    const double factor = (alpha - ii) / (ii + 1);
    if (factor == 0) break;
    if (factor < 0) positive = !positive;
    log_abs_binom += std::log(std::abs(factor));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

double sampled_gaussian_rdp(double q, double sigma, double alpha) {
  if (q == 0) return 0;
  if (sigma == 0) return kInf;
  if (q == 1) return gaussian_rdp(sigma, alpha);
  if (is_integer(alpha)) return sampled_gaussian_log_a_int(q, sigma, alpha) / (alpha - 1);
  const double log_a = sampled_gaussian_log_a_frac(q, sigma, alpha);
  if (std::isfinite(log_a) && log_a >= 0) return log_a / (alpha - 1);
  // Fallback, always sound: K(α) = (α−1)·D_α is convex in α (van Erven & Harremoës 2014), so it
  // lies below the chord between the neighbouring integer orders (K(1) = 0).
  const double lo = std::floor(alpha), hi = std::ceil(alpha);
  const double k_lo = lo <= 1 ? 0 : sampled_gaussian_log_a_int(q, sigma, lo);
  const double k_hi = sampled_gaussian_log_a_int(q, sigma, hi);
  return ((hi - alpha) * k_lo + (alpha - lo) * k_hi) / (alpha - 1);
}

// The Poisson-subsampled discrete Gaussian (docs/accounting.md, "The discrete Gaussian").  Let p_0
// = N_Z(c, s²)^d be the release without the record, p_1 = p_0 shifted by the integer vector μ (‖μ‖
// ≤ s/σ), m = (1−q) p_0 + q p_1, L = p_1/p_0.
//  * Integer moments are the continuous Gaussian's: E_{p_0}[L^k] = exp(k(k−1)‖μ‖²/(2s²)) for
//    integer k (complete the square, shift the sum over Z^d by the integer vector kμ; Canonne,
//    Kamath & Steinke 2020, proof of Proposition 5).  For integer α every binomial coefficient of
//    E_{p_0}[(1−q+qL)^α] is >= 0, so D_α(m‖p_0) is at most Mironov, Talwar & Zhang 2019's §3.3
//    sum A_α at multiplier σ, which is increasing in ‖μ‖.
//  * The other direction is no larger at any α >= 1.  x ↦ μ − x swaps p_0 and p_1 (the discrete
//    Gaussian is symmetric and μ is integer), so the privacy-loss pmf ω of Z = log L under p_0
//    obeys ω(−z) = e^z ω(z).  Pairing z > 0 with −z and writing u = e^z, a = 1−q+qu,
//    b = 1−q+q/u, the two directions are Σ_{z>0} ω(z) f(α) and Σ_{z>0} ω(z) f(1−α) (plus equal
//    z = 0 terms) with f(t) = a^t + u b^t.  f(α) − f(1−α) = 2√a sinh(τ ln a) − 2u√b sinh(τ ln(1/b))
//    for τ = α − ½; it vanishes at τ = ½ (a − 1 = q(u−1) = u(1−b)), ln a >= ln(1/b) >= 0 because
//    ab >= 1, and sinh(τA)/sinh(τB) is non-decreasing in τ for A >= B > 0 (x coth x increases),
//    so f(α) >= f(1−α) for every α >= 1: D_α(p_0‖m) <= D_α(m‖p_0).
//  * Fractional α: K(α) = (α−1) D_α(m‖p_0) is convex in α (a log moment generating function),
//    K(1) = 0, so the chord between ⌊α⌋ and ⌈α⌉ bounds it.  The §3.4 series of the continuous
//    densities is NOT used: it has no discrete counterpart proven here.
double sampled_discrete_gaussian_rdp(double q, double sigma, double alpha) {
  if (q == 0) return 0;
  if (sigma == 0) return kInf;
  if (q == 1) return gaussian_rdp(sigma, alpha);
  if (is_integer(alpha)) return sampled_gaussian_log_a_int(q, sigma, alpha) / (alpha - 1);
  const double lo = std::floor(alpha), hi = std::ceil(alpha);
  const double k_lo = lo <= 1 ? 0 : sampled_gaussian_log_a_int(q, sigma, lo);
  const double k_hi = sampled_gaussian_log_a_int(q, sigma, hi);
  return ((hi - alpha) * k_lo + (alpha - lo) * k_hi) / (alpha - 1);
}

namespace {

// An upper bound on log Δ^k h(0), the k-th forward difference at 0 of h(l) = e^{l(l−1)/(2σ²)}
// = E_q[(p/q)^l] for the Gaussian pair p = N(1, σ²), q = N(0, σ²). Δ^k h(0) = E_q[(p/q − 1)^k] ≥ 0
// for even k.  The alternating sum Σ_l (−1)^{k−l} C(k, l) h(l) is taken scaled by its largest
// term; the result is raised by a bound on its rounding error, so cancellation can only make the
// bound looser (the min with Theorem 9's term then takes over), never unsound.
template <typename Real>
double log_forward_difference_upper(int k, Real half_t) {
  std::vector<Real> a(static_cast<std::size_t>(k) + 1);
  Real log_binom = 0, biggest = -std::numeric_limits<Real>::infinity();
  Real largest_exponent = 0;
  for (int l = 0; l <= k; ++l) {
    if (l > 0) log_binom += std::log(static_cast<Real>(k - l + 1) / l);
    a[l] = log_binom + half_t * l * (l - 1);
    biggest = std::max(biggest, a[l]);
    largest_exponent = std::max(largest_exponent, std::fabs(a[l]));
  }
  Real signed_sum = 0, absolute_sum = 0;
  for (int l = 0; l <= k; ++l) {
    const Real term = std::exp(a[l] - biggest);
    signed_sum += ((k - l) % 2 == 0) ? term : -term;
    absolute_sum += term;
  }
  const Real eps = std::numeric_limits<Real>::epsilon();
  // Rounding: log C(k, l) is a sum of l logarithms, each off by an ulp of the running total
  // (≤ largest_exponent), the exponent a_l by another 3 ulps, each exp and each addition by one:
  // the relative error of every term is below eps·((k + 3)(largest_exponent + log k + 2)), and
  // twice that covers the first-order approximation e^x − 1 ≈ x.
  const Real error = 2 * eps * absolute_sum * (Real(k) + 3) *
                     (largest_exponent + std::log(static_cast<Real>(k)) + 2);
  // Where the sum drowns in rounding the floor 5·error takes over: it decreases in σ like every
  // term, which keeps the bound monotone in σ (it is continuous at signed_sum = 4·error).
  const Real upper = signed_sum > 4 * error ? signed_sum + error : 5 * error;
  return static_cast<double>(biggest + std::log(upper));
}

// Long double where it is cheap (k ≤ 256, the orders dp_accounting evaluates exactly); double
// beyond, where the sum costs O(k) exponentials per k and the bound is mostly Theorem 9's anyway.
double log_forward_difference_upper(int k, long double half_t) {
  return k <= 256 ? log_forward_difference_upper<long double>(k, half_t)
                  : log_forward_difference_upper<double>(k, static_cast<double>(half_t));
}

}  // namespace

namespace {

std::vector<double> compute_wor_gaussian_log_moments(double gamma, double sigma,
                                                     const std::vector<int>& orders) {
  // Wang, Balle & Kasiviswanathan 2019 (arXiv 1808.00087), the Gaussian-specific strengthening of
  // Theorem 9 (their Theorem 27, the bound Google's dp_accounting applies), integer α ≥ 2, γ = m/n:
  //   (α−1)ε'(α) ≤ log(1 + γ² C(α,2) min{4(e^{ε(2)} − 1), 2e^{ε(2)}}
  //                    + Σ_{j=3}^{α} γ^j C(α,j) min{4 B_j, 2 e^{(j−1)ε(j)}}),
  // with ε(j) = j/(2σ²) and B_j = Δ^j h(0) for even j, √(Δ^{j−1}h(0) Δ^{j+1}h(0)) for odd j (the
  // Cauchy–Schwarz bound on |E(L−1)^j|).  The second member of each min is Theorem 9's term for an
  // inner event without a pure-DP bound, so this never exceeds Theorem 9.
  const long double half_t = 0.5L / (static_cast<long double>(sigma) * sigma);
  const int max_order = orders.empty() ? 2 : *std::max_element(orders.begin(), orders.end());
  const int top = 2 * ((max_order + 1) / 2);
  std::vector<double> log_delta(static_cast<std::size_t>(top) + 1, 0.0);
  for (int k = 2; k <= top; k += 2) log_delta[k] = log_forward_difference_upper(k, half_t);
  const double t = 1 / (sigma * sigma), log_gamma = std::log(gamma);
  const double term2 = std::min(std::log(4.0) + std::log(std::expm1(t)), std::log(2.0) + t);
  std::vector<double> k_of;
  k_of.reserve(orders.size());
  for (const int alpha : orders) {
    if (alpha < 2) throw InvalidArgument("wor_gaussian_log_moments: integer orders >= 2 only");
    const double a = alpha;
    double log_binom = std::log(a * (a - 1) / 2);
    double log_sum = log_add(0.0, 2 * log_gamma + log_binom + term2);
    for (int j = 3; j <= alpha; ++j) {
      log_binom += std::log((a - j + 1) / j);
      const auto half = static_cast<std::size_t>(j / 2),
                 half_up = static_cast<std::size_t>((j + 1) / 2);
      const std::size_t even_below = 2 * half, even_above = 2 * half_up;
      const double b = 0.5 * (log_delta[even_below] + log_delta[even_above]);
      const double theorem9 = std::log(2.0) + 0.5 * t * j * (j - 1);
      const double term = std::min(std::log(4.0) + b, theorem9);
      log_sum = log_add(log_sum, j * log_gamma + log_binom + term);
    }
    k_of.push_back(log_sum);
  }
  return k_of;
}

}  // namespace

std::vector<double> wor_gaussian_log_moments(double gamma, double sigma,
                                             const std::vector<int>& orders) {
  // A search's candidates share a few (γ, σ) and each is priced more than once; one evaluation at
  // the default orders (up to 1024) costs about 3·10⁵ exponentials.
  static RecentResults<std::tuple<double, double, std::vector<int>>, std::vector<double>, 64> kept;
  return kept.get({gamma, sigma, orders},
                  [&] { return compute_wor_gaussian_log_moments(gamma, sigma, orders); });
}

}  // namespace dptune::rdp
