// dptune-figures' simulators (tools/figures): Liebenow et al. 2025 Figure 2 with the project's rdp
// accountant plugin, and Ding et al. Figures 3 and 4.  These were the dp_hype and svt_doubling
// tuners' simulation modes; the assertions are theirs, on the figure's table instead of trials.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "dp_hype/secagg.hpp"
#include "dp_hype_figure2.hpp"
#include "dptune/dptune.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "presets.hpp"
#include "svt_doubling_figures.hpp"

namespace {

using dptune::figures::Figure;

std::shared_ptr<dptune::Accountant> rdp_plugin() {
  static dptune::host::PluginRegistry registry;
  if (!registry.find(dptune::PluginKind::Accountant, "rdp"))
    registry.scan(dptune_test::build_paths::rdp_plugin);
  const auto* schema = registry.schema(dptune::host::ComponentKind::Accountant, "rdp");
  REQUIRE(schema != nullptr);
  return registry.create_accountant("rdp", schema->complete({}));
}

// The table's rows as named numbers (header first).
std::vector<std::map<std::string, double>> rows(const Figure& f) {
  std::vector<std::string> names;
  std::stringstream header(f.table.at(0));
  for (std::string cell; std::getline(header, cell, ',');) names.push_back(cell);
  std::vector<std::map<std::string, double>> out;
  for (std::size_t i = 1; i < f.table.size(); ++i) {
    std::stringstream line(f.table[i]);
    std::map<std::string, double> row;
    std::size_t c = 0;
    for (std::string cell; std::getline(line, cell, ',');) row[names.at(c++)] = std::stod(cell);
    REQUIRE(c == names.size());
    out.push_back(std::move(row));
  }
  return out;
}

Figure figure2(const dptune::figures::Figure2Options& o, std::uint64_t seed) {
  dptune::Xoshiro256 rng(seed);
  return dptune::figures::dp_hype_figure2(o, *rdp_plugin(), 1e-5, rng,
                                          dptune::dp_hype::secagg::two_threads);
}

}  // namespace

TEST_CASE("Figure 2 writes one table row per setting, bound below accuracy") {
  dptune::figures::Figure2Options o;
  o.clients = 60;
  o.repetitions = 100;
  o.epsilons = {0.5, 2};
  o.ks = {1, 5};
  o.sizes = {20};
  const Figure f = figure2(o, 15);
  const auto table = rows(f);
  REQUIRE(table.size() == 4);
  for (const auto& r : table) {
    CHECK(r.at("theorem_iv1_mean_bound") <= r.at("accuracy") + 0.1);
    CHECK(r.at("accountant_epsilon") <= 2.0 + 1e-9);
    CHECK(r.at("accountant_epsilon") <= r.at("epsilon") * (1 + 1e-6));
  }
  CHECK(f.table.front().rfind("candidates,good,sigma_loss,k,epsilon", 0) == 0);
  // Only k is swept: accuracy against k, one series per epsilon, values = the table's accuracies
  // (rows run over k outer, epsilon inner; 100 repetitions make every accuracy exact in 4 digits).
  REQUIRE(f.series.size() == 2);
  CHECK(f.series[0].name == "figure2_accuracy_vs_k.eps0.5");
  CHECK(f.series[1].name == "figure2_accuracy_vs_k.eps2");
  for (std::size_t e = 0; e < 2; ++e) {
    CHECK(f.series[e].x == std::vector<double>{1, 5});
    CHECK(f.series[e].y ==
          std::vector<double>{table[e].at("accuracy"), table[2 + e].at("accuracy")});
  }
  // Seeded: the same seed gives the same figure.
  CHECK(figure2(o, 15).table == f.table);
  o.epsilons = {1, -1};
  CHECK_THROWS_WITH_AS(figure2(o, 15), doctest::Contains("epsilons"), dptune::InvalidArgument);
}

TEST_CASE("Figure 2's series follow its panels (curves per k and epsilon)") {
  dptune::figures::Figure2Options o;
  o.clients = 40;
  o.repetitions = 60;
  o.epsilons = {1};
  o.ks = {1, 3};
  o.sigma_losses = {0.2, 2};
  o.goods = {1, 4};
  o.sizes = {20};
  const Figure f = figure2(o, 19);
  const auto table = rows(f);
  REQUIRE(table.size() == 8);
  // k is a curve parameter when other lists are swept: curves against sigma_loss for each
  // (good, k) and against |H_good| for each (sigma_loss, k); none against k.
  std::map<std::string, const dptune::Series*> by_name;
  for (const auto& s : f.series) by_name[s.name] = &s;
  CHECK(f.series.size() == 8);
  for (const auto& [name, s] : by_name) CHECK(name.find("vs_k_") == std::string::npos);
  REQUIRE(by_name.count("figure2_accuracy_vs_sigma_loss.good4_k3_eps1"));
  REQUIRE(by_name.count("figure2_accuracy_vs_good.sigma_loss2_k1_eps1"));
  const auto* a = by_name["figure2_accuracy_vs_sigma_loss.good4_k3_eps1"];
  CHECK(a->x == std::vector<double>{0.2, 2});
  const auto* b = by_name["figure2_accuracy_vs_good.sigma_loss2_k1_eps1"];
  CHECK(b->x == std::vector<double>{1, 4});  // |H_good| itself: the plots choose a log axis
  // Each point is the accuracy of the matching row (60 repetitions: 4 digits are not exact).
  auto accuracy = [&](double good, double sl, double k) {
    for (const auto& r : table)
      if (r.at("good") == good && r.at("sigma_loss") == sl && r.at("k") == k)
        return r.at("accuracy");
    return -1.0;
  };
  CHECK(a->y.at(0) == doctest::Approx(accuracy(4, 0.2, 3)).epsilon(1e-4));
  CHECK(a->y.at(1) == doctest::Approx(accuracy(4, 2, 3)).epsilon(1e-4));
  CHECK(b->y.at(0) == doctest::Approx(accuracy(1, 2, 1)).epsilon(1e-4));
  CHECK(b->y.at(1) == doctest::Approx(accuracy(4, 2, 1)).epsilon(1e-4));
}

TEST_CASE("Ding et al. Figures 3 and 4 series and table") {
  dptune::svt_doubling::SimulationOptions o;  // |S| = 100, g = 0.01, k epsilon 0.5, 5, 10
  o.repetitions = 60;
  o.trace_repetitions = 10;
  dptune::Xoshiro256 rng(24);
  const Figure f = dptune::figures::svt_doubling_figures(o, rng);
  REQUIRE(f.series.size() == 3 * 3 + 3);
  CHECK(f.series[0].name == "svt_iterations.keps_0.5");
  CHECK(f.series[1].name == "svt_fidelity.keps_0.5");
  CHECK(f.series[2].name == "svt_fidelity_by_iteration.keps_0.5");
  CHECK(f.series[3].name == "svt_iterations.keps_5");
  CHECK(f.series[9].name == "svt_iterations.reference_1_log2_n");
  for (const auto& s : f.series) {
    CHECK(s.x.size() == s.y.size());
    CHECK_FALSE(s.x.empty());
  }
  // The reference curve T = 3 log2 n at its first point n = 2.
  CHECK(f.series[10].y.front() == doctest::Approx(3.0));
  // Every run lands in one n bin: the rows of each k epsilon count all its runs.
  double runs_at_10 = 0;
  for (const auto& r : rows(f))
    if (r.at("k_epsilon") == 10) runs_at_10 += r.at("runs");
  CHECK(runs_at_10 == 60);
  o.k_epsilons = {1, 0};
  CHECK_THROWS_AS(dptune::figures::svt_doubling_figures(o, rng), dptune::InvalidArgument);
}

TEST_CASE("every named figure resolves, and its command line names every option") {
  for (const auto& p : dptune::figures::presets()) {
    CAPTURE(p.name);
    CHECK(dptune::figures::find_preset(p.name) == &p);
    const auto values = dptune::figures::resolved_values(p);
    for (const auto& [key, value] : p.values) CHECK(values.at(key) == value);
    const std::string line = dptune::figures::command_line(p, values);
    for (const auto& [key, value] : values) {
      if (value.empty()) continue;
      std::string option = "--";
      option.append(key).append(" '").append(value).append("'");
      CHECK(line.find(option) != std::string::npos);
    }
  }
  CHECK(dptune::figures::find_preset("figure9") == nullptr);
}
