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

std::size_t structural_hash(const DpEvent& e) { return e.structural_hash(); }

}  // namespace dptune
