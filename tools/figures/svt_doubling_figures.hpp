// Ding, Wu, Xu & Pan, §4.2 (Figures 3 and 4): SVT doubling's iterations against n = (u* - u0) / g
// and its fidelity u_s* / u*, from utilities drawn uniformly on (0, 1) (no data).  The Monte Carlo
// itself is svt_doubling_simulation.hpp's simulate(); this turns its runs into the figures' curves
// and a table.
#pragma once

#include "dptune/rng.hpp"
#include "figure.hpp"
#include "svt_doubling_simulation.hpp"

namespace dptune::figures {

/// Series svt_iterations.keps_* (Figure 4) with the reference curves
/// svt_iterations.reference_<c>_log2_n, svt_fidelity.keps_* and svt_fidelity_by_iteration.keps_*
/// (Figure 3), and the table svt_doubling_bins (one row per kϵ and n bin [2^j, 2^(j+1))).
Figure svt_doubling_figures(const svt_doubling::SimulationOptions& options,
                            dptune::RandomBitGenerator& rng);

}  // namespace dptune::figures
