// dptune SDK: ABI version and the plugin export macro.
//
// Versioning rule (after Falco's plugin API): a plugin loads only into a host with the same ABI
// major and an ABI minor at least the plugin's, built with the same C++ ABI (libstdc++ dual ABI and
// the compiler's __GXX_ABI_VERSION), because C++ types cross the boundary.  All of this is encoded
// in the exported alias *name*, in the ELF section "dptune", so the host reads it with
// boost::dll::library_info without running a single instruction of the plugin.
//
// The rules for changing the SDK (what may be appended and how, how event kinds evolve, what a
// plugin and the host may assume of each other) are in docs/sdk-contract.md.  In short: within a
// major only append; bump DPTUNE_ABI_MINOR, declare what was appended under
// `#if DPTUNE_PLUGIN_ABI_MINOR >= minor`, and add the minor's line to the history below.
#pragma once

// <version> pulls in libstdc++'s c++config, which defines _GLIBCXX_USE_CXX11_ABI: without it, a
// plugin whose first include is this header would claim the old string ABI.
#include <version>

#define DPTUNE_ABI_MAJOR 2
#define DPTUNE_ABI_MINOR 12

// The ABI minor a plugin is built for: this SDK's minor unless the plugin's build defines it lower
// (e.g. -DDPTUNE_PLUGIN_ABI_MINOR=1), to make a plugin that also loads into older hosts of the same
// major.  The interfaces then lack what later minors appended (the `#if DPTUNE_PLUGIN_ABI_MINOR`
// blocks in plugin.hpp), exactly as the older SDK declared them, and the export name and
// descriptor claim that minor, so a newer host never calls what such a plugin does not have.
// Minor history (a major bump means a layout change: every plugin must be rebuilt):
//   2.0  PrivacyGuarantee::order (the winning Rényi order) changed PrivacyGuarantee's layout.
//   2.1  DpEvent::Kind::OneOf and RepeatUntilAccepted with DpEvent::one_of and
//        repeat_until_accepted (appended enumerators and static functions).
//   2.2  Trainer::exact_event (the exact event of a run that calibrates through the accountant)
//        and Model::export_model (the model as plain numbers), both appended virtuals; and
//        TunerContext::data_sizes and utility_sensitivity, appended virtuals with throwing
//        defaults.  Those two were appended while the minor was still 1 (so an early 2.1 host
//        lacks their slots) and were visible to plugins built for 2.1 until ABI 2.4's SDK
//        declared them from 2.2 on (#if DPTUNE_PLUGIN_ABI_MINOR >= 2): every 2.2 host has them.
//   2.3  the neighbouring relation: DpEvent::Kind::ReplaceOne and DpEvent::replace_one (appended
//        enumerator and static function), Neighbouring, neighbouring_of, restated_for (new free
//        functions).  Layouts unchanged.  A 2.2 plugin's leaf events keep their meaning (stated
//        for add/remove), so a 2.2 accountant sees ReplaceOne only from a 2.3 pipeline and
//        refuses it as an unknown kind.  kDpOutputNote, the prefix of a TuningResult note that
//        declares a DP output (a constant: no symbol).  Exact integer samplers (discrete.hpp:
//        uniform_below, bernoulli_exp, discrete_laplace, discrete_gaussian; new free functions).
//   2.4  calibrate_parameter with ParameterRange and ParameterCalibration (calibration.hpp; a new
//        free function and new value types).  Layouts unchanged.
//   2.5  grid releases with exact discrete noise (grid_noise.hpp: laplace_grid, gaussian_grid,
//        grid_laplace, grid_gaussian, grid_laplace_scale, grid_gaussian_variance and the value
//        type GridNoiseParameter; new free functions).  Layouts unchanged.
//   2.6  Trainer::mechanism_request with the value type MechanismRequest: what train() asks of the
//        pipeline's mechanism, so the host can check the mechanism before any data is touched
//        (an appended virtual with a default; the host calls it only on plugins of ABI >= 2.6).
//   2.7  32-bit shared feature rows: FloatRows (data.hpp; a new value type), the free function
//        as_float_rows, and Dataset::float_rows, a member APPENDED after every member of 2.6's
//        Dataset.  Why appending is safe here: plugins only ever read a Dataset the host made
//        (Trainer::train's and Model::predict's arguments, by const reference), so a plugin of
//        minor <= 6 reads the unchanged prefix of a larger object; nothing passes a plugin-made
//        Dataset to the host.  What the host hands a plugin depends on the plugin's minor
//        (PluginOrigin::abi_minor, in the trainer and model proxies): minor >= 7 gets
//        `float_rows` filled and `features` empty (views into one storage: no copy per trial or
//        thread); minor <= 6 gets `features` filled with the same values as doubles (a copy per
//        call, made by the proxy), exactly as before.  A 2.7 plugin reads features through
//        as_float_rows(data), which also accepts a double-only Dataset it or a test made.
//   2.8  DpEvent::Kind::DiscreteGaussian and DpEvent::discrete_gaussian (appended enumerator and
//        static function): exact discrete Gaussian noise, priced by its own theorems (at integer
//        Rényi orders when subsampled) instead of as the continuous Gaussian.  Layouts unchanged;
//        an accountant of minor <= 7 refuses the kind as unknown.
//   2.9  Messages between the processes of a distributed run (plugin.hpp): the value type
//        PeerMessage and the interface PeerChannel, TunerContext::peers (an appended virtual;
//        null in one process) and Tuner::serve_peer (an appended virtual: a tuner's part on a
//        rank other than 0, e.g. DP-Hype's clients).  The host calls serve_peer only on tuners of
//        ABI >= 2.9 (the tuner proxy); a tuner of minor <= 8 never sees peers().
//        Later, header only (no symbol, so no new minor): event_kinds.hpp, the table of DpEvent
//        kinds with internal linkage; a plugin that uses it loads into every 2.9 host.
//   2.10 Tuner::rank_scopes (an appended virtual with a default): the data scopes a tuner
//        evaluates on each rank of a distributed run, so that a rank keeps only those scopes'
//        rows (DP-Hype's clients: each rank holds its own clients' shards).  The host calls it
//        only on tuners of ABI >= 2.10 (the tuner proxy); an older tuner's ranks hold the whole
//        data, as before.
//        Later, without a new minor: the helpers (Pareto, repetition maths, calibration, the
//        samplers, evaluate_for_map) moved to libdptune_helpers (dptune::helpers, headers in
//        include/dptune/helpers/, with the header-only reader of trials.csv, trials_csv.hpp);
//        libdptune_sdk still exports every helper symbol of 2.1-2.10 and the old header paths
//        forward, so plugins built before the split load unchanged.  New helpers (the analytic
//        Gaussian, one_of_distinct) are in libdptune_helpers only.  Accountant::supports, an
//        inline non-virtual member (no slot, no symbol), names what an empty
//        unsupported_reason means.
//   2.11 TunerContext::scopes_changed_by_one_record (an appended virtual whose default throws):
//        how many scopes of a layout one record's replacement can change — 2 for Dirichlet client
//        shards by label, 1 otherwise — so that a client-level guarantee (DP-Hype) can be priced
//        for one record by group privacy.  A plugin of minor <= 10 never calls it.
//   2.12 Declared properties (traits.hpp: TunerTraits, TrainerTraits, UtilityTraits,
//        PluginTraits; value types) and PluginDescriptor::traits, a member APPENDED after every
//        member of 2.11's descriptor, which DPTUNE_PLUGIN fills from the class's static
//        traits().  The host reads it only from plugins of minor >= 12; an older plugin, like a
//        2.12 plugin without traits(), declares nothing and is held to the safe defaults (a
//        tuner is private: docs/sdk-contract.md, "Declared properties").
//        and DpEvent::Kind::DiscreteGaussianOnGrid, DpEvent::discrete_gaussian_on_grid and
//        DpEvent::min_scale (appended enumerator, static function and accessor): discrete
//        Gaussian noise whose scale in lattice units is at least min_scale, which lets `pld` and
//        the fractional Rényi orders price it through the continuous Gaussian plus an explicit
//        additive δ (docs/accounting.md).  Layouts unchanged; an accountant of minor <= 11
//        refuses the kind as unknown.
//        and Tuner::worst_case_event (an appended virtual with a default): the worst case of a
//        tuner's final guarantee, stated before any evaluation, which the host reserves in the
//        ledger beside the dry run's charge.  The host calls it only on tuners of ABI >= 2.12
//        (the tuner proxy); an older tuner states none (no supplement reserved).
// The host itself is always built with the SDK's minor.
#ifndef DPTUNE_PLUGIN_ABI_MINOR
#define DPTUNE_PLUGIN_ABI_MINOR DPTUNE_ABI_MINOR
#endif
#if DPTUNE_PLUGIN_ABI_MINOR < 1 || DPTUNE_PLUGIN_ABI_MINOR > DPTUNE_ABI_MINOR
#error "DPTUNE_PLUGIN_ABI_MINOR must be between 1 and DPTUNE_ABI_MINOR"
#endif

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
/// The minor this translation unit's plugin exports (kAbiMinor unless built for an older host).
inline constexpr int kPluginAbiMinor = DPTUNE_PLUGIN_ABI_MINOR;
inline constexpr int kCxxAbiVersion = __GXX_ABI_VERSION;
inline constexpr int kCxx11StringAbi = DPTUNE_CXX11_ABI;
/// Name of the ELF section that holds every dptune export (at most 8 characters).
inline constexpr const char* kExportSection = "dptune";
/// Every exported alias starts with this; the whole name is
/// `dptune_v<major>_<minor>_cxx<gxx-abi>_<cxx11>_k_<kind>_n_<name>` (see DPTUNE_ALIAS_NAME).
inline constexpr const char* kExportPrefix = "dptune_v";

}  // namespace dptune
