// SDK value types: Params, schemas, search spaces, DpEvent, samplers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "dptune/dptune.hpp"

using namespace dptune;

TEST_CASE("sdk: params typed access and merge") {
  Params p{{"b", 0.5}, {"C", std::int64_t{3}}, {"flag", true}, {"name", std::string("x")}};
  CHECK(p.get_double("b") == 0.5);
  CHECK(p.get_double("C") == 3.0);  // an int is a valid float
  CHECK(p.get_int("C") == 3);
  CHECK(p.get_bool("flag"));
  CHECK(p.get_string("name") == "x");
  CHECK_THROWS_WITH_AS(p.get_int("b"), "parameter 'b': expected int, got float", InvalidArgument);
  CHECK_THROWS_WITH_AS(p.get_double("missing"), "missing parameter 'missing'", InvalidArgument);
  Params q = p.merged({{"b", 2.0}});
  CHECK(q.get_double("b") == 2.0);
  CHECK(p.get_double("b") == 0.5);
  CHECK(q.to_string() == "{C: 3, b: 2.0, flag: true, name: x}");
  CHECK(to_string(Value{0.1}) == "0.1");
  CHECK(to_string(Value{1e-300}) == "1e-300");
}

TEST_CASE("sdk: lists of numbers in string parameters") {
  using dptune::parse_number_list;
  CHECK(parse_number_list("0.25, 1,3", "x") == std::vector<double>{0.25, 1, 3});
  CHECK(parse_number_list("0.5, 5,10", "x") == std::vector<double>{0.5, 5, 10});
  CHECK(parse_number_list("[1]", "x") == std::vector<double>{1});
  CHECK(parse_number_list(" [2, 1e-3 ] ", "x") == std::vector<double>{2, 1e-3});
  CHECK_THROWS_WITH_AS(parse_number_list("1,,2", "dp_hype: epsilons"),
                       doctest::Contains("dp_hype: epsilons: empty entry"),
                       dptune::InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_number_list("0.5,,1", "sim_k_epsilons"),
                       doctest::Contains("sim_k_epsilons: empty entry"), dptune::InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_number_list("1, two", "sim_k_epsilons"),
                       doctest::Contains("'two' is not a number"), dptune::InvalidArgument);
  CHECK_THROWS_AS(parse_number_list("a", "x"), dptune::InvalidArgument);
  CHECK_THROWS_AS(parse_number_list("1,", "x"), dptune::InvalidArgument);
  CHECK_THROWS_AS(parse_number_list("1, inf", "x"), dptune::InvalidArgument);
  CHECK_THROWS_AS(parse_number_list("1e999", "x"), dptune::InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_number_list(" [ ] ", "sim_means"),
                       doctest::Contains("sim_means: expected a comma-separated list"),
                       dptune::InvalidArgument);
}

TEST_CASE("sdk: schema check, defaults and messages") {
  ParamSchema s;
  s.add_float("b", "noise")
      .min_exclusive(0)
      .add_int("C", "bound")
      .min(1)
      .max(30)
      .default_to(std::int64_t{5})
      .add_string("mode", "mode")
      .one_of({"a", "b"})
      .default_to(std::string("a"))
      .add_bool("on", "switch")
      .default_to(false);
  Params full = s.complete({{"b", std::int64_t{2}}});
  CHECK(std::holds_alternative<double>(full.at("b")));  // int promoted to the float type
  CHECK(full.get_double("b") == 2.0);
  CHECK(full.get_int("C") == 5);
  CHECK(full.get_string("mode") == "a");
  CHECK(!full.get_bool("on"));
  CHECK_THROWS_WITH_AS(s.complete({}), "missing required parameter 'b' (noise)", InvalidArgument);
  CHECK_THROWS_WITH_AS(s.complete({{"b", 0.0}}),
                       "parameter 'b': expected float in (0.0, inf), got 0.0", InvalidArgument);
  CHECK_THROWS_WITH_AS(s.complete({{"b", 1.0}, {"C", std::int64_t{31}}}),
                       "parameter 'C': expected int in [1, 30], got 31", InvalidArgument);
  CHECK_THROWS_WITH_AS(s.complete({{"b", 1.0}, {"C", 2.5}}),
                       "parameter 'C': expected int in [1, 30], got float '2.5'", InvalidArgument);
  CHECK_THROWS_WITH_AS(s.complete({{"b", 1.0}, {"mode", std::string("c")}}),
                       "parameter 'mode': expected string one of {a, b}, got 'c'", InvalidArgument);
  CHECK_THROWS_WITH_AS(s.complete({{"b", 1.0}, {"bee", 1.0}}), "unknown parameter 'bee'",
                       InvalidArgument);
  CHECK_THROWS_AS(s.complete({{"b", std::nan("")}}), InvalidArgument);
  CHECK_THROWS_AS(ParamSchema{}.add_int("x", "").min(1).default_to(std::int64_t{0}),
                  InvalidArgument);
}

TEST_CASE("sdk: search space validation") {
  SearchSpace s;
  CHECK_THROWS_WITH_AS(s.add_float("b", 1, 1), "search space 'b': low (1.0) must be < high (1.0)",
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(s.add_float("b", 0, 1, true),
                       "search space 'b': log scale needs low > 0, got 0.0", InvalidArgument);
  CHECK_THROWS_WITH_AS(s.add_int("C", 5, 2), "search space 'C': low (5) must be < high (2)",
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(s.add_int("C", 1, 9, false, 0), "search space 'C': step must be >= 1, got 0",
                       InvalidArgument);
  CHECK_THROWS_AS(s.add_categorical("o", {}), InvalidArgument);
  CHECK_THROWS_AS(s.add_categorical("o", {Value{std::string("a")}, Value{std::string("a")}}),
                  InvalidArgument);
  s.add_int("C", 1, 30);
  CHECK_THROWS_WITH_AS(s.add_float("C", 0, 1), "search space: duplicate dimension 'C'",
                       InvalidArgument);
}

TEST_CASE("sdk: search space grids") {
  SearchSpace s;
  s.add_int("C", 1, 30).add_float("b", 1e-2, 1e2, true);
  // All 30 ints; 5 log-spaced floats 1e-2, 1e-1, 1, 10, 100.
  auto grid = s.grid(5);
  CHECK(SearchSpace::grid_values(s.dimensions()[0], 5).size() == 5);
  CHECK(SearchSpace::grid_values(s.dimensions()[0], 30).size() == 30);
  CHECK(grid.size() == 25);
  auto b_values = SearchSpace::grid_values(s.dimensions()[1], 5);
  REQUIRE(b_values.size() == 5);
  const double expected[] = {1e-2, 1e-1, 1.0, 10.0, 100.0};
  for (int i = 0; i < 5; ++i)
    CHECK(std::get<double>(b_values[i]) == doctest::Approx(expected[i]).epsilon(1e-12));
  CHECK(std::get<double>(b_values.front()) == 1e-2);  // exact endpoints
  CHECK(std::get<double>(b_values.back()) == 1e2);
  CHECK(s.grid(30).size() == 900);
  // The last dimension varies fastest.
  CHECK(grid[0].get_int("C") == 1);
  CHECK(grid[1].get_int("C") == 1);
  CHECK(grid[5].get_int("C") > 1);

  SearchSpace stepped;
  stepped.add_int("k", 2, 11, false, 3)
      .add_categorical("opt", {Value{std::string("sgd")}, Value{std::string("adam")}});
  auto kv = SearchSpace::grid_values(stepped.dimensions()[0], 100);
  REQUIRE(kv.size() == 4);  // 2, 5, 8, 11
  CHECK(std::get<std::int64_t>(kv[3]) == 11);
  CHECK(stepped.dimensions()[0].cardinality() == 4);
  CHECK(stepped.grid(100).size() == 8);
  SearchSpace fs;
  fs.add_float("x", 0, 1, false, 0.25);
  CHECK(SearchSpace::grid_values(fs.dimensions()[0], 100).size() == 5);
}

TEST_CASE("sdk: search space sampling stays inside bounds and is log-uniform") {
  SearchSpace s;
  s.add_int("C", 1, 30)
      .add_float("b", 1e-2, 1e2, true)
      .add_int("k", 3, 15, false, 4)
      .add_categorical("o", {Value{std::string("a")}, Value{std::int64_t{2}}});
  Xoshiro256 rng(7);
  std::vector<double> logs;
  std::set<std::int64_t> ks;
  std::map<std::int64_t, int> c_counts;
  for (int i = 0; i < 20000; ++i) {
    Params p = s.sample(rng);
    REQUIRE(s.contains(p));
    logs.push_back(std::log10(p.get_double("b")));
    ks.insert(p.get_int("k"));
    c_counts[p.get_int("C")]++;
  }
  CHECK(ks == std::set<std::int64_t>{3, 7, 11, 15});
  CHECK(c_counts.size() == 30);
  CHECK(c_counts.begin()->first == 1);
  CHECK(c_counts.rbegin()->first == 30);
  std::sort(logs.begin(), logs.end());
  // log10(b) ~ U(-2, 2): median 0, quartiles -1 and 1 (sd of a quartile estimate ~ 0.01).
  CHECK(std::abs(logs[logs.size() / 2]) < 0.05);
  CHECK(std::abs(logs[logs.size() / 4] + 1.0) < 0.05);
  CHECK(std::abs(logs[3 * logs.size() / 4] - 1.0) < 0.05);
}

TEST_CASE("sdk: unit cube mapping is a bijection up to rounding") {
  SearchSpace s;
  s.add_int("C", 1, 30)
      .add_float("b", 1e-2, 1e2, true)
      .add_float("lr", 0, 1)
      .add_int("n", 1, 1000, true)
      .add_categorical("o",
                       {Value{std::string("a")}, Value{std::string("b")}, Value{std::string("c")}});
  for (const auto& p : s.grid(4)) {
    auto u = s.to_unit(p);
    for (double x : u) CHECK((x >= 0 && x <= 1));
    Params back = s.from_unit(u);
    CHECK(back.get_int("C") == p.get_int("C"));
    CHECK(back.get_double("b") == doctest::Approx(p.get_double("b")).epsilon(1e-12));
    CHECK(back.get_double("lr") == doctest::Approx(p.get_double("lr")));
    CHECK(back.get_int("n") == p.get_int("n"));
    CHECK(back.get_string("o") == p.get_string("o"));
  }
  // Every int value owns a non-empty slice of [0, 1]: the corners map to the end values.
  CHECK(s.from_unit({0, 0, 0, 0, 0}).get_int("C") == 1);
  CHECK(s.from_unit({1, 1, 1, 1, 1}).get_int("C") == 30);
  CHECK(s.from_unit({1, 1, 1, 1, 1}).get_int("n") == 1000);
  CHECK(s.from_unit({0, 0, 0, 0, 0}).get_double("b") == doctest::Approx(1e-2));
  CHECK(s.from_unit({0.5, 0.5, 0.5, 0.5, 0.5}).get_double("b") == doctest::Approx(1.0));
  CHECK_THROWS_AS(s.from_unit({0.5}), InvalidArgument);
}

TEST_CASE("sdk: DpEvent construction, accessors and syntax") {
  auto e = DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.1)), 1000);
  CHECK(e.kind() == DpEvent::Kind::SelfComposed);
  CHECK(e.count() == 1000);
  CHECK(e.inner().sampling_probability() == 0.01);
  CHECK(e.inner().inner().noise_multiplier() == 1.1);
  CHECK(e.to_string() ==
        "{self_composed: {count: 1000, event: {poisson_sampled: {rate: 0.01, event: "
        "{gaussian: {noise_multiplier: 1.1}}}}}}");
  CHECK_THROWS_WITH_AS(e.epsilon(), "DpEvent::epsilon() called on a self_composed event",
                       InvalidArgument);
  CHECK_THROWS_AS(DpEvent::poisson_sampled(1.5, DpEvent::gaussian(1)), InvalidArgument);
  CHECK_THROWS_AS(DpEvent::sampled_without_replacement(10, 11, DpEvent::gaussian(1)),
                  InvalidArgument);
  CHECK_THROWS_AS(DpEvent::approx_dp(1, 1.5), InvalidArgument);
  CHECK_THROWS_AS(DpEvent::repeat_and_select(DpEvent::pure_dp(1), 10, -1), InvalidArgument);
  CHECK(DpEvent::repeat_and_select(DpEvent::pure_dp(1), 10, INFINITY).shape() == INFINITY);
  CHECK(DpEvent::composed({DpEvent::pure_dp(1), DpEvent::zcdp(0.5)}).events().size() == 2);
  CHECK(DpEvent::pure_dp(1) == DpEvent::pure_dp(1));
  CHECK(!(DpEvent::pure_dp(1) == DpEvent::pure_dp(2)));
  CHECK(DpEvent().kind() == DpEvent::Kind::NoOp);
}

TEST_CASE("sdk: deterministic generator streams") {
  Xoshiro256 a(42, 0), b(42, 0), c(42, 1), d(43, 0);
  std::vector<std::uint64_t> va, vb, vc, vd;
  for (int i = 0; i < 16; ++i) {
    va.push_back(a.next_u64());
    vb.push_back(b.next_u64());
    vc.push_back(c.next_u64());
    vd.push_back(d.next_u64());
  }
  CHECK(va == vb);
  CHECK(va != vc);
  CHECK(va != vd);
  CHECK(!a.cryptographically_secure());
  // splitmix64 reference values (Vigna's splitmix64.c from state 0).
  std::uint64_t state = 0;
  CHECK(splitmix64(state) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64(state) == 0x6e789e6aa1b965f4ULL);
}

TEST_CASE("sdk: samplers match their distributions") {
  Xoshiro256 rng(2024);
  const int n = 200000;
  double sum = 0, sum2 = 0, sum_abs = 0;
  for (int i = 0; i < n; ++i) {
    double x = laplace(rng, 2.0);
    sum += x;
    sum2 += x * x;
    sum_abs += std::abs(x);
  }
  // Laplace(b = 2): mean 0, E|X| = b = 2, Var = 2 b^2 = 8.
  CHECK(std::abs(sum / n) < 5 * std::sqrt(8.0 / n));
  CHECK(sum_abs / n == doctest::Approx(2.0).epsilon(0.02));
  CHECK(sum2 / n == doctest::Approx(8.0).epsilon(0.03));

  sum = sum2 = 0;
  for (int i = 0; i < n; ++i) {
    double x = gaussian(rng, 3.0);
    sum += x;
    sum2 += x * x;
  }
  CHECK(std::abs(sum / n) < 5 * 3.0 / std::sqrt(n));
  CHECK(sum2 / n == doctest::Approx(9.0).epsilon(0.02));

  // uniform_index: chi-square with 6 degrees of freedom stays far below its 0.9999 quantile (27.9).
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) counts[uniform_index(rng, 7)]++;
  double chi2 = 0;
  for (int c : counts) chi2 += (c - 10000.0) * (c - 10000.0) / 10000.0;
  CHECK(chi2 < 27.9);

  // Two-sided geometric: P(k) = (1 - a) / (1 + a) a^|k|.
  const double alpha = 0.6;
  std::map<std::int64_t, int> geo;
  for (int i = 0; i < n; ++i) geo[two_sided_geometric(rng, alpha)]++;
  for (std::int64_t k = -3; k <= 3; ++k) {
    const double p = (1 - alpha) / (1 + alpha) * std::pow(alpha, static_cast<double>(std::abs(k)));
    CHECK(std::abs(geo[k] / double(n) - p) < 5 * std::sqrt(p * (1 - p) / n));
  }
  double u_min = 1, u_max = 0;
  for (int i = 0; i < 100000; ++i) {
    double u = uniform_open01(rng);
    u_min = std::min(u_min, u);
    u_max = std::max(u_max, u);
  }
  CHECK(u_min > 0);
  CHECK(u_max < 1);
  std::vector<std::size_t> items(10);
  std::iota(items.begin(), items.end(), 0);
  shuffle(rng, items);
  std::vector<std::size_t> sorted = items;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}
