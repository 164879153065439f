// `dptune run` with output.test_score, end to end on the bundled breast_cancer.csv (569 rows, a
// 20% test split of 114 rows): the private score's epsilon is in the printed guarantee, the
// ledger's write-ahead charge, `dptune validate`'s price and `dptune plan`'s table, and the score
// draws from its own stream (the tuning is the run without it); a declared public test file costs
// nothing and is listed as assumed public; a resumed run replays the noise.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "build_paths.hpp"
#include "cli_support.hpp"

using dptune_test::fresh_dir;
using dptune_test::run_dptune;
using dptune_test::slurp;

namespace {

std::string score_pipeline(const std::string& tuner, const std::string& output_extra,
                           const std::string& extra = "") {
  return "data:\n  use: csv\n  params: {path: '" +
         std::string(dptune_test::build_paths::source_dir) +
         "/data/breast_cancer.csv', label_column: label, classes: [0, 1]}\n"
         "algorithm:\n  use: dp_sgd\n"
         "  params: {model: logistic, epochs: 1, lot_size: 32, noise_multiplier: 4.0, "
         "clipping_norm: 1.0}\n"
         "mechanism: {use: gaussian}\naccountant: {use: rdp, delta: 1.0e-5}\n"
         "utility: {use: accuracy}\n"
         "search_space:\n  learning_rate: {categorical: [0.1, 0.5, 1.0]}\n"
         "tuner:\n  use: " +
         tuner + "\noutput: {dir: out" + output_extra + "}\n" + extra;
}

/// The first number after `prefix` in `text` (NaN when absent).
double number_after(const std::string& text, const std::string& prefix) {
  const auto at = text.find(prefix);
  if (at == std::string::npos) return NAN;
  return std::stod(text.substr(at + prefix.size()));
}

}  // namespace

TEST_CASE("dptune run with a private test score: guarantee, ledger, validate and plan agree") {
  const auto dir = fresh_dir("test_score_private");
  const std::string tuner = "repetition\n  params: {distribution: poisson, mean: 3}";
  std::ofstream(dir / "tuning.yaml") << score_pipeline(tuner, "");
  std::ofstream(dir / "scored.yaml") << score_pipeline(
      tuner, ", test_score: {epsilon: 0.5}",
      "ledger: {path: ledger.db, dataset: bc, budget: {epsilon: 50, delta: 1.0e-5}}\n");
  const std::string d = "'" + dir.string() + "/";

  const auto plain = run_dptune("run " + d + "tuning.yaml' --seed 5", "ts_plain");
  REQUIRE_MESSAGE(plain.exit_code == 0, plain.err);
  const YAML::Node tuning = YAML::LoadFile((dir / "out/summary.json").string());
  const double eps_tuning = tuning["guarantee"]["epsilon"].as<double>();
  std::filesystem::rename(dir / "out", dir / "out_plain");

  const auto validate = run_dptune("validate " + d + "scored.yaml'", "ts_validate");
  REQUIRE_MESSAGE(validate.exit_code == 0, validate.err);
  const auto scored = run_dptune("run " + d + "scored.yaml' --seed 5", "ts_scored");
  REQUIRE_MESSAGE(scored.exit_code == 0, scored.err);
  const YAML::Node s = YAML::LoadFile((dir / "out/summary.json").string());
  const double eps = s["guarantee"]["epsilon"].as<double>();
  // Sequential composition with a pure 0.5-DP release: above the tuning's ε, at most its sum
  // (basic composition; the RDP route may be smaller).
  CHECK(eps > eps_tuning);
  CHECK(eps <= eps_tuning + 0.5 + 1e-12);
  CHECK(s["guarantee"]["derivation"].as<std::string>().find("private test score") !=
        std::string::npos);
  // The score is released with the model, its noise scale is (1/114)/0.5 (to the grid's 2^-20).
  const YAML::Node t = s["release"]["test_score"];
  REQUIRE(t.IsMap());
  CHECK(t["noisy"].as<bool>());
  CHECK(t["on"].as<std::string>() == "the test split (114 rows)");
  CHECK(t["noise_scale"].as<double>() == doctest::Approx(2.0 / 114).epsilon(1e-6));
  CHECK(t["value"].IsScalar());
  // Its own stream: the tuning released the same candidate and score as without the test score.
  CHECK(s["release"]["selected"]["score"].as<double>() ==
        tuning["release"]["selected"]["score"].as<double>());
  // The ledger charged the composed guarantee write-ahead; validate priced it; plan's row of the
  // pipeline's distribution (Poisson, mean 3) is the same number.
  CHECK(number_after(scored.out, "charged (epsilon, delta) = (") ==
        doctest::Approx(eps).epsilon(1e-4));
  CHECK(number_after(validate.out, "becomes (") == doctest::Approx(eps).epsilon(1e-4));
  CHECK(number_after(validate.out, "the guarantee (epsilon, delta) = (") ==
        doctest::Approx(eps_tuning).epsilon(1e-4));
  const auto plan =
      run_dptune("plan repetition --pipeline " + d + "scored.yaml' --means 3 --json", "ts_plan");
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.err);
  bool found = false;
  for (const auto& row : YAML::Load(plan.out)["rows"])
    if (row["distribution"].as<std::string>() == "Poisson") {
      CHECK(row["epsilon"].as<double>() == doctest::Approx(eps).epsilon(1e-9));
      found = true;
    }
  CHECK(found);
}

TEST_CASE("dptune run with a declared public test file: no noise, no cost, assumed public") {
  const auto dir = fresh_dir("test_score_public");
  // The data file itself stands in for a public test file (same columns and labels).
  const std::string file =
      std::string(dptune_test::build_paths::source_dir) + "/data/breast_cancer.csv";
  const std::string tuner = "repetition\n  params: {distribution: poisson, mean: 3}";
  std::ofstream(dir / "p.yaml") << score_pipeline(tuner, ", test_score: {public: '" + file + "'}");
  const auto r = run_dptune("run '" + (dir / "p.yaml").string() + "' --seed 5", "ts_public");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const YAML::Node s = YAML::LoadFile((dir / "out/summary.json").string());
  const YAML::Node t = s["release"]["test_score"];
  CHECK_FALSE(t["noisy"].as<bool>());
  CHECK(t["assumed_public"].as<std::string>() == file);
  CHECK(t["on"].as<std::string>() == "the test set " + file + " (569 rows)");
  const double value = t["value"].as<double>();
  CHECK(value * 569 == doctest::Approx(std::round(value * 569)).epsilon(1e-12));  // k of 569
  // The assumption on the console beside the score; the note in full in summary.json (the
  // console's notes keep to 8 lines).
  CHECK(r.out.find("(no noise: the test set is assumed public)") != std::string::npos);
  bool noted = false;
  for (const auto& note : s["notes"])
    noted = noted || note.as<std::string>().rfind("assumed public: the test set " + file, 0) == 0;
  CHECK(noted);
  // The guarantee is the tuning's alone.
  CHECK(s["guarantee"]["derivation"].as<std::string>().find("test score") == std::string::npos);
}

TEST_CASE("a resumed private run releases the same noisy test score, not a fresh draw") {
  // Secure randomness (no seed): the score's noise words are recorded in the study and replayed,
  // so resuming cannot average fresh draws of the same score.
  const auto dir = fresh_dir("test_score_resume");
  // Geometric K is at least 1, so a score is always released (Poisson's K = 0, drawn with
  // probability e^-3 without a seed, releases none and the value is null).
  const std::string tuner = "repetition\n  params: {distribution: geometric, mean: 3}";
  std::ofstream(dir / "p.yaml") << score_pipeline(tuner, ", test_score: {epsilon: 0.5}");
  const std::string run = "run '" + (dir / "p.yaml").string() + "'";
  const auto first = run_dptune(run, "ts_resume_1");
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  const double value =
      YAML::LoadFile((dir / "out/summary.json").string())["release"]["test_score"]["value"]
          .as<double>();
  const auto again = run_dptune(run + " --resume", "ts_resume_2");
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(YAML::LoadFile((dir / "out/summary.json").string())["release"]["test_score"]["value"]
            .as<double>() == value);
}
