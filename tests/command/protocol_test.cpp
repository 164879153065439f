// The command trainer's text formats: JSON answers, argv splitting, event templates.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "command/command_trainer.hpp"
#include "command/protocol.hpp"
#include "error_of.hpp"

using namespace dptune;
using namespace dptune::command;

namespace {

using dptune_test::error_of;

}  // namespace

TEST_CASE("command: JSON answers parse, with positions in errors") {
  const Json j = parse_json(R"( {"utility": 0.75, "model": "m\"1\u00e9.npy", "ok": true,
                                 "list": [1, -2.5e-3, null], "nested": {"a": []}} )");
  REQUIRE(j.type == Json::Type::Object);
  CHECK(j.find("utility")->number == 0.75);
  CHECK(j.find("model")->text == "m\"1\xc3\xa9.npy");
  CHECK(j.find("ok")->boolean);
  CHECK(j.find("list")->items.size() == 3);
  CHECK(j.find("list")->items[1].number == -2.5e-3);
  CHECK(j.find("list")->items[2].type == Json::Type::Null);
  CHECK(j.find("nested")->find("a")->items.empty());
  CHECK(j.find("missing") == nullptr);
  CHECK(error_of([] { parse_json("{\"a\": 1,}"); }) == "at column 9: expected a quoted key");
  CHECK(error_of([] { parse_json("{\"a\": 1} x"); }) ==
        "at column 10: unexpected text after the JSON value");
  CHECK(error_of([] { parse_json("hello"); }).find("at column 1: expected a JSON value") == 0);
  CHECK(error_of([] { parse_json("\"open"); }) == "at column 1: unterminated string");
  // What dptune writes reads back exactly.
  const std::string text = "{\"s\": " + json_quote("tab\there \"q\" \\ \x01") +
                           ", \"x\": " + json_number(0.1) + ", \"y\": " + json_number(1e-300) + "}";
  const Json back = parse_json(text);
  CHECK(back.find("s")->text == "tab\there \"q\" \\ \x01");
  CHECK(back.find("x")->number == 0.1);
  CHECK(back.find("y")->number == 1e-300);
}

TEST_CASE("command: the last stdout line is the answer") {
  CHECK(answer_of("log 1\nlog 2\n{\"model\": \"a\"}\n\n").find("model")->text == "a");
  CHECK(error_of([] { answer_of("  \n"); }).find("standard output is empty") != std::string::npos);
  CHECK(error_of([] {
          answer_of("{\"model\": 1}\nnot json\n");
        }).find("its last line is not JSON (at column 1") == 0);
  CHECK(error_of([] { answer_of("[1, 2]\n"); }) == "its last line is not a JSON object: [1, 2]");
}

TEST_CASE("command: run strings split into argv without a shell") {
  CHECK(split_argv("python3 train.py") == std::vector<std::string>{"python3", "train.py"});
  CHECK(split_argv("  a\t'b c'  \"d 'e'\" f$HOME ") ==
        std::vector<std::string>{"a", "b c", "d 'e'", "f$HOME"});
  CHECK(split_argv("x'y z'w") == std::vector<std::string>{"xy zw"});
  CHECK(error_of([] { split_argv("a 'b"); }) == "run: unclosed ' quote at column 3");
  CHECK(error_of([] { split_argv("   "); }).find("empty string") != std::string::npos);
}

TEST_CASE("command: template arithmetic") {
  const std::map<std::string, double> v{{"batch_size", 64}, {"n", 1000}, {"epochs", 3}};
  CHECK(evaluate_expression("${batch_size}/${n}", v) == 0.064);
  CHECK(evaluate_expression("${epochs} * ${n} / ${batch_size}", v) == 3.0 * 1000 / 64);
  CHECK(evaluate_expression("ceil(${epochs} * ${n} / ${batch_size})", v) == 47);
  CHECK(evaluate_expression("floor(${n} / ${batch_size})", v) == 15);
  CHECK(evaluate_expression("min(${n}, 10) + max(2, -(3 - 1)) * 2", v) == 14);
  CHECK(evaluate_expression("-${epochs} + 1.5e1", v) == 12);
  CHECK(evaluate_expression("2 - 3 - 4", v) == -5);  // left-associative
  CHECK(evaluate_expression("12 / 3 / 2", v) == 2);
  CHECK(std::isinf(evaluate_expression("inf", v)));
  CHECK(error_of([&] { evaluate_expression("${n} / (${epochs} - 3)", v); }) ==
        "event template, column 9: division by zero");
  CHECK(error_of([&] { evaluate_expression("${steps} * 2", v); }) ==
        "event template, column 1: no value for ${steps}");
  CHECK(error_of([&] { evaluate_expression("sqrt(4)", v); }).find("unknown name 'sqrt'") !=
        std::string::npos);
  CHECK(error_of([&] { evaluate_expression("2 +", v); }) ==
        "event template, column 4: expected a number, a ${variable} or '(', got nothing");
  CHECK(error_of([&] { evaluate_expression("(2", v); }) ==
        "event template, column 3: expected ')'");
}

TEST_CASE("command: templates substitute into events") {
  const EventTemplate t(
      "self_composed: {count: ${steps}, event: {poisson_sampled: {rate: ${batch_size}/${n},\n"
      "  event: {gaussian: {noise_multiplier: ${noise_multiplier}}}}}}");
  CHECK(t.variables() == std::set<std::string>{"batch_size", "n", "noise_multiplier", "steps"});
  const DpEvent e =
      t.instantiate({{"steps", 250}, {"batch_size", 64}, {"n", 1000}, {"noise_multiplier", 1.1}});
  CHECK(e == DpEvent::self_composed(DpEvent::poisson_sampled(0.064, DpEvent::gaussian(1.1)), 250));

  // Braces around the whole event are optional; lists for composed and one_of.
  const EventTemplate c(
      "{composed: {events: [{sampled_without_replacement: {source_size: ${n}, sample_size: "
      "${k1}, event: {laplace: {noise_multiplier: 2 * ${x1}}}}}, {zcdp: {rho: ${x1} / 10}}, "
      "{replace_one: {event: {pure_dp: {epsilon: 0.5}}}}]}}");
  CHECK(c.instantiate({{"n", 500}, {"k1", 50}, {"x1", 1.5}}) ==
        DpEvent::composed({DpEvent::sampled_without_replacement(500, 50, DpEvent::laplace(3.0)),
                           DpEvent::zcdp(0.15), DpEvent::replace_one(DpEvent::pure_dp(0.5))}));

  // Every event dptune prints parses back to itself (the program may echo the declared text).
  const DpEvent nested = DpEvent::repeat_and_select(
      DpEvent::one_of({DpEvent::approx_dp(0.5, 1e-6),
                       DpEvent::repeat_until_accepted(DpEvent::gaussian(2.5), 0.1)}),
      5.0, std::numeric_limits<double>::infinity());
  CHECK(EventTemplate(nested.to_string()).instantiate({}) == nested);
  CHECK(EventTemplate(e.to_string()).instantiate({}) == e);
  CHECK(EventTemplate("{non_private: {}}").instantiate({}) == DpEvent::non_private());
  // Every kind of the SDK's table, discrete_gaussian (ABI 2.8) included: a program that draws exact
  // discrete Gaussian noise declares it.
  const DpEvent discrete =
      DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::discrete_gaussian(1.25)), 40);
  CHECK(EventTemplate("self_composed: {count: 4 * ${k}, event: {poisson_sampled: {rate: 0.01, "
                      "event: {discrete_gaussian: {noise_multiplier: ${s}}}}}}")
            .instantiate({{"k", 10}, {"s", 1.25}}) == discrete);
  CHECK(EventTemplate(discrete.to_string()).instantiate({}) == discrete);
}

TEST_CASE("command: template errors name the column and the field") {
  const EventTemplate t(
      "self_composed: {count: ${epochs}*${n}/${batch_size}, event: "
      "{gaussian: {noise_multiplier: ${noise_multiplier}}}}");
  CHECK(error_of([&] {
          t.check_variables({"epochs", "n", "noise_multiplier"});
        }) ==
        "event template, column 39: unknown variable ${batch_size}; known: ${epochs}, ${n}, "
        "${noise_multiplier}");
  CHECK(error_of([] {
          EventTemplate("{gaussian: {noise_multiplier: ${nosie_multiplier}}}")
              .check_variables({"n", "noise_multiplier"});
        }) ==
        "event template, column 31: unknown variable ${nosie_multiplier} (did you mean "
        "${noise_multiplier}?); known: ${n}, ${noise_multiplier}");
  CHECK(error_of([&] {
          t.instantiate({{"epochs", 3}, {"n", 1000}, {"batch_size", 64}, {"noise_multiplier", 1}});
        }) ==
        "event template, column 24: self_composed.count: evaluates to 46.875, not an integer; "
        "round it explicitly, e.g. ceil(...) (rounding a count up is the conservative choice)");
  CHECK(error_of([] { EventTemplate("{gausian: {noise_multiplier: 1}}").instantiate({}); }) ==
        "event template, column 1: gausian: unknown event kind 'gausian'");
  CHECK(error_of([] { EventTemplate("{gaussian: {sigma: 1}}").instantiate({}); }) ==
        "event template, column 20: gaussian.sigma: unknown field 'sigma' of gaussian");
  CHECK(error_of([] { EventTemplate("{poisson_sampled: {rate: 0.1}}").instantiate({}); }) ==
        "event template, column 19: poisson_sampled: missing field 'event'");
  CHECK(error_of([] {
          EventTemplate("{gaussian: {noise_multiplier: -1}}").instantiate({});
        }).find("event template, column 1: gaussian: ") == 0);
  CHECK(error_of([] { EventTemplate("{gaussian: {noise_multiplier: 1}"); }) ==
        "event template, column 33: expected ',' or '}'");
  CHECK(error_of([] { EventTemplate("{gaussian: {noise_multiplier: 1, noise_multiplier: 2}}"); }) ==
        "event template, column 34: duplicate key 'noise_multiplier'");
  CHECK(error_of([] {
          EventTemplate("{gaussian: {noise_multiplier: ${sigma}}");
        }).find("expected ',' or '}'") != std::string::npos);
}
