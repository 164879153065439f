// dptune SDK: the ABI version.
//
// A plugin loads only into a host of the same ABI major and minor, built with the same C++ ABI
// (libstdc++ dual ABI and the compiler's __GXX_ABI_VERSION), because C++ types cross the boundary
// (after Falco's plugin API).  All of this is encoded in the exported alias *name*, in the ELF
// section "dptune", so the host reads it with boost::dll::library_info without running a single
// instruction of the plugin, and refuses any other plugin with a message naming both versions.
//
// 3.0 is everything the 2.x series (2.0 to 2.12) declared, as one contract with no compatibility
// layers, plus TuningResult::event (the composed event a private tuner released).  3.1 appends the
// event kind adaptive_repeat_and_select (Wang, Gao, Zhang, Su & Shen 2023, DP-HyPO).  3.2 appends
// the event kind discrete_gaussian_sum (Kairouz, Liu & Steinke 2021, the distributed discrete
// Gaussian) and its accessors DpEvent::summands() and DpEvent::dimension();
// Mechanism::release_refusal and Trainer::mechanism_releases (with DataShape and MechanismRelease):
// a release a mechanism refuses whatever the data is refused before any privacy is spent.  3.3
// keeps, in every DpEvent node, the kinds of its tree and its structural hash
// (DpEvent::contains, DpEvent::structural_hash): the accountants' questions about a trace of a
// million steps no longer walk it; and the gradient canary interfaces (gradient_canaries.hpp),
// through which `dptune audit trainer` inserts white-box canaries into a declaring trainer.  3.4
// appends DataScope::Kind::Subsample (DataScope::subsample): a uniform subsample of public size
// drawn by the data layout, for tuning on a subsample (Koskela & Kulkarni 2023).
//
// Until dptune 1.0 the ABI is unstable: any change to what crosses the boundary bumps the version
// and every plugin is rebuilt against the new SDK.  From 1.0 on, within a major a change will only
// append, and a plugin built for minor m will load and behave the same in every host of its major
// with minor >= m; docs/sdk-contract.md ("Versions") states that promise in full.
#pragma once

// <version> pulls in libstdc++'s c++config, which defines _GLIBCXX_USE_CXX11_ABI: without it, a
// plugin whose first include is this header would claim the old string ABI.
#include <version>

#define DPTUNE_ABI_MAJOR 3
#define DPTUNE_ABI_MINOR 4

#ifndef __GXX_ABI_VERSION
#error "dptune plugins need a compiler with the Itanium C++ ABI (g++ or clang++)"
#endif
#ifndef _GLIBCXX_USE_CXX11_ABI
#define DPTUNE_CXX11_ABI 0
#else
#define DPTUNE_CXX11_ABI _GLIBCXX_USE_CXX11_ABI
#endif

#define DPTUNE_VERSION_STRING "0.1.0"

namespace dptune {

inline constexpr int kAbiMajor = DPTUNE_ABI_MAJOR;
inline constexpr int kAbiMinor = DPTUNE_ABI_MINOR;
inline constexpr int kCxxAbiVersion = __GXX_ABI_VERSION;
inline constexpr int kCxx11StringAbi = DPTUNE_CXX11_ABI;
/// Name of the ELF section that holds every dptune export (at most 8 characters).
inline constexpr const char* kExportSection = "dptune";
/// Every exported alias starts with this; the whole name is
/// `dptune_v<major>_<minor>_cxx<gxx-abi>_<cxx11>_k_<kind>_n_<name>` (see DPTUNE_ALIAS_NAME).
inline constexpr const char* kExportPrefix = "dptune_v";

}  // namespace dptune
