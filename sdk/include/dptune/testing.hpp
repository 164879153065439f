// dptune SDK test kit: the test doubles a plugin's own tests need, so that dptune's tests and a
// third-party plugin's tests share one copy (header-only; not part of the plugin contract and
// never loaded by the host).
//
//  * NullProgress       a ProgressSink that goes nowhere.
//  * StubTunerContext   a TunerContext with a real search space, δ, a seeded xoshiro256** stream,
//                       quiet progress and a serial parallel_for; a test derives from it and gives
//                       the evaluator and accountant (and a mechanism, sizes, or a utility
//                       sensitivity where its tuner asks for them).
//  * integer_choices    a search space of one categorical dimension with the choices 0..count-1.
//  * draw_releases      n independent releases of one value by a mechanism, for distribution
//                       checks of a mechanism plugin
//                       (examples/third_party_plugin/geometric_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/plugin.hpp"
#include "dptune/rng.hpp"
#include "dptune/search_space.hpp"

namespace dptune::testing {

class NullProgress final : public ProgressSink {
 public:
  void start(std::string_view, std::size_t) override {}
  void advance(std::size_t, std::optional<double>) override {}
  void message(std::string_view) override {}
};

/// The parts of a tuner's context that tests rarely vary.  `mechanism` refuses (as a host whose
/// pipeline names none); `data_sizes` and `utility_sensitivity` keep the SDK's defaults ("not
/// provided by this host") unless a test overrides them.
class StubTunerContext : public TunerContext {
 public:
  explicit StubTunerContext(SearchSpace space, std::uint64_t seed, double delta = 1e-5)
      : space_(std::move(space)), rng_(seed), delta_(delta) {}
  const SearchSpace& space() const override { return space_; }
  double delta() const override { return delta_; }
  std::shared_ptr<const Mechanism> mechanism(const Params&) override {
    throw ConfigError("test context: the pipeline names no mechanism");
  }
  ProgressSink& progress() override { return progress_; }
  RandomBitGenerator& rng() override { return rng_; }
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) override {
    for (std::size_t i = 0; i < n; ++i) body(i);
  }

 protected:
  SearchSpace& mutable_space() { return space_; }

 private:
  SearchSpace space_;
  NullProgress progress_;
  Xoshiro256 rng_;
  double delta_;
};

/// A search space of one categorical dimension `name` with the integer choices 0, 1, …, count − 1.
inline SearchSpace integer_choices(const std::string& name, std::int64_t count) {
  SearchSpace space;
  std::vector<Value> choices;
  for (std::int64_t c = 0; c < count; ++c) choices.emplace_back(c);
  space.add_categorical(name, choices);
  return space;
}

/// `n` releases of the single value `value` with sensitivity `sensitivity`, each drawn by its own
/// call to `mechanism.release` from `rng`.
inline std::vector<double> draw_releases(const Mechanism& mechanism, double value,
                                         const Sensitivity& sensitivity, std::size_t n,
                                         RandomBitGenerator& rng) {
  std::vector<double> out;
  out.reserve(n);
  const double values[1] = {value};
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<double> released = mechanism.release(values, sensitivity, rng);
    if (released.size() != 1)
      throw PluginError("draw_releases: the mechanism released " + std::to_string(released.size()) +
                        " values for one");
    out.push_back(released.front());
  }
  return out;
}

}  // namespace dptune::testing
