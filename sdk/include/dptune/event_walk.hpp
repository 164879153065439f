// dptune SDK: the one walk over a DpEvent tree, driven by the kind table (event_kinds.hpp).  A
// kind's children are the fields the table lists as an Event (inner()) or Events (events()), so a
// walk written with these functions learns of a new composite kind from its table entry and never
// needs a `switch` over kinds that a new kind could fall through.
//
// A kind this translation unit's table does not know (one newer than its ABI minor) has no known
// children: the walks still visit it, so a caller that must refuse unknown kinds sees it
// (find_event_kind returns null for it).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/event_kinds.hpp"

namespace dptune {

/// Calls visit(child) for each direct child of `event`, in the order of the kind's fields.
template <class Visit>
void for_each_child(const DpEvent& event, Visit&& visit) {
  const EventKindSpec* spec = find_event_kind(event.kind());
  if (spec == nullptr) return;
  for (const auto& field : spec->fields) {
    if (field.type == EventFieldType::Event) {
      visit(event.inner());
    } else if (field.type == EventFieldType::Events) {
      for (const DpEvent& part : event.events()) visit(part);
    }
  }
}

/// Calls visit(e) for every event e of the tree, pre-order: `event` itself, then its children's
/// trees in field order.
template <class Visit>
void for_each_event(const DpEvent& event, Visit&& visit) {
  visit(event);
  for_each_child(event, [&](const DpEvent& child) { for_each_event(child, visit); });
}

/// The first event of the tree (pre-order: `event` itself, then its children's trees in field
/// order) for which `pred` holds, or null.
template <class Pred>
const DpEvent* find_event(const DpEvent& event, Pred&& pred) {
  if (pred(event)) return &event;
  const DpEvent* found = nullptr;
  for_each_child(event, [&](const DpEvent& child) {
    if (found == nullptr) found = find_event(child, pred);
  });
  return found;
}

/// True when `pred` holds for `event` or any event inside it.
template <class Pred>
bool any_event(const DpEvent& event, Pred&& pred) {
  return find_event(event, std::forward<Pred>(pred)) != nullptr;
}

/// `event` rebuilt through its kind's validating constructor with every child replaced by
/// map(child) and every number kept; a leaf, or a kind this translation unit's table does not
/// know, is returned as it is.
template <class Map>
DpEvent map_children(const DpEvent& event, Map&& map) {
  const EventKindSpec* spec = find_event_kind(event.kind());
  if (spec == nullptr) return event;
  std::vector<EventFieldValue> values(spec->fields.size());
  bool has_children = false;
  for (std::size_t i = 0; i < spec->fields.size(); ++i) {
    const EventFieldSpec& field = spec->fields[i];
    switch (field.type) {
      case EventFieldType::Number:
        values[i].number = field.number(event);
        break;
      case EventFieldType::Integer:
        values[i].integer = field.integer(event);
        break;
      case EventFieldType::Event:
        values[i].events.push_back(map(event.inner()));
        has_children = true;
        break;
      case EventFieldType::Events:
        values[i].events.reserve(event.events().size());
        for (const DpEvent& part : event.events()) values[i].events.push_back(map(part));
        has_children = true;
        break;
    }
  }
  return has_children ? spec->make(values) : event;
}

/// Folds the tree bottom-up: node(e, parts) for every event e, `parts` holding the folds of e's
/// children in field order (empty for a leaf).
template <class Result, class Node>
Result fold_event(const DpEvent& event, Node&& node) {
  std::vector<Result> parts;
  for_each_child(event,
                 [&](const DpEvent& child) { parts.push_back(fold_event<Result>(child, node)); });
  return node(event, std::move(parts));
}

}  // namespace dptune
