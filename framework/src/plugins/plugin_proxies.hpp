// dptune host, internal: a loaded plugin library and the proxies that stand between the host and
// the objects a plugin creates.
//
// A proxy implements the same interface as the plugin object it wraps and
//  * keeps the plugin's library loaded for as long as the proxy lives: it holds a shared_ptr to the
//    LoadedLibrary, declared before the wrapped object so that the object (whose destructor and
//    vtable live in the library) is destroyed first and the library reference is released last;
//  * turns every exception that leaves plugin code into a host-owned dptune::PluginError naming the
//    plugin, its library file and the call, copying the message while the library is still loaded.
//    A PluginError or ConfigError of exactly the SDK's (or host's) type passes through unchanged:
//    it is already attributed (a nested plugin called back through the host) or is a host config
//    error.  A PrivacyError (the Accountant contract's "cannot account this") keeps its type: it is
//    rethrown as a new host-owned PrivacyError with the attributed message.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

// Boost.DLL 1.74 with BOOST_DLL_USE_STD_FS misses some includes: <vector> first.
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "dptune/plugin.hpp"

namespace dptune::host {

/// One dlopen()ed plugin library (rtld_now | rtld_local); unloaded when the last reference goes.
class LoadedLibrary {
 public:
  /// Loads `path` (absolute).  Throws std::exception (with the dlerror text) on failure.
  explicit LoadedLibrary(std::filesystem::path path);
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// The function an alias in the library's "dptune" section points to.
  dptune::PluginDescriptor (&descriptor_function(const std::string& alias) const)();

 private:
  std::filesystem::path path_;
  boost::dll::shared_library library_;
};

/// Which plugin a call goes to, for messages, and the library that must stay loaded.
struct PluginOrigin {
  std::string plugin;                      // the plugin's name
  std::shared_ptr<LoadedLibrary> library;  // never null

  /// "plugin 'NAME' (LIBRARY PATH)"
  std::string describe() const;
};

/// Must be called from inside a catch block: rethrows the current exception as the host's contract
/// says (PluginError / ConfigError of the exact SDK or host type unchanged, PrivacyError as an
/// attributed PrivacyError, everything else as PluginError "plugin 'NAME' (PATH) failed in CALL:
/// what").
[[noreturn]] void rethrow_as_plugin_error(const PluginOrigin& origin, const char* call);

/// Runs `body` (a call into plugin code) and contains its exceptions.
template <class Body>
decltype(auto) guarded_call(const PluginOrigin& origin, const char* call, Body&& body) {
  try {
    return body();
  } catch (...) {
    rethrow_as_plugin_error(origin, call);
  }
}

/// Calls `create(params)` (guarded, call name "create").  Throws PluginError when it throws or
/// returns null.
std::unique_ptr<dptune::Plugin> create_plugin_object(
    const PluginOrigin& origin, std::unique_ptr<dptune::Plugin> (*create)(const dptune::Params&),
    const dptune::Params& params);

// Each make_*_proxy takes an object from create_plugin_object and throws PluginError ("failed in
// create: ... does not implement ...") when it is not of the expected interface.
std::shared_ptr<dptune::Mechanism> make_mechanism_proxy(PluginOrigin origin,
                                                        std::unique_ptr<dptune::Plugin> object);
std::shared_ptr<dptune::Accountant> make_accountant_proxy(PluginOrigin origin,
                                                          std::unique_ptr<dptune::Plugin> object);
std::shared_ptr<dptune::Utility> make_utility_proxy(PluginOrigin origin,
                                                    std::unique_ptr<dptune::Plugin> object);
/// Whether the trainer (through its proxy: the plugin's object) implements
/// dptune::GradientCanaryTrainer (dptune/gradient_canaries.hpp), which only `dptune audit
/// trainer --canary-kind gradient` asks.
bool takes_gradient_canaries(const dptune::Trainer& trainer);
std::shared_ptr<dptune::Trainer> make_trainer_proxy(PluginOrigin origin,
                                                    std::unique_ptr<dptune::Plugin> object);
std::shared_ptr<dptune::Tuner> make_tuner_proxy(PluginOrigin origin,
                                                std::unique_ptr<dptune::Plugin> object);
/// Wraps a Model returned by a trainer plugin (its code lives in that plugin's library).
std::shared_ptr<const dptune::Model> make_model_proxy(PluginOrigin origin,
                                                      std::shared_ptr<const dptune::Model> model);

}  // namespace dptune::host
