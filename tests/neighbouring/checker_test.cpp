// The neighbouring-release checker itself, on synthetic artifacts: it must flag an undeclared
// differing field (with its name), accept declared DP outputs, and accept a removal difference only
// when it is a function of n.
#include <doctest/doctest.h>

#include "checker.hpp"

using namespace dptune::neighbouring;

TEST_CASE("flatten_json gives key paths of nested objects and arrays") {
  const Fields f = flatten_json(
      "summary.json:", R"({"a": {"b": [1, {"c": "x, \"y\""}]}, "e": [], "n": null, "t": true})");
  CHECK(f.at("summary.json:a.b[0]") == "1");
  CHECK(f.at("summary.json:a.b[1].c") == "x, \"y\"");
  CHECK(f.at("summary.json:e") == "[]");
  CHECK(f.at("summary.json:n") == "null");
  CHECK(f.at("summary.json:t") == "true");
  CHECK(f.size() == 5);
}

TEST_CASE("the checker flags an undeclared differing field and accepts declared DP outputs") {
  const std::string d = R"({"tuner": "repetition", "seconds": 0.0016, "trials_count": 8,
    "release": {"selected": {"params": {"lr": 0.1}, "score": 0.86}}, "notes": ["K hidden"]})";
  const std::string d_prime = R"({"tuner": "repetition", "seconds": 0.0019, "trials_count": 8,
    "release": {"selected": {"params": {"lr": 0.5}, "score": 0.91}}, "notes": ["K hidden"]})";
  const auto found = undeclared_differences(
      flatten_json("summary.json:", d), flatten_json("summary.json:", d_prime), "(D,s) and (D',s)");
  REQUIRE(found.size() == 1);
  CHECK(found[0].field == "summary.json:seconds");
  CHECK(found[0].left == "0.0016");
  CHECK(found[0].right == "0.0019");
  CHECK(found[0].describe().find("summary.json:seconds") != std::string::npos);
  CHECK(found[0].describe().find("(D,s) and (D',s)") != std::string::npos);

  // A field present in one run only is a difference too.
  const auto extra =
      undeclared_differences(flatten_json("summary.json:", R"({"a": 1})"),
                             flatten_json("summary.json:", R"({"a": 1, "k": 8})"), "pair");
  REQUIRE(extra.size() == 1);
  CHECK(extra[0].field == "summary.json:k");
  CHECK(extra[0].left == "<absent>");
}

TEST_CASE(
    "declared DP outputs: the release, model weights and biases, the console's release block") {
  CHECK(declared_dp_output("summary.json:release.selected.score"));
  CHECK(declared_dp_output("model.json:release.selected.params.lr"));
  CHECK(declared_dp_output("model.json:layers[0].weights[3]"));
  CHECK(declared_dp_output("model.json:layers[1].bias[0]"));
  CHECK(declared_dp_output("stdout.release:2"));
  CHECK_FALSE(declared_dp_output("summary.json:released"));
  CHECK_FALSE(declared_dp_output("summary.json:selected.id"));
  CHECK_FALSE(declared_dp_output("model.json:standardization.mean[0]"));
  CHECK_FALSE(declared_dp_output("model.json:layers[0].inputs"));
  CHECK_FALSE(declared_dp_output("stdout:note#1"));
  // A model kept in files (the command trainer's): its files and the released candidate among
  // the trainer's parameters; model.json's other fields stay public.
  CHECK(declared_dp_output("files:model/model.npy"));
  CHECK(declared_dp_output("model/model.npy:3"));
  CHECK(declared_dp_output("model.json:trainer_params.learning_rate"));
  CHECK_FALSE(declared_dp_output("model.json:files[0]"));
  CHECK_FALSE(declared_dp_output("files:models.csv"));
  CHECK_FALSE(declared_dp_output("model.json:feature_names[0]"));
}

TEST_CASE("the console's release block is set apart, other lines are public fields") {
  const Fields f = flatten_console(
      "stdout",
      "dptune: pipeline p\nnote: a\nReleased (differentially private):\n  selected: {lr: 0.1}\n\n"
      "guarantee: 1\n");
  CHECK(f.at("stdout:dptune#1") == "dptune: pipeline p");
  CHECK(f.at("stdout:note#1") == "note: a");
  CHECK(f.at("stdout.release:2") == "  selected: {lr: 0.1}");
  CHECK(f.at("stdout.release:3").empty());
  CHECK(f.at("stdout:guarantee#1") == "guarantee: 1");
  const Fields g = flatten_console("stdout",
                                   "dptune: pipeline p\nnote: b\nReleased (differentially "
                                   "private):\n  selected: {lr: 0.5}\n  x\n\nguarantee: 1\n");
  const auto found = undeclared_differences(f, g, "pair");
  REQUIRE(found.size() == 1);
  CHECK(found[0].field == "stdout:note#1");
  // One more note is one difference, not a shift of every later line.
  const Fields h =
      flatten_console("stdout", "dptune: pipeline p\nnote: a\nnote: K = 8\nguarantee: 1\n");
  const Fields without = flatten_console("stdout", "dptune: pipeline p\nnote: a\nguarantee: 1\n");
  const auto extra = undeclared_differences(without, h, "pair");
  REQUIRE(extra.size() == 1);
  CHECK(extra[0].field == "stdout:note#2");
  CHECK(extra[0].right == "note: K = 8");
}

TEST_CASE("the console's block of nominal figures after the release is part of the release") {
  const auto console = [](const std::string& nominal) {
    return "dptune: pipeline p\nReleased (differentially private):\n  selected: {lr: 0.1}\n\n"
           "Computed from the release, NOT a guarantee:\n  NOMINAL: epsilon = " +
           nominal + "\n\nguarantee: 1\n";
  };
  const Fields f = flatten_console("stdout", console("5.623"));
  const Fields g = flatten_console("stdout", console("4.1"));
  CHECK(f.at("stdout.release:5") == "  NOMINAL: epsilon = 5.623");
  CHECK(f.at("stdout:guarantee#1") == "guarantee: 1");
  CHECK(undeclared_differences(f, g, "pair").empty());
}

TEST_CASE("removal: a difference is allowed only when both removals agree (a function of n)") {
  const Fields d = flatten_json("summary.json:", R"({"data": "160 rows", "k": 8})");
  const Fields minus_i = flatten_json("summary.json:", R"({"data": "159 rows", "k": 8})");
  const Fields minus_j = flatten_json("summary.json:", R"({"data": "159 rows", "k": 9})");
  const auto found = undeclared_removal_differences(d, minus_i, minus_j);
  REQUIRE(found.size() == 1);
  CHECK(found[0].field == "summary.json:k");
  CHECK(found[0].left == "8");
  CHECK(found[0].right == "9");
}

TEST_CASE("the seed a run was given is a public input") {
  Fields f{{"stdout:2", "randomness: xoshiro256** seeded with 11 (deterministic)"},
           {"summary.json:randomness.seed", "11"},
           {"resolved_config.yaml:30", "  seed: 11"},
           {"stdout:5", "note: noise seed=11 stream=0"},
           {"stdout:6", "split_seed: -1, 11 candidates"}};
  f = normalise_seed(f);
  CHECK(f.at("stdout:2") == "randomness: xoshiro256** seeded with <seed> (deterministic)");
  CHECK(f.at("summary.json:randomness.seed") == "<seed>");
  CHECK(f.at("resolved_config.yaml:30") == "  seed: <seed>");
  CHECK(f.at("stdout:5") == "note: noise seed=<seed> stream=0");
  CHECK(f.at("stdout:6") == "split_seed: -1, 11 candidates");
}

TEST_CASE("report.html: the release block is a declared DP output, every other line is compared") {
  const std::string head = "<h1>p</h1>\n<!-- dptune:release:begin -->\n";
  const std::string tail = "<!-- dptune:release:end -->\n<p>epsilon 1.5</p>\n";
  const Fields a = flatten_html("report.html", head + "<p>selected: lr = 0.1</p>\n" + tail);
  // D' releases another candidate and one more DP output line: the release differs, nothing else.
  const Fields b = flatten_html(
      "report.html", head + "<p>selected: lr = 0.5</p>\n<p>DP output: T = 3</p>\n" + tail);
  CHECK(a.at("report.html:1") == "<h1>p</h1>");
  CHECK(a.at("report.html.release:2") == "<p>selected: lr = 0.1</p>");
  CHECK(a.at("report.html:2") == "<p>epsilon 1.5</p>");
  CHECK(b.at("report.html:2") == "<p>epsilon 1.5</p>");
  CHECK(undeclared_differences(a, b, "(D,s) and (D',s)").empty());
  // A line outside the block that differs (a run time) is flagged.
  const Fields c =
      flatten_html("report.html", head + "<p>selected: lr = 0.1</p>\n" + tail + "<p>0.31 s</p>\n");
  const auto found = undeclared_differences(a, c, "pair");
  REQUIRE(found.size() == 1);
  CHECK(found[0].field == "report.html:3");
}
