// Shared helpers of the trainer tests: synthetic data on the SDK samplers, a scripted
// TrainingContext, and the built plugins loaded through the host's registry.
#pragma once

#include <memory>
#include <vector>

#include "dptune/dptune.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace trainer_tests {

/// `classes` Gaussian blobs in `d` dimensions, unit variance, centres drawn N(0, separation²).
dptune::Dataset blobs(std::size_t n, std::size_t d, std::size_t classes, double separation,
                      std::uint64_t seed);
/// Rows [begin, end) of data.
dptune::Dataset slice(const dptune::Dataset& data, std::size_t begin, std::size_t end);
double accuracy(const dptune::Dataset& data, const dptune::Predictions& p);

const dptune::host::PluginRegistry& registry();
std::shared_ptr<dptune::Trainer> trainer(const std::string& name, const dptune::Params& params);
std::shared_ptr<dptune::Mechanism> mechanism(const std::string& name, const dptune::Params& params);
std::shared_ptr<dptune::Accountant> accountant(const std::string& name);
std::shared_ptr<dptune::Utility> utility(const std::string& name, const dptune::Params& params);

/// `event` as a run reports it when its Gaussian noise comes from the `gaussian` mechanism under
/// `noise: secure` (the default): every gaussian leaf is the discrete Gaussian of the same σ.
/// Built from the event's text, independently of the host's MechanismNoise.
dptune::DpEvent secure_noise(const dptune::DpEvent& event);

/// A mechanism that records its calls; adds no noise (or delegates to `inner` when given).
class RecordingMechanism final : public dptune::Mechanism {
 public:
  RecordingMechanism(dptune::DpEvent event, std::shared_ptr<const dptune::Mechanism> inner = {})
      : event_(std::move(event)), inner_(std::move(inner)) {}
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    ++calls;
    sensitivities.push_back(s.l2);
    if (inner_) return inner_->release(values, s, rng);
    return {values.begin(), values.end()};
  }
  dptune::DpEvent event() const override { return event_; }
  mutable std::size_t calls = 0;
  mutable std::vector<double> sensitivities;

 private:
  dptune::DpEvent event_;
  std::shared_ptr<const dptune::Mechanism> inner_;
};

/// A TrainingContext whose mechanism is made by `make(noise_multiplier)`.
class ScriptedContext final : public dptune::TrainingContext {
 public:
  using Factory = std::function<std::shared_ptr<const dptune::Mechanism>(double)>;
  ScriptedContext(std::uint64_t seed, Factory make, const dptune::Accountant* accountant = nullptr,
                  double delta = 1e-5, bool private_run = true)
      : rng_(seed),
        make_(std::move(make)),
        accountant_(accountant),
        delta_(delta),
        private_run_(private_run) {}
  dptune::RandomBitGenerator& rng() override { return rng_; }
  std::shared_ptr<const dptune::Mechanism> mechanism(const dptune::Params& overrides) override {
    requested.push_back(overrides.get_double("noise_multiplier"));
    return make_(requested.back());
  }
  const dptune::Accountant& accountant() const override {
    if (!accountant_) throw dptune::Error("no accountant in this test");
    return *accountant_;
  }
  double delta() const override { return delta_; }
  bool private_run() const override { return private_run_; }
  std::vector<double> requested;  // noise multipliers asked for

 private:
  dptune::Xoshiro256 rng_;
  Factory make_;
  const dptune::Accountant* accountant_;
  double delta_;
  bool private_run_;
};

}  // namespace trainer_tests
