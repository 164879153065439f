// Tuning on a subsample, extrapolated to the full data (after Koskela & Kulkarni 2023, "Practical
// Differentially Private Hyperparameter Tuning with Subsampling", NeurIPS: the whole tuning run
// on a subsample, the final model trained once on the full data).
//
// The subsample: m = ⌊qn⌋ training rows for any public fraction q in (0, 1], drawn by the data
// layout uniformly without replacement from its own seed (DataScope::subsample),
// data-independent.  The extrapolation: explicit, public rules that map a candidate tuned on m
// rows to the full n rows.  The pricing: a composition of events the accountants already price
// (docs/tuners/subsampled.md has the argument in full).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/params.hpp"
#include "dptune/plugin.hpp"
#include "dptune/privacy.hpp"

namespace dptune::subsampled {

/// The tuning subsample's size: m = ⌊qn⌋ of the n training rows.
struct SubsampleSize {
  std::size_t full_rows = 0;    // n
  double fraction = 1;          // q, as the pipeline gives it
  std::size_t sample_rows = 0;  // m = ⌊qn⌋ (q·n within 1e-9 of a whole number counts as it)

  /// Refuses (InvalidArgument, its text starting "fraction: ") a q outside (0, 1].
  static void check_fraction(double fraction);
  /// m from q and n; refuses (InvalidArgument, "fraction: ...") a q outside (0, 1] and an m of 0.
  static SubsampleSize of(std::size_t full_rows, double fraction);
  bool whole() const { return sample_rows == full_rows; }
  /// m/n, the ratio the amplification is priced at.
  double ratio() const;
};

/// The extrapolation rule: the hyperparameters named in `scaled` are multiplied by s = n/m (an
/// integer one rounded to the nearest integer, at least 1); every other hyperparameter is kept.
/// A public function of the tuned candidate and the public sizes only.
struct Extrapolation {
  std::vector<std::string> scaled;
  SubsampleSize size;

  double factor() const;
  /// The candidate for the full data.  A scaled name that `tuned` does not hold (a value the
  /// pipeline fixes) is left to the pipeline; throws InvalidArgument when a scaled value is not a
  /// number.
  Params apply(const Params& tuned) const;
  /// The scaled names `candidate` does not hold (they are not dimensions of the search space).
  std::vector<std::string> not_in(const Params& candidate) const;
  std::string describe() const;
};

/// "a, b ,c" → {"a", "b", "c"}; empty items dropped.
std::vector<std::string> split_names(std::string_view list);

/// The event of the tuning on the subsample (PROJECT'S OWN composition, docs/tuners/subsampled.md,
/// "Why the price is sound"):
///   q < 1: one_of([sampled_without_replacement(n, m, repeat_and_select(base, mean, shape)),
///                  repeat_and_select(score, mean, shape)])   (score: the noisy score's event)
///          or the first alone when the scores are not noisy (public validation);
///   q = 1: repeat_and_select(base, mean, shape).
/// `base` is one run on the subsample: the worst candidate's training composed with the score.
DpEvent tuning_event(const DpEvent& base, const DpEvent* score, const SubsampleSize& size,
                     double mean, double shape);

/// The final training on the full data: the worst of the extrapolated candidates' events, composed
/// with the final score's event when it is noisy.
DpEvent final_event(const DpEvent& worst_final, const DpEvent* score);

/// What the whole procedure does, as events: one run on the subsample (the worst candidate's
/// training composed with the score), the noisy score's event (null: public validation), the final
/// training with its score (final_event), the sizes and K's law.
struct Procedure {
  DpEvent base;
  const DpEvent* score = nullptr;
  DpEvent final;
  SubsampleSize size;
  double mean = 10, shape = 0;
};

/// One sound price of the procedure: the event the tuner declares and the accountant's ε of it.
struct Priced {
  std::string route;
  DpEvent event;
  PrivacyGuarantee guarantee;
};

/// Every price the tuner knows for `p`, each composed with the final training
/// (docs/tuners/subsampled.md, "Three prices, the smallest taken"):
///   "Theorem 9": tuning_event(...) (Rényi amplification of the whole tuning; q < 1);
///   "profile":   the tuning's (ε_t, δ_t) from the accountant's price of repeat_and_select(base) at
///                δ_t = δ/(2q), q = m/n, amplified to (log(1 + q(e^ε_t − 1)), qδ_t) by sampling
///                without replacement (Balle, Barthe & Gaboardi 2018), as approx_dp events (q < 1);
///   "unamplified": repeat_and_select(base) as on the full data (every q).
/// With q < 1 a route must hold for replace-one neighbours: the subsample is a prefix of the
/// layout's shuffle of the row slots, which keeps a replaced record in its slot but reshuffles
/// every slot when one is added.  A route that does not, or that the accountant refuses, is left
/// out; none left: throws PrivacyError naming every route's refusal.
std::vector<Priced> prices(const Accountant& accountant, double delta, const Procedure& p);
/// The smallest ε of prices() (ties: the earlier route).  Chosen from public inputs only.
Priced cheapest(const Accountant& accountant, double delta, const Procedure& p);

/// Expected trainings × rows (a public figure: E[K], not the K drawn).
struct Compute {
  double tuning = 0;                // E[K]·m
  double final = 0;                 // n
  double full_data_repetition = 0;  // E[K]·n, the repetition tuner on the full data
  double total() const { return tuning + final; }
  double saved() const { return full_data_repetition - total(); }
};
Compute expected_compute(const SubsampleSize& size, double mean_runs);

}  // namespace dptune::subsampled
