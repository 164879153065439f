// dptune SDK: the one walk over a DpEvent tree, driven by the kind table (event_kinds.hpp).  A
// kind's children are the fields the table lists as an Event (inner()) or Events (events()), so a
// walk written with these functions learns of a new composite kind from its table entry and never
// needs a `switch` over kinds that a new kind could fall through.
//
// A kind this translation unit's table does not know (one newer than its ABI minor) has no known
// children: the walks still visit it, so a caller that must refuse unknown kinds sees it
// (find_event_kind returns null for it).
#pragma once

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
