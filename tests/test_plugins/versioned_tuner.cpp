// A tuner built for every supported ABI minor (tests/test_plugins/CMakeLists.txt), run by
// tests/unit/abi_minor_test.cpp on this host through `dptune run`: each build uses what its minor
// declares, and says so in a note, so the test can check that every minor's plugin loads and runs
// and reaches exactly the calls of its minor:
//   2.1  the grid's first two candidates evaluated for a map;
//   2.2  also TunerContext::data_sizes (declared from 2.2 on);
//   2.3  also a note declared as a DP output (kDpOutputNote);
//   2.4  also calibrate_parameter through the pipeline's accountant;
//   2.9  also TunerContext::peers (none in one process);
//   2.10 also Tuner::rank_scopes (asked by abi_minor_test, not in one process);
//   2.11 also TunerContext::scopes_changed_by_one_record (the pipeline's iid clients: 1);
//   2.12 also Tuner::worst_case_event (asked by abi_minor_test: pure_dp(3) when distributed).
#include <cmath>
#include <string>

#include "dptune/calibration.hpp"
#include "dptune/tuning.hpp"
#include "test_support.hpp"

namespace {

class VersionedTuner final : public dptune::Tuner {
 public:
  explicit VersionedTuner(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    dptune::TuningResult result;
    auto candidates = context.space().grid(2);
    candidates.resize(2);
    result.trials = dptune::evaluate_for_map(context, candidates, "versioned");
    result.trusted_analyst_only = true;
    result.notes.push_back("built for ABI 2." + std::to_string(DPTUNE_PLUGIN_ABI_MINOR));
#if DPTUNE_PLUGIN_ABI_MINOR >= 2
    result.notes.push_back("data_sizes: scored " + std::to_string(context.data_sizes().scored));
#endif
#if DPTUNE_PLUGIN_ABI_MINOR >= 3
    result.notes.push_back(std::string(dptune::kDpOutputNote) + "nothing");
#endif
#if DPTUNE_PLUGIN_ABI_MINOR >= 4
    dptune::ParameterRange range;
    range.lower = 1;
    range.upper = 1000;
    range.integer = true;
    const auto c = dptune::calibrate_parameter(
        context.accountant(),
        [](double k) {
          return dptune::DpEvent::self_composed(dptune::DpEvent::approx_dp(0.1, 1e-9),
                                                static_cast<std::int64_t>(k));
        },
        2.0 + 1e-12, 1e-5, range);  // basic composition: 0.1 k <= 2 for k <= 20
    result.notes.push_back("calibrated count " + std::to_string(std::lround(c.value)));
#endif
#if DPTUNE_PLUGIN_ABI_MINOR >= 9
    // One process: the host offers no peers.
    result.notes.push_back(context.peers() ? "peers: some" : "peers: none");
#endif
#if DPTUNE_PLUGIN_ABI_MINOR >= 11
    result.notes.push_back(
        "clients changed by one record: " +
        std::to_string(context.scopes_changed_by_one_record(dptune::DataScope::client(0, 4))));
#endif
    return result;
  }
#if DPTUNE_PLUGIN_ABI_MINOR >= 10
  // Rank r > 0 of a distributed run evaluates client r - 1's shard only, rank 0 nothing
  // (abi_minor_test asks through the host's proxy).
  std::optional<std::vector<dptune::DataScope>> rank_scopes(int rank, int ranks) const override {
    std::vector<dptune::DataScope> scopes;
    if (rank > 0)
      scopes.push_back(dptune::DataScope::client(static_cast<std::size_t>(rank - 1),
                                                 static_cast<std::size_t>(ranks - 1)));
    return scopes;
  }
#endif
#if DPTUNE_PLUGIN_ABI_MINOR >= 12
  std::optional<dptune::DpEvent> worst_case_event(dptune::TunerContext&,
                                                  bool distributed) const override {
    if (!distributed) return std::nullopt;
    return dptune::DpEvent::pure_dp(3.0);
  }
#endif
};

}  // namespace

// One expansion level more, so that DPTUNE_TEST_TUNER_NAME becomes its value before DPTUNE_PLUGIN
// stringizes it.
#define DPTUNE_TEST_VERSIONED_TUNER(NAME) \
  DPTUNE_PLUGIN(tuner, NAME, VersionedTuner, "1.0.0", "test: a tuner built for one ABI minor")
DPTUNE_TEST_VERSIONED_TUNER(DPTUNE_TEST_TUNER_NAME)
