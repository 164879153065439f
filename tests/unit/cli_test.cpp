// The dptune command: exit codes, help, version, plugin listing, and the quickstart end to end.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <sstream>

#include "build_paths.hpp"
#include "cli_support.hpp"
#include "dptune/helpers/pareto.hpp"

using dptune_test::run_dptune;
using dptune_test::slurp;

TEST_CASE("cli: exit codes and usage errors") {
  auto r = run_dptune("", "noargs");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("usage: dptune <command>") != std::string::npos);
  r = run_dptune("--help", "help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("plugins describe NAME") != std::string::npos);
  r = run_dptune("rnu x.yaml", "typo");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "dptune: unknown command 'rnu' (did you mean 'run'?); see dptune --help\n");
  r = run_dptune("run --frobnicate examples/pipelines/quickstart.yaml", "badopt");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("frobnicate") != std::string::npos);
  r = run_dptune("run", "nofile");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "dptune: missing PIPELINE argument\n");
  r = run_dptune("run --help", "runhelp");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--seed") != std::string::npos);
  CHECK(r.out.find("--threads") != std::string::npos);
  r = run_dptune("run examples/pipelines/quickstart.yaml --set tuner.params", "badset");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "dptune: --set tuner.params: expected key.path=value\n");
}

TEST_CASE("cli: version and plugins") {
  auto r = run_dptune("--version", "version");
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("dptune 0.1.0 (plugin ABI 3.4", 0) == 0);

  r = run_dptune("plugins list --json", "list");
  REQUIRE(r.exit_code == 0);
  YAML::Node listing = YAML::Load(r.out);  // JSON is YAML
  std::set<std::string> names;
  for (const auto& p : listing["plugins"])
    names.insert(p["kind"].as<std::string>() + "/" + p["name"].as<std::string>());
  for (const char* expected : {"mechanism/sparse_vector", "utility/f1", "accountant/pure_dp",
                               "tuner/grid", "tuner/random"})
    CHECK(names.count(expected) == 1);
  CHECK(listing["data_sources"][0]["name"].as<std::string>() == "binary_queries");

  r = run_dptune("plugins describe sparse_vector", "describe");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("b: float in (0.0, inf), required\n      total noise level b") !=
        std::string::npos);
  CHECK(r.out.find("C: int in [1, inf), required") != std::string::npos);
  CHECK(r.out.find("threshold: float, default 0.5") != std::string::npos);

  r = run_dptune("plugins describe grid --json", "describe_json");
  REQUIRE(r.exit_code == 0);
  YAML::Node grid = YAML::Load(r.out);
  CHECK(grid["kind"].as<std::string>() == "tuner");
  CHECK(grid["params"][0]["name"].as<std::string>() == "points_per_dimension");
  CHECK(grid["params"][0]["default"].as<int>() == 10);
  CHECK(grid["params"][0]["minimum"].as<double>() == 1.0);

  r = run_dptune("plugins describe sparse_vectr", "describe_typo");
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "plugins describe: unknown plugin 'sparse_vectr' (did you mean 'sparse_vector'?)\n");
  r = run_dptune("plugins describe geometric", "describe_outside");
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "plugins describe: unknown plugin 'geometric' among the built-ins and $DPTUNE_PLUGIN_PATH; "
        "a plugin of your own: dptune plugins describe geometric --plugin-path DIR (its folder or "
        ".so file)\n");
}

namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

// Drops the `seconds` column (wall time) from a trials.csv.
std::string without_seconds(const std::string& csv) {
  std::string out;
  for (const auto& line : lines(csv)) {
    std::vector<std::string> cells;
    std::istringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    cells.erase(cells.end() - 2);  // ..., seconds, on_front
    for (const auto& c : cells) out += c + ",";
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("cli: quickstart end to end") {
  const auto out = dptune_test::fresh_dir("quickstart");
  auto r = run_dptune(
      "run examples/pipelines/quickstart.yaml --seed 1 --no-progress --out '" + out.string() + "'",
      "quickstart");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"summary.json", "trials.csv", "pareto_front.csv", "pareto.svg",
                        "resolved_config.yaml", "report.html"})
    CHECK(std::filesystem::exists(out / f));
  CHECK(lines(slurp(out / "trials.csv")).size() == 901);  // header + 30 × 30 candidates
  CHECK(r.out.find("NOTE: This is a privacy-utility map for trusted analysts") !=
        std::string::npos);
  CHECK(r.err.empty());  // no progress line when standard error is not a terminal

  YAML::Node summary = YAML::LoadFile((out / "summary.json").string());
  CHECK(summary["trials_count"].as<int>() == 900);
  CHECK(summary["repetitions"].as<int>() == 50);
  CHECK(summary["trusted_analyst_only"].as<bool>());
  CHECK(!summary["randomness"]["cryptographically_secure"].as<bool>());
  CHECK(summary["randomness"]["seed"].as<int>() == 1);
  const YAML::Node front = summary["pareto_front"];
  REQUIRE(front.size() >= 5);
  std::vector<dptune::Point> points;
  double previous_eps = 0, previous_err = 2;
  for (const auto& t : front) {
    const double eps = t["epsilon"].as<double>(), err = 1 - t["utility_mean"].as<double>();
    // Every ε is the closed form of its (b, C) (Avent et al. 2020, Appendix B).
    const double b = t["params"]["b"].as<double>(), c = t["params"]["C"].as<double>();
    CHECK(eps ==
          doctest::Approx((1 + std::cbrt(2 * c)) * (1 + std::cbrt(4 * c * c)) / b).epsilon(1e-12));
    CHECK(t["utility_min"].as<double>() <= t["utility_mean"].as<double>());
    CHECK(t["utility_mean"].as<double>() <= t["utility_max"].as<double>());
    // A front sorted by ε has strictly decreasing error.
    CHECK(eps > previous_eps);
    CHECK(err < previous_err);
    previous_eps = eps;
    previous_err = err;
    points.push_back({eps, err});
  }
  // The reported hypervolume is the hypervolume of the reported front w.r.t. (10, 1).
  const double hv = summary["hypervolume"]["value"].as<double>();
  CHECK(hv == doctest::Approx(dptune::hypervolume(points, {10, 1})).epsilon(1e-12));
  // Large b, small C is private and useless; small b is accurate: the front spans both ends.
  CHECK(points.front()[1] > 0.5);
  CHECK(points.back()[1] < 0.05);
  CHECK(hv > 1.0);  // seed 1 gives about 1.68: most of the box is above ε = 10's reach
  CHECK(hv < 10.0);
  // The resolved config is a loadable pipeline that names what ran.
  YAML::Node resolved = YAML::LoadFile((out / "resolved_config.yaml").string());
  CHECK(resolved["algorithm"]["use"].as<std::string>() == "sparse_vector");
  CHECK(resolved["tuner"]["params"]["points_per_dimension"].as<int>() == 30);
  const std::string svg = slurp(out / "pareto.svg");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("#0072B2") != std::string::npos);  // the front, in Okabe-Ito blue
  CHECK(svg.find(">Pareto front</text>") != std::string::npos);
  // report.html inlines the same plot and tabulates the front.
  const std::string html = slurp(out / "report.html");
  CHECK(html.find(svg) != std::string::npos);
  CHECK(html.find("<h2>Pareto front</h2>") != std::string::npos);
}

TEST_CASE("cli: seeded runs are reproducible whatever the thread count, default noise is secure") {
  const std::string small =
      " --no-progress --set tuner.params.points_per_dimension=4 --set utility.repetitions=7 --out ";
  const auto one = dptune_test::fresh_dir("threads1"), two = dptune_test::fresh_dir("threads2"),
             secure = dptune_test::fresh_dir("secure");
  auto r1 = run_dptune(
      "run examples/pipelines/quickstart.yaml --seed 99 --threads 1" + small + one.string(), "t1");
  auto r2 = run_dptune(
      "run examples/pipelines/quickstart.yaml --seed 99 --threads 2" + small + two.string(), "t2");
  REQUIRE(r1.exit_code == 0);
  REQUIRE(r2.exit_code == 0);
  const std::string a = without_seconds(slurp(one / "trials.csv")),
                    b = without_seconds(slurp(two / "trials.csv"));
  CHECK(lines(a).size() == 17);
  CHECK(a == b);
  auto r3 =
      run_dptune("run examples/pipelines/quickstart.yaml" + small + secure.string(), "secure");
  REQUIRE(r3.exit_code == 0);
  YAML::Node summary = YAML::LoadFile((secure / "summary.json").string());
  CHECK(summary["randomness"]["cryptographically_secure"].as<bool>());
  CHECK(summary["randomness"]["source"].as<std::string>().find("libsodium") != std::string::npos);
  CHECK(!summary["randomness"]["seed"]);
  CHECK(r3.out.find("randomness: libsodium") != std::string::npos);
}

TEST_CASE("cli: plugin discovery through DPTUNE_PLUGIN_PATH and --plugin-path") {
  const std::string good = std::string(dptune_test::build_paths::test_plugin_dir) + "/good";
  auto r = run_dptune("plugins list --json", "no_env");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("test_tuner") == std::string::npos);
  // The environment variable is colon-separated; empty and missing folders are ignored.
  const std::string env = "DPTUNE_PLUGIN_PATH='/nonexistent::" + good + "' ";
  const auto dir = dptune_test::fresh_dir("cli_env");
  const std::string cmd = "cd '" + std::string(dptune_test::build_paths::source_dir) + "' && " +
                          env + "'" + std::string(dptune_test::build_paths::binary_dir) +
                          "/bin/dptune' plugins list >'" + (dir / "out").string() + "' 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string listing = slurp(dir / "out");
  CHECK(listing.find("tuner       test_tuner") != std::string::npos);
  CHECK(listing.find("tuner       grid") != std::string::npos);  // the built-ins are still there
  r = run_dptune("plugins describe test_accountant --plugin-path '" + good + "'", "plugin_path");
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("accountant test_accountant 0.1.0", 0) == 0);
  r = run_dptune("plugins list --plugin-path /nonexistent/folder", "plugin_path_missing");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "dptune: --plugin-path /nonexistent/folder: no such file or folder\n");
}

TEST_CASE("cli: progress line on a terminal") {
  // util-linux `script` gives the command a pseudo-terminal.
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    MESSAGE("script(1) not available: progress display not exercised");
    return;
  }
  const auto dir = dptune_test::fresh_dir("cli_tty");
  const std::string cmd =
      "cd '" + std::string(dptune_test::build_paths::source_dir) + "' && script -qec \"'" +
      std::string(dptune_test::build_paths::binary_dir) +
      "/bin/dptune' run examples/pipelines/quickstart.yaml --seed 3 --set "
      "tuner.params.points_per_dimension=5 --out '" +
      (dir / "results").string() + "'\" /dev/null >'" + (dir / "tty").string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string tty = slurp(dir / "tty");
  CHECK(tty.find("grid: 0/25") != std::string::npos);
  CHECK(tty.find("grid: 25/25  best ") != std::string::npos);
  CHECK(tty.find("elapsed ") != std::string::npos);
  // --no-progress silences it even on a terminal.
  const std::string quiet =
      "cd '" + std::string(dptune_test::build_paths::source_dir) + "' && script -qec \"'" +
      std::string(dptune_test::build_paths::binary_dir) +
      "/bin/dptune' run examples/pipelines/quickstart.yaml --no-progress "
      "--overwrite --seed 3 "
      "--set tuner.params.points_per_dimension=5 --out '" +
      (dir / "results").string() + "'\" /dev/null >'" + (dir / "quiet").string() + "'";
  REQUIRE(std::system(quiet.c_str()) == 0);
  CHECK(slurp(dir / "quiet").find("grid: ") == std::string::npos);
}

TEST_CASE("cli: plugin_paths set on the command line are scanned before validation") {
  auto r = run_dptune("validate examples/pipelines/quickstart.yaml --set tuner.use=test_tuner",
                      "set_no_path");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("tuner.use: unknown tuner 'test_tuner'") != std::string::npos);
  r = run_dptune(
      "validate examples/pipelines/quickstart.yaml --set tuner.use=test_tuner "
      "--set tuner.params={} "
      "--set 'plugin_paths=[\"" +
          std::string(dptune_test::build_paths::test_plugin_dir) + "/good\"]'",
      "set_path");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("valid") != std::string::npos);
}

TEST_CASE("cli: noise: fast is labelled insecure in summary.json and on the console") {
  const std::string small =
      "run examples/pipelines/dp_sgd_logreg_breast_cancer_grid.yaml --seed 3 --no-progress --set "
      "tuner.params.points_per_dimension=2 --set utility.repetitions=1 ";
  const auto fast = dptune_test::fresh_dir("noise_fast"),
             secure = dptune_test::fresh_dir("noise_secure");
  auto r = run_dptune(small + "--set mechanism.params.noise=fast --out " + fast.string(), "fast");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("INSECURE NOISE: mechanism 'gaussian'") != std::string::npos);
  auto notes = [](const std::filesystem::path& dir) {
    std::string all;
    for (const auto& n : YAML::LoadFile((dir / "summary.json").string())["notes"])
      all += n.as<std::string>() + "\n";
    return all;
  };
  CHECK(notes(fast).find("INSECURE NOISE: mechanism 'gaussian' draws floating-point noise") !=
        std::string::npos);
  r = run_dptune(small + "--out " + secure.string(), "secure_default");
  REQUIRE(r.exit_code == 0);
  CHECK(notes(secure).find("INSECURE") == std::string::npos);
  CHECK(notes(secure).find("noise: mechanism 'gaussian' draws exact discrete noise") !=
        std::string::npos);
  r = run_dptune(small + "--set mechanism.params.noise=fastest --out " + secure.string(), "bad");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("noise") != std::string::npos);
}
