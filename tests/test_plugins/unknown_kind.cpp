// Exports a plugin of a kind the host does not know: rejected before loading.
#include "test_support.hpp"

DPTUNE_TEST_LOAD_MARKER("unknown_kind")

static_assert(DPTUNE_ABI_MAJOR == 3 && DPTUNE_ABI_MINOR == 4, "update the export name below");
BOOST_DLL_ALIAS_SECTIONED(dptune_test::never_loaded_descriptor,
                          DPTUNE_TEST_ALIAS_NAME(dptune_v3_4_cxx, __GXX_ABI_VERSION,
                                                 DPTUNE_CXX11_ABI, _k_exporter_n_csv_export),
                          dptune)
