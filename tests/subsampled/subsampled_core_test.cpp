// The subsampled tuner's core: the subsample's public size (the layout's draw), the extrapolation
// rule, and the event of the whole procedure, against hand-built trees and numbers computed here
// by hand from Wang, Balle & Kasiviswanathan 2019, Theorem 9.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/errors.hpp"
#include "dptune/helpers/repetition.hpp"
#include "dptune/host/data_scopes.hpp"
#include "dptune/rng.hpp"
#include "rdp/calculator.hpp"
#include "subsampled/subsample.hpp"

using dptune::DpEvent;
using dptune::Params;
namespace sub = dptune::subsampled;

TEST_CASE("subsampled: the subsample has m = floor(q n) rows for any fraction 0 < q <= 1") {
  const auto tenth = sub::SubsampleSize::of(1000, 0.1);
  CHECK(tenth.sample_rows == 100);
  CHECK(tenth.ratio() == 0.1);
  CHECK(sub::SubsampleSize::of(341, 1.0 / 3).sample_rows == 113);       // ⌊113.67⌋
  CHECK(sub::SubsampleSize::of(1000, 0.3).sample_rows == 300);          // not 1/k
  CHECK(sub::SubsampleSize::of(341, 0.3).sample_rows == 102);           // ⌊102.3⌋
  CHECK(sub::SubsampleSize::of(7, 0.45).sample_rows == 3);              // ⌊3.15⌋
  CHECK(sub::SubsampleSize::of(300, 0.3333333333).sample_rows == 100);  // 99.99999999: a third
  CHECK(sub::SubsampleSize::of(341, 1.0).whole());
  CHECK(sub::SubsampleSize::of(341, 1.0).sample_rows == 341);
  CHECK_FALSE(sub::SubsampleSize::of(341, 0.999).whole());
  // Refusals name the parameter (the host then points at it in the pipeline).
  CHECK_THROWS_WITH_AS(sub::SubsampleSize::of(5, 0.1),
                       doctest::Contains("fraction: 0.1 of the 5 training rows is a subsample of "
                                         "0 rows; give a fraction of at least 0.2"),
                       dptune::InvalidArgument);
  CHECK_THROWS_WITH_AS(sub::SubsampleSize::of(5, 0.0), doctest::Contains("fraction: must be in"),
                       dptune::InvalidArgument);
  CHECK_THROWS_AS(sub::SubsampleSize::of(5, 1.5), dptune::InvalidArgument);
  CHECK_THROWS_AS(sub::SubsampleSize::check_fraction(-0.1), dptune::InvalidArgument);
}

TEST_CASE("subsampled: at q = 1/k the subsample has the partition's n/k rows, so the same price") {
  // The price depends on q only through (n, m): at q = 1/k, m must stay the ⌊n/k⌋ rows the
  // partition's part 0 had, for every n and k, so that every printed ε is unchanged.
  for (std::size_t n = 1; n <= 3000; n += (n < 200 ? 1 : 37))
    for (std::size_t k = 1; k <= std::min<std::size_t>(n, 50); ++k) {
      CAPTURE(n);
      CAPTURE(k);
      CHECK(sub::SubsampleSize::of(n, 1.0 / static_cast<double>(k)).sample_rows == n / k);
    }
}

namespace {
dptune::host::DataScopes layout(std::vector<double> labels, std::uint64_t seed) {
  dptune::Dataset train;
  train.rows = labels.size();
  train.labels = std::move(labels);
  return dptune::host::DataScopes(train, {}, [seed](std::uint64_t stream) {
    return std::make_unique<dptune::Xoshiro256>(seed, stream);
  });
}
}  // namespace

TEST_CASE("subsampled: the layout's subsample has m distinct rows and does not look at the data") {
  // The amplification is priced at m of n: the host must give the scope exactly m distinct rows,
  // from the layout's seed alone.  Two training splits that differ in one row (its label) get
  // the same rows; another seed gets other rows.
  for (std::size_t n : {7u, 100u, 341u, 1000u})
    for (double q : {1.0 / 3, 0.1, 0.3, 0.45, 0.999}) {
      if (q * static_cast<double>(n) < 1) continue;  // m = 0: refused (the case above)
      const auto size = sub::SubsampleSize::of(n, q);
      std::vector<double> labels(n, 0.0), neighbour(n, 0.0);
      neighbour[n / 2] = 1.0;
      const auto scopes = layout(labels, 11);
      CAPTURE(n);
      CAPTURE(q);
      const auto scope = dptune::DataScope::subsample(size.sample_rows);
      CHECK(scopes.train_rows(scope) == size.sample_rows);
      const auto rows = scopes.subsample(size.sample_rows);
      CHECK(std::set<std::size_t>(rows.begin(), rows.end()).size() == size.sample_rows);
      CHECK(rows.back() < n);
      CHECK(layout(neighbour, 11).subsample(size.sample_rows) == rows);
      if (n >= 100 && size.sample_rows < n - 1)
        CHECK(layout(labels, 12).subsample(size.sample_rows) != rows);
    }
  CHECK(dptune::DataScope::subsample(3).to_string() == "subsample of 3 rows");
  CHECK_THROWS_AS(layout(std::vector<double>(5, 0.0), 1).check(dptune::DataScope::subsample(6)),
                  dptune::InvalidArgument);
  CHECK_THROWS_AS(layout(std::vector<double>(5, 0.0), 1).check(dptune::DataScope::subsample(0)),
                  dptune::InvalidArgument);
}

TEST_CASE("subsampled: every row is in the layout's subsample with probability m/n") {
  // Seeded statistical check of the uniform draw the amplification assumes, at a fraction that
  // is not 1/k: n = 10, m = 3, 4000 layout seeds; each row's frequency within 5 standard
  // deviations (5·sqrt(0.21/4000) = 0.036) of 0.3.
  constexpr std::size_t kRows = 10, kSeeds = 4000;
  std::vector<double> in(kRows, 0.0);
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed)
    for (std::size_t row : layout(std::vector<double>(kRows, 0.0), seed).subsample(3))
      in[row] += 1.0 / kSeeds;
  for (std::size_t row = 0; row < kRows; ++row) {
    CAPTURE(row);
    CHECK(std::abs(in[row] - 0.3) < 0.036);
  }
}

TEST_CASE("subsampled: the extrapolation scales the named hyperparameters by n/m, keeps the rest") {
  const sub::Extrapolation rule{{"lot_size", "weight"}, sub::SubsampleSize::of(341, 1.0 / 3)};
  CHECK(rule.factor() == doctest::Approx(341.0 / 113));
  Params tuned{{"lot_size", std::int64_t{16}},
               {"weight", 0.5},
               {"learning_rate", 0.1},
               {"noise_multiplier", 2.0},
               {"epochs", std::int64_t{4}}};
  const Params full = rule.apply(tuned);
  CHECK(full.get_int("lot_size") == 48);  // round(16 · 3.0177) = round(48.28)
  CHECK(full.get_double("weight") == doctest::Approx(0.5 * 341 / 113));
  CHECK(full.get_double("learning_rate") == 0.1);  // kept
  CHECK(full.get_double("noise_multiplier") == 2.0);
  CHECK(full.get_int("epochs") == 4);
  // An integer never rounds to 0.
  const sub::Extrapolation shrink{{"lot_size"}, sub::SubsampleSize::of(10, 1.0)};
  CHECK(shrink.apply(Params{{"lot_size", std::int64_t{1}}}).get_int("lot_size") == 1);
  // A name the candidate does not hold is a value the pipeline fixes: left to it, and listed.
  CHECK(rule.apply(Params{{"weight", 1.0}}) == Params{{"weight", 341.0 / 113}});
  CHECK(rule.not_in(Params{{"weight", 1.0}}) == std::vector<std::string>{"lot_size"});
  CHECK(rule.not_in(tuned).empty());
  CHECK_THROWS_WITH_AS(
      sub::Extrapolation({{"model"}, rule.size}).apply(Params{{"model", std::string("mlp")}}),
      doctest::Contains("only numbers"), dptune::InvalidArgument);
  CHECK(sub::split_names(" lot_size, weight ,,") == std::vector<std::string>{"lot_size", "weight"});
  CHECK(sub::split_names("").empty());
}

TEST_CASE("subsampled: the tuning event is the hand-built composition") {
  const DpEvent base =
      DpEvent::composed({DpEvent::gaussian(2.0), DpEvent::replace_one(DpEvent::laplace(10.0))});
  const DpEvent score = DpEvent::replace_one(DpEvent::laplace(10.0));
  const auto size = sub::SubsampleSize::of(1000, 0.1);
  const DpEvent selection = DpEvent::repeat_and_select(base, 5.0, 0.0);
  CHECK(sub::tuning_event(base, &score, size, 5.0, 0.0) ==
        DpEvent::one_of({DpEvent::sampled_without_replacement(1000, 100, selection),
                         DpEvent::repeat_and_select(score, 5.0, 0.0)}));
  // Public validation: no record of the scored split is protected, so the amplified tuning alone.
  CHECK(sub::tuning_event(base, nullptr, size, 5.0, 0.0) ==
        DpEvent::sampled_without_replacement(1000, 100, selection));
  // q = 1: repeat_and_select on the full data, as the repetition tuner declares it.
  CHECK(sub::tuning_event(base, &score, sub::SubsampleSize::of(1000, 1.0), 5.0, 0.0) == selection);
  CHECK(sub::final_event(DpEvent::gaussian(3.0), &score) ==
        DpEvent::composed({DpEvent::gaussian(3.0), score}));
  CHECK(sub::final_event(DpEvent::gaussian(3.0), nullptr) == DpEvent::gaussian(3.0));
}

TEST_CASE("subsampled: Theorem 9 at order 2 by hand, for the inner events the tuner amplifies") {
  // Wang, Balle & Kasiviswanathan 2019, Theorem 9 at α = 2 and γ = m/n:
  //   ε'(2) = log(1 + γ² min{4(e^{ε(2)} − 1), e^{ε(2)} min{2, (e^{ε(∞)} − 1)²}}).
  // ε(2) is read from the rdp calculator's curve of the inner event and the arithmetic redone here.
  dptune::rdp::Options options;
  options.orders = {2.0};
  const dptune::rdp::Calculator calculator(options);
  const auto theorem9 = [](double gamma, double eps2, double eps_inf) {
    const double e = std::exp(eps2), m = std::expm1(eps_inf);
    return std::log1p(gamma * gamma * std::min(4 * (e - 1), e * std::min(2.0, m * m)));
  };
  // pure_dp(1): ε(∞) = 1.  With ε(2) = 1 and γ = 0.1 the numbers are 4(e − 1) = 6.87313 and
  // e·min{2, 2.95249} = 5.43656, so ε'(2) = log(1.0543656) = 0.052939.
  CHECK(theorem9(0.1, 1.0, 1.0) == doctest::Approx(0.052939).epsilon(1e-5));
  const DpEvent pure = DpEvent::replace_one(DpEvent::pure_dp(1.0));
  const double pure2 = calculator.cost(pure).rdp.at(0);
  CHECK(pure2 <= 1.0);
  CHECK(calculator.cost(DpEvent::sampled_without_replacement(10, 1, pure)).rdp.at(0) ==
        doctest::Approx(theorem9(0.1, pure2, 1.0)).epsilon(1e-9));
  // The inner event the tuner amplifies: repeat_and_select of a pure base (ε(∞) = ∞ for it, as
  // Theorem 2 gives no pure bound): the second member of the min is then infinite.
  const DpEvent selection = DpEvent::repeat_and_select(pure, 5.0, 0.0);
  const double selection2 = calculator.cost(selection).rdp.at(0);
  const double selection_inf = calculator.cost(selection).pure_epsilon;
  CAPTURE(selection2);
  CAPTURE(selection_inf);
  CHECK(calculator.cost(DpEvent::sampled_without_replacement(20, 2, selection)).rdp.at(0) <=
        theorem9(0.1, selection2, selection_inf) + 1e-12);
}

TEST_CASE("subsampled: the price is non-decreasing in the fraction, and q = 1 is repetition's") {
  const dptune::rdp::AccountantAdapter accountant;
  const DpEvent score = DpEvent::replace_one(DpEvent::laplace(10.0));
  const auto law = dptune::RepetitionDistribution::from_mean(10.0, 0.0);
  // The same training event at every q (the amplification alone varies): 25 steps of lots of 16
  // of 100 rows at noise multiplier 6, with its score; the final training the same at every q.
  const DpEvent training = DpEvent::self_composed(
      DpEvent::sampled_without_replacement(100, 16, DpEvent::gaussian(6.0)), 25);
  const DpEvent final = sub::final_event(
      DpEvent::self_composed(
          DpEvent::sampled_without_replacement(2000, 320, DpEvent::gaussian(6.0)), 25),
      &score);
  const auto procedure = [&](double q) {
    return sub::Procedure{DpEvent::composed({training, score}), &score,     final,
                          sub::SubsampleSize::of(2000, q),      law.mean(), law.shape()};
  };
  double previous = 0;
  // 1/k fractions and others: the price depends on q only through m = ⌊qn⌋.
  for (double q : {0.05, 0.07, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0}) {
    const sub::Procedure p = procedure(q);
    const sub::Priced chosen = sub::cheapest(accountant, 1e-5, p);
    CAPTURE(q);
    CAPTURE(chosen.route);
    CHECK(chosen.guarantee.epsilon >= previous);
    previous = chosen.guarantee.epsilon;
    // Every route is a price of the same procedure: the chosen one is the smallest of them.
    for (const auto& other : sub::prices(accountant, 1e-5, p))
      CHECK(chosen.guarantee.epsilon <= other.guarantee.epsilon);
    CHECK(sub::prices(accountant, 1e-5, p).size() == (q < 1 ? 3u : 1u));
  }
  // q = 1: the repetition tuner's repeat_and_select on the full data, composed with the final.
  const sub::Procedure whole = procedure(1.0);
  CHECK(previous == accountant
                        .epsilon(DpEvent::composed({DpEvent::repeat_and_select(
                                                        whole.base, law.mean(), law.shape()),
                                                    whole.final}),
                                 1e-5)
                        .epsilon);
  // The amplification pays: at q = 0.05 the whole procedure costs less than at q = 1.
  CHECK(sub::cheapest(accountant, 1e-5, procedure(0.05)).guarantee.epsilon < previous);
}

TEST_CASE("subsampled: the expected compute counts trainings x rows from E[K], never K") {
  const auto c = sub::expected_compute(sub::SubsampleSize::of(1000, 0.1), 5.0);
  CHECK(c.tuning == 500);
  CHECK(c.final == 1000);
  CHECK(c.total() == 1500);
  CHECK(c.full_data_repetition == 5000);
  CHECK(c.saved() == 3500);
}

TEST_CASE("subsampled: with q < 1 every price holds for replace-one neighbours") {
  // An added record reshuffles the layout's row slots, so the subsample is covered only for
  // replaced records: an add/remove price is dropped with q < 1 (kept with q = 1), and a Poisson
  // part, which cannot be restated for replace-one, leaves no price at all.
  const dptune::rdp::AccountantAdapter accountant;
  const auto law = dptune::RepetitionDistribution::from_mean(5.0, 0.0);
  const DpEvent laplace = DpEvent::laplace(2.0);  // add/remove
  sub::Procedure p{laplace,    nullptr,    laplace, sub::SubsampleSize::of(100, 0.5),
                   law.mean(), law.shape()};
  std::vector<std::string> names;
  for (const auto& priced : sub::prices(accountant, 1e-5, p)) {
    names.push_back(priced.route);
    CHECK(dptune::neighbouring_of(priced.event) == dptune::Neighbouring::ReplaceOne);
  }
  // (The profile route is refused here too: its add/remove (ε, δ), restated for replace-one by
  // group privacy, needs δ·(1 + e^ε) more than the δ share it was priced at.)
  CHECK(names == std::vector<std::string>{"Theorem 9"});
  p.size = sub::SubsampleSize::of(100, 1.0);
  REQUIRE(sub::prices(accountant, 1e-5, p).size() == 1);
  CHECK(dptune::neighbouring_of(sub::prices(accountant, 1e-5, p).front().event) ==
        dptune::Neighbouring::AddRemove);
  const DpEvent poisson =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.1, DpEvent::gaussian(2.0)), 10);
  p = {poisson, nullptr, poisson, sub::SubsampleSize::of(100, 0.5), law.mean(), law.shape()};
  CHECK_THROWS_AS(sub::prices(accountant, 1e-5, p), dptune::PrivacyError);
}
