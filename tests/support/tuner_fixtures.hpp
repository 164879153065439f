// The private tuners' test fixtures: a tuner plugin loaded through the host's registry, as the
// host loads it, and a scripted context on whole-data runs priced by the project's rdp accountant
// (train 1000 rows, 200 scored rows, accuracy of sensitivity 1/n unless told otherwise).
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "dptune/dptune.hpp"
#include "dptune/helpers/answer_cache.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/testing.hpp"
#include "rdp/calculator.hpp"

namespace dptune_test {

/// Tuner plugins scanned from their libraries; `tuner` creates one from the parameters given,
/// completed by its schema's defaults.
class LoadedTuners {
 public:
  LoadedTuners(std::string default_name, std::initializer_list<const char*> libraries)
      : default_name_(std::move(default_name)) {
    for (const char* library : libraries) registry.scan(library);
  }
  std::shared_ptr<dptune::Tuner> tuner(const std::string& name, const dptune::Params& given) {
    const auto* schema = registry.schema(dptune::host::ComponentKind::Tuner, name);
    REQUIRE(schema != nullptr);
    return registry.create_tuner(name, schema->complete(given));
  }
  std::shared_ptr<dptune::Tuner> tuner(const dptune::Params& given) {
    return tuner(default_name_, given);
  }

  dptune::host::PluginRegistry registry;

 private:
  std::string default_name_;
};

/// The rdp accountant with the host's answer cache (AnswerCache, as the host's accountant proxy
/// keeps answers in a study): a tuner test runs a tuner on many seeds, and each run prices the
/// same events again.  Pricing is a pure function of (event, δ or ε), so a kept answer is the
/// answer.  With the default options the cache is shared by every context of the executable.
class CachedRdpAccountant final : public dptune::Accountant {
 public:
  explicit CachedRdpAccountant(std::optional<dptune::rdp::Options> options)
      : adapter_(options.value_or(dptune::rdp::Options{})),
        cache_(options ? std::make_shared<dptune::AnswerCache>() : shared_cache()) {}
  std::string unsupported_reason(const dptune::DpEvent& event) const override {
    return adapter_.unsupported_reason(event);
  }
  dptune::PrivacyGuarantee epsilon(const dptune::DpEvent& event, double delta) const override {
    return cache_->get('e', event, delta, [&] { return adapter_.epsilon(event, delta); });
  }
  dptune::PrivacyGuarantee delta(const dptune::DpEvent& event, double epsilon) const override {
    return cache_->get('d', event, epsilon, [&] { return adapter_.delta(event, epsilon); });
  }

 private:
  static std::shared_ptr<dptune::AnswerCache> shared_cache() {
    static const auto cache = std::make_shared<dptune::AnswerCache>();
    return cache;
  }
  dptune::rdp::AccountantAdapter adapter_;
  std::shared_ptr<dptune::AnswerCache> cache_;
};

/// A context whose evaluator is scripted and whose accountant is the rdp accountant (its defaults
/// unless `options` says otherwise, answers kept: CachedRdpAccountant).  The scored split has
/// `scored_rows` rows; its utility has the sensitivity of accuracy (1/n) when `known_sensitivity`,
/// none the host knows otherwise.
class RdpTunerContext : public dptune::testing::StubTunerContext {
 public:
  RdpTunerContext(std::uint64_t seed, dptune::SearchSpace space,
                  dptune::testing::ScriptedEvaluator::UtilityFn utility,
                  std::size_t repetitions = 1,
                  std::optional<dptune::rdp::Options> options = std::nullopt)
      : StubTunerContext(std::move(space), seed),
        evaluator_(std::move(utility), repetitions),
        accountant_(std::move(options)) {}
  dptune::Evaluator& evaluator() override { return evaluator_; }
  const dptune::Accountant& accountant() const override { return accountant_; }
  dptune::DataSizes data_sizes() const override {
    dptune::DataSizes s;
    s.train = train_rows;
    s.validation = s.scored = scored_rows;
    s.varies_per_run = sizes_vary;
    return s;
  }
  dptune::UtilitySensitivity utility_sensitivity(std::size_t rows) const override {
    CHECK(rows == scored_rows);
    dptune::UtilitySensitivity s;
    s.utility = known_sensitivity ? "accuracy" : "mystery";
    if (known_sensitivity) s.per_record = 1.0 / static_cast<double>(rows);
    s.derivation = known_sensitivity ? "accuracy: 1/n" : "the host does not know 'mystery'";
    return s;
  }

  dptune::testing::ScriptedEvaluator evaluator_;
  CachedRdpAccountant accountant_;
  std::size_t train_rows = 1000, scored_rows = 200;
  bool known_sensitivity = true;
  bool sizes_vary = false;  // the data sizes differ from run to run
};

/// The repetition-family tests' trainer: its event depends on sigma (privacy-relevant), DP-SGD's
/// shape (20 steps of Poisson lots with q = 0.1).
inline dptune::DpEvent sgd_event_for(double sigma) {
  return dptune::DpEvent::self_composed(
      dptune::DpEvent::poisson_sampled(0.1, dptune::DpEvent::gaussian(sigma)), 20);
}

/// The repetition-family tests' grid: a log-scaled learning rate and sigma in {1, 2}.
inline dptune::SearchSpace lr_sigma_space() {
  dptune::SearchSpace s;
  s.add_float("lr", 0.001, 1.0, /*log=*/true);
  s.add_categorical("sigma", {dptune::Value{1.0}, dptune::Value{2.0}});
  return s;
}

/// True when one of the result's notes contains `text`.
inline bool has_note(const dptune::TuningResult& r, const std::string& text) {
  for (const auto& n : r.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace dptune_test
