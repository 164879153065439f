// dptune SDK: helpers for tuner plugins.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "dptune/plugin.hpp"

namespace dptune {

/// A Trial from an Evaluation (same params, privacy, utility statistics, repetitions, seconds).
Trial to_trial(const Evaluation& evaluation, std::size_t id);

/// Evaluates `candidates` privately on the whole training data with the pipeline's R, in chunks so
/// the progress display moves (chunks of 16 candidates, each run R times, keep two cores busy),
/// reporting the best mean utility so far.  Ids start at `first_id`.  For privacy–utility *maps*
/// (grid, random, DPareto) whose results are for trusted analysts: a private tuner must not show
/// per-trial utilities.
std::vector<Trial> evaluate_for_map(TunerContext& context, const std::vector<Params>& candidates,
                                    std::string_view phase, std::size_t first_id = 0);

}  // namespace dptune
