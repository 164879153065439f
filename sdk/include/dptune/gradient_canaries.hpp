// dptune SDK: gradient canaries, the white-box hook of `dptune audit trainer --canary-kind
// gradient` (Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS
// 2023, the white-box audits of their Section 7).  Additive: two interfaces besides those of
// plugin.hpp (the host and the trainer ask with dynamic_cast), so no interface of plugin.hpp
// changes layout; a host that does not know them never offers canaries, and a trainer that does
// not implement GradientCanaryTrainer cannot be gradient-audited (the audit refuses it, exit 2).
//
// Who can activate it.  Only a TrainingContext that also implements GradientCanaryContext offers
// canaries, and the host's only such context is the one `dptune audit trainer` builds around the
// training of its one audit run: every run of `dptune run`, `dptune tune` and the evaluator's
// other calls gets the host's plain TrainingContext, where the hook is absent
// (docs/audit.md, "Gradient canaries").
//
// The game.  A canary is a record whose clipped gradient is the auditor's vector instead of one
// computed from a row: the training set train() receives holds one placeholder row per canary
// that is in (and, for replace-one neighbours, per twin), at the indices `rows` names, and the
// trainer samples them into lots exactly as any row, so the run's claimed event (which counts
// them among its n records) covers them.  In every lot a placeholder row joins, the trainer adds
// the canary's gradient, clipped to its clipping norm as any example's, to the sum of clipped
// gradients in place of the row's own gradient; after noising that sum it hands the released
// noisy sum to `observe`.  The auditor scores each canary by its projection on the sum of the
// released sums over the steps.
#pragma once

#include <boost/config.hpp>
#include <cstddef>
#include <functional>
#include <vector>

namespace dptune {

/// The canaries of one audit run.  Each is a Dirac canary: value · e_coordinate in the trainer's
/// parameter vector (the order of the released gradient sum), so canaries on distinct
/// coordinates are orthogonal and do not interfere.
struct BOOST_SYMBOL_VISIBLE GradientCanaries {
  /// Row indices (into the training set train() receives), ascending, that are placeholders.
  std::vector<std::size_t> rows;
  /// Per placeholder row: the coordinate of its gradient and its value (the norm is |value|,
  /// before the trainer clips it).
  std::vector<std::size_t> coordinates;
  std::vector<double> values;
  /// Called once per step with the noisy sum of clipped gradients the mechanism released.
  std::function<void(const std::vector<double>& released_sum)> observe;
};

/// Implemented by a TrainingContext that offers gradient canaries (only the audit's).
class BOOST_SYMBOL_VISIBLE GradientCanaryContext {
 public:
  virtual ~GradientCanaryContext();
  virtual const GradientCanaries& gradient_canaries() const = 0;
};

/// Implemented by a Trainer that honours GradientCanaryContext: its train() inserts the canaries
/// into its clipped-gradient sums and reports every released sum (see above).
class BOOST_SYMBOL_VISIBLE GradientCanaryTrainer {
 public:
  virtual ~GradientCanaryTrainer();
};

}  // namespace dptune
