// dptune helpers: the event of a tuner that runs one of several candidates, picked without looking
// at the private data (a grid point drawn uniformly, the candidate a repeat-and-select run may
// draw, the model a selection may train last).  Such a run costs the worst of the candidates'
// events at every Rényi order, which DpEvent::one_of states (Papernot & Steinke 2022, §3: the base
// algorithm's privacy must hold for every candidate it may run).  Candidates that share an event
// add nothing to the worst case, so the one_of lists each distinct event once.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "dptune/dp_event.hpp"

namespace dptune {

/// The distinct events of `events` (equal by DpEvent::operator==), each once, in the order of its
/// first appearance.
std::vector<DpEvent> distinct_events(std::span<const DpEvent> events);

/// The event of running one of the candidates whose events are `candidate_events`:
/// DpEvent::one_of over their distinct events, or that event itself when they are all equal.
/// Throws InvalidArgument when `candidate_events` is empty (no candidate, no run to describe).
DpEvent one_of_distinct(std::span<const DpEvent> candidate_events);

/// A hash of an event's kind, numbers and children: equal events (DpEvent::operator==) hash
/// equal.  What accountants bucket a long composition's children by, so that a Composed of a
/// million equal steps is priced once per distinct step.
std::size_t structural_hash(const DpEvent& event);

}  // namespace dptune
