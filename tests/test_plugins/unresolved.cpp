// A well-formed export whose library cannot be loaded: it needs a symbol nobody defines, so
// dlopen(RTLD_NOW) fails and the host records dlerror's text.
#include <vector>

#include "dptune/plugin.hpp"

extern "C" double dptune_test_symbol_nobody_defines(double);

namespace {

class UnresolvedMechanism final : public dptune::Mechanism {
 public:
  explicit UnresolvedMechanism(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator&) const override {
    std::vector<double> out(values.begin(), values.end());
    for (double& value : out) value = dptune_test_symbol_nobody_defines(value);
    return out;
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::no_op(); }
};

}  // namespace

DPTUNE_PLUGIN(mechanism, test_unresolved, UnresolvedMechanism, "0.1.0", "test: cannot load")
