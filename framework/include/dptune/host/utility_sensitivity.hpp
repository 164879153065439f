// dptune host: how far the configured utility can move when one scored record changes, for tuners
// that protect the held-out split too (TunerContext::utility_sensitivity) and for the private test
// score.  The bound is the one the utility plugin declares (UtilityTraits, dptune/traits.hpp): a
// wrong bound would silently break a privacy guarantee, so a utility that declares none gets no
// bound (the tuner refuses) rather than a guess.
#pragma once

#include <cstddef>

#include "dptune/host/config.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

/// The sensitivity of the configured utility to one of `scored_rows` scored records (replaced,
/// added or removed; the split size is public), as the utility declares it:
///  * MeanOfRecords with scale C: min(1, C/n) — a 1-Lipschitz function of the mean of n
///    per-record terms in [0, C] (accuracy: C = 1; log_loss_score: exp(-L), C = ln(1/floor));
///  * Constant with scale B: B whatever n (f1: 1, the trivial bound of a score in [0, 1]);
///  * nothing declared (Unknown), or n = 0: no bound (per_record empty), with the reason.
dptune::UtilitySensitivity utility_sensitivity(const ComponentConfig& utility,
                                               std::size_t scored_rows);

}  // namespace dptune::host
