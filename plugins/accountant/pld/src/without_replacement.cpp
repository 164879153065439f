// The PLD of the Gaussian mechanism on a lot sampled without replacement, for replace-one
// neighbours (see pld/calculator.hpp).
//
// Setting.  A lot S of m records is drawn uniformly from the n records of D (γ = m/n), and
// M(D) = f(S) + N(0, σ²Δ²·I), f of replace-one sensitivity Δ (‖f(S) − f(S')‖ ≤ Δ when S' is S
// with one record replaced).  D and D' differ in record i (x_i against x_i').  Units of Δ below,
// and N(a) means N(a, σ²·I).  Write δ_R(ε) for the hockey-stick curve of
//     R = (γ·N(1) + (1 − γ)·N(0),  N(0))
// and δ_R'(ε) for that of its reverse R' = (N(0), γ·N(1) + (1 − γ)·N(0)).
//
// Claim.  For every pair of neighbours in either order and every real ε,
//     H_{e^ε}(M(D) ‖ M(D')) ≤ max(δ_R(ε), δ_R'(ε)),
// and no bound of the one-order composition is below δ_R composed: R is realised by data.
//
// Proof.  1. Coupling.  Draw T uniformly among the m-subsets of the records other than i, and j
// uniformly in T; then T − j + i is uniform among the m-subsets containing i (each arises from
// exactly n − m pairs), and the lot contains i with probability γ.  So, with the same weights on
// both sides,
//     M(D)  = E_{T,j}[(1 − γ)·N(f(T)) + γ·N(f(T − j + x_i))],
//     M(D') = E_{T,j}[(1 − γ)·N(f(T)) + γ·N(f(T − j + x_i'))],
// and by joint convexity of the hockey-stick divergence H_x (x = e^ε) and translation,
// H_x(M(D) ‖ M(D')) ≤ sup H_x(γN(a) + (1 − γ)N(0) ‖ γN(b) + (1 − γ)N(0)) over a = f(T − j + x_i)
// − f(T), b = f(T − j + x_i') − f(T): each is one replacement (x_j by x_i, by x_i'), and so is
// a − b (x_i' by x_i), hence ‖a‖, ‖b‖, ‖a − b‖ ≤ 1.
// 2. x ≥ 1.  Advanced joint convexity (Balle, Barthe & Gaboardi 2018, Theorem 2): for
// μ = (1 − γ)μ₀ + γμ₁, μ' = (1 − γ)μ₀ + γμ₁', x̃ = 1 + (x − 1)/γ and β = x/x̃ ∈ [0, 1],
//     H_x(μ ‖ μ') = γ·H_x̃(μ₁ ‖ (1 − β)μ₀ + βμ₁') ≤ γ(1 − β)H_x̃(μ₁ ‖ μ₀) + γβ·H_x̃(μ₁ ‖ μ₁')
//                 ≤ γ·H_x̃(N(1) ‖ N(0)),
// the last step because a Gaussian pair with a shift of norm ≤ 1 is a post-processing of the pair
// with shift 1.  And γ·H_x̃(N(1) ‖ N(0)) = ∫(γp₁ + (1 − γ)p₀ − x·p₀)₊ = H_x(R) = δ_R(ε).
// 3. x < 1.  H_x(μ ‖ μ') = 1 − x + x·H_{1/x}(μ' ‖ μ) for every pair, so step 2 for the swapped
// pair gives H_x(μ ‖ μ') ≤ 1 − x + x·δ_R(−ε) = H_x(R') = δ_R'(ε).
// 4. Composition.  F = max(δ_R, δ_R') is, as a function of x, convex and non-increasing with
// F(0) = 1: the curve of one symmetric pair (the f-DP form is Dong, Roth & Su 2019, Theorem 4.2:
// C_γ(f) = min{f_γ, f_γ⁻¹}**), which dominates every ordered pair of neighbouring outputs at
// every x ≥ 0, so its PLD composes (dominating pairs compose: Zhu, Dong & Wang 2022).  Composing R
// and R' separately and taking the worse would not be a bound: as the model changes, the other
// records' contributions change, and one pair of datasets can realise R at some steps and R' at
// others.
// 5. Realised.  For a sum of clipped vectors (Δ = 2C): x_i = C·e, x_i' and every other record
// −C·e give exactly R at every step, so δ_R composed is a lower bound of the truth.
#include <tuple>
#include <vector>

#include "dptune/helpers/recent_results.hpp"
#include "pld/calculator.hpp"

namespace dptune::pld {

namespace {

Directions dominating_pair(double gamma, double sigma, const Options& options, Estimate estimate) {
  // The Poisson-subsampled pairs are exactly R ("remove") and R' ("add").
  Directions pair = poisson_sampled(gamma, sigma, false, options, estimate);
  if (estimate == Estimate::Optimistic) return pair;  // each realised by one pair of datasets
  std::vector<Pld> both{std::move(pair.remove), std::move(*pair.add)};
  return Directions{dominate_all(both, options), std::nullopt};
}

}  // namespace

Directions sampled_without_replacement(double gamma, double sigma, const Options& options,
                                       Estimate estimate) {
  if (gamma <= 0) return Directions{Pld{0, {1.0}, 0}, std::nullopt};
  if (gamma >= 1) return gaussian(sigma, options, estimate);
  // The candidates of a search share a few (γ, σ) and differ in their number of steps, and every
  // candidate is priced more than once (dry run, planner, routes).
  static RecentResults<std::tuple<double, double, Options, Estimate>, Directions, 32> kept;
  return kept.get({gamma, sigma, options, estimate},
                  [&] { return dominating_pair(gamma, sigma, options, estimate); });
}

}  // namespace dptune::pld
