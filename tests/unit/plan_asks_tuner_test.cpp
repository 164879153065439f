// `dptune plan repetition --pipeline P` asks the pipeline's repetition tuner (runs it dry) for
// its base event and its number of candidates, so its table prices the search `dptune run P`
// runs: the plan's row for the tuner's own distribution and mean is the run's guarantee.  Both a
// tuner drawing from the search space (candidates: space: the privacy-relevant dimension is
// enumerated whole, and there is no finite m) and one drawing from its grid (points_per_dimension:
// m is the grid's size).
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <string>

#include "cli_support.hpp"

using dptune_test::fresh_dir;
using dptune_test::run_dptune;

namespace {

/// DP-SGD on breast cancer, one epoch, with `fixed` (the lot size or the noise multiplier, the one
/// not searched), `space` searched and the repetition tuner's `params`.
std::string plan_pipeline(const std::string& fixed, const std::string& space,
                          const std::string& params) {
  return "data: {use: 'builtin:breast_cancer'}\n"
         "algorithm:\n  use: dp_sgd\n"
         "  params: {model: logistic, epochs: 1, clipping_norm: 1.0, " +
         fixed +
         "}\n"
         "mechanism: {use: gaussian}\naccountant: {use: rdp, delta: 1.0e-5}\n"
         "utility: {use: accuracy}\n"
         "search_space:\n" +
         space + "tuner:\n  use: repetition\n  params: {" + params + "}\noutput: {dir: out}\n";
}

/// The run's guarantee and the plan's JSON for the pipeline written to dir/p.yaml.
struct RunAndPlan {
  double run_epsilon = 0;
  std::string run_notes;
  YAML::Node plan;
};

RunAndPlan run_and_plan(const std::string& tag, const std::string& yaml, const std::string& mean) {
  const auto dir = fresh_dir(tag);
  std::ofstream(dir / "p.yaml") << yaml;
  const std::string p = "'" + (dir / "p.yaml").string() + "'";
  const auto run = run_dptune("run " + p + " --seed 5 --no-progress", tag + "_run");
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const YAML::Node summary = YAML::LoadFile((dir / "out/summary.json").string());
  RunAndPlan r;
  r.run_epsilon = summary["guarantee"]["epsilon"].as<double>();
  r.run_notes = run.out + YAML::Dump(summary);
  const auto plan =
      run_dptune("plan repetition --pipeline " + p + " --means " + mean + " --json", tag + "_plan");
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.err);
  r.plan = YAML::Load(plan.out);
  return r;
}

double row_epsilon(const YAML::Node& plan, const std::string& distribution) {
  for (const auto& row : plan["rows"])
    if (row["distribution"].as<std::string>() == distribution) return row["epsilon"].as<double>();
  FAIL("no row " << distribution);
  return 0;
}

}  // namespace

TEST_CASE("plan asks the tuner: candidates space, the run's base and guarantee, no finite m") {
  // The noise multiplier changes the privacy cost: drawn from the space, all four of its values
  // are candidates of the base (a one_of of four events); the learning rate does not.
  const auto r = run_and_plan(
      "plan_tuner_space",
      plan_pipeline("lot_size: 32",
                    "  learning_rate: {float: [0.01, 1.0], log: true}\n"
                    "  noise_multiplier: {categorical: [2.0, 3.0, 4.0, 6.0, 8.0, 12.0]}\n",
                    "candidates: space, distribution: geometric, mean: 4"),
      "4");
  CHECK(r.run_epsilon > 0);
  CHECK(row_epsilon(r.plan, "geometric (eta = 1)") == doctest::Approx(r.run_epsilon).epsilon(1e-9));
  // The plan's base is the one the run's guarantee names, with all six noise multipliers.
  const std::string base = r.plan["base_event"].as<std::string>();
  // (The run prints E[K] as the sampler's mean, 4 up to rounding.)
  CHECK(r.run_notes.find("shape: 1.0, event: " + base + "}}") != std::string::npos);
  for (const char* sigma : {"2.0", "3.0", "4.0", "6.0", "8.0", "12.0"})
    CHECK(base.find("noise_multiplier: " + std::string(sigma) + ", min_scale: ") !=
          std::string::npos);
  // No finite number of candidates: P[best tried] is not defined.
  CHECK(r.plan["candidates"].IsNull());
  for (const auto& row : r.plan["rows"]) CHECK(row["success_probability"].IsNull());
  // --points means nothing here: refused.
  const auto points = run_dptune(
      "plan repetition --pipeline '" +
          (fresh_dir("plan_tuner_space_points").parent_path() / "plan_tuner_space" / "p.yaml")
              .string() +
          "' --points 3",
      "plan_tuner_space_points");
  CHECK(points.exit_code == 2);
  CHECK(points.err.find("--points: the pipeline's repetition tuner draws its candidates from the "
                        "search space (candidates: space)") != std::string::npos);
}

TEST_CASE("plan asks the tuner: the grid of points_per_dimension, the run's guarantee, m") {
  // Three points per dimension: 3 learning rates × 3 lot sizes (which change the sampling rate).
  const std::string yaml = plan_pipeline(
      "noise_multiplier: 4.0",
      "  learning_rate: {float: [0.01, 1.0], log: true}\n  lot_size: {int: [16, 64]}\n",
      "points_per_dimension: 3, distribution: logarithmic, mean: 3");
  const auto r = run_and_plan("plan_tuner_grid", yaml, "3");
  CHECK(row_epsilon(r.plan, "logarithmic (eta = 0)") ==
        doctest::Approx(r.run_epsilon).epsilon(1e-9));
  CHECK(r.plan["candidates"].as<int>() == 9);
  const std::string base = r.plan["base_event"].as<std::string>();
  CHECK(r.run_notes.find("event: " + base + "}}") != std::string::npos);
  // Three distinct events (one per lot size), of which the worst is priced.
  CHECK(base.rfind("{composed: {events: [{one_of: {events: [", 0) == 0);
  for (const char* lot : {"sample_size: 16,", "sample_size: 40,", "sample_size: 64,"})
    CHECK(base.find(lot) != std::string::npos);
  // The fixed K = 3 row: the best of 9 uniformly drawn candidates is tried with probability
  // 1 − (8/9)³.
  for (const auto& row : r.plan["rows"])
    if (row["distribution"].as<std::string>().rfind("fixed K", 0) == 0)
      CHECK(row["success_probability"].as<double>() ==
            doctest::Approx(1 - 512.0 / 729).epsilon(1e-12));
  // --points is the tuner's points_per_dimension: 2 × 2 = 4 candidates.
  const auto two = run_dptune(
      "plan repetition --pipeline '" +
          (fresh_dir("plan_tuner_grid_2").parent_path() / "plan_tuner_grid" / "p.yaml").string() +
          "' --points 2 --means 3 --json",
      "plan_tuner_grid_2");
  REQUIRE_MESSAGE(two.exit_code == 0, two.err);
  CHECK(YAML::Load(two.out)["candidates"].as<int>() == 4);
}

TEST_CASE("plan: a tuner whose dry run never ends is refused, not waited for") {
  // The threshold variant without a stop coin, on a pure-DP base (an external program's declared
  // Laplace event, never started in a dry run), never sees the constant dry-run score of 0.5
  // reach 0.9: the dry run gives up after its bounded rounds and names the tuner's section.
  const auto dir = fresh_dir("plan_tuner_endless");
  std::ofstream(dir / "p.yaml")
      << "data: {use: 'builtin:breast_cancer'}\n"
         "algorithm:\n  use: command\n  params:\n    run: /bin/false\n    noise: fast\n"
         "    event: \"{laplace: {noise_multiplier: ${noise_multiplier}}}\"\n"
         "    noise_multiplier: 1.0\n"
         "accountant: {use: pure_dp, delta: 0}\nutility: {use: accuracy, repetitions: 1}\n"
         "search_space:\n  learning_rate: {categorical: [0.1, 0.5]}\n"
         "tuner:\n  use: repetition\n"
         "  params: {distribution: threshold, threshold: 0.9, stop_probability: 0, "
         "scoring: public_validation}\n";
  const auto r =
      run_dptune("plan repetition --pipeline '" + (dir / "p.yaml").string() + "'", "endless");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("p.yaml:13:1: tuner: tuner repetition did not finish a dry run") !=
        std::string::npos);
  CHECK(r.err.find("stop_probability > 0") != std::string::npos);
}
