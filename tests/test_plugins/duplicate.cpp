// Compiled twice (DPTUNE_TEST_DUPLICATE_VERSION differs): two libraries exporting the same
// mechanism.
#include <vector>

#include "dptune/plugin.hpp"

namespace {

class DuplicateMechanism final : public dptune::Mechanism {
 public:
  explicit DuplicateMechanism(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator&) const override {
    return {values.begin(), values.end()};
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::no_op(); }
};

}  // namespace

DPTUNE_PLUGIN(mechanism, test_duplicate, DuplicateMechanism, DPTUNE_TEST_DUPLICATE_VERSION,
              "test: exported by two libraries")
