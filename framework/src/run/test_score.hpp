// dptune host (internal): a score of the released model on held-out data (`output.test_score`).
//
// Private: the utility of the released model on the test split plus Laplace noise of scale Δ/ε
// (Dwork, McSherry, Nissim & Smith 2006), Δ the utility's per-record sensitivity on the test split
// (utility_sensitivity.hpp), drawn on the exact grid path of grid_noise.hpp (discrete Laplace,
// Canonne, Kamath & Steinke 2020; snapped to a power-of-two grid against Mironov 2012).  Its event
// laplace(1/ε) is pure ε-DP for replaced, added and removed records alike (Δ bounds all three), so
// it composes with the tuning's guarantee in whichever relation that guarantee is stated.
//
// The test split is disjoint from the training and validation splits, and for replace-one
// neighbours the changed record sits in one split only: parallel composition would give
// max(ε_tuning, ε_test).  dptune composes sequentially instead (ε_tuning + ε_test, or the RDP sum)
// because that needs no argument about where the record sits (a tuner may score on the test split
// too, `utility: {split: test}`, and an add/remove guarantee is stated for the splits as drawn):
// conservative, never under-reported.
//
// Public: the released model scored without noise on a file the user declares public; the score is
// post-processing of the release and costs nothing, and the report lists the file as assumed
// public.
#pragma once

#include <functional>

#include <cstddef>
#include <optional>
#include <string>

#include "dptune/dp_event.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/test_score_noise.hpp"
#include "dptune/plugin.hpp"
#include "dptune/privacy.hpp"

namespace dptune::host {

/// Scores the released model (null: the tuner released none) as output.test_score asks: on the
/// test split of `splits` with Laplace noise drawn from `rng` (private), or on the public file
/// read like the data section's file and preprocessed with `prepared` (public).
TestScore score_released_model(const PipelineConfig& config, const dptune::Utility& utility,
                               const DataSplits& splits, const Preprocessing& prepared,
                               const dptune::Model* model, dptune::RandomBitGenerator& rng);

struct EvaluationStack;  // evaluator.hpp
struct PlannedCharge;    // study_run.hpp

/// Every check of output.test_score that `dptune validate` and `dptune run` make before training
/// (ConfigDiagnostic, exit 2): a private score needs a fixed test split, a utility with a known
/// sensitivity and a tuner that claims a guarantee (its dry run, study_run.hpp) to compose into; a
/// public file must read like the data section's file and fit it.  Returns what validate prints:
/// the noise and the composed guarantee, or the public file.  `plan` gives the tuner's dry run
/// (plan_charge), which a private score needs and the caller makes once for every check.
std::string check_test_score(const PipelineConfig& config, EvaluationStack& stack,
                             const std::function<const PlannedCharge&()>& plan);

/// The stream the private test score's noise is drawn from (RandomSource::make): below 2^32, so
/// that a study records its words and a resumed run replays them (a fresh draw per resume would
/// release the same score with new noise each time); between the partition streams (2 + k) and
/// the client streams (2^31 + n) of data_scopes.hpp, where no layout stream comes.
inline constexpr std::uint64_t kTestScoreStream = (std::uint64_t{1} << 31) - 1;

}  // namespace dptune::host
