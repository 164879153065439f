// Exports a plugin whose name claims the other libstdc++ string ABI: rejected before loading.
#include "test_support.hpp"

DPTUNE_TEST_LOAD_MARKER("cxx_abi")

#if DPTUNE_CXX11_ABI
#define DPTUNE_TEST_OTHER_CXX11_ABI 0
#else
#define DPTUNE_TEST_OTHER_CXX11_ABI 1
#endif

static_assert(DPTUNE_ABI_MAJOR == 3 && DPTUNE_ABI_MINOR == 4, "update the export name below");
BOOST_DLL_ALIAS_SECTIONED(dptune_test::never_loaded_descriptor,
                          DPTUNE_TEST_ALIAS_NAME(dptune_v3_4_cxx, __GXX_ABI_VERSION,
                                                 DPTUNE_TEST_OTHER_CXX11_ABI,
                                                 _k_mechanism_n_cxx_abi),
                          dptune)
