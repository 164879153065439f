#include "dptune/helpers/events.hpp"

#include <algorithm>
#include <functional>

#include "dptune/errors.hpp"

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
  using K = DpEvent::Kind;
  std::size_t h = std::hash<int>{}(static_cast<int>(e.kind()));
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  auto mixd = [&](double v) { mix(std::hash<double>{}(v)); };
  switch (e.kind()) {
    case K::Gaussian:
    case K::Laplace:
    case K::DiscreteGaussian:
      mixd(e.noise_multiplier());
      break;
    case K::DiscreteGaussianOnGrid:
      mixd(e.noise_multiplier());
      mixd(e.min_scale());
      break;
    case K::PureDp:
      mixd(e.epsilon());
      break;
    case K::ApproxDp:
      mixd(e.epsilon());
      mixd(e.delta());
      break;
    case K::Zcdp:
      mixd(e.rho());
      break;
    case K::PoissonSampled:
      mixd(e.sampling_probability());
      mix(structural_hash(e.inner()));
      break;
    case K::SampledWithoutReplacement:
      mix(static_cast<std::size_t>(e.source_size()));
      mix(static_cast<std::size_t>(e.sample_size()));
      mix(structural_hash(e.inner()));
      break;
    case K::SelfComposed:
      mix(static_cast<std::size_t>(e.count()));
      mix(structural_hash(e.inner()));
      break;
    case K::Composed:
      for (const auto& c : e.events()) mix(structural_hash(c));
      break;
    case K::RepeatAndSelect:
      mixd(e.mean());
      mixd(e.shape());
      mix(structural_hash(e.inner()));
      break;
    case K::OneOf:
      mix(0x51);
      for (const auto& c : e.events()) mix(structural_hash(c));
      break;
    case K::RepeatUntilAccepted:
      mixd(e.stop_probability());
      mix(structural_hash(e.inner()));
      break;
    default:
      break;
  }
  return h;
}

}  // namespace dptune
