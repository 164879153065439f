#include "subsampled/subsample.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <variant>

#include "dptune/errors.hpp"
#include "repetition/selection.hpp"

namespace dptune::subsampled {

using repetition::fmt;

void SubsampleSize::check_fraction(double fraction) {
  if (!(fraction > 0 && fraction <= 1))
    throw InvalidArgument("fraction: must be in (0, 1], got " + fmt(fraction));
}

SubsampleSize SubsampleSize::of(std::size_t full_rows, double fraction) {
  check_fraction(fraction);
  SubsampleSize s;
  s.full_rows = full_rows;
  s.fraction = fraction;
  // ⌊qn⌋, with q·n within 1e-9 (relative) of a whole number taken as it: a q·n that rounding puts
  // just below the whole number the user means (a third written as 0.3333333333, of 300 rows)
  // gives that number.
  const double rows = fraction * static_cast<double>(full_rows);
  const double nearest = std::round(rows);
  const double whole =
      std::abs(rows - nearest) <= 1e-9 * std::max(1.0, rows) ? nearest : std::floor(rows);
  s.sample_rows = std::min(full_rows, static_cast<std::size_t>(whole));
  if (s.sample_rows == 0)
    throw InvalidArgument("fraction: " + fmt(fraction) + " of the " + std::to_string(full_rows) +
                          " training rows is a subsample of 0 rows; give a fraction of at least " +
                          fmt(full_rows == 0 ? 1.0 : 1.0 / static_cast<double>(full_rows)));
  return s;
}

double SubsampleSize::ratio() const {
  return static_cast<double>(sample_rows) / static_cast<double>(full_rows);
}

double Extrapolation::factor() const {
  return static_cast<double>(size.full_rows) / static_cast<double>(size.sample_rows);
}

Params Extrapolation::apply(const Params& tuned) const {
  Params out = tuned;
  const double s = factor();
  for (const auto& name : scaled) {
    if (!tuned.contains(name)) continue;  // fixed by the pipeline: kept (not_in)
    const Value& v = tuned.at(name);
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      const double scaled_value = std::round(static_cast<double>(*i) * s);
      out.set(name, static_cast<std::int64_t>(std::max(1.0, scaled_value)));
    } else if (const auto* d = std::get_if<double>(&v)) {
      out.set(name, *d * s);
    } else {
      throw InvalidArgument("subsampled: scale_with_data names '" + name + "', a " + type_name(v) +
                            " hyperparameter; only numbers can be scaled");
    }
  }
  return out;
}

std::vector<std::string> Extrapolation::not_in(const Params& candidate) const {
  std::vector<std::string> out;
  for (const auto& name : scaled)
    if (!candidate.contains(name)) out.push_back(name);
  return out;
}

std::string Extrapolation::describe() const {
  std::string names;
  for (const auto& n : scaled) names += (names.empty() ? "" : ", ") + n;
  return "extrapolation from m = " + std::to_string(size.sample_rows) +
         " to n = " + std::to_string(size.full_rows) + " rows (s = n/m = " + fmt(factor()) + "): " +
         (names.empty() ? std::string("every hyperparameter kept")
                        : names +
                              " multiplied by s (integers rounded, at least 1), every other "
                              "hyperparameter kept");
}

std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    const auto first = current.find_first_not_of(" \t");
    if (first != std::string::npos)
      out.push_back(current.substr(first, current.find_last_not_of(" \t") - first + 1));
    current.clear();
  };
  for (char c : list) {
    if (c == ',')
      flush();
    else
      current.push_back(c);
  }
  flush();
  return out;
}

DpEvent tuning_event(const DpEvent& base, const DpEvent* score, const SubsampleSize& size,
                     double mean, double shape) {
  DpEvent selection = DpEvent::repeat_and_select(base, mean, shape);
  // q = 1: the record is in every run's training data or in the scored split, and base (training
  // composed with the score) bounds either case.
  if (size.whole()) return selection;
  DpEvent amplified =
      DpEvent::sampled_without_replacement(static_cast<std::int64_t>(size.full_rows),
                                           static_cast<std::int64_t>(size.sample_rows), selection);
  // The scored split is not subsampled: a record of it changes every run's score, never its
  // training; the worst of the two cases bounds every neighbouring pair.
  if (!score) return amplified;
  return DpEvent::one_of({amplified, DpEvent::repeat_and_select(*score, mean, shape)});
}

DpEvent final_event(const DpEvent& worst_final, const DpEvent* score) {
  return score ? DpEvent::composed({worst_final, *score}) : worst_final;
}

namespace {

/// An (ε, δ) guarantee as an event, stated for `relation`.
DpEvent approx_for(const PrivacyGuarantee& g, Neighbouring relation) {
  const DpEvent leaf = DpEvent::approx_dp(g.epsilon, g.delta);
  return relation == Neighbouring::ReplaceOne ? DpEvent::replace_one(leaf) : leaf;
}

/// The profile route's tuning event (q < 1): every part an approx_dp guarantee, since one_of does
/// not mix approx_dp with RDP parts.  The tuning's δ share is δ/2: qδ_t for the training record's
/// case, and the scored record's case at the same δ.
DpEvent profile_tuning(const Accountant& accountant, double delta, const Procedure& p) {
  const double q = p.size.ratio();
  const double inner_delta = std::min(delta / (2 * q), 0.5);
  const DpEvent selection = DpEvent::repeat_and_select(p.base, p.mean, p.shape);
  DpEvent amplified = DpEvent::sampled_without_replacement(
      static_cast<std::int64_t>(p.size.full_rows), static_cast<std::int64_t>(p.size.sample_rows),
      approx_for(accountant.epsilon(selection, inner_delta), neighbouring_of(selection)));
  if (!p.score) return amplified;
  const DpEvent scores = DpEvent::repeat_and_select(*p.score, p.mean, p.shape);
  return DpEvent::one_of({amplified, approx_for(accountant.epsilon(scores, q * inner_delta),
                                                neighbouring_of(scores))});
}

}  // namespace

std::vector<Priced> prices(const Accountant& accountant, double delta, const Procedure& p) {
  std::vector<std::pair<std::string, std::function<DpEvent()>>> routes;
  if (!p.size.whole()) {
    routes.emplace_back("Theorem 9",
                        [&] { return tuning_event(p.base, p.score, p.size, p.mean, p.shape); });
    routes.emplace_back("profile", [&] { return profile_tuning(accountant, delta, p); });
  }
  routes.emplace_back("unamplified",
                      [&] { return DpEvent::repeat_and_select(p.base, p.mean, p.shape); });
  std::vector<Priced> out;
  std::string refusals;
  for (const auto& [name, tuning] : routes) {
    try {
      const DpEvent total = DpEvent::composed({tuning(), p.final});
      // The layout draws the subsample as a prefix of one shuffle of the n row slots: a replaced
      // record keeps its slot, an added one changes n and reshuffles every slot.  So with q < 1
      // only a replace-one guarantee covers it (neighbouring_of also refuses a Poisson part mixed
      // with a replace-one one).
      if (!p.size.whole() && neighbouring_of(total) != Neighbouring::ReplaceOne)
        throw PrivacyError(
            "stated for add/remove neighbours, which the subsample does not keep (an added "
            "record reshuffles the layout's row slots)");
      const std::string why = accountant.unsupported_reason(total);
      if (!why.empty()) throw PrivacyError(why);
      out.push_back({name, total, accountant.epsilon(total, delta)});
    } catch (const PrivacyError& e) {
      refusals += (refusals.empty() ? "" : "; ") + name + " route: " + e.what();
    }
  }
  if (out.empty()) throw PrivacyError(refusals);
  return out;
}

Priced cheapest(const Accountant& accountant, double delta, const Procedure& p) {
  const std::vector<Priced> all = prices(accountant, delta, p);
  std::size_t best = 0;
  for (std::size_t i = 1; i < all.size(); ++i)
    if (all[i].guarantee.epsilon < all[best].guarantee.epsilon) best = i;
  return all.at(best);
}

Compute expected_compute(const SubsampleSize& size, double mean_runs) {
  Compute c;
  c.tuning = mean_runs * static_cast<double>(size.sample_rows);
  c.final = static_cast<double>(size.full_rows);
  c.full_data_repetition = mean_runs * static_cast<double>(size.full_rows);
  return c;
}

}  // namespace dptune::subsampled
