// dptune helpers: releases of `values + noise` on a power-of-two grid with exact discrete noise.
//
// Floating-point Laplace or Gaussian noise has a finite, value-dependent support, so a release can
// reveal the noiseless value (Mironov 2012, "On significance of the least significant bits for
// differential privacy").  Google's secure-noise approach ("Secure Noise Generation",
// google/differential-privacy common_docs) instead rounds the value to a grid of step g = 2^e,
// adds integer noise in grid units, and multiplies back.  Here the integer noise is exact (the
// block-table samplers of discrete.hpp, the same laws as CKS 2020's), so what is released is a
// deterministic function of round(value / g) + Z with Z exactly discrete Laplace or discrete
// Gaussian.
//
// Accounting of the rounding.  round() moves each coordinate by at most g/2, so for neighbouring
// inputs x, y the rounded queries (in grid units) differ by at most ||x - y|| / g + (one unit per
// coordinate in the norm): Δ/g + d for L1, Δ/g + sqrt(d) for L2 (triangle inequality).  The noise
// is scaled to that inflated sensitivity — scale b (Δ/g + d), stddev parameter σ (Δ/g + sqrt(d)) in
// grid units — so that the continuous mechanism's event (Laplace(b), Gaussian(σ)) is exactly true
// of the discrete mechanism:
//   * discrete Laplace of scale t with an integer L1 shift of at most Δ' is (Δ'/t)-DP exactly
//     (the pmf ratio is exp((|k| - |k - μ|)/t) <= exp(|μ|/t) per coordinate);
//   * the product discrete Gaussian N_Z(0, σ²)^d with an integer shift μ has, for every order α,
//     D_α <= α ||μ||² / (2σ²), with equality for integer shifts (CKS 2020, Proposition 5 and the
//     multivariate extension by independence); for integer k it is the closed form
//     E_{N_Z(0,σ²)}[(p_μ / p_0)^k] = exp(k (k - 1) ||μ||² / (2σ²)) (shift the sum by k μ).  Hence
//     zCDP ρ = Δ'² / (2σ²) and every integer-order RDP quantity, subsampled or not, equals the
//     continuous Gaussian's.  docs/noise.md says which accountant paths rest on more than that.
// The scale (σ²) handed to the integer sampler is a rational rounded UP: more noise than the event
// needs is safe, less is not.
//
// Grid rule (per release, data-independent: it depends only on Δ, the multiplier and d): the
// noise in grid units is kept between 2^21 and 2^23 standard units (Gaussian: σ (Δ/g + sqrt d) <=
// 2^23; Laplace: b (Δ/g + d) <= 2^30), g the smallest power of two that allows it.  So g is about
// 2^-22 of the noise's own scale: the rounding moves a value by far less than the noise, and the
// sensitivity inflation g sqrt(d) / Δ is at most sqrt(d) σ / 2^21 (Gaussian; d b / 2^28 for
// Laplace).  Values beyond 2^52 grid steps are refused (InvalidArgument) rather than moved to a
// coarser, data-dependent grid; the integer sum stays far inside int64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dptune/abi.hpp"

namespace dptune {

class RandomBitGenerator;

/// The grid step g = 2^e of the rule above for a Laplace release (L1 sensitivity `l1`, noise
/// multiplier b, `count` coordinates).  1.0 when no noise is drawn (b == 0 or l1 == 0).  Throws
/// InvalidArgument on non-finite or negative input and when b·count > 2^28 (the inflation one
/// grid step per coordinate would dominate; use the fast sampler or fewer coordinates).
double laplace_grid(double l1, double multiplier, std::size_t count);

/// The same for a Gaussian release (L2 sensitivity); throws when σ·sqrt(count) > 2^21.
double gaussian_grid(double l2, double multiplier, std::size_t count);

/// round(v / g) + discrete Laplace of scale b (l1/g + count) per coordinate, times g: exact
/// multiples of `grid`, which must be a power of two (normally laplace_grid(...)).  Event
/// Laplace(b) with respect to L1 sensitivity l1, exactly.  b == 0 or l1 == 0: the values are
/// returned unchanged.  Throws on non-finite values, values beyond 2^52 grid steps, or scales
/// beyond the sampler's range.
std::vector<double> grid_laplace(std::span<const double> values, double l1, double multiplier,
                                 double grid, RandomBitGenerator& rng);

/// round(v / g) + discrete Gaussian of σ² = (σ (l2/g + sqrt(count)))² per coordinate, times g.
/// Event Gaussian(σ) with respect to L2 sensitivity l2 (zCDP, all RDP orders; docs/noise.md).
std::vector<double> grid_gaussian(std::span<const double> values, double l2, double multiplier,
                                  double grid, RandomBitGenerator& rng);

/// round(v / g) + noise[i], times g, for each value: the last step of grid_laplace and
/// grid_gaussian, for a caller that draws the integer noise itself (e.g. ahead of the release, as
/// the gaussian mechanism does with `prefetch`; the noise must be drawn with the parameter of
/// grid_gaussian_variance or grid_laplace_scale for the same l2/l1, multiplier, grid and count).
/// `grid` a power of two; noise.size() == values.size().  Throws as grid_gaussian does on
/// non-finite values and values beyond 2^52 grid steps.
std::vector<double> add_noise_on_grid(std::span<const double> values, double grid,
                                      std::span<const std::int64_t> noise);

/// The rational parameter actually given to the integer sampler (rounded up), for tests and
/// reports: scale (Laplace) or σ² (Gaussian) in grid units as numerator / denominator.
struct GridNoiseParameter {
  std::uint64_t numerator = 0;
  std::uint64_t denominator = 1;
};
GridNoiseParameter grid_laplace_scale(double l1, double multiplier, double grid, std::size_t count);
GridNoiseParameter grid_gaussian_variance(double l2, double multiplier, double grid,
                                          std::size_t count);

/// The lower bound on a Gaussian grid release's noise in grid units that the `gaussian` mechanism
/// states (discrete_gaussian_on_grid's min_scale): the grid rule above keeps σ (Δ/g + sqrt d) above
/// 2^22 whenever the grid step is not clamped at 2^-1000, and the mechanism raises the noise to
/// it otherwise.  Header only.
inline constexpr double kGaussianGridMinScale = 4194304.0;  // 2^22

}  // namespace dptune
