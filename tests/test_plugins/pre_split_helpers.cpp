// A tuner written and linked as plugins were before the SDK's helpers moved into their own library
// (dptune::helpers): it includes the helpers' old header paths, links libdptune_sdk only (no
// dptune::helpers; tests/test_plugins/CMakeLists.txt), and calls one function of every moved
// helper family.  tests/unit/abi_minor_test.cpp checks that its only dptune library is
// libdptune_sdk and that it loads and runs on this host, each note carrying a value fixed by
// closed form, so every moved symbol was resolved from libdptune_sdk and ran.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dptune/calibration.hpp"
#include "dptune/discrete.hpp"
#include "dptune/grid_noise.hpp"
#include "dptune/pareto.hpp"
#include "dptune/repetition.hpp"
#include "dptune/tuning.hpp"
#include "test_support.hpp"

namespace {

std::string text(double x) { return std::to_string(x); }

class PreSplitHelpers final : public dptune::Tuner {
 public:
  explicit PreSplitHelpers(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    dptune::TuningResult result;
    auto candidates = context.space().grid(2);
    candidates.resize(2);
    result.trials = dptune::evaluate_for_map(context, candidates, "pre-split");  // tuning.hpp
    result.trusted_analyst_only = true;
    // pareto.hpp: the staircase (1,3), (2,2), (3,1) under (4,4) covers 1 + 2 + 3.
    const std::vector<dptune::Point> points{{1, 3}, {2, 2}, {3, 1}, {3, 3}};
    result.notes.push_back("hypervolume " + text(dptune::hypervolume(points, {4, 4})));
    result.notes.push_back("front size " + std::to_string(dptune::pareto_front(points).size()));
    // repetition.hpp: the geometric distribution (η = 1) with E[K] = 10 has γ = 1/10.
    const auto geometric = dptune::RepetitionDistribution::from_mean(10, 1);
    result.notes.push_back("geometric pmf(1) " + text(geometric.pmf(1)));
    // calibration.hpp: basic composition of 0.1-DP steps reaches ε = 2 at 20 steps.
    dptune::ParameterRange range;
    range.lower = 1;
    range.upper = 1000;
    range.integer = true;
    const auto steps = dptune::calibrate_parameter(
        context.accountant(),
        [](double k) {
          return dptune::DpEvent::self_composed(dptune::DpEvent::approx_dp(0.1, 1e-9),
                                                static_cast<std::int64_t>(k));
        },
        2.0 + 1e-12, 1e-5, range);
    result.notes.push_back("calibrated count " + std::to_string(std::lround(steps.value)));
    // discrete.hpp: a uniform draw below 1 is 0 and reads no bits.
    result.notes.push_back("uniform_below(1) " +
                           std::to_string(dptune::uniform_below(context.rng(), 1)));
    // grid_noise.hpp: no noise (multiplier 0) returns the value unchanged on the unit grid.
    const double value[1] = {3.5};
    const double grid = dptune::laplace_grid(1.0, 0.0, 1);
    result.notes.push_back("grid release " +
                           text(dptune::grid_laplace(value, 1.0, 0.0, grid, context.rng()).at(0)));
    return result;
  }
};

}  // namespace

DPTUNE_PLUGIN(tuner, pre_split_helpers, PreSplitHelpers, "1.0.0",
              "test: a tuner that calls the SDK's helpers as plugins built before the split did")
