// dptune helpers: evaluating candidates for tuner plugins (to_trial, evaluate_for_map).
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

/// As above, with `private_run` chosen: false requests non-private runs (EvaluationRequest::
/// private_run = false; a trainer trains without noise and reports DpEvent::non_private()), whose
/// trials carry no privacy guarantee (ε = ∞, δ = 1): a non-private baseline (Ding et al.; Liebenow
/// et al. 2025). true is the overload above.  (A separate overload, not a default argument, keeps
/// the shared SDK's existing symbol.)
std::vector<Trial> evaluate_for_map(TunerContext& context, const std::vector<Params>& candidates,
                                    std::string_view phase, std::size_t first_id, bool private_run);

}  // namespace dptune
