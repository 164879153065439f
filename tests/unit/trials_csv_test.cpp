// The SDK's reader of trials.csv (dptune/helpers/trials_csv.hpp), against the file the host's
// report writes: every candidate of a map reads back as it was, whatever its types and quoting; bad
// files are ConfigErrors naming file, line and column.
#include <doctest/doctest.h>

#include <sstream>

#include "dptune/helpers/trials_csv.hpp"
#include "report/report.hpp"
#include "temp_dir.hpp"

namespace {

dptune::SearchSpace mixed_space() {
  dptune::SearchSpace space;
  space.add_float("epsilon", 0.1, 10.0, /*log=*/true);  // named like a result column
  space.add_int("epochs", 1, 9, false, 2);
  space.add_categorical("model", {dptune::Value{std::string("logistic, L2")},
                                  dptune::Value{std::string("say \"mlp\"")}});
  space.add_categorical("lot", {dptune::Value{std::int64_t{32}}, dptune::Value{std::int64_t{64}}});
  space.add_categorical("clip", {dptune::Value{0.5}, dptune::Value{1.0}});
  return space;
}

dptune::Trial trial(std::size_t id, dptune::Params params) {
  dptune::Trial t;
  t.id = id;
  t.params = std::move(params);
  t.privacy.epsilon = 1.5;
  t.privacy.delta = 1e-5;
  t.utility_mean = t.utility_min = t.utility_max = 0.75;
  t.repetitions = 1;
  return t;
}

}  // namespace

TEST_CASE("trials.csv: the candidates the host's report wrote read back exactly") {
  dptune_test::TempDir dir;
  dptune::host::PipelineConfig config;
  config.name = "trials_csv_test";
  config.output.dir = dir.path() / "out";
  config.output.plot = false;
  config.space = mixed_space();
  dptune::TuningResult result;
  result.trusted_analyst_only = true;
  result.trials.push_back(trial(0, {{"epsilon", 0.1},
                                    {"epochs", std::int64_t{3}},
                                    {"model", std::string("logistic, L2")},
                                    {"lot", std::int64_t{64}},
                                    {"clip", 0.5}}));
  result.trials.push_back(trial(1, {{"epsilon", 1.0 / 3.0},
                                    {"epochs", std::int64_t{9}},
                                    {"model", std::string("say \"mlp\"")},
                                    {"lot", std::int64_t{32}},
                                    {"clip", 1.0}}));
  std::ostringstream terminal;
  const dptune::host::ReportInput in{config, result, "seeded", false, "inline", 0.5, "none"};
  dptune::host::write_report(in, terminal);
  const auto read =
      dptune::read_trial_candidates((config.output.dir / "trials.csv").string(), config.space);
  REQUIRE(read.size() == 2);
  CHECK(read[0] == result.trials[0].params);
  CHECK(read[1] == result.trials[1].params);
  CHECK(read[1].get_double("epsilon") == 1.0 / 3.0);  // the shortest round trip, not 6 digits
}

TEST_CASE("trials.csv: cells split at commas outside quotes, doubled quotes are one") {
  using V = std::vector<std::string>;
  CHECK(dptune::split_trials_csv_line("0,\"a, b\",\"say \"\"x\"\"\",\r") ==
        V{"0", "a, b", "say \"x\"", ""});
  CHECK(dptune::split_trials_csv_line("") == V{""});
  CHECK(dptune::split_trials_csv_line("\"\r\"") == V{"\r"});
  CHECK(dptune::trials_csv_column("lr") == "param.lr");
}

TEST_CASE("trials.csv: a categorical cell may be written as a number equal to the choice") {
  dptune_test::TempDir dir;
  dptune::SearchSpace space;
  space.add_categorical("lot", {dptune::Value{std::int64_t{32}}, dptune::Value{std::int64_t{64}}});
  space.add_categorical("clip", {dptune::Value{0.5}, dptune::Value{1.0}});
  const auto file = dir.write("t.csv", "param.clip,param.lot\n5e-1,64.0\n\n1,32\n");
  const auto read = dptune::read_trial_candidates(file.string(), space);
  REQUIRE(read.size() == 2);
  CHECK(read[0] == dptune::Params{{"lot", std::int64_t{64}}, {"clip", 0.5}});
  CHECK(read[1] == dptune::Params{{"lot", std::int64_t{32}}, {"clip", 1.0}});
}

TEST_CASE("trials.csv: bad files are ConfigErrors naming file, line and column") {
  dptune_test::TempDir dir;
  dptune::SearchSpace space;
  space.add_int("C", 1, 10);
  space.add_categorical("kind", {dptune::Value{std::string("a")}});
  const auto error_of = [&](const std::string& text) {
    const auto file = dir.write("bad.csv", text);
    try {
      dptune::read_trial_candidates(file.string(), space);
    } catch (const dptune::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string path = (dir.path() / "bad.csv").string();
  CHECK(error_of("") == "'" + path + "' is empty");
  CHECK(error_of("id,param.C\n0,1\n") == "'" + path + "' has no column 'param.kind'");
  CHECK(error_of("param.C,param.kind\n7,a\n1x,a\n") ==
        path + ":3: param.C: expected a number, got '1x'");
  CHECK(error_of("param.C,param.kind\n7,b\n") ==
        path + ":2: param.kind: expected one of the dimension's choices, got 'b'");
  CHECK(error_of("param.C,param.kind\n11,a\n") ==
        path + ":2: {C: 11, kind: a} lies outside the search space");
  CHECK(error_of("param.C,param.kind\n\n") == "'" + path + "' holds no trials");
  CHECK_THROWS_WITH_AS(dptune::read_trial_candidates((dir.path() / "none.csv").string(), space),
                       doctest::Contains("cannot open"), dptune::ConfigError);
}
