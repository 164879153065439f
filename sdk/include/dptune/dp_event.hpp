// dptune SDK: DpEvent, *what* a private computation did, as an immutable tree (after Google's
// dp_accounting).  Accountants turn events into costs; events never carry ε themselves unless the
// mechanism is pure or approximate DP by definition.
//
// Neighbouring relation.  Every event states which neighbouring datasets its numbers are
// relative to:
//  * A leaf (gaussian, discrete_gaussian, laplace, pure_dp, approx_dp, zcdp) outside a
//    replace_one wrapper is stated for ADD/REMOVE neighbours: a noise multiplier is noise stddev ÷
//    the most one record can add to the query (for DP-SGD the clipping norm), and ε, δ, ρ hold
//    when one record is added or removed.  This is the convention of Opacus, TF Privacy and
//    dp_accounting.
//  * replace_one(e): e's leaves are stated for REPLACE-ONE neighbours (one record swapped, n
//    fixed): multipliers relative to the replace-one sensitivity (output perturbation's 2/(nλ),
//    DP-Hype's √(2k)), ε of a replace-one analysis (subsample-and-aggregate's 1/k).
//  * poisson_sampled is an add/remove theorem (Mironov, Talwar & Zhang 2019); its inner event must
//    be add/remove.  sampled_without_replacement is a replace-one theorem (Wang, Balle &
//    Kasiviswanathan 2019); an add/remove leaf inside it is priced for replace-one by the rule
//    below.
//  * A guarantee holds for one relation.  When an event mixes parts, the accountant prices all of
//    it for replace-one, converting add/remove leaves by group privacy of size 2 (a replacement
//    is a removal and an addition): the sensitivity at most doubles (σ → σ/2, b → b/2), ε → 2ε,
//    (ε, δ) → (2ε, (1 + e^ε)δ), ρ → 4ρ.  An add/remove *amplification* (poisson_sampled) has no
//    such conversion here, and replace-one never converts to add/remove: those mixes are refused.
//
// How events may change (docs/sdk-contract.md, "How events evolve", has the whole contract).
//  * A kind is a promise about what a computation did, read by accountants built before and after
//    it.  So kinds are only appended: a new enumerator at the end of Kind, its constructor, and its
//    entry at the end of the table in event_kinds.hpp (which printing, the YAML reader and
//    docs/events.md come from).  Enumerators never move, are never removed or reused.
//  * A kind never changes: not its fields, their units, their valid values, nor the neighbouring
//    relation its numbers are stated for.  A new parameter or a new reading of an existing one is a
//    new kind (or a wrapper around existing ones, as replace_one was in 2.3), so an event written
//    by an older plugin means today what it meant when it was written.
//  * An accountant that meets a kind it does not know, anywhere in the tree, refuses the whole
//    event: unsupported_reason names the kind, and epsilon/delta throw PrivacyError.  It never
//    prices the rest and drops the part it does not understand, never reads an unknown kind as
//    no_op or as a kind it resembles, and never guesses from the generic fields.  A composite kind
//    is supported only when every event inside it is.
//  * non_private is a known kind that no accountant may price: it marks a run with no guarantee.
//  * Events state what was done, never what it cost: ε appears only in kinds that are a guarantee
//    by definition (pure_dp, approx_dp, zcdp), for computations with their own proof of it.
#pragma once

#include <boost/config.hpp>
#include <cstdint>

#include <memory>
#include <string>
#include <vector>
#include "dptune/abi.hpp"

namespace dptune {

class BOOST_SYMBOL_VISIBLE DpEvent {
 public:
  enum class Kind {
    NoOp,            // touches no private data
    NonPrivate,      // touches private data without any guarantee: accountants must refuse
    Gaussian,        // noise_multiplier σ = noise stddev / L2 sensitivity
    Laplace,         // noise_multiplier b = scale / L1 sensitivity
    PureDp,          // epsilon
    ApproxDp,        // epsilon, delta
    Zcdp,            // rho
    PoissonSampled,  // sampling_probability q, inner event
    SampledWithoutReplacement,  // source_size n, sample_size m, inner event
    SelfComposed,               // inner event, count
    Composed,                   // events
    RepeatAndSelect,  // inner event, mean, shape (η of truncated neg. binomial; +inf: Poisson)
    // Added in ABI 2.1:
    OneOf,  // events: exactly one of them runs, chosen without looking at the private data
    RepeatUntilAccepted,  // inner event, stop_probability p: rerun until the output is accepted
    // Added in ABI 2.3:
    ReplaceOne,  // inner event, whose leaves are stated for replace-one neighbours
    // Added in ABI 2.8:
    DiscreteGaussian,  // noise_multiplier σ/Δ' of exact discrete Gaussian noise on a lattice
    // Added in ABI 2.12:
    DiscreteGaussianOnGrid,  // noise_multiplier σ/Δ', min_scale: a lower bound on σ (lattice)
    // Added in ABI 3.0:
    AdaptiveRepeatAndSelect,  // inner event, mean, shape (finite η), density_ratio C/c >= 1
    // Added in ABI 3.2:
    DiscreteGaussianSum,  // noise_multiplier, min_scale of each summand, summands, dimension
  };

  /// A NoOp event.
  DpEvent();  // no_op
  // Constructors validate their arguments and throw InvalidArgument naming the bad one.
  static DpEvent no_op();
  static DpEvent non_private();
  static DpEvent gaussian(double noise_multiplier);
  static DpEvent laplace(double noise_multiplier);
  static DpEvent pure_dp(double epsilon);
  static DpEvent approx_dp(double epsilon, double delta);
  static DpEvent zcdp(double rho);
  static DpEvent poisson_sampled(double sampling_probability, DpEvent event);
  static DpEvent sampled_without_replacement(std::int64_t source_size, std::int64_t sample_size,
                                             DpEvent event);
  static DpEvent self_composed(DpEvent event, std::int64_t count);
  static DpEvent composed(std::vector<DpEvent> events);
  static DpEvent repeat_and_select(DpEvent event, double mean, double shape);
  /// One of `events` runs, picked by a data-independent rule (e.g. a uniformly drawn candidate of a
  /// grid), and the pick may be published: costed as the worst of them (pointwise maximum of the
  /// RDP curves).  Needs at least one event.
  static DpEvent one_of(std::vector<DpEvent> events);
  /// Papernot & Steinke 2022, Appendix C (Liu & Talwar's threshold variant): run `event` until its
  /// output falls in a data-independent accepted set; before each run, stop with the
  /// data-independent output ⊥ with probability p ∈ [0, 1) (footnote 11), which bounds the run time
  /// and the acceptance probability below by p.  Costed by Corollary 16.
  static DpEvent repeat_until_accepted(DpEvent event, double stop_probability);
  /// `event`'s noise multipliers and ε are relative to replace-one neighbours (see the
  /// file comment), e.g. replace_one(gaussian(std / (2/(nλ)))) for output perturbation.
  static DpEvent replace_one(DpEvent event);
  /// An integer-valued query (in grid units) plus independent discrete Gaussian noise
  /// N_Z(0, s²) on every coordinate (Canonne, Kamath & Steinke 2020), s = noise_multiplier × Δ',
  /// Δ' an upper bound on the L2 norm of the integer shift between neighbours, e.g. the grid
  /// release of grid_noise.hpp with Δ' = Δ/g + sqrt(d).  Priced by its own theorems, not as the
  /// continuous Gaussian (docs/accounting.md, "The discrete Gaussian").
  static DpEvent discrete_gaussian(double noise_multiplier);
  /// discrete_gaussian(noise_multiplier) whose scale s in lattice units is at least
  /// `min_scale` (the grid release of grid_noise.hpp keeps s >= 2^22).  Knowing s >= min_scale,
  /// accountants price it as the continuous Gaussian of a multiplier smaller by the factor
  /// sqrt(1 - s₂²/min_scale²) plus an explicit additive δ (docs/accounting.md, "The discrete
  /// Gaussian").  min_scale must be positive and finite.
  static DpEvent discrete_gaussian_on_grid(double noise_multiplier, double min_scale);
  /// Wang, Gao, Zhang, Su & Shen 2023 (DP-HyPO), Framework 1: repeat_and_select whose runs draw
  /// their candidates from sampling distributions that adapt to the earlier runs' outputs, each
  /// kept within the density-ratio band c ≤ π/π⁽⁰⁾ ≤ C of a data-independent prior π⁽⁰⁾.
  /// `density_ratio` is C/c (>= 1, finite), the only quantity the paper's Theorems 1 and 2 depend
  /// on; density_ratio 1 is repeat_and_select itself.  `shape` is η of the truncated negative
  /// binomial number of runs and must be finite: no theorem covers Poisson runs.  `event` is the
  /// worst case over the prior's support (Lemma A.4 takes the supremum over all candidates).
  static DpEvent adaptive_repeat_and_select(DpEvent event, double mean, double shape,
                                            double density_ratio);
  /// An integer-valued query in Z^dimension plus the sum of `summands` independent noise vectors,
  /// each N_Z(0, s²) on every coordinate with the same s >= min_scale (lattice units): the
  /// distributed discrete Gaussian of Kairouz, Liu & Steinke 2021, e.g. DP-Hype's vote summed by
  /// secure aggregation over the honest clients.  The sum is not a discrete Gaussian; its Rényi
  /// divergence exceeds the continuous Gaussian's by a term τ that vanishes as s grows
  /// (docs/noise.md).  noise_multiplier = sqrt(summands)·s ÷ the L2 bound of the integer shift.
  /// summands = 1 is discrete_gaussian_on_grid.  min_scale must be positive and finite,
  /// summands and dimension >= 1.
  static DpEvent discrete_gaussian_sum(double noise_multiplier, double min_scale,
                                       std::int64_t summands, std::int64_t dimension);
  /// C/c of an adaptive_repeat_and_select event.
  double density_ratio() const;
  /// The lower bound on the lattice scale of a discrete_gaussian_on_grid event, or of each
  /// summand of a discrete_gaussian_sum.
  double min_scale() const;
  /// The number of independent noise vectors a discrete_gaussian_sum adds.
  std::int64_t summands() const;
  /// The number of coordinates of a discrete_gaussian_sum's query.
  std::int64_t dimension() const;

  Kind kind() const { return kind_; }
  // Accessors throw InvalidArgument when the event is of another kind.
  double noise_multiplier() const;  // gaussian, laplace, discrete_gaussian(_on_grid, _sum)
  double epsilon() const;
  double delta() const;
  double rho() const;
  double sampling_probability() const;
  std::int64_t source_size() const;
  std::int64_t sample_size() const;
  std::int64_t count() const;
  double mean() const;   // repeat_and_select, adaptive_repeat_and_select
  double shape() const;  // repeat_and_select, adaptive_repeat_and_select
  double stop_probability() const;
  const DpEvent& inner() const;
  const std::vector<DpEvent>& events() const;

  /// Whether this event or any part of it is of kind `kind`: kept per node when the event is
  /// built, so an accountant asks it of a trace of a million steps without walking the trace.
  bool contains(Kind kind) const { return (kinds_ >> static_cast<unsigned>(kind)) & 1U; }
  /// A hash of the whole tree, equal for equal events (operator==), kept per node when built:
  /// what the accountants group equal steps of a composition by.
  std::size_t structural_hash() const { return hash_; }

  /// The YAML flow syntax `dptune privacy` reads, e.g.
  /// "{self_composed: {count: 10, event: {gaussian: {noise_multiplier: 1.1}}}}".
  std::string to_string() const;
  static const char* kind_name(Kind kind);
  bool operator==(const DpEvent& other) const;

 private:
  DpEvent(Kind kind, double x, double y, std::int64_t n, std::int64_t m,
          std::vector<DpEvent> children);
  Kind kind_ = Kind::NoOp;
  std::uint32_t kinds_ = 1U;  // bit k: a node of Kind k in this tree (NoOp by default)
  double x_ = 0, y_ = 0;
  std::int64_t n_ = 0, m_ = 0;
  std::size_t hash_ = 0;
  // Shared and immutable: an event is a value, so copying one (the accountants restate, cache and
  // compose events of millions of steps) shares its parts instead of copying the tree.  Null for a
  // leaf.
  std::shared_ptr<const std::vector<DpEvent>> children_;
};

/// The two neighbouring relations a guarantee can hold for.
enum class Neighbouring { AddRemove, ReplaceOne };
/// "add/remove" or "replace-one".
BOOST_SYMBOL_VISIBLE const char* to_string(Neighbouring relation);
/// One sentence saying what neighbouring means for `relation`, for reports.
BOOST_SYMBOL_VISIBLE const char* describe(Neighbouring relation);

/// The relation `event`'s guarantee holds for (see the file comment): replace-one when any part
/// is replace-one (a replace_one wrapper or sampling without replacement), otherwise add/remove.
/// Throws PrivacyError, naming the parts, for a mix that cannot be converted soundly: a
/// poisson_sampled part together with a replace-one part.
BOOST_SYMBOL_VISIBLE Neighbouring neighbouring_of(const DpEvent& event);

/// For accountants: `event` with every leaf restated for `relation` (group privacy of size 2 for
/// add/remove leaves priced for replace-one) and no replace_one wrappers left, so the result is
/// priced by the usual rules with sampled_without_replacement's inner event taken as replace-one.
/// An adaptive_repeat_and_select of density ratio 1 becomes the repeat_and_select it equals.
/// The result is an accountant's internal form: price it, never restate or publish it again.
/// Throws PrivacyError when `event` cannot be stated for `relation`.
BOOST_SYMBOL_VISIBLE DpEvent restated_for(const DpEvent& event, Neighbouring relation);

}  // namespace dptune
