// Exports a plugin of another ABI minor (99): rejected before loading, as every plugin of an ABI
// other than the host's is until 1.0.
#include "test_support.hpp"

DPTUNE_TEST_LOAD_MARKER("abi_minor")

static_assert(DPTUNE_ABI_MAJOR == 3, "update the export name below");
BOOST_DLL_ALIAS_SECTIONED(dptune_test::never_loaded_descriptor,
                          DPTUNE_TEST_ALIAS_NAME(dptune_v3_99_cxx, __GXX_ABI_VERSION,
                                                 DPTUNE_CXX11_ABI, _k_mechanism_n_abi_minor),
                          dptune)
