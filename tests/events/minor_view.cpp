// Compiled once per ABI minor (tests/events/CMakeLists.txt): a plugin built for minor m sees the
// kinds of abi.hpp's history up to m and no later one, each with the minor that appended it.
#include "dptune/event_kinds.hpp"

namespace {

using dptune::DpEvent;
using dptune::find_event_kind;

/// The kinds of each minor (abi.hpp's history): 12 in 2.0, one_of and repeat_until_accepted in
/// 2.1, replace_one in 2.3, discrete_gaussian in 2.8.
constexpr std::size_t kinds_of(int minor) { return minor >= 8 ? 16 : minor >= 3 ? 15 : 14; }

static_assert(std::size(dptune::kEventKinds) == kinds_of(DPTUNE_PLUGIN_ABI_MINOR));
/// Whether the table has `kind`, by name and by enumerator (a loop, not a folded pointer test).
constexpr bool knows(DpEvent::Kind kind, std::string_view name) {
  bool by_kind = false, by_name = false;
  for (const auto& spec : dptune::kEventKinds) {
    by_kind = by_kind || (spec.kind == kind && find_event_kind(kind) == &spec);
    by_name = by_name || (spec.name == name && find_event_kind(name) == &spec);
  }
  return by_kind && by_name;
}
static_assert(knows(DpEvent::Kind::RepeatUntilAccepted, "repeat_until_accepted"));
static_assert(knows(DpEvent::Kind::ReplaceOne, "replace_one") == (DPTUNE_PLUGIN_ABI_MINOR >= 3));
static_assert(knows(DpEvent::Kind::DiscreteGaussian, "discrete_gaussian") ==
              (DPTUNE_PLUGIN_ABI_MINOR >= 8));

constexpr bool minors_within_build() {
  for (const auto& spec : dptune::kEventKinds)
    if (spec.abi_minor > DPTUNE_PLUGIN_ABI_MINOR) return false;
  return true;
}
static_assert(minors_within_build());

}  // namespace
