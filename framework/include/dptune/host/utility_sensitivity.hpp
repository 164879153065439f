// dptune host: how far each bundled utility can move when one scored record changes, for tuners
// that protect the held-out split too (TunerContext::utility_sensitivity; svt_doubling's
// protect_validation).  A table keyed by the utility plugin's name and params: the Utility
// interface states no sensitivity, and a wrong bound would silently break a privacy guarantee, so
// an unknown utility gets no bound (the tuner refuses) rather than a guess.
#pragma once

#include <cstddef>

#include "dptune/host/config.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

/// The sensitivity of the configured utility to one of `scored_rows` scored records (replaced,
/// added or removed; the split size is public):
///  * accuracy: 1/n — a mean of n per-record scores in {0, 1};
///  * log_loss_score: min(1, ln(1/floor)/n) — exp(-L) with L the mean of n per-record losses in
///    [0, ln(1/floor)], and exp(-L) is 1-Lipschitz for L >= 0;
///  * f1 (binary or macro): 1 — not a mean of per-record scores; one record can move binary F1
///    from 1 to 0 (a lone true positive replaced by a missed one), and 1 bounds any score in
///    [0, 1];
///  * anything else, or n = 0: no bound (per_record empty), with the reason.
dptune::UtilitySensitivity utility_sensitivity(const ComponentConfig& utility,
                                               std::size_t scored_rows);

}  // namespace dptune::host
