#include "dptune/dp_event.hpp"

#include <bit>
#include <cmath>
#include <functional>

#include "dptune/errors.hpp"
#include "dptune/event_kinds.hpp"
#include "dptune/params.hpp"

namespace dptune {

namespace {
std::string num(double v) { return to_string(Value{v}); }
void positive_finite(double v, const char* event, const char* arg) {
  require(std::isfinite(v) && v > 0,
          std::string(event) + ": " + arg + " must be positive and finite, got " + num(v));
}
}  // namespace

DpEvent::DpEvent(Kind kind, double x, double y, std::int64_t n, std::int64_t m,
                 std::vector<DpEvent> children)
    : kind_(kind),
      x_(x),
      y_(y),
      n_(n),
      m_(m),
      children_(children.empty()
                    ? nullptr
                    : std::make_shared<const std::vector<DpEvent>>(std::move(children))) {
  // The kinds and the hash of the tree, from the children's own (each built the same way), so
  // building an event of n parts costs O(n) once and asking either costs nothing afterwards.
  static_assert(static_cast<unsigned>(Kind::DiscreteGaussianSum) < 32, "kinds_ has 32 bits");
  kinds_ = 1U << static_cast<unsigned>(kind_);
  std::size_t h = std::hash<int>{}(static_cast<int>(kind_));
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  // std::hash<double> maps 0.0 and -0.0 alike, as operator== compares them equal.
  mix(std::hash<double>{}(x_));
  mix(std::hash<double>{}(y_));
  mix(static_cast<std::size_t>(n_));
  mix(static_cast<std::size_t>(m_));
  if (children_)
    for (const DpEvent& c : *children_) {
      kinds_ |= c.kinds_;
      mix(c.hash_);
    }
  hash_ = h;
}

DpEvent::DpEvent() : DpEvent(Kind::NoOp, 0, 0, 0, 0, {}) {}

DpEvent DpEvent::no_op() { return {Kind::NoOp, 0, 0, 0, 0, {}}; }
DpEvent DpEvent::non_private() { return {Kind::NonPrivate, 0, 0, 0, 0, {}}; }

DpEvent DpEvent::gaussian(double noise_multiplier) {
  require(noise_multiplier >= 0 && !std::isnan(noise_multiplier),
          "gaussian: noise_multiplier must be >= 0, got " + num(noise_multiplier));
  return {Kind::Gaussian, noise_multiplier, 0, 0, 0, {}};
}
DpEvent DpEvent::discrete_gaussian(double noise_multiplier) {
  require(noise_multiplier >= 0 && !std::isnan(noise_multiplier),
          "discrete_gaussian: noise_multiplier must be >= 0, got " + num(noise_multiplier));
  return {Kind::DiscreteGaussian, noise_multiplier, 0, 0, 0, {}};
}
DpEvent DpEvent::discrete_gaussian_on_grid(double noise_multiplier, double min_scale) {
  require(noise_multiplier >= 0 && !std::isnan(noise_multiplier),
          "discrete_gaussian_on_grid: noise_multiplier must be >= 0, got " + num(noise_multiplier));
  positive_finite(min_scale, "discrete_gaussian_on_grid", "min_scale");
  return {Kind::DiscreteGaussianOnGrid, noise_multiplier, min_scale, 0, 0, {}};
}
DpEvent DpEvent::discrete_gaussian_sum(double noise_multiplier, double min_scale,
                                       std::int64_t summands, std::int64_t dimension) {
  require(noise_multiplier >= 0 && !std::isnan(noise_multiplier),
          "discrete_gaussian_sum: noise_multiplier must be >= 0, got " + num(noise_multiplier));
  positive_finite(min_scale, "discrete_gaussian_sum", "min_scale");
  require(summands >= 1,
          "discrete_gaussian_sum: summands must be >= 1, got " + std::to_string(summands));
  require(dimension >= 1,
          "discrete_gaussian_sum: dimension must be >= 1, got " + std::to_string(dimension));
  return {Kind::DiscreteGaussianSum, noise_multiplier, min_scale, summands, dimension, {}};
}
DpEvent DpEvent::laplace(double noise_multiplier) {
  require(noise_multiplier >= 0 && !std::isnan(noise_multiplier),
          "laplace: noise_multiplier must be >= 0, got " + num(noise_multiplier));
  return {Kind::Laplace, noise_multiplier, 0, 0, 0, {}};
}
DpEvent DpEvent::pure_dp(double epsilon) {
  require(epsilon >= 0 && !std::isnan(epsilon),
          "pure_dp: epsilon must be >= 0, got " + num(epsilon));
  return {Kind::PureDp, epsilon, 0, 0, 0, {}};
}
DpEvent DpEvent::approx_dp(double epsilon, double delta) {
  require(epsilon >= 0 && !std::isnan(epsilon),
          "approx_dp: epsilon must be >= 0, got " + num(epsilon));
  require(delta >= 0 && delta <= 1, "approx_dp: delta must be in [0, 1], got " + num(delta));
  return {Kind::ApproxDp, epsilon, delta, 0, 0, {}};
}
DpEvent DpEvent::zcdp(double rho) {
  require(rho >= 0 && !std::isnan(rho), "zcdp: rho must be >= 0, got " + num(rho));
  return {Kind::Zcdp, rho, 0, 0, 0, {}};
}
DpEvent DpEvent::poisson_sampled(double q, DpEvent event) {
  require(q >= 0 && q <= 1,
          "poisson_sampled: sampling_probability must be in [0, 1], got " + num(q));
  return {Kind::PoissonSampled, q, 0, 0, 0, {std::move(event)}};
}
DpEvent DpEvent::sampled_without_replacement(std::int64_t n, std::int64_t m, DpEvent event) {
  require(n >= 1,
          "sampled_without_replacement: source_size must be >= 1, got " + std::to_string(n));
  require(m >= 0 && m <= n, "sampled_without_replacement: sample_size must be in [0, source_size=" +
                                std::to_string(n) + "], got " + std::to_string(m));
  return {Kind::SampledWithoutReplacement, 0, 0, n, m, {std::move(event)}};
}
DpEvent DpEvent::self_composed(DpEvent event, std::int64_t count) {
  require(count >= 0, "self_composed: count must be >= 0, got " + std::to_string(count));
  return {Kind::SelfComposed, 0, 0, count, 0, {std::move(event)}};
}
DpEvent DpEvent::composed(std::vector<DpEvent> events) {
  return {Kind::Composed, 0, 0, 0, 0, std::move(events)};
}
DpEvent DpEvent::repeat_and_select(DpEvent event, double mean, double shape) {
  positive_finite(mean, "repeat_and_select", "mean");
  require(shape > -1 && !std::isnan(shape),
          "repeat_and_select: shape (eta) must be > -1 (or inf for Poisson), got " + num(shape));
  return {Kind::RepeatAndSelect, mean, shape, 0, 0, {std::move(event)}};
}
DpEvent DpEvent::adaptive_repeat_and_select(DpEvent event, double mean, double shape,
                                            double density_ratio) {
  positive_finite(mean, "adaptive_repeat_and_select", "mean");
  require(shape > -1 && std::isfinite(shape),
          "adaptive_repeat_and_select: shape (eta) must be finite and > -1 (no theorem covers "
          "Poisson runs: Wang et al. 2023, Sec. 3.1), got " +
              num(shape));
  require(density_ratio >= 1 && std::isfinite(density_ratio),
          "adaptive_repeat_and_select: density_ratio (C/c) must be >= 1 and finite, got " +
              num(density_ratio));
  // The ratio is kept bit for bit in the integer slot, unused by this kind, so that DpEvent's
  // layout stays that of the other kinds.
  const auto ratio_bits = std::bit_cast<std::int64_t>(density_ratio);
  return {Kind::AdaptiveRepeatAndSelect, mean, shape, 0, ratio_bits, {std::move(event)}};
}
DpEvent DpEvent::one_of(std::vector<DpEvent> events) {
  require(!events.empty(), "one_of: needs at least one event");
  return {Kind::OneOf, 0, 0, 0, 0, std::move(events)};
}
DpEvent DpEvent::repeat_until_accepted(DpEvent event, double stop_probability) {
  require(
      stop_probability >= 0 && stop_probability < 1,
      "repeat_until_accepted: stop_probability must be in [0, 1), got " + num(stop_probability));
  return {Kind::RepeatUntilAccepted, stop_probability, 0, 0, 0, {std::move(event)}};
}
DpEvent DpEvent::replace_one(DpEvent event) {
  return {Kind::ReplaceOne, 0, 0, 0, 0, {std::move(event)}};
}

namespace {
[[noreturn]] void wrong_kind(const char* accessor, DpEvent::Kind kind) {
  throw InvalidArgument(std::string("DpEvent::") + accessor + "() called on a " +
                        DpEvent::kind_name(kind) + " event");
}
}  // namespace

double DpEvent::noise_multiplier() const {
  if (kind_ != Kind::Gaussian && kind_ != Kind::Laplace && kind_ != Kind::DiscreteGaussian &&
      kind_ != Kind::DiscreteGaussianOnGrid && kind_ != Kind::DiscreteGaussianSum)
    wrong_kind("noise_multiplier", kind_);
  return x_;
}
double DpEvent::min_scale() const {
  if (kind_ != Kind::DiscreteGaussianOnGrid && kind_ != Kind::DiscreteGaussianSum)
    wrong_kind("min_scale", kind_);
  return y_;
}
std::int64_t DpEvent::summands() const {
  if (kind_ != Kind::DiscreteGaussianSum) wrong_kind("summands", kind_);
  return n_;
}
std::int64_t DpEvent::dimension() const {
  if (kind_ != Kind::DiscreteGaussianSum) wrong_kind("dimension", kind_);
  return m_;
}
double DpEvent::epsilon() const {
  if (kind_ != Kind::PureDp && kind_ != Kind::ApproxDp) wrong_kind("epsilon", kind_);
  return x_;
}
double DpEvent::delta() const {
  if (kind_ != Kind::ApproxDp) wrong_kind("delta", kind_);
  return y_;
}
double DpEvent::rho() const {
  if (kind_ != Kind::Zcdp) wrong_kind("rho", kind_);
  return x_;
}
double DpEvent::sampling_probability() const {
  if (kind_ != Kind::PoissonSampled) wrong_kind("sampling_probability", kind_);
  return x_;
}
std::int64_t DpEvent::source_size() const {
  if (kind_ != Kind::SampledWithoutReplacement) wrong_kind("source_size", kind_);
  return n_;
}
std::int64_t DpEvent::sample_size() const {
  if (kind_ != Kind::SampledWithoutReplacement) wrong_kind("sample_size", kind_);
  return m_;
}
std::int64_t DpEvent::count() const {
  if (kind_ != Kind::SelfComposed) wrong_kind("count", kind_);
  return n_;
}
double DpEvent::mean() const {
  if (kind_ != Kind::RepeatAndSelect && kind_ != Kind::AdaptiveRepeatAndSelect)
    wrong_kind("mean", kind_);
  return x_;
}
double DpEvent::shape() const {
  if (kind_ != Kind::RepeatAndSelect && kind_ != Kind::AdaptiveRepeatAndSelect)
    wrong_kind("shape", kind_);
  return y_;
}
double DpEvent::density_ratio() const {
  if (kind_ != Kind::AdaptiveRepeatAndSelect) wrong_kind("density_ratio", kind_);
  return std::bit_cast<double>(m_);
}
double DpEvent::stop_probability() const {
  if (kind_ != Kind::RepeatUntilAccepted) wrong_kind("stop_probability", kind_);
  return x_;
}
const DpEvent& DpEvent::inner() const {
  if (kind_ != Kind::PoissonSampled && kind_ != Kind::SampledWithoutReplacement &&
      kind_ != Kind::SelfComposed && kind_ != Kind::RepeatAndSelect &&
      kind_ != Kind::RepeatUntilAccepted && kind_ != Kind::ReplaceOne &&
      kind_ != Kind::AdaptiveRepeatAndSelect)
    wrong_kind("inner", kind_);
  return children_->front();
}
const std::vector<DpEvent>& DpEvent::events() const {
  if (kind_ != Kind::Composed && kind_ != Kind::OneOf) wrong_kind("events", kind_);
  static const std::vector<DpEvent> kNone;
  return children_ ? *children_ : kNone;
}

const char* DpEvent::kind_name(Kind kind) {
  const EventKindSpec* spec = find_event_kind(kind);
  return spec ? spec->name.data() : "?";  // the table's names are NUL-terminated literals
}

namespace {
/// One field of `event` as to_string writes it.
std::string field_text(const DpEvent& event, const EventFieldSpec& field) {
  switch (field.type) {
    case EventFieldType::Number:
      return num(field.number(event));
    case EventFieldType::Integer:
      return std::to_string(field.integer(event));
    case EventFieldType::Event:
      return event.inner().to_string();
    case EventFieldType::Events: {
      std::string out = "[";
      for (std::size_t i = 0; i < event.events().size(); ++i)
        out += (i ? ", " : "") + event.events()[i].to_string();
      return out + "]";
    }
  }
  return "";
}
}  // namespace

// Written from the kind table (event_kinds.hpp), field by field in the table's order, which is
// the order the YAML reader documents and tests pin.
std::string DpEvent::to_string() const {
  const EventKindSpec* spec = find_event_kind(kind_);
  if (!spec) return "{}";
  std::string out = "{" + std::string(spec->name) + ": {";
  for (std::size_t i = 0; i < spec->fields.size(); ++i)
    out += (i ? ", " : "") + std::string(spec->fields[i].name) + ": " +
           field_text(*this, spec->fields[i]);
  return out + "}}";
}

bool DpEvent::operator==(const DpEvent& other) const {
  if (hash_ != other.hash_ || kind_ != other.kind_ || x_ != other.x_ || y_ != other.y_ ||
      n_ != other.n_ || m_ != other.m_)
    return false;
  if (children_ == other.children_) return true;  // shared parts (a copy), or two leaves
  return children_ && other.children_ && *children_ == *other.children_;
}

}  // namespace dptune
