// Exports a plugin for ABI major 99: the host must reject it without loading the library, so its
// load marker must never appear.
#include "test_support.hpp"

DPTUNE_TEST_LOAD_MARKER("abi_major")

BOOST_DLL_ALIAS_SECTIONED(dptune_test::never_loaded_descriptor,
                          DPTUNE_TEST_ALIAS_NAME(dptune_v99_0_cxx, __GXX_ABI_VERSION,
                                                 DPTUNE_CXX11_ABI, _k_mechanism_n_abi_major),
                          dptune)
