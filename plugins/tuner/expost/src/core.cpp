#include "expost/core.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"
#include "dptune/helpers/format.hpp"

namespace dptune::expost {
namespace {

/// `x` with up to 6 significant digits, as the reports print numbers.
std::string shortest(double x) { return significant_digits(x, 6); }

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("expost: " + what);
}

/// Basic composition of an event made of pure leaves, already restated (no ReplaceOne left).
double basic_pure_epsilon(const DpEvent& event) {
  switch (event.kind()) {
    case DpEvent::Kind::NoOp:
      return 0;
    case DpEvent::Kind::PureDp:
      return event.epsilon();
    case DpEvent::Kind::Laplace:  // Laplace(b) relative to the L1 sensitivity: (1/b)-DP
      return 1 / event.noise_multiplier();
    case DpEvent::Kind::SelfComposed:
      return static_cast<double>(event.count()) * basic_pure_epsilon(event.inner());
    case DpEvent::Kind::Composed: {
      double sum = 0;
      for (const DpEvent& part : event.events()) sum += basic_pure_epsilon(part);
      return sum;
    }
    case DpEvent::Kind::ReplaceOne:
      return basic_pure_epsilon(event.inner());
    default:
      throw InvalidArgument("expost: event " + event.to_string() + " is not pure DP");
  }
}

}  // namespace

double default_epsilon_start(double cap, double ratio, std::size_t candidates, std::size_t levels) {
  require(cap > 0 && std::isfinite(cap), "epsilon_cap must be a positive number");
  require(ratio >= 1 && std::isfinite(ratio), "ratio must be >= 1");
  require(candidates >= 1 && levels >= 1, "at least one candidate and one level");
  double per_candidate = 0, level = 1;
  for (std::size_t l = 0; l < levels; ++l, level *= ratio) per_candidate += level;
  return cap / (static_cast<double>(candidates) * per_candidate);
}

Ladder make_ladder(double epsilon_start, double ratio, double cap, std::size_t candidates) {
  require(epsilon_start > 0 && std::isfinite(epsilon_start),
          "epsilon_start must be a positive number");
  require(ratio >= 1 && std::isfinite(ratio), "ratio must be >= 1");
  require(cap > 0 && std::isfinite(cap), "epsilon_cap must be a positive number");
  require(candidates >= 1, "at least one candidate");
  // A ladder that fills the cap exactly (the default ε_1) sums to cap up to rounding: a relative
  // slack of 1e-12 keeps its last level.  The ex-ante guarantee printed is the accountant's price
  // of the composed steps, never this sum, so the slack cannot understate it.
  const double limit = cap * (1 + 1e-12);
  constexpr std::size_t kMaxLevels = 64;  // ratio 1 and a tiny ε_1 must still end
  Ladder ladder;
  ladder.candidates = candidates;
  double spent = 0, level = epsilon_start;
  while (ladder.level_epsilon.size() < kMaxLevels &&
         spent + static_cast<double>(candidates) * level <= limit) {
    spent += static_cast<double>(candidates) * level;
    ladder.level_epsilon.push_back(level);
    level *= ratio;
  }
  require(!ladder.level_epsilon.empty(),
          "not even one level fits the cap: " + std::to_string(candidates) + " candidate(s) x " +
              "epsilon_start " + shortest(epsilon_start) + " > epsilon_cap " + shortest(cap));
  return ladder;
}

double chain_rule_epsilon(const Ladder& ladder, std::size_t steps_run) {
  require(steps_run <= ladder.steps(), "more steps run than the ladder has");
  double sum = 0;
  for (std::size_t j = 0; j < steps_run; ++j) sum += ladder.step_epsilon(j);
  return sum;
}

Walk walk_ladder(std::size_t steps, double target,
                 const std::function<double(std::size_t)>& score_of_step) {
  require(steps >= 1, "a ladder of at least one step");
  Walk walk;
  for (std::size_t j = 0; j < steps; ++j) {
    const double score = score_of_step(j);
    walk.scores.push_back(score);
    walk.steps_run = j + 1;
    if (score >= target) {
      walk.met_target = true;
      walk.released = j;
      return walk;
    }
  }
  // The cap's release: the best private score, the earliest on a tie (a function of the released
  // scores only).
  walk.released = static_cast<std::size_t>(
      std::max_element(walk.scores.begin(), walk.scores.end()) - walk.scores.begin());
  return walk;
}

bool is_pure(const DpEvent& event) {
  bool pure = true;
  for_each_event(event, [&](const DpEvent& e) {
    switch (e.kind()) {
      case DpEvent::Kind::NoOp:
      case DpEvent::Kind::PureDp:
      case DpEvent::Kind::Laplace:
      case DpEvent::Kind::SelfComposed:
      case DpEvent::Kind::Composed:
      case DpEvent::Kind::ReplaceOne:
        break;
      default:
        pure = false;
    }
  });
  return pure;
}

double pure_epsilon(const DpEvent& event, Neighbouring relation) {
  require(is_pure(event), "event " + event.to_string() + " is not pure DP");
  return basic_pure_epsilon(restated_for(event, relation));
}

std::vector<double> rr_ladder_outcomes(std::span<const double> step_epsilons,
                                       std::span<const int> pass_bit, int true_bit) {
  require(step_epsilons.size() == pass_bit.size() && !step_epsilons.empty(),
          "one pass bit per step");
  std::vector<double> outcome(step_epsilons.size() + 1, 0);
  double none_passed_yet = 1;
  for (std::size_t j = 0; j < step_epsilons.size(); ++j) {
    const double e = std::exp(step_epsilons[j]);
    const double truthful = e / (1 + e);  // P[released bit = true bit]
    const double pass = pass_bit[j] == true_bit ? truthful : 1 - truthful;
    outcome[j] = none_passed_yet * pass;
    none_passed_yet *= 1 - pass;
  }
  outcome.back() = none_passed_yet;
  return outcome;
}

}  // namespace dptune::expost
