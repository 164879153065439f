// The export name says mechanism 'alias_name' but the descriptor says 'descriptor_name': the host
// loads the library (its load marker appears: the positive control of the marker), then refuses it.
#include <vector>

#include "test_support.hpp"

DPTUNE_TEST_LOAD_MARKER("mismatch")

namespace {

class NullMechanism final : public dptune::Mechanism {
 public:
  explicit NullMechanism(const dptune::Params&) {}
  static dptune::ParamSchema schema() { return {}; }
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator&) const override {
    return {values.begin(), values.end()};
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::no_op(); }
};

dptune::PluginDescriptor mismatched_descriptor() {
  dptune::PluginDescriptor descriptor;
  descriptor.abi_major = DPTUNE_ABI_MAJOR;
  descriptor.abi_minor = DPTUNE_ABI_MINOR;
  descriptor.kind = dptune::PluginKind::Mechanism;
  descriptor.name = "descriptor_name";
  descriptor.schema = &NullMechanism::schema;
  descriptor.create = +[](const dptune::Params& params) -> std::unique_ptr<dptune::Plugin> {
    return std::make_unique<NullMechanism>(params);
  };
  return descriptor;
}

}  // namespace

static_assert(DPTUNE_ABI_MAJOR == 3 && DPTUNE_ABI_MINOR == 4, "update the export name below");
BOOST_DLL_ALIAS_SECTIONED(mismatched_descriptor,
                          DPTUNE_TEST_ALIAS_NAME(dptune_v3_4_cxx, __GXX_ABI_VERSION,
                                                 DPTUNE_CXX11_ABI, _k_mechanism_n_alias_name),
                          dptune)
