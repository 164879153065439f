#include "calibrate.hpp"

#include <cmath>
#include <iostream>

#include "cli_common.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/json.hpp"
#include "dptune/params.hpp"

namespace dptune::cli {

namespace {
using K = DpEvent::Kind;

ParameterRange range_of(double lower, double upper, bool integer) {
  ParameterRange r;
  r.lower = lower;
  r.upper = upper;
  r.integer = integer;
  return r;
}

std::vector<DpEvent> children_with(const DpEvent& e, const std::string& field, double value,
                                   int& hits) {
  std::vector<DpEvent> out;
  out.reserve(e.events().size());
  for (const auto& child : e.events()) out.push_back(with_field(child, field, value, hits));
  return out;
}

/// `current` replaced by `value` when `field` is `name` (one more hit).
double pick(const std::string& field, const char* name, double current, double value, int& hits) {
  if (field != name) return current;
  ++hits;
  return value;
}
}  // namespace

CalibratedField calibrated_field(const std::string& name) {
  // Ranges wide enough for any realistic use; the accountant decides within them.
  if (name == "noise_multiplier") return {name, range_of(1e-3, 1e6, false)};
  if (name == "count") return {name, range_of(1, 1e12, true)};
  if (name == "sample_size") return {name, range_of(1, 1e12, true)};
  if (name == "rate" || name == "stop_probability") return {name, range_of(1e-12, 1, false)};
  // The truncated negative binomial needs a mean above 1 (K ≥ 1 always).
  if (name == "mean") return {name, range_of(1 + 1e-6, 1e9, false)};
  if (name == "epsilon") return {name, range_of(1e-9, 1e4, false)};
  if (name == "rho") return {name, range_of(1e-12, 1e6, false)};
  throw UsageError("--calibrate " + name +
                   ": not a calibratable field; event fields: noise_multiplier, count, "
                   "sample_size, rate, stop_probability, mean, epsilon, rho (with the DP-SGD "
                   "shortcut: noise_multiplier, steps, epochs, batch_size)");
}

DpEvent with_field(const DpEvent& e, const std::string& field, double value, int& hits) {
  const auto whole = [&](double current, const char* name) {
    return static_cast<std::int64_t>(
        std::llround(pick(field, name, static_cast<double>(current), value, hits)));
  };
  switch (e.kind()) {
    case K::NoOp:
    case K::NonPrivate:
      return e;
    case K::Gaussian:
      return DpEvent::gaussian(pick(field, "noise_multiplier", e.noise_multiplier(), value, hits));
    case K::DiscreteGaussian:
      return DpEvent::discrete_gaussian(
          pick(field, "noise_multiplier", e.noise_multiplier(), value, hits));
    case K::DiscreteGaussianOnGrid:
      return DpEvent::discrete_gaussian_on_grid(
          pick(field, "noise_multiplier", e.noise_multiplier(), value, hits), e.min_scale());
    case K::DiscreteGaussianSum:
      return DpEvent::discrete_gaussian_sum(
          pick(field, "noise_multiplier", e.noise_multiplier(), value, hits), e.min_scale(),
          e.summands(), e.dimension());
    case K::Laplace:
      return DpEvent::laplace(pick(field, "noise_multiplier", e.noise_multiplier(), value, hits));
    case K::PureDp:
      return DpEvent::pure_dp(pick(field, "epsilon", e.epsilon(), value, hits));
    case K::ApproxDp:
      return DpEvent::approx_dp(pick(field, "epsilon", e.epsilon(), value, hits), e.delta());
    case K::Zcdp:
      return DpEvent::zcdp(pick(field, "rho", e.rho(), value, hits));
    case K::PoissonSampled:
      return DpEvent::poisson_sampled(pick(field, "rate", e.sampling_probability(), value, hits),
                                      with_field(e.inner(), field, value, hits));
    case K::SampledWithoutReplacement:
      return DpEvent::sampled_without_replacement(
          e.source_size(), whole(static_cast<double>(e.sample_size()), "sample_size"),
          with_field(e.inner(), field, value, hits));
    case K::SelfComposed:
      return DpEvent::self_composed(with_field(e.inner(), field, value, hits),
                                    whole(static_cast<double>(e.count()), "count"));
    case K::Composed:
      return DpEvent::composed(children_with(e, field, value, hits));
    case K::OneOf:
      return DpEvent::one_of(children_with(e, field, value, hits));
    case K::RepeatAndSelect:
      return DpEvent::repeat_and_select(with_field(e.inner(), field, value, hits),
                                        pick(field, "mean", e.mean(), value, hits), e.shape());
    case K::AdaptiveRepeatAndSelect:
      return DpEvent::adaptive_repeat_and_select(with_field(e.inner(), field, value, hits),
                                                 pick(field, "mean", e.mean(), value, hits),
                                                 e.shape(), e.density_ratio());
    case K::RepeatUntilAccepted:
      return DpEvent::repeat_until_accepted(
          with_field(e.inner(), field, value, hits),
          pick(field, "stop_probability", e.stop_probability(), value, hits));
    case K::ReplaceOne:
      return DpEvent::replace_one(with_field(e.inner(), field, value, hits));
  }
  throw Error("with_field: unknown event kind");
}

void print_calibration(const CalibrationReport& r, double target, double delta, bool json) {
  const std::string meaning = r.result.direction < 0 ? "smallest" : "largest";
  if (json) {
    dptune::host::JsonWriter w(std::cout);
    w.begin_object().key("parameter").value(r.parameter);
    if (r.integer) {
      const auto v = static_cast<std::int64_t>(r.result.value);
      w.key("value").value(v).key(r.parameter).value(v);
    } else {
      w.key("value").value(r.result.value).key(r.parameter).value(r.result.value);
    }
    for (const auto& [name, value] : r.derived) w.key(name).value(value);
    w.key("bound").value(meaning).key("at_range_end").value(r.at_range_end);
    w.key("evaluations").value(r.result.evaluations);
    w.key("target_epsilon").value(target).key("event").value(r.event.to_string());
    write_guarantee_json(w, r.event, r.result.guarantee);
    w.end_object();
    std::cout << "\n";
    return;
  }
  std::cout << r.parameter << ": "
            << (r.integer ? std::to_string(static_cast<std::int64_t>(r.result.value))
                          : full_precision(r.result.value))
            << "  (" << meaning << " meeting epsilon <= " << full_precision(target) << " at delta "
            << full_precision(delta) << ")\n";
  for (const auto& [name, value] : r.derived)
    std::cout << name << ": " << full_precision(value) << "\n";
  if (r.at_range_end)
    std::cout << "note:       this is the end of the search range: the accountant's epsilon stays "
                 "within the target over the whole range\n";
  std::cout << "event:      " << r.event.to_string() << "\n";
  print_guarantee(std::cout, r.event, r.result.guarantee);
}

}  // namespace dptune::cli
