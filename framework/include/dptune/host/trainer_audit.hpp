// dptune host: `dptune audit trainer PIPELINE`: trains the pipeline's trainer once with canaries
// and turns the canaries' scores into an empirical lower bound on its ε (the game and its
// statistics: audit_one_run.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/host/audit_one_run.hpp"
#include "dptune/host/config.hpp"
#include "dptune/params.hpp"
#include "dptune/rng.hpp"

namespace dptune::host {

class PluginRegistry;

struct TrainerAuditOptions {
  std::size_t canaries = 200;          // m
  std::optional<std::size_t> guesses;  // fixed k; none: the ladder (Bonferroni)
  bool split = false;                  // the split strategy (analyse_one_run_split)
  double confidence = 0.95;            // 1 − β
  /// "input": canary rows (black-box, any trainer); "gradient": Dirac canary gradients inserted
  /// into the clipped sums and scored on the released sums (white-box, a GradientCanaryTrainer).
  std::string canary_kind = "input";
  /// Input: canary norm ÷ the largest training row norm.  Gradient: canary norm ÷ the L2
  /// sensitivity of the released sum (the clipping norm); the CLI's defaults are 3 and 1.
  double canary_scale = 3.0;
  std::optional<std::uint64_t> seed;  // none: libsodium (canaries, inclusion, training)
  dptune::Params candidate;           // the trainer's hyperparameters (over the pipeline's)
};

/// One canary's outcome.
struct CanaryOutcome {
  bool included = false;
  double score = 0;
};

struct TrainerAuditResult {
  std::string trainer, trainer_version, library, sha256;
  dptune::Params params;     // the trainer's complete params
  std::string neighbouring;  // "add/remove" or "replace-one": the game played
  dptune::DpEvent event;     // what the audited run reported (priced for the claim)
  double delta = 0, epsilon_claimed = 0;
  std::string accountant;
  std::string canary_kind = "input";  // as TrainerAuditOptions::canary_kind
  std::size_t real_rows = 0, trained_rows = 0, features = 0, classes = 0;
  std::size_t parameters = 0;  // gradient canaries: the length of the released sum
  double canary_norm = 0;
  std::string score_kind;  // "log-probability" or "correct-label indicator"
  std::vector<CanaryOutcome> canaries;
  std::vector<ProfilePoint> claimed_profile;  // ε(δ) of the event at several δ (MMC's hypothesis)
  OneRunAnalysis bounds;
  double epsilon_lower = 0;  // the larger of the two bounds (each at half the level)
  std::string analysis;      // which tests ran, with their parameters
  std::string randomness;
  bool violation = false;
  double seconds = 0;
};

/// Runs the game once on `config`'s trainer and data (one training through
/// HostEvaluator::train_once) and analyses it.  Throws ConfigDiagnostic (file:line:col, key) when
/// the pipeline cannot be audited (its algorithm is not a trainer, its data varies per run, its
/// event mixes neighbouring relations), before anything is trained.
TrainerAuditResult run_trainer_audit(const PipelineConfig& config, const PluginRegistry& registry,
                                     const TrainerAuditOptions& options);

/// The same game with gradient canaries (options.canary_kind "gradient"; the steps are in
/// framework/src/run/gradient_audit.cpp and docs/audit.md, "Gradient canaries").  Also throws
/// ConfigDiagnostic when the trainer does not implement dptune::GradientCanaryTrainer or has
/// fewer parameters than there are canaries.
TrainerAuditResult run_gradient_trainer_audit(const PipelineConfig& config,
                                              const PluginRegistry& registry,
                                              const TrainerAuditOptions& options);

}  // namespace dptune::host
