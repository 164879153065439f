// The helper library's own functions: the analytic Gaussian (Balle & Wang 2018, Theorem 8) against
// values computed independently with mpmath at 60 digits, and candidates' events -> one_of.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"
#include "dptune/helpers/calibration.hpp"
#include "dptune/helpers/events.hpp"

namespace {

using dptune::DpEvent;

double rel(double got, double want) { return std::abs(got - want) / std::abs(want); }

// mpmath (mp.dps = 60): delta(s, e) = ncdf(1/(2s) - e s) - exp(e) ncdf(-1/(2s) - e s); the inverse
// functions by findroot on log delta.
struct DeltaCase {
  double s, epsilon, delta;
};
constexpr DeltaCase kDelta[] = {
    {2, 0.5, 0.052440323287669661712},
    {1, 1, 0.1269367375066439458},
    {0.5, 2, 0.33189799877682939357},
    {10, 0.1, 0.0087517681458095930779},
    // Both terms near 1e-292, past the erfc range: the asymptotic series, and a difference that
    // cancels 97% of the first term.
    {1, 37, 1.4764695344425281147e-293},
};

}  // namespace

TEST_CASE("helpers: analytic Gaussian delta matches independent high-precision values") {
  for (const auto& c : kDelta) {
    INFO("s = " << c.s << ", epsilon = " << c.epsilon);
    CHECK(rel(dptune::analytic_gaussian_delta(c.s, c.epsilon), c.delta) < 1e-9);
  }
  // ε = 0: δ = Φ(1/(2s)) − Φ(−1/(2s)) = erf(1/(2√2 s)).
  CHECK(rel(dptune::analytic_gaussian_delta(0.7, 0), std::erf(1 / (2 * std::sqrt(2.0) * 0.7))) <
        1e-12);
  CHECK_THROWS_AS(dptune::analytic_gaussian_delta(0, 1), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::analytic_gaussian_delta(1, -0.1), dptune::InvalidArgument);
}

TEST_CASE("helpers: analytic Gaussian noise multiplier and epsilon meet the target") {
  struct Target {
    double epsilon, delta, multiplier;
  };
  for (const auto& t :
       {Target{1, 1e-5, 3.7306316348159418322}, Target{0.5, 1e-6, 8.0576184807250442552},
        Target{3, 1e-5, 1.3905934566745367473}, Target{8, 1e-10, 0.83398922953798899003}}) {
    INFO("epsilon = " << t.epsilon << ", delta = " << t.delta);
    const double s = dptune::analytic_gaussian_noise_multiplier(t.epsilon, t.delta);
    CHECK(rel(s, t.multiplier) < 1e-9);
    CHECK(dptune::analytic_gaussian_delta(s, t.epsilon) <= t.delta);  // the end that meets δ
  }
  struct Budget {
    double s, delta, epsilon;
  };
  for (const auto& b :
       {Budget{3, 1e-5, 1.2710877669435984662}, Budget{1, 1e-3, 3.1386705485829392086},
        Budget{0.8, 1e-6, 6.3120601858013253521}}) {
    INFO("s = " << b.s << ", delta = " << b.delta);
    const double e = dptune::analytic_gaussian_epsilon(b.s, b.delta);
    CHECK(rel(e, b.epsilon) < 1e-9);
    CHECK(dptune::analytic_gaussian_delta(b.s, e) <= b.delta);
  }
  CHECK(dptune::analytic_gaussian_epsilon(100, 0.5) == 0);  // δ(0) = erf(1/(200√2)) < 0.5
  CHECK_THROWS_AS(dptune::analytic_gaussian_noise_multiplier(0, 1e-5), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::analytic_gaussian_noise_multiplier(1, 1), dptune::InvalidArgument);
  CHECK_THROWS_AS(dptune::analytic_gaussian_noise_multiplier(1e-12, 1e-300), dptune::PrivacyError);
}

TEST_CASE("helpers: candidates' events become one_of their distinct events") {
  const DpEvent a = DpEvent::gaussian(1.0), b = DpEvent::gaussian(2.0), c = DpEvent::laplace(1.0);
  const std::vector<DpEvent> events{b, a, b, c, a};
  CHECK(dptune::distinct_events(events) == std::vector<DpEvent>{b, a, c});  // first appearance
  CHECK(dptune::one_of_distinct(events) == DpEvent::one_of({b, a, c}));
  // All equal: the event itself, not a one_of of one.
  const std::vector<DpEvent> same{a, a, a};
  CHECK(dptune::one_of_distinct(same) == a);
  CHECK(dptune::distinct_events(std::vector<DpEvent>{}).empty());
  CHECK_THROWS_AS(dptune::one_of_distinct(std::vector<DpEvent>{}), dptune::InvalidArgument);
}

TEST_CASE("structural_hash: equal events hash equal, and it tells the usual differences apart") {
  // Two separately built copies of a nested event: equal, so the same hash.
  const auto build = [](double sigma, std::int64_t steps) {
    return DpEvent::composed(
        {DpEvent::self_composed(
             DpEvent::sampled_without_replacement(341, 32, DpEvent::discrete_gaussian(sigma)),
             steps),
         DpEvent::one_of({DpEvent::laplace(2), DpEvent::pure_dp(0.5)}),
         DpEvent::repeat_and_select(DpEvent::zcdp(0.1), 5, 1)});
  };
  CHECK(build(6, 44) == build(6, 44));
  CHECK(dptune::structural_hash(build(6, 44)) == dptune::structural_hash(build(6, 44)));
  // A different number, count or kind anywhere in the tree changes the hash (not guaranteed for
  // every pair, but these must not collide for the grouping to be worth anything).
  const std::size_t base = dptune::structural_hash(build(6, 44));
  CHECK(dptune::structural_hash(build(6.5, 44)) != base);
  CHECK(dptune::structural_hash(build(6, 45)) != base);
  CHECK(dptune::structural_hash(DpEvent::gaussian(1)) !=
        dptune::structural_hash(DpEvent::laplace(1)));
  CHECK(dptune::structural_hash(DpEvent::composed({DpEvent::laplace(1)})) !=
        dptune::structural_hash(DpEvent::one_of({DpEvent::laplace(1)})));
}

TEST_CASE("structural_hash: every field of the kind table counts, replace_one's event too") {
  // Hashed from the kind table's fields: a wrapper kind's inner event is part of the hash (the
  // switch it replaced skipped replace_one, so these two collided).
  CHECK(dptune::structural_hash(DpEvent::replace_one(DpEvent::gaussian(1))) !=
        dptune::structural_hash(DpEvent::replace_one(DpEvent::gaussian(2))));
  CHECK(dptune::structural_hash(DpEvent::repeat_until_accepted(DpEvent::laplace(1), 0.1)) !=
        dptune::structural_hash(DpEvent::repeat_until_accepted(DpEvent::laplace(1), 0.2)));
}

namespace {
/// A random event tree of every composite kind over a few leaves (seeded): the trees the kept
/// kinds and hashes are checked on against a walk of the tree.
DpEvent random_tree(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 4 : 12);
  const double sigma = 0.5 + static_cast<double>(rng() % 8) / 4;
  switch (pick(rng)) {
    case 0:
      return DpEvent::gaussian(sigma);
    case 1:
      return DpEvent::laplace(sigma);
    case 2:
      return DpEvent::pure_dp(sigma);
    case 3:
      return DpEvent::discrete_gaussian_on_grid(sigma, 64);
    case 4:
      return DpEvent::approx_dp(sigma, 1e-6);
    case 5:
      return DpEvent::poisson_sampled(0.1, random_tree(rng, depth - 1));
    case 6:
      return DpEvent::sampled_without_replacement(100, 10, random_tree(rng, depth - 1));
    case 7:
      return DpEvent::self_composed(random_tree(rng, depth - 1), 3);
    case 8:
      return DpEvent::replace_one(random_tree(rng, depth - 1));
    case 9:
      return DpEvent::repeat_and_select(random_tree(rng, depth - 1), 4, 1);
    case 10:
      return DpEvent::adaptive_repeat_and_select(random_tree(rng, depth - 1), 4, 1, 1);
    case 11:
      return DpEvent::one_of({random_tree(rng, depth - 1), random_tree(rng, depth - 1)});
    default:
      return DpEvent::composed(
          {random_tree(rng, depth - 1), random_tree(rng, depth - 1), random_tree(rng, depth - 1)});
  }
}
}  // namespace

TEST_CASE("contains: the kinds kept per node are exactly the kinds a walk of the tree finds") {
  std::mt19937_64 rng(20261129);
  const auto kinds = {DpEvent::Kind::Gaussian,
                      DpEvent::Kind::PoissonSampled,
                      DpEvent::Kind::SampledWithoutReplacement,
                      DpEvent::Kind::ReplaceOne,
                      DpEvent::Kind::DiscreteGaussianOnGrid,
                      DpEvent::Kind::ApproxDp,
                      DpEvent::Kind::AdaptiveRepeatAndSelect,
                      DpEvent::Kind::Composed,
                      DpEvent::Kind::NoOp};
  int with_both_relations = 0;
  for (int t = 0; t < 400; ++t) {
    const DpEvent e = random_tree(rng, 4);
    for (const auto kind : kinds)
      CHECK(e.contains(kind) ==
            dptune::any_event(e, [&](const DpEvent& part) { return part.kind() == kind; }));
    // The relation read from the kept kinds is the one the rules state (dp_event.hpp): a mix of a
    // Poisson part and a replace-one part throws, naming both.
    const bool replace_one = dptune::any_event(e, [](const DpEvent& p) {
      return p.kind() == DpEvent::Kind::ReplaceOne ||
             p.kind() == DpEvent::Kind::SampledWithoutReplacement;
    });
    const bool poisson = dptune::any_event(
        e, [](const DpEvent& p) { return p.kind() == DpEvent::Kind::PoissonSampled; });
    if (replace_one && poisson) {
      ++with_both_relations;
      CHECK_THROWS_WITH_AS(dptune::neighbouring_of(e),
                           doctest::Contains("mixed neighbouring relations"), dptune::PrivacyError);
    } else {
      CHECK(dptune::neighbouring_of(e) ==
            (replace_one ? dptune::Neighbouring::ReplaceOne : dptune::Neighbouring::AddRemove));
    }
  }
  CHECK(with_both_relations > 20);  // the throwing path was exercised too
}

TEST_CASE("a default-built event is no_op, equal to it and hashed alike") {
  const DpEvent none;
  CHECK(none.kind() == DpEvent::Kind::NoOp);
  CHECK(none == DpEvent::no_op());
  CHECK(dptune::structural_hash(none) == dptune::structural_hash(DpEvent::no_op()));
  CHECK(none.contains(DpEvent::Kind::NoOp));
  CHECK_FALSE(none.contains(DpEvent::Kind::Gaussian));
  // Equal trees built apart hash alike, and the hash is the kept one.
  const DpEvent a = DpEvent::composed({DpEvent::gaussian(1), DpEvent::laplace(0.0)});
  const DpEvent b = DpEvent::composed({DpEvent::gaussian(1), DpEvent::laplace(-0.0)});
  CHECK(a == b);
  CHECK(a.structural_hash() == b.structural_hash());
}
