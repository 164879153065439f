#include "plugins/plugin_proxies.hpp"

#include "base/interrupts.hpp"

#include <typeinfo>
#include <utility>

#include "dptune/gradient_canaries.hpp"
#include "dptune/helpers/answer_cache.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/params_rejected.hpp"
#include "dptune/model_files.hpp"

namespace dptune::host {

// The registry loads only plugins of the host's own ABI (major and minor, abi.hpp), so every
// slot the host calls exists in every plugin: no call depends on the plugin's version.

namespace dll = boost::dll;

LoadedLibrary::LoadedLibrary(std::filesystem::path path)
    : path_(std::move(path)),
      library_(path_, dll::load_mode::rtld_now | dll::load_mode::rtld_local) {}

dptune::PluginDescriptor (&LoadedLibrary::descriptor_function(const std::string& alias) const)() {
  return library_.get_alias<dptune::PluginDescriptor()>(alias);
}

std::string PluginOrigin::describe() const {
  return "plugin '" + plugin + "' (" + library->path().string() + ")";
}

void rethrow_as_plugin_error(const PluginOrigin& origin, const char* call) {
  const auto attributed = [&](const char* what) {
    return origin.describe() + " failed in " + call + ": " + what;
  };
  // After SIGINT/SIGTERM the evaluator's cancellation (host-owned Interrupted) unwinds through the
  // tuner: whatever the plugin made of it, the run was interrupted, not failed.
  if (const int signal_number = interrupt_signal()) throw Interrupted(signal_number);
  // Only exceptions whose dynamic type is the SDK's (or the host's) own pass through unchanged: an
  // object of a type defined in a plugin has its vtable in that plugin and must not outlive it.
  try {
    throw;
  } catch (const dptune::PluginError& e) {
    if (typeid(e) == typeid(dptune::PluginError)) throw;
    throw dptune::PluginError(attributed(e.what()));
  } catch (const dptune::ConfigError& e) {
    if (typeid(e) == typeid(dptune::ConfigError) || typeid(e) == typeid(ConfigDiagnostic)) throw;
    throw dptune::ConfigError(attributed(e.what()));
  } catch (const dptune::InvalidArgument& e) {
    // A constructor refusing its parameters is a configuration problem (exit code 2); anywhere
    // else an InvalidArgument is a failure of the plugin's call.
    if (std::string_view(call) == "create")
      throw ParamsRejected(attributed(e.what()), origin.plugin, e.what());
    throw dptune::PluginError(attributed(e.what()));
  } catch (const dptune::PrivacyError& e) {
    // Part of the Accountant contract ("throws PrivacyError when it cannot"): callers catch it by
    // type, so it keeps its type, now as a host-owned object with an attributed message.
    throw dptune::PrivacyError(attributed(e.what()));
  } catch (const std::exception& e) {
    throw dptune::PluginError(attributed(e.what()));
  } catch (...) {
    throw dptune::PluginError(attributed("unknown exception (not derived from std::exception)"));
  }
}

std::unique_ptr<dptune::Plugin> create_plugin_object(
    const PluginOrigin& origin, std::unique_ptr<dptune::Plugin> (*create)(const dptune::Params&),
    const dptune::Params& params) {
  auto object = guarded_call(origin, "create", [&] { return create(params); });
  if (!object) {
    throw dptune::PluginError(origin.describe() + " failed in create: it returned no object");
  }
  return object;
}

namespace {

/// What every proxy holds.  Member order matters: `origin_` (the library reference) is declared
/// first so that it is destroyed last, after the plugin object.
template <class Interface>
class ProxyBase {
 protected:
  ProxyBase(PluginOrigin origin, std::unique_ptr<dptune::Plugin> object, const char* interface)
      : origin_(std::move(origin)), object_(std::move(object)) {
    impl_ = dynamic_cast<Interface*>(object_.get());
    if (impl_ == nullptr) {
      // Destroy the object while the library is certainly loaded, then report.
      object_.reset();
      throw dptune::PluginError(origin_.describe() + " failed in create: the object it created " +
                                "does not implement " + interface);
    }
  }
  ~ProxyBase() { object_.reset(); }

  template <class Body>
  decltype(auto) call(const char* name, Body&& body) const {
    return guarded_call(origin_, name, std::forward<Body>(body));
  }

  PluginOrigin origin_;
  std::unique_ptr<dptune::Plugin> object_;
  Interface* impl_ = nullptr;
};

class MechanismProxy final : public dptune::Mechanism, ProxyBase<dptune::Mechanism> {
 public:
  MechanismProxy(PluginOrigin origin, std::unique_ptr<dptune::Plugin> object)
      : ProxyBase(std::move(origin), std::move(object), "Mechanism") {}

  std::vector<double> release(std::span<const double> values,
                              const dptune::Sensitivity& sensitivity,
                              dptune::RandomBitGenerator& rng) const override {
    return call("Mechanism::release", [&] { return impl_->release(values, sensitivity, rng); });
  }
  dptune::DpEvent event() const override {
    return call("Mechanism::event", [&] { return impl_->event(); });
  }
  std::string release_refusal(std::size_t count,
                              const dptune::Sensitivity& sensitivity) const override {
    return call("Mechanism::release_refusal",
                [&] { return impl_->release_refusal(count, sensitivity); });
  }
};

/// The accountant's answers are kept (dptune/helpers/answer_cache.hpp).
class AccountantProxy final : public dptune::Accountant, ProxyBase<dptune::Accountant> {
 public:
  AccountantProxy(PluginOrigin origin, std::unique_ptr<dptune::Plugin> object)
      : ProxyBase(std::move(origin), std::move(object), "Accountant") {}

  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    return call("Accountant::unsupported_reason", [&] { return impl_->unsupported_reason(event); });
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    return cache_.get('e', event, delta, [&] {
      return call("Accountant::epsilon", [&] { return impl_->epsilon(event, delta); });
    });
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    return cache_.get('d', event, epsilon, [&] {
      return call("Accountant::delta", [&] { return impl_->delta(event, epsilon); });
    });
  }

 private:
  mutable dptune::AnswerCache cache_;
};

class UtilityProxy final : public dptune::Utility, ProxyBase<dptune::Utility> {
 public:
  UtilityProxy(PluginOrigin origin, std::unique_ptr<dptune::Plugin> object)
      : ProxyBase(std::move(origin), std::move(object), "Utility") {}

  double score(std::span<const double> truth, const dptune::Predictions& predicted) const override {
    return call("Utility::score", [&] { return impl_->score(truth, predicted); });
  }
};

// A proxy is also a FileModel (a ModelFileLoader) so that the host can ask any model (trainer)
// through it; it answers for a plugin object that is not one as such an object would: no files
// (cannot load).
class ModelProxy final : public dptune::Model, public dptune::FileModel {
 public:
  ModelProxy(PluginOrigin origin, std::shared_ptr<const dptune::Model> model)
      : origin_(std::move(origin)), model_(std::move(model)) {}
  ~ModelProxy() override { model_.reset(); }

  dptune::Predictions predict(const dptune::Dataset& data) const override {
    return guarded_call(origin_, "Model::predict", [&] { return model_->predict(data); });
  }
  std::string describe() const override {
    return guarded_call(origin_, "Model::describe", [&] { return model_->describe(); });
  }
  std::optional<dptune::ModelExport> export_model() const override {
    return guarded_call(origin_, "Model::export_model", [&] { return model_->export_model(); });
  }
  dptune::ModelFiles model_files() const override {
    const auto* files = dynamic_cast<const dptune::FileModel*>(model_.get());
    if (files == nullptr) return {};
    return guarded_call(origin_, "FileModel::model_files", [&] { return files->model_files(); });
  }

 private:
  PluginOrigin origin_;                         // released last
  std::shared_ptr<const dptune::Model> model_;  // its control block, too, lives in the plugin
};

class TrainerProxy final : public dptune::Trainer,
                           public dptune::ModelFileLoader,
                           ProxyBase<dptune::Trainer> {
 public:
  TrainerProxy(PluginOrigin origin, std::unique_ptr<dptune::Plugin> object)
      : ProxyBase(std::move(origin), std::move(object), "Trainer") {}

  dptune::TrainedModel train(const dptune::Dataset& train,
                             dptune::TrainingContext& context) const override {
    dptune::TrainedModel result =
        call("Trainer::train", [&] { return impl_->train(train, context); });
    if (result.model) result.model = make_model_proxy(origin_, std::move(result.model));
    return result;
  }
  dptune::DpEvent event(std::size_t train_rows) const override {
    return call("Trainer::event", [&] { return impl_->event(train_rows); });
  }
  dptune::DpEvent exact_event(std::size_t train_rows, const dptune::Accountant& accountant,
                              double delta) const override {
    return call("Trainer::exact_event",
                [&] { return impl_->exact_event(train_rows, accountant, delta); });
  }
  std::optional<dptune::MechanismRequest> mechanism_request() const override {
    return call("Trainer::mechanism_request", [&] { return impl_->mechanism_request(); });
  }
  std::vector<dptune::MechanismRelease> mechanism_releases(
      const dptune::DataShape& shape) const override {
    return call("Trainer::mechanism_releases", [&] { return impl_->mechanism_releases(shape); });
  }
  bool takes_gradient_canaries() const {
    return dynamic_cast<const dptune::GradientCanaryTrainer*>(impl_) != nullptr;
  }
  std::shared_ptr<const dptune::Model> load_model(
      const dptune::ModelFiles& released) const override {
    const auto* loader = dynamic_cast<const dptune::ModelFileLoader*>(impl_);
    if (loader == nullptr)
      throw dptune::InvalidArgument(origin_.describe() +
                                    " keeps no models in files: it cannot load a released model");
    auto model = call("ModelFileLoader::load_model", [&] { return loader->load_model(released); });
    if (!model) throw dptune::PluginError(origin_.describe() + " loaded no model");
    return make_model_proxy(origin_, std::move(model));
  }
};

class TunerProxy final : public dptune::Tuner, ProxyBase<dptune::Tuner> {
 public:
  TunerProxy(PluginOrigin origin, std::unique_ptr<dptune::Plugin> object)
      : ProxyBase(std::move(origin), std::move(object), "Tuner") {}

  dptune::TuningResult tune(dptune::TunerContext& context) override {
    return call("Tuner::tune", [&] { return impl_->tune(context); });
  }
  void serve_peer(dptune::TunerContext& context) override {
    call("Tuner::serve_peer", [&] { impl_->serve_peer(context); });
  }
  std::optional<std::vector<dptune::DataScope>> rank_scopes(int rank, int ranks) const override {
    return call("Tuner::rank_scopes", [&] { return impl_->rank_scopes(rank, ranks); });
  }
  std::optional<dptune::DpEvent> worst_case_event(dptune::TunerContext& context,
                                                  bool distributed) const override {
    return call("Tuner::worst_case_event",
                [&] { return impl_->worst_case_event(context, distributed); });
  }
};

}  // namespace

std::shared_ptr<dptune::Mechanism> make_mechanism_proxy(PluginOrigin origin,
                                                        std::unique_ptr<dptune::Plugin> object) {
  return std::make_shared<MechanismProxy>(std::move(origin), std::move(object));
}
std::shared_ptr<dptune::Accountant> make_accountant_proxy(PluginOrigin origin,
                                                          std::unique_ptr<dptune::Plugin> object) {
  return std::make_shared<AccountantProxy>(std::move(origin), std::move(object));
}
std::shared_ptr<dptune::Utility> make_utility_proxy(PluginOrigin origin,
                                                    std::unique_ptr<dptune::Plugin> object) {
  return std::make_shared<UtilityProxy>(std::move(origin), std::move(object));
}
bool takes_gradient_canaries(const dptune::Trainer& trainer) {
  if (const auto* proxy = dynamic_cast<const TrainerProxy*>(&trainer))
    return proxy->takes_gradient_canaries();
  return dynamic_cast<const dptune::GradientCanaryTrainer*>(&trainer) != nullptr;
}
std::shared_ptr<dptune::Trainer> make_trainer_proxy(PluginOrigin origin,
                                                    std::unique_ptr<dptune::Plugin> object) {
  return std::make_shared<TrainerProxy>(std::move(origin), std::move(object));
}
std::shared_ptr<dptune::Tuner> make_tuner_proxy(PluginOrigin origin,
                                                std::unique_ptr<dptune::Plugin> object) {
  return std::make_shared<TunerProxy>(std::move(origin), std::move(object));
}
std::shared_ptr<const dptune::Model> make_model_proxy(PluginOrigin origin,
                                                      std::shared_ptr<const dptune::Model> model) {
  return std::make_shared<ModelProxy>(std::move(origin), std::move(model));
}

}  // namespace dptune::host
