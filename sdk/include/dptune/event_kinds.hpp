// dptune SDK: the one definition of every DpEvent kind (after the kind list of Google's
// dp_accounting, dp_event.py): its name, which is also its YAML key, its fields (name, type, valid
// values, meaning) in the order they are written, how to build it and how to read each field back.
// DpEvent::to_string prints from this table, the host's YAML reader
// (framework/src/config/event_yaml.cpp) parses with it, and docs/events.md is checked against it
// (tests/unit/event_kinds_test.cpp).  A new kind is one entry here plus its constructor in
// dp_event.hpp; the rules for adding one are in docs/sdk-contract.md.
//
// ABI.  Nothing here is exported: the table and its look-ups have internal linkage, so each
// translation unit (the SDK library, the host, every plugin) holds its own copy, built from the
// same SDK (the host loads only plugins of its own ABI, abi.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "dptune/dp_event.hpp"

namespace dptune {

/// How a field is written: a real number (`inf` allowed where its range says so), a whole number,
/// one nested event, or a sequence of events.
enum class EventFieldType { Number, Integer, Event, Events };

/// A field's value while an event is being built: `number` for Number, `integer` for Integer,
/// `events` for Event (exactly one) and Events.
struct EventFieldValue {
  double number = 0;
  std::int64_t integer = 0;
  std::vector<DpEvent> events;
};

struct EventFieldSpec {
  std::string_view name;  ///< the YAML key and the name to_string prints
  EventFieldType type;
  std::string_view range;  ///< the values the kind's constructor accepts, for docs and errors
  std::string_view doc;    ///< one line: what the number means
  double (*number)(const DpEvent&) = nullptr;         ///< reads a Number field (else null)
  std::int64_t (*integer)(const DpEvent&) = nullptr;  ///< reads an Integer field (else null)
};

struct EventKindSpec {
  std::string_view name;  ///< YAML key and DpEvent::kind_name (a NUL-terminated literal)
  DpEvent::Kind kind;
  int abi_minor;  ///< history: the ABI minor that appended the kind (0: in major.0)
  std::span<const EventFieldSpec> fields;
  std::string_view doc;  ///< one line: what the event states
  /// Builds the event through its validating constructor (which throws InvalidArgument naming the
  /// bad field); values[i] is fields[i]'s value, events are moved from.
  DpEvent (*make)(std::span<EventFieldValue> values);
  int abi_major = 2;  ///< history: the ABI major of abi_minor (kinds of the 2.x series: 2)
};

// Internal linkage on purpose (no `inline`): see the ABI note above.
namespace event_fields {
constexpr EventFieldSpec kNoiseMultiplier[] = {
    {"noise_multiplier", EventFieldType::Number, "[0, inf]",
     "noise scale ÷ the sensitivity of the query",
     [](const DpEvent& e) { return e.noise_multiplier(); }}};
constexpr EventFieldSpec kPureDp[] = {{"epsilon", EventFieldType::Number, "[0, inf]",
                                       "ε of an ε-DP guarantee",
                                       [](const DpEvent& e) { return e.epsilon(); }}};
constexpr EventFieldSpec kApproxDp[] = {
    {"epsilon", EventFieldType::Number, "[0, inf]", "ε of an (ε, δ)-DP guarantee",
     [](const DpEvent& e) { return e.epsilon(); }},
    {"delta", EventFieldType::Number, "[0, 1]", "δ of an (ε, δ)-DP guarantee",
     [](const DpEvent& e) { return e.delta(); }}};
constexpr EventFieldSpec kZcdp[] = {{"rho", EventFieldType::Number, "[0, inf]",
                                     "ρ of a ρ-zCDP guarantee (Bun & Steinke 2016)",
                                     [](const DpEvent& e) { return e.rho(); }}};
constexpr EventFieldSpec kInner = {"event", EventFieldType::Event, "any event",
                                   "the event each run performs"};
constexpr EventFieldSpec kPoissonSampled[] = {
    {"rate", EventFieldType::Number, "[0, 1]; YAML (0, 1]",
     "probability that each record is in the sample, independently",
     [](const DpEvent& e) { return e.sampling_probability(); }},
    kInner};
constexpr EventFieldSpec kSampledWithoutReplacement[] = {
    {"source_size", EventFieldType::Integer, ">= 1", "records the sample is drawn from", nullptr,
     [](const DpEvent& e) { return e.source_size(); }},
    {"sample_size", EventFieldType::Integer, "[0, source_size]",
     "records in the sample, drawn uniformly without replacement", nullptr,
     [](const DpEvent& e) { return e.sample_size(); }},
    kInner};
constexpr EventFieldSpec kSelfComposed[] = {
    {"count", EventFieldType::Integer, ">= 0", "number of runs of the event", nullptr,
     [](const DpEvent& e) { return e.count(); }},
    kInner};
constexpr EventFieldSpec kComposedEvents[] = {
    {"events", EventFieldType::Events, "any number", "the events, all run"}};
constexpr EventFieldSpec kOneOfEvents[] = {
    {"events", EventFieldType::Events, "at least one",
     "the candidates, of which one runs, picked without looking at the private data"}};
constexpr EventFieldSpec kRepeatAndSelect[] = {
    {"mean", EventFieldType::Number, "(0, inf)", "mean number of runs",
     [](const DpEvent& e) { return e.mean(); }},
    {"shape", EventFieldType::Number, "(-1, inf]",
     "η of the truncated negative binomial number of runs (0 logarithmic, 1 geometric; inf "
     "Poisson)",
     [](const DpEvent& e) { return e.shape(); }},
    kInner};
constexpr EventFieldSpec kAdaptiveRepeatAndSelect[] = {
    kRepeatAndSelect[0],
    {"shape", EventFieldType::Number, "(-1, inf)",
     "η of the truncated negative binomial number of runs (0 logarithmic, 1 geometric)",
     [](const DpEvent& e) { return e.shape(); }},
    {"density_ratio", EventFieldType::Number, "[1, inf)",
     "C/c: every sampling distribution stays within [c, C] times the prior's density",
     [](const DpEvent& e) { return e.density_ratio(); }},
    kInner};
constexpr EventFieldSpec kRepeatUntilAccepted[] = {
    {"stop_probability", EventFieldType::Number, "[0, 1)",
     "probability of stopping with the data-independent output before each run",
     [](const DpEvent& e) { return e.stop_probability(); }},
    kInner};
constexpr EventFieldSpec kReplaceOne[] = {
    {"event", EventFieldType::Event, "any event",
     "the event, its noise multipliers and ε stated for replace-one neighbours"}};
constexpr EventFieldSpec kDiscreteGaussianOnGrid[] = {
    kNoiseMultiplier[0],
    {"min_scale", EventFieldType::Number, "(0, inf)",
     "a lower bound on the noise's standard-deviation parameter in lattice units",
     [](const DpEvent& e) { return e.min_scale(); }}};
constexpr EventFieldSpec kDiscreteGaussianSum[] = {
    {"noise_multiplier", EventFieldType::Number, "[0, inf]",
     "the sum's noise scale (sqrt(summands) × each summand's) ÷ the sensitivity of the query",
     [](const DpEvent& e) { return e.noise_multiplier(); }},
    {"min_scale", EventFieldType::Number, "(0, inf)",
     "a lower bound on each summand's standard-deviation parameter in lattice units",
     [](const DpEvent& e) { return e.min_scale(); }},
    {"summands", EventFieldType::Integer, ">= 1",
     "independent discrete Gaussian noise vectors added (e.g. the honest clients' shares)", nullptr,
     [](const DpEvent& e) { return e.summands(); }},
    {"dimension", EventFieldType::Integer, ">= 1", "coordinates of the query", nullptr,
     [](const DpEvent& e) { return e.dimension(); }}};
}  // namespace event_fields

/// Every kind, in the order of DpEvent::Kind (each minor appended its kinds at the end). Formatting
/// is off so that an entry keeps its name, kind, minor and fields on one line.
// clang-format off
constexpr EventKindSpec kEventKinds[] = {
    {"no_op", DpEvent::Kind::NoOp, 0, {}, "touches no private data",
     [](std::span<EventFieldValue>) { return DpEvent::no_op(); }},
    {"non_private", DpEvent::Kind::NonPrivate, 0, {},
     "touches private data without any guarantee: accountants refuse it",
     [](std::span<EventFieldValue>) { return DpEvent::non_private(); }},
    {"gaussian", DpEvent::Kind::Gaussian, 0, event_fields::kNoiseMultiplier,
     "Gaussian noise; noise_multiplier = noise stddev ÷ L2 sensitivity",
     [](std::span<EventFieldValue> v) { return DpEvent::gaussian(v[0].number); }},
    {"laplace", DpEvent::Kind::Laplace, 0, event_fields::kNoiseMultiplier,
     "Laplace noise; noise_multiplier = scale ÷ L1 sensitivity",
     [](std::span<EventFieldValue> v) { return DpEvent::laplace(v[0].number); }},
    {"pure_dp", DpEvent::Kind::PureDp, 0, event_fields::kPureDp,
     "a computation that is ε-DP by its own proof",
     [](std::span<EventFieldValue> v) { return DpEvent::pure_dp(v[0].number); }},
    {"approx_dp", DpEvent::Kind::ApproxDp, 0, event_fields::kApproxDp,
     "a computation that is (ε, δ)-DP by its own proof",
     [](std::span<EventFieldValue> v) { return DpEvent::approx_dp(v[0].number, v[1].number); }},
    {"zcdp", DpEvent::Kind::Zcdp, 0, event_fields::kZcdp,
     "a computation that is ρ-zCDP by its own proof",
     [](std::span<EventFieldValue> v) { return DpEvent::zcdp(v[0].number); }},
    {"poisson_sampled", DpEvent::Kind::PoissonSampled, 0, event_fields::kPoissonSampled,
     "the event run on a Poisson sample (add/remove neighbours; Mironov, Talwar & Zhang 2019)",
     [](std::span<EventFieldValue> v) {
       return DpEvent::poisson_sampled(v[0].number, std::move(v[1].events.front()));
     }},
    {"sampled_without_replacement", DpEvent::Kind::SampledWithoutReplacement, 0,
     event_fields::kSampledWithoutReplacement,
     "the event run on a fixed-size sample (replace-one neighbours; Wang, Balle & "
     "Kasiviswanathan 2019)",
     [](std::span<EventFieldValue> v) {
       return DpEvent::sampled_without_replacement(v[0].integer, v[1].integer,
                                                   std::move(v[2].events.front()));
     }},
    {"self_composed", DpEvent::Kind::SelfComposed, 0, event_fields::kSelfComposed,
     "the event run count times",
     [](std::span<EventFieldValue> v) {
       return DpEvent::self_composed(std::move(v[1].events.front()), v[0].integer);
     }},
    {"composed", DpEvent::Kind::Composed, 0, event_fields::kComposedEvents,
     "every event run, each on the same data",
     [](std::span<EventFieldValue> v) { return DpEvent::composed(std::move(v[0].events)); }},
    {"repeat_and_select", DpEvent::Kind::RepeatAndSelect, 0, event_fields::kRepeatAndSelect,
     "a random number of runs, the best one released (Papernot & Steinke 2022)",
     [](std::span<EventFieldValue> v) {
       return DpEvent::repeat_and_select(std::move(v[2].events.front()), v[0].number, v[1].number);
     }},
    {"one_of", DpEvent::Kind::OneOf, 1, event_fields::kOneOfEvents,
     "one of the events runs, chosen without looking at the data; costed as the worst",
     [](std::span<EventFieldValue> v) { return DpEvent::one_of(std::move(v[0].events)); }},
    {"repeat_until_accepted", DpEvent::Kind::RepeatUntilAccepted, 1,
     event_fields::kRepeatUntilAccepted,
     "the event rerun until its output is accepted (Papernot & Steinke 2022, Appendix C)",
     [](std::span<EventFieldValue> v) {
       return DpEvent::repeat_until_accepted(std::move(v[1].events.front()), v[0].number);
     }},
    {"replace_one", DpEvent::Kind::ReplaceOne, 3, event_fields::kReplaceOne,
     "the event stated for replace-one neighbours (one record swapped)",
     [](std::span<EventFieldValue> v) {
       return DpEvent::replace_one(std::move(v[0].events.front()));
     }},
    {"discrete_gaussian", DpEvent::Kind::DiscreteGaussian, 8, event_fields::kNoiseMultiplier,
     "exact discrete Gaussian noise on a lattice (Canonne, Kamath & Steinke 2020); "
     "noise_multiplier = σ ÷ the L2 bound of the integer shift",
     [](std::span<EventFieldValue> v) { return DpEvent::discrete_gaussian(v[0].number); }},
    {"discrete_gaussian_on_grid", DpEvent::Kind::DiscreteGaussianOnGrid, 12, event_fields::kDiscreteGaussianOnGrid,
     "discrete_gaussian whose scale in lattice units is at least min_scale (the grid release: "
     "2^22); priced through the continuous Gaussian plus an explicit additive δ",
     [](std::span<EventFieldValue> v) { return DpEvent::discrete_gaussian_on_grid(v[0].number, v[1].number); }},
    {"adaptive_repeat_and_select", DpEvent::Kind::AdaptiveRepeatAndSelect, 1, event_fields::kAdaptiveRepeatAndSelect,
     "repeat_and_select whose candidates are drawn adaptively within a density-ratio band C/c of a prior (Wang et al. 2023, DP-HyPO)",
     [](std::span<EventFieldValue> v) {
       return DpEvent::adaptive_repeat_and_select(std::move(v[3].events.front()), v[0].number, v[1].number, v[2].number);
     }, 3},
    {"discrete_gaussian_sum", DpEvent::Kind::DiscreteGaussianSum, 2, event_fields::kDiscreteGaussianSum,
     "the sum of `summands` independent discrete Gaussians of scale >= min_scale on an integer query "
     "(Kairouz, Liu & Steinke 2021, distributed discrete Gaussian); priced by its Renyi-DP bound",
     [](std::span<EventFieldValue> v) {
       return DpEvent::discrete_gaussian_sum(v[0].number, v[1].number, v[2].integer, v[3].integer);
     }, 3},
};
// clang-format on

/// The kind's entry, or null for a value that names no kind.
static constexpr const EventKindSpec* find_event_kind(DpEvent::Kind kind) {
  // The table lists the kinds in the enumeration's order (checked below), so a kind is found by
  // its value: the event walks ask once per node, a million times for a long trace.
  const auto index = static_cast<std::size_t>(kind);
  if (index < std::size(kEventKinds) && kEventKinds[index].kind == kind) return &kEventKinds[index];
  return nullptr;
}
static constexpr bool event_kinds_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kEventKinds); ++i)
    if (static_cast<std::size_t>(kEventKinds[i].kind) != i) return false;
  return true;
}
static_assert(event_kinds_in_enum_order(),
              "kEventKinds must list the kinds in DpEvent::Kind's order (append new kinds last)");
/// The entry named `name` (the YAML key), or null.
static constexpr const EventKindSpec* find_event_kind(std::string_view name) {
  for (const auto& spec : kEventKinds)
    if (spec.name == name) return &spec;
  return nullptr;
}

}  // namespace dptune
