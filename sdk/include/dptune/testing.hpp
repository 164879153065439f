// dptune SDK test kit: the test doubles a plugin's own tests need, so that dptune's tests and a
// third-party plugin's tests share one copy (header-only; not part of the plugin contract and
// never loaded by the host).
//
//  * NullProgress       a ProgressSink that goes nowhere.
//  * ScriptedEvaluator  an Evaluator whose runs' utilities and events are functions the test
//                       gives, answered as the host answers (R repetitions, statistics, the
//                       accountant's price, non-private runs), with every request recorded.
//  * StubTunerContext   a TunerContext with a real search space, δ, a seeded xoshiro256** stream,
//                       quiet progress and a serial parallel_for; a test derives from it and gives
//                       the evaluator and accountant (and a mechanism, sizes, or a utility
//                       sensitivity where its tuner asks for them).
//  * integer_choices    a search space of one categorical dimension with the choices 0..count-1.
//  * draw_releases      n independent releases of one value by a mechanism, for distribution
//                       checks of a mechanism plugin
//                       (examples/third_party_plugin/geometric_test.cpp).
//  * check_accountant   the conformance checks of an accountant plugin (testing_accountant.hpp;
//                       `dptune check accountant NAME` runs them on a loaded plugin).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/plugin.hpp"
#include "dptune/rng.hpp"
#include "dptune/search_space.hpp"
#include "dptune/testing_accountant.hpp"

namespace dptune::testing {

class NullProgress final : public ProgressSink {
 public:
  void start(std::string_view, std::size_t) override {}
  void advance(std::size_t, std::optional<double>) override {}
  void message(std::string_view) override {}
};

/// An Evaluator for a tuner's tests: `utility(request, run)` scores run `run` (0-based) of a
/// request and `event(candidate, scope)` is what one private run does (default: nothing private).
/// It answers as the host's evaluator does: a request's repetitions 0 means the pipeline's R
/// (`default_repetitions`); mean, min and max summarise the runs; a private run carries its event
/// priced by `accountant` at `delta` when one is given, a non-private run DpEvent::non_private()
/// with ε = ∞ and δ = 1.  `seconds` of a request is `seconds_per_run` times the runs made so far,
/// this request's included: run times that differ from call to call, so a test sees one leak into
/// a released output.  Thread-safe, as the contract asks.
class ScriptedEvaluator : public Evaluator {
 public:
  using UtilityFn = std::function<double(const EvaluationRequest& request, std::size_t run)>;
  using EventFn = std::function<DpEvent(const Params& candidate, const DataScope& scope)>;

  explicit ScriptedEvaluator(UtilityFn utility, std::size_t default_repetitions = 1)
      : utility_(std::move(utility)), default_repetitions_(default_repetitions) {}

  EventFn event = [](const Params&, const DataScope&) { return DpEvent::non_private(); };
  const Accountant* accountant = nullptr;
  double delta = 1e-5;
  double seconds_per_run = 0;
  /// Every call's requests, in call order (read it once the tuner has returned).
  std::vector<std::vector<EvaluationRequest>> batches;

  std::vector<Evaluation> evaluate(const std::vector<EvaluationRequest>& requests) override {
    std::vector<Evaluation> out;
    out.reserve(requests.size());
    for (const auto& request : requests) out.push_back(run(request));
    const std::lock_guard lock(mutex_);
    batches.push_back(requests);
    for (auto& e : out) {
      runs_ += e.request.repetitions;
      e.seconds = seconds_per_run * static_cast<double>(runs_);
    }
    return out;
  }
  DpEvent event_of(const Params& candidate, const DataScope& scope) const override {
    return event(candidate, scope);
  }
  std::size_t default_repetitions() const override { return default_repetitions_; }

  /// Runs made so far (each request's repetitions, R for 0).
  std::size_t runs() const {
    const std::lock_guard lock(mutex_);
    return runs_;
  }
  /// Requests made so far for which `which` holds.
  std::size_t requests(const std::function<bool(const EvaluationRequest&)>& which) const {
    const std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& batch : batches)
      n += static_cast<std::size_t>(std::count_if(batch.begin(), batch.end(), which));
    return n;
  }

 private:
  Evaluation run(const EvaluationRequest& request) const {
    Evaluation e;
    e.request = request;
    e.request.repetitions = request.repetitions ? request.repetitions : default_repetitions_;
    for (std::size_t i = 0; i < e.request.repetitions; ++i)
      e.utilities.push_back(utility_(e.request, i));
    if (e.utilities.empty()) throw InvalidArgument("ScriptedEvaluator: a request of no runs");
    e.utility_min = *std::min_element(e.utilities.begin(), e.utilities.end());
    e.utility_max = *std::max_element(e.utilities.begin(), e.utilities.end());
    e.utility_mean = std::clamp(std::accumulate(e.utilities.begin(), e.utilities.end(), 0.0) /
                                    static_cast<double>(e.utilities.size()),
                                e.utility_min, e.utility_max);
    if (!request.private_run) {
      e.event = DpEvent::non_private();
      e.privacy.epsilon = std::numeric_limits<double>::infinity();
      e.privacy.delta = 1;
      e.privacy.derivation = "non-private run: no guarantee";
    } else {
      e.event = event(request.candidate, request.scope);
      if (accountant) e.privacy = accountant->epsilon(e.event, delta);
    }
    return e;
  }

  UtilityFn utility_;
  std::size_t default_repetitions_;
  mutable std::mutex mutex_;
  std::size_t runs_ = 0;
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
