// The neighbouring relation of a DpEvent and its restatement for one relation (see the file
// comment of dp_event.hpp for the rules).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"

namespace dptune {

namespace {

using Kind = DpEvent::Kind;

// What a subtree demands of the relation its guarantee is stated for.  The first part of each
// kind is kept as a pointer into the event (which outlives the walk) and printed only when the
// two relations are mixed: formatting it for every node made composing 10^6 Poisson-sampled
// steps spend most of its time building strings nobody read.
struct Demand {
  const DpEvent* add_remove_part = nullptr;   // first add/remove amplification (poisson_sampled)
  const DpEvent* replace_one_part = nullptr;  // first replace-one part (wrapper, w/o replacement)
  bool add_remove() const { return add_remove_part != nullptr; }
  bool replace_one() const { return replace_one_part != nullptr; }
};

void merge(Demand& into, const Demand& from) {
  if (!into.add_remove_part) into.add_remove_part = from.add_remove_part;
  if (!into.replace_one_part) into.replace_one_part = from.replace_one_part;
}

std::string shortened(const DpEvent& e) {
  std::string text = e.to_string();
  return text.size() <= 120 ? text : text.substr(0, 117) + "...";
}

// A fold written out (fold_event would collect each node's children's results in a vector: one
// allocation per node, a large share of the time for 10^6 composed steps).
Demand demand_of(const DpEvent& event) {
  Demand d;
  for_each_child(event, [&](const DpEvent& child) { merge(d, demand_of(child)); });
  if (event.kind() == Kind::PoissonSampled) d.add_remove_part = &event;
  if ((event.kind() == Kind::SampledWithoutReplacement || event.kind() == Kind::ReplaceOne) &&
      !d.replace_one_part)
    d.replace_one_part = &event;
  return d;  // a leaf: stated for add/remove, convertible to replace-one
}

// A leaf stated for add/remove, restated for replace-one by group privacy of size 2: a
// replacement D → D' is a removal followed by an addition, so an L2/L1 sensitivity at most
// doubles, and (ε, δ)-DP gives (2ε, (1 + e^ε)δ) (Dwork & Roth 2014, Thm 2.2 applied twice);
// ρ-zCDP gives 4ρ (Bun & Steinke 2016, Prop. 1.9).
DpEvent leaf_for_replace_one(const DpEvent& e) {
  switch (e.kind()) {
    case Kind::Gaussian:
      return DpEvent::gaussian(e.noise_multiplier() / 2);
    case Kind::DiscreteGaussian:  // the two integer shifts add up to an integer shift
      return DpEvent::discrete_gaussian(e.noise_multiplier() / 2);
    case Kind::DiscreteGaussianOnGrid:  // the same noise, twice the shift bound
      return DpEvent::discrete_gaussian_on_grid(e.noise_multiplier() / 2, e.min_scale());
    case Kind::DiscreteGaussianSum:  // the same noise, twice the shift bound
      return DpEvent::discrete_gaussian_sum(e.noise_multiplier() / 2, e.min_scale(), e.summands(),
                                            e.dimension());
    case Kind::Laplace:
      return DpEvent::laplace(e.noise_multiplier() / 2);
    case Kind::PureDp:
      return DpEvent::pure_dp(2 * e.epsilon());
    case Kind::ApproxDp:
      return DpEvent::approx_dp(2 * e.epsilon(),
                                std::min(1.0, (1 + std::exp(e.epsilon())) * e.delta()));
    case Kind::Zcdp:
      return DpEvent::zcdp(4 * e.rho());
    default:
      return e;
  }
}

// `stated_replace_one`: inside a replace_one wrapper, where leaves already hold for replace-one.
DpEvent restate(const DpEvent& e, Neighbouring target, bool stated_replace_one) {
  const bool to_replace_one = target == Neighbouring::ReplaceOne;
  switch (e.kind()) {
    case Kind::ReplaceOne:
      if (!to_replace_one)
        throw PrivacyError(
            "a replace_one event cannot be priced for add/remove neighbours (a replace-one "
            "guarantee does not imply an add/remove one)");
      return restate(e.inner(), target, true);
    case Kind::PoissonSampled:
      if (to_replace_one)
        throw PrivacyError(
            "poisson_sampled is an add/remove amplification theorem (Mironov, Talwar & Zhang "
            "2019) and this accountant has no sound conversion of it to replace-one neighbours");
      return DpEvent::poisson_sampled(e.sampling_probability(), restate(e.inner(), target, false));
    case Kind::SampledWithoutReplacement:
      if (!to_replace_one)
        throw PrivacyError(
            "sampled_without_replacement is a replace-one amplification theorem (Wang, Balle & "
            "Kasiviswanathan 2019) and cannot be priced for add/remove neighbours");
      return DpEvent::sampled_without_replacement(e.source_size(), e.sample_size(),
                                                  restate(e.inner(), target, stated_replace_one));
    case Kind::SelfComposed:
      return DpEvent::self_composed(restate(e.inner(), target, stated_replace_one), e.count());
    case Kind::RepeatAndSelect:
      return DpEvent::repeat_and_select(restate(e.inner(), target, stated_replace_one), e.mean(),
                                        e.shape());
    case Kind::AdaptiveRepeatAndSelect:
      // Density ratio 1 is the non-adaptive selection (Wang et al. 2023, Sec. 3.1.1: Theorem 1
      // then is Papernot & Steinke's Theorem 2), so accountants price it by repeat_and_select's
      // own routes, which may be tighter (the privacy-profile route, Theorem 6's δ̂).
      if (e.density_ratio() == 1)
        return DpEvent::repeat_and_select(restate(e.inner(), target, stated_replace_one), e.mean(),
                                          e.shape());
      return DpEvent::adaptive_repeat_and_select(restate(e.inner(), target, stated_replace_one),
                                                 e.mean(), e.shape(), e.density_ratio());
    case Kind::RepeatUntilAccepted:
      return DpEvent::repeat_until_accepted(restate(e.inner(), target, stated_replace_one),
                                            e.stop_probability());
    case Kind::Composed:
    case Kind::OneOf: {
      std::vector<DpEvent> children;
      children.reserve(e.events().size());
      for (const auto& child : e.events())
        children.push_back(restate(child, target, stated_replace_one));
      return e.kind() == Kind::Composed ? DpEvent::composed(std::move(children))
                                        : DpEvent::one_of(std::move(children));
    }
    default:
      return to_replace_one && !stated_replace_one ? leaf_for_replace_one(e) : e;
  }
}

/// True when no node of `e` holds for replace-one neighbours only and none is an adaptive selection
/// of density ratio 1 (restate() would rebuild it unchanged for add/remove).
bool add_remove_as_stated(const DpEvent& e) {
  if (e.contains(Kind::ReplaceOne) || e.contains(Kind::SampledWithoutReplacement)) return false;
  if (!e.contains(Kind::AdaptiveRepeatAndSelect)) return true;
  return !any_event(e, [](const DpEvent& part) {
    return part.kind() == Kind::ReplaceOne || part.kind() == Kind::SampledWithoutReplacement ||
           (part.kind() == Kind::AdaptiveRepeatAndSelect && part.density_ratio() == 1);
  });
}

}  // namespace

const char* to_string(Neighbouring relation) {
  return relation == Neighbouring::ReplaceOne ? "replace-one" : "add/remove";
}

const char* describe(Neighbouring relation) {
  return relation == Neighbouring::ReplaceOne
             ? "replace-one: neighbouring datasets have the same size and differ in one record"
             : "add/remove: neighbouring datasets differ by one record added or removed";
}

Neighbouring neighbouring_of(const DpEvent& event) {
  const bool replace_one =
      event.contains(Kind::ReplaceOne) || event.contains(Kind::SampledWithoutReplacement);
  // The walk below only finds the parts to name when the two relations are mixed.
  if (!replace_one || !event.contains(Kind::PoissonSampled))
    return replace_one ? Neighbouring::ReplaceOne : Neighbouring::AddRemove;
  const Demand d = demand_of(event);
  if (d.add_remove() && d.replace_one())
    throw PrivacyError(
        "mixed neighbouring relations: " + shortened(*d.add_remove_part) +
        " is an add/remove (Poisson) amplification and " + shortened(*d.replace_one_part) +
        " holds for replace-one neighbours; there is no sound conversion of a Poisson-sampled "
        "part to replace-one here: use one relation throughout (e.g. sampling without "
        "replacement for the trainer)");
  return d.replace_one() ? Neighbouring::ReplaceOne : Neighbouring::AddRemove;
}

DpEvent restated_for(const DpEvent& event, Neighbouring relation) {
  // For add/remove, restate() rebuilds every node unchanged unless a node is replace-one only
  // (then it throws): a copy says the same without calling a factory per node.
  if (relation == Neighbouring::AddRemove && add_remove_as_stated(event)) return event;
  return restate(event, relation, false);
}

}  // namespace dptune
