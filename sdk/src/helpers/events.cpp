#include "dptune/helpers/events.hpp"

#include <algorithm>
#include <functional>

#include "dptune/errors.hpp"
#include "dptune/event_kinds.hpp"

namespace dptune {

std::vector<DpEvent> distinct_events(std::span<const DpEvent> events) {
  std::vector<DpEvent> distinct;
  for (const DpEvent& event : events)
    if (std::find(distinct.begin(), distinct.end(), event) == distinct.end())
      distinct.push_back(event);
  return distinct;
}

DpEvent one_of_distinct(std::span<const DpEvent> candidate_events) {
  require(!candidate_events.empty(), "one_of_distinct: no candidate events");
  std::vector<DpEvent> distinct = distinct_events(candidate_events);
  // one_of of a single event costs that event; stating the event itself keeps reports short.
  if (distinct.size() == 1) return distinct.front();
  return DpEvent::one_of(std::move(distinct));
}

std::size_t structural_hash(const DpEvent& e) {
  std::size_t h = std::hash<int>{}(static_cast<int>(e.kind()));
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  // Every field the kind table lists, in its order: a new kind is hashed whole without an edit
  // here (a kind this translation unit does not know hashes by its kind alone).
  const EventKindSpec* spec = find_event_kind(e.kind());
  if (spec == nullptr) return h;
  for (const EventFieldSpec& field : spec->fields) {
    switch (field.type) {
      case EventFieldType::Number:
        mix(std::hash<double>{}(field.number(e)));
        break;
      case EventFieldType::Integer:
        mix(static_cast<std::size_t>(field.integer(e)));
        break;
      case EventFieldType::Event:
        mix(structural_hash(e.inner()));
        break;
      case EventFieldType::Events:
        for (const auto& c : e.events()) mix(structural_hash(c));
        break;
    }
  }
  return h;
}

}  // namespace dptune
