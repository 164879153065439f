// `dptune privacy` end to end, and the event YAML syntax (parser and DpEvent::to_string agree).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "cli_support.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/event_yaml.hpp"

using dptune::DpEvent;
using dptune_test::run_dptune;

namespace {
double json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + key.size() + 3));
}
}  // namespace

TEST_CASE("event YAML: to_string and parse_event round-trip every kind") {
  const std::vector<DpEvent> events{
      DpEvent::no_op(),
      DpEvent::gaussian(1.5),
      DpEvent::discrete_gaussian(0.75),
      DpEvent::discrete_gaussian_on_grid(0.75, 4194304),
      DpEvent::laplace(0.25),
      DpEvent::pure_dp(1.0),
      DpEvent::approx_dp(0.5, 1e-6),
      DpEvent::zcdp(0.01),
      DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.1)),
      DpEvent::sampled_without_replacement(60000, 256, DpEvent::gaussian(1.1)),
      DpEvent::self_composed(DpEvent::laplace(2.0), 10000000),
      DpEvent::composed({DpEvent::gaussian(2.0), DpEvent::pure_dp(0.1)}),
      DpEvent::repeat_and_select(DpEvent::zcdp(0.1), 10, 0.0),
      DpEvent::repeat_and_select(DpEvent::zcdp(0.1), 10, std::numeric_limits<double>::infinity()),
      DpEvent::replace_one(DpEvent::self_composed(DpEvent::pure_dp(0.25), 32)),
  };
  for (const auto& e : events) {
    INFO(e.to_string());
    CHECK(dptune::host::parse_event(e.to_string(), "t.yaml") == e);
  }
}

TEST_CASE("event YAML: errors name file, line, column and key") {
  auto message = [](const std::string& text) {
    try {
      dptune::host::parse_event(text, "ev.yaml");
    } catch (const dptune::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("self_composed:\n  count: 3\n  event: {gausian: {noise_multiplier: 1}}\n") ==
        "ev.yaml:3:11: self_composed.event.gausian: unknown event kind 'gausian' (did you mean "
        "'gaussian'?); expected one of adaptive_repeat_and_select, approx_dp, composed, "
        "discrete_gaussian, "
        "discrete_gaussian_on_grid, discrete_gaussian_sum, "
        "gaussian, laplace, "
        "no_op, non_private, one_of, poisson_sampled, pure_dp, repeat_and_select, "
        "repeat_until_accepted, replace_one, sampled_without_replacement, self_composed, zcdp");
  CHECK(message("poisson_sampled: {rate: 0, event: {gaussian: {noise_multiplier: 1}}}") ==
        "ev.yaml:1:25: poisson_sampled.rate: sampling rate must be in (0, 1], got 0");
  CHECK(message("gaussian: {noise_multiplier: -2}").find("ev.yaml:1:11: gaussian: ") == 0);
  CHECK(message("gaussian: {sigma: 2}")
            .find("unknown field 'sigma' of gaussian; gaussian takes noise_multiplier") !=
        std::string::npos);
  CHECK(message("self_composed: {count: 2.5, event: {no_op: {}}}") ==
        "ev.yaml:1:24: self_composed.count: expected an integer, got '2.5'");
  CHECK(message("self_composed: {event: {no_op: {}}}") ==
        "ev.yaml:1:1: self_composed: missing field 'count'");
  CHECK(message("{gaussian: {noise_multiplier: 1}, laplace: {noise_multiplier: 1}}")
            .find("an event has exactly one kind") != std::string::npos);
  CHECK(message("").find("empty") != std::string::npos);
  CHECK(message("gaussian: {noise_multiplier: [1}").find("YAML syntax error") != std::string::npos);
  CHECK(message("repeat_and_select: {mean: 3, shape: -1, event: {no_op: {}}}").find("shape") !=
        std::string::npos);
}

TEST_CASE("dptune privacy: DP-SGD shortcut prints epsilon, order and derivation") {
  // TF Privacy's example with its event: Poisson lots, continuous noise, 14063 steps.
  const auto r = run_dptune(
      "privacy --dataset-size 60000 --batch-size 256 --steps 14063 --noise-multiplier 1.1 "
      "--sampling poisson --noise fast --delta 1e-5 --json",
      "privacy_dpsgd");
  REQUIRE(r.exit_code == 0);
  // The default grid's best order is 8.1.
  CHECK(json_number(r.out, "epsilon") == doctest::Approx(2.5966555).epsilon(1e-6));
  CHECK(json_number(r.out, "delta") == 1e-5);
  CHECK(json_number(r.out, "order") == doctest::Approx(8.1));
  CHECK(r.out.find("count: 14063") != std::string::npos);
  CHECK(r.out.find("\"neighbours\": \"add/remove\"") != std::string::npos);
  const auto classic = run_dptune(
      "privacy --dataset-size 60000 --batch-size 256 --steps 14063 --noise-multiplier 1.1 "
      "--sampling poisson --noise fast --delta 1e-5 --conversion classic --json",
      "privacy_dpsgd_classic");
  REQUIRE(classic.exit_code == 0);
  CHECK(json_number(classic.out, "epsilon") > json_number(r.out, "epsilon") + 0.3);
  // The defaults are a run's: fixed-size lots, secure (discrete) noise, 60 epochs of ⌈60000/256⌉
  // = 235 lots.
  const auto run_default = run_dptune(
      "privacy --dataset-size 60000 --batch-size 256 --epochs 60 --noise-multiplier 1.1 "
      "--delta 1e-5 --json",
      "privacy_dpsgd_default");
  REQUIRE(run_default.exit_code == 0);
  CHECK(run_default.out.find("{self_composed: {count: 14100, event: {sampled_without_replacement: "
                             "{source_size: 60000, sample_size: 256, event: "
                             "{discrete_gaussian_on_grid: {noise_multiplier: 1.1, min_scale: "
                             "4194304.0}}}}}}") != std::string::npos);
  CHECK(run_default.out.find("\"neighbours\": \"replace-one\"") != std::string::npos);
  // README's number: Wang, Balle & Kasiviswanathan's Thm 9 at order 2.
  CHECK(json_number(run_default.out, "epsilon") == doctest::Approx(24.119129519).epsilon(1e-9));
  CHECK(json_number(run_default.out, "order") == 2);
  const auto same = run_dptune(
      "privacy --event '{self_composed: {count: 14100, event: {sampled_without_replacement: "
      "{source_size: 60000, sample_size: 256, event: {discrete_gaussian_on_grid: "
      "{noise_multiplier: 1.1, min_scale: 4194304}}}}}}' --delta 1e-5 --json",
      "privacy_dpsgd_default_event");
  REQUIRE(same.exit_code == 0);
  CHECK(json_number(run_default.out, "epsilon") == json_number(same.out, "epsilon"));
  // --noise fast and --sampling poisson change the leaf and the sampling; bad values exit 2.
  const auto fast = run_dptune(
      "privacy --dataset-size 60000 --batch-size 256 --epochs 60 --noise-multiplier 1.1 "
      "--noise fast --delta 1e-5 --json",
      "privacy_dpsgd_fast");
  REQUIRE(fast.exit_code == 0);
  CHECK(fast.out.find("event: {gaussian: {noise_multiplier: 1.1}}") != std::string::npos);
  CHECK(fast.out.find("sampled_without_replacement") != std::string::npos);
  const auto bad_noise = run_dptune(
      "privacy --dataset-size 60000 --batch-size 256 --epochs 60 --noise-multiplier 1.1 "
      "--noise exact --delta 1e-5",
      "privacy_dpsgd_bad_noise");
  CHECK(bad_noise.exit_code == 2);
  CHECK(bad_noise.err == "dptune: --noise exact: expected secure or fast\n");
  const auto noise_on_event =
      run_dptune("privacy --event '{gaussian: {noise_multiplier: 1}}' --noise fast --delta 1e-5",
                 "privacy_noise_on_event");
  CHECK(noise_on_event.exit_code == 2);
  CHECK(noise_on_event.err.find("belong to the DP-SGD shortcut") != std::string::npos);
}

TEST_CASE("dptune privacy: sigma is noise stddev / clipping norm for fixed-size lots too") {
  // An Opacus / TF Privacy user's σ = 1.1 (stddev 1.1 C) with fixed-size lots of 256 of 60000,
  // 10 epochs: replace-one neighbours move the clipped sum by 2C, so the step is the Gaussian of
  // multiplier 0.55 relative to the replace-one sensitivity: ε ≈ 12, not the ≈ 2 a reading of σ
  // relative to 2C would give.  The answer says both the relation and the convention.
  const auto r = run_dptune(
      "privacy --dataset-size 60000 --batch-size 256 --steps 2344 --noise-multiplier 1.1 "
      "--sampling without_replacement --noise fast --delta 1e-5",
      "privacy_sigma_convention");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("neighbours: replace-one") != std::string::npos);
  CHECK(r.out.find("convention: noise_multiplier = noise stddev / the most one record can add") !=
        std::string::npos);
  const auto eps_at = r.out.find("epsilon:    ");
  REQUIRE(eps_at != std::string::npos);
  const double eps = std::stod(r.out.substr(eps_at + 12));
  CHECK(eps > 11.5);
  CHECK(eps < 12.5);
  const auto same = run_dptune(
      "privacy --event '{self_composed: {count: 2344, event: {sampled_without_replacement: "
      "{source_size: 60000, sample_size: 256, event: {replace_one: {event: {gaussian: "
      "{noise_multiplier: 0.55}}}}}}}}' --delta 1e-5 --json",
      "privacy_sigma_convention_explicit");
  REQUIRE(same.exit_code == 0);
  CHECK(json_number(same.out, "epsilon") == doctest::Approx(eps).epsilon(1e-12));
}

TEST_CASE("dptune privacy: a Poisson part composed with a replace-one part is refused") {
  const auto r = run_dptune(
      "privacy --event '{composed: {events: [{replace_one: {event: {pure_dp: {epsilon: 1}}}}, "
      "{poisson_sampled: {rate: 0.1, event: {gaussian: {noise_multiplier: 1}}}}]}}' --delta 1e-5",
      "privacy_mixed_relations");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("mixed neighbouring relations") != std::string::npos);
}

TEST_CASE("dptune privacy: event from a file, from stdin, delta at epsilon") {
  const auto dir = dptune_test::fresh_dir("privacy_files");
  {
    std::ofstream f(dir / "event.yaml");
    f << "# Liu-Talwar: geometric repetition of a 0.5-DP base\n"
         "repeat_and_select:\n  mean: 10\n  shape: 1\n  event: {pure_dp: {epsilon: 0.5}}\n";
  }
  const auto file = run_dptune("privacy '" + (dir / "event.yaml").string() + "' --delta 0 --json",
                               "privacy_file");
  REQUIRE(file.exit_code == 0);
  // Corollary 3 gives 3ε = 1.5; the selection privacy profile (docs/selection.md) gives at most
  // ε + 2·log(1/(γ + (1−γ)e^{−ε})) with γ = 0.1 (E[K] = 10).
  const double profile = 0.5 + 2 * std::log(1 / (0.1 + 0.9 * std::exp(-0.5)));
  CHECK(json_number(file.out, "epsilon") <= profile + 1e-9);
  CHECK(json_number(file.out, "epsilon") >= 0.5);
  const auto stdin_run = run_dptune(
      "privacy - --epsilon 1 < '" + (dir / "event.yaml").string() + "'", "privacy_stdin");
  REQUIRE(stdin_run.exit_code == 0);
  CHECK(stdin_run.out.find("delta:") != std::string::npos);
  const auto laplace = run_dptune(
      "privacy --event '{laplace: {noise_multiplier: 2}}' --epsilon 0.5 --json", "privacy_laplace");
  REQUIRE(laplace.exit_code == 0);
  CHECK(json_number(laplace.out, "delta") == 0);
}

TEST_CASE("dptune privacy: calibration") {
  const auto r = run_dptune(
      "privacy --calibrate noise_multiplier --target-epsilon 1 --delta 1e-5 --event "
      "'{gaussian: {noise_multiplier: 1}}' --json",
      "privacy_calibrate");
  REQUIRE(r.exit_code == 0);
  const double sigma = json_number(r.out, "noise_multiplier");
  CHECK(json_number(r.out, "epsilon") <= 1.0);
  // Independent check: the RDP of one Gaussian at the returned σ gives ε just under 1.
  CHECK(sigma > 3.5);
  CHECK(sigma < 5.0);
  const auto analytic = run_dptune(
      "privacy --calibrate noise_multiplier --target-epsilon 1 --delta 1e-5 --analytic-gaussian "
      "--event '{gaussian: {}}' --json",
      "privacy_calibrate_analytic");
  REQUIRE(analytic.exit_code == 0);
  CHECK(json_number(analytic.out, "noise_multiplier") == doctest::Approx(3.7306316).epsilon(1e-6));
  const auto dpsgd = run_dptune(
      "privacy --calibrate noise_multiplier --target-epsilon 3 --delta 1e-5 --dataset-size 60000 "
      "--batch-size 256 --steps 14063 --sampling poisson --noise fast --json",
      "privacy_calibrate_dpsgd");
  REQUIRE(dpsgd.exit_code == 0);
  CHECK(json_number(dpsgd.out, "noise_multiplier") < 1.1);  // 1.1 gives 2.6 < 3
  CHECK(json_number(dpsgd.out, "noise_multiplier") > 0.9);
}

TEST_CASE("dptune privacy: calibrating steps, batch size and an event field inverts pricing") {
  // The largest steps: pricing the answer and the answer + 1 with `dptune privacy` brackets the
  // target.
  const auto steps = run_dptune(
      "privacy --calibrate epochs --target-epsilon 3 --delta 1e-5 --dataset-size 60000 "
      "--batch-size 256 --noise-multiplier 1.1 --sampling poisson --noise fast --json",
      "privacy_calibrate_steps");
  REQUIRE(steps.exit_code == 0);
  const auto t = static_cast<std::int64_t>(json_number(steps.out, "steps"));
  // Epochs in the trainers' schedule: ⌈60000 / 256⌉ = 235 lots each.
  CHECK(json_number(steps.out, "epochs") == doctest::Approx(t / 235.0).epsilon(1e-12));
  auto price = [](std::int64_t count, const std::string& name) {
    const auto r = run_dptune(
        "privacy --delta 1e-5 --json --event '{self_composed: {count: " + std::to_string(count) +
            ", event: {poisson_sampled: {rate: 0.004266666666666667, event: {gaussian: "
            "{noise_multiplier: 1.1}}}}}}'",
        name);
    REQUIRE(r.exit_code == 0);
    return json_number(r.out, "epsilon");
  };
  CHECK(price(t, "privacy_price_t") <= 3.0);
  CHECK(price(t + 1, "privacy_price_t1") > 3.0);
  // 60 epochs at σ = 1.1 cost 2.6 (TF Privacy's classic example), so 3 allows more than 60.
  CHECK(t > 60 * 235);
  CHECK(t == 18338);  // README's example
  // The largest batch for 60 epochs: ε grows with the batch (rate up, steps down).
  const auto batch = run_dptune(
      "privacy --calibrate batch_size --target-epsilon 3 --delta 1e-5 --dataset-size 60000 "
      "--epochs 60 --noise-multiplier 1.1 --sampling poisson --noise fast --json",
      "privacy_calibrate_batch");
  REQUIRE(batch.exit_code == 0);
  CHECK(json_number(batch.out, "batch_size") > 256);
  CHECK(json_number(batch.out, "epsilon") <= 3.0);
  // An event field: the largest sample of a fixed-size lot, every occurrence set.
  const auto sample = run_dptune(
      "privacy --calibrate sample_size --target-epsilon 0.5 --delta 1e-6 --json --event "
      "'{sampled_without_replacement: {source_size: 1000, sample_size: 1, event: {gaussian: "
      "{noise_multiplier: 3}}}}'",
      "privacy_calibrate_sample");
  REQUIRE(sample.exit_code == 0);
  const auto m = static_cast<std::int64_t>(json_number(sample.out, "sample_size"));
  CHECK(m >= 1);
  CHECK(m < 1000);
  CHECK(json_number(sample.out, "epsilon") <= 0.5);
  const auto next = run_dptune(
      "privacy --delta 1e-6 --json --event "
      "'{sampled_without_replacement: {source_size: 1000, sample_size: " +
          std::to_string(m + 1) + ", event: {gaussian: {noise_multiplier: 3}}}}'",
      "privacy_price_m1");
  REQUIRE(next.exit_code == 0);
  CHECK(json_number(next.out, "epsilon") > 0.5);
  // Usage errors.
  const auto no_field = run_dptune(
      "privacy --calibrate count --target-epsilon 1 --delta 1e-6 --event '{gaussian: "
      "{noise_multiplier: 3}}'",
      "privacy_calibrate_no_field");
  CHECK(no_field.exit_code == 2);
  CHECK(no_field.err == "dptune: --calibrate count: --event has no count field to calibrate\n");
  const auto both = run_dptune(
      "privacy --calibrate steps --target-epsilon 3 --delta 1e-5 --dataset-size 60000 "
      "--batch-size 256 --noise-multiplier 1.1 --epochs 3",
      "privacy_calibrate_both");
  CHECK(both.exit_code == 2);
  CHECK(both.err == "dptune: --calibrate steps computes it: leave out --epochs and --steps\n");
}

TEST_CASE("dptune privacy: bad input exits 2 with a clear message") {
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases{
      {"--event '{gaussian: {noise_multiplier: -1}}' --delta 1e-5",
       "--event:1:12: gaussian: gaussian: noise_multiplier must be >= 0, got -1.0"},
      {"--event '{poisson_sampled: {rate: 1.5, event: {gaussian: {noise_multiplier: 1}}}}' --delta "
       "1e-5",
       "--event:1:26: poisson_sampled.rate: sampling rate must be in (0, 1], got 1.5"},
      {"--event '{gaussian: {noise_multiplier: 1}}' --delta 1",
       "dptune: --delta 1.0: must be in [0, 1)"},
      {"--event '{gaussian: {noise_multiplier: 1}}' --delta -0.1",
       "dptune: --delta -0.1: must be in [0, 1)"},
      {"--event '{gaussian: {noise_multiplier: 1}}'",
       "dptune: give exactly one of --delta (prints epsilon) or --epsilon (prints delta)"},
      {"--event '{zcdp: {rho: 1}}' --delta 1e-5 --accountant pure_dpp",
       "dptune: --accountant pure_dpp: no such accountant plugin (did you mean 'pure_dp'?)"},
      {"--event '{zcdp: {rho: 1}}' --delta 1e-5 --conversion fancy",
       "dptune: accountant rdp: parameter 'conversion': expected string one of {improved, "
       "classic}"},
      {"--dataset-size 100 --batch-size 200 --epochs 1 --noise-multiplier 1 --delta 1e-5",
       "dptune: --batch-size must be in [1, --dataset-size]"},
      {"--calibrate noise_multiplier --delta 1e-5 --event '{gaussian: {}}'",
       "dptune: --calibrate needs --target-epsilon and --delta"},
      {"--event '{gaussian: {noise_multiplier: 1}}' --delta 1e-5 --accountant pure_dp",
       "dptune: accountant pure_dp cannot account"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const auto r = run_dptune("privacy " + c.args, "privacy_bad_" + std::to_string(i++));
    INFO(c.args << " -> " << r.err);
    CHECK(r.err.rfind(c.expected, 0) == 0);
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("dptune plan repetition: the table agrees with the accountant and the closed forms") {
  const std::string base =
      "'{self_composed: {count: 100, event: {poisson_sampled: {rate: 0.01, "
      "event: {gaussian: {noise_multiplier: 1.0}}}}}}'";
  const auto r = run_dptune(
      "plan repetition --event " + base + " --candidates 20 --delta 1e-5 --means 10 --json",
      "plan_json");
  REQUIRE(r.exit_code == 0);
  // Six rows: five distributions and the fixed K.
  std::size_t rows = 0;
  for (auto at = r.out.find("\"distribution\""); at != std::string::npos;
       at = r.out.find("\"distribution\"", at + 1))
    ++rows;
  CHECK(rows == 6);
  // The logarithmic row's epsilon is what `dptune privacy` says of the same RepeatAndSelect event.
  const auto direct =
      run_dptune("privacy --event '{repeat_and_select: {mean: 10, shape: 0, event: " +
                     base.substr(1, base.size() - 2) + "}}' --delta 1e-5 --json",
                 "plan_direct");
  REQUIRE(direct.exit_code == 0);
  const auto first_eps = r.out.find("\"epsilon\"", r.out.find("\"rows\""));
  CHECK(std::stod(r.out.substr(first_eps + 11)) ==
        doctest::Approx(json_number(direct.out, "epsilon")).epsilon(1e-12));
  // Poisson(10): E[best quantile] = 1 − (1 − e^{−10})/10; P[best of 20 tried] = 1 − e^{−10/20}.
  const auto poisson = r.out.find("\"Poisson\"");
  REQUIRE(poisson != std::string::npos);
  const std::string tail = r.out.substr(poisson);
  CHECK(json_number(tail, "expected_best_quantile") ==
        doctest::Approx(1 - (1 - std::exp(-10.0)) / 10).epsilon(1e-9));
  CHECK(json_number(tail, "success_probability") == doctest::Approx(1 - std::exp(-0.5)));
  // --score-epsilon E composes the private score's Laplace(1/E) into the given base.
  const auto scored = run_dptune("plan repetition --event " + base +
                                     " --candidates 20 --delta 1e-5 --means 10 --json "
                                     "--score-epsilon 0.25",
                                 "plan_scored");
  REQUIRE(scored.exit_code == 0);
  const auto scored_direct = run_dptune(
      "privacy --event '{repeat_and_select: {mean: 10, shape: 0, event: {composed: {events: [" +
          base.substr(1, base.size() - 2) +
          ", {laplace: {noise_multiplier: 4}}]}}}}' --delta 1e-5 --json",
      "plan_scored_direct");
  REQUIRE(scored_direct.exit_code == 0);
  const auto scored_eps = scored.out.find("\"epsilon\"", scored.out.find("\"rows\""));
  CHECK(std::stod(scored.out.substr(scored_eps + 11)) ==
        doctest::Approx(json_number(scored_direct.out, "epsilon")).epsilon(1e-12));
  CHECK(std::stod(scored.out.substr(scored_eps + 11)) > std::stod(r.out.substr(first_eps + 11)));
  const auto bad = run_dptune("plan repetition --event " + base + " --delta 1e-5", "plan_bad");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--candidates") != std::string::npos);
}

TEST_CASE("dptune plan repetition --pipeline: the worst grid candidate's event, the grid's size") {
  const auto dir = dptune_test::fresh_dir("plan_pipeline_plots");
  const auto r = run_dptune(
      "plan repetition --pipeline examples/pipelines/repetition_dp_sgd_learning_rate.yaml "
      "--means 10 --json --plot '" +
          dir.string() + "'",
      "plan_pipeline");
  REQUIRE(r.exit_code == 0);
  CHECK(json_number(r.out, "candidates") == 8);
  CHECK(json_number(r.out, "delta") == 1e-5);
  // Every grid point has the same event: 4 epochs of ceil(341/32) = 11 lots of 32 of 341 rows,
  // with the secure gaussian mechanism's exact discrete Gaussian noise.
  CHECK(r.out.find("{self_composed: {count: 44, event: {sampled_without_replacement: {source_size: "
                   "341, sample_size: 32, event: {discrete_gaussian_on_grid: {noise_multiplier: "
                   "6.0, min_scale: 4194304.0}}}}}}") != std::string::npos);
  // The example scores privately with score_epsilon 0.5: Laplace(1/0.5) composed into the base,
  // stated for replace-one like the trainer's sampling without replacement.
  CHECK(r.out.find("{replace_one: {event: {laplace: {noise_multiplier: 2.0}}}}") !=
        std::string::npos);
  const auto direct = run_dptune(
      "privacy --event '{repeat_and_select: {mean: 10, shape: 0, event: {composed: {events: "
      "[{self_composed: {count: 44, event: {sampled_without_replacement: {source_size: 341, "
      "sample_size: 32, event: {discrete_gaussian_on_grid: {noise_multiplier: 6.0, min_scale: "
      "4194304}}}}}}, "
      "{replace_one: {event: {laplace: {noise_multiplier: 2.0}}}}]}}}}' --delta 1e-5 --json",
      "plan_pipeline_direct");
  REQUIRE(direct.exit_code == 0);
  const auto first_eps = r.out.find("\"epsilon\"", r.out.find("\"rows\""));
  CHECK(std::stod(r.out.substr(first_eps + 11)) ==
        doctest::Approx(json_number(direct.out, "epsilon")).epsilon(1e-12));
  for (const char* plot : {"expected_quantile.svg", "success_probability.svg"})
    CHECK(std::filesystem::file_size(dir / plot) > 1000);
  // Declared public: no scoring event; --score-epsilon then contradicts the declaration.
  const auto declared = run_dptune(
      "plan repetition --pipeline examples/pipelines/repetition_dp_sgd_learning_rate.yaml "
      "--set tuner.params.scoring=public_validation --means 10 --json",
      "plan_pipeline_public");
  REQUIRE(declared.exit_code == 0);
  CHECK(declared.out.find("laplace") == std::string::npos);
  CHECK(declared.out.find("assumes the validation split is public") != std::string::npos);
  const auto contradiction = run_dptune(
      "plan repetition --pipeline examples/pipelines/repetition_dp_sgd_learning_rate.yaml "
      "--set tuner.params.scoring=public_validation --score-epsilon 1",
      "plan_pipeline_contradiction");
  CHECK(contradiction.exit_code == 2);
  const auto both = run_dptune(
      "plan repetition --pipeline examples/pipelines/repetition_dp_sgd_learning_rate.yaml "
      "--candidates 3",
      "plan_pipeline_bad");
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--pipeline takes") != std::string::npos);
}

TEST_CASE("dptune privacy --calibrate with pld: the MNIST setting calibrates") {
  // q = 256/60000, 14063 steps, target ε 2: pld's ε wobbles by about 1e-8 relative between
  // nearby σ (its losses live on a grid), which stopped the search with "epsilon is not
  // monotone".  The answer's own ε meets the target, and 0.1% less noise does not.
  const std::string setting =
      "--dataset-size 60000 --batch-size 256 --steps 14063 --sampling poisson --noise fast "
      "--delta 1e-5 --accountant pld --json";
  const auto r = run_dptune("privacy --calibrate noise_multiplier --target-epsilon 2 " + setting,
                            "calibrate_pld");
  REQUIRE(r.exit_code == 0);
  const double sigma = json_number(r.out, "noise_multiplier");
  CHECK(json_number(r.out, "epsilon") <= 2.0);
  auto price = [&](double s, const std::string& tag) {
    const auto p =
        run_dptune("privacy --noise-multiplier " + std::to_string(s) + " " + setting, tag);
    REQUIRE(p.exit_code == 0);
    return json_number(p.out, "epsilon");
  };
  CHECK(price(sigma * 1.001, "calibrate_pld_above") <= 2.0);
  CHECK(price(sigma * 0.999, "calibrate_pld_below") > 2.0);
  // The same with rdp and best: every accountant calibrates what it prices.
  for (const char* accountant : {"rdp", "best"}) {
    const auto other = run_dptune(
        "privacy --calibrate noise_multiplier --target-epsilon 2 --dataset-size 60000 "
        "--batch-size 256 --steps 14063 --sampling poisson --noise fast --delta 1e-5 "
        "--json --accountant " +
            std::string(accountant),
        std::string("calibrate_") + accountant);
    REQUIRE(other.exit_code == 0);
    CHECK(json_number(other.out, "epsilon") <= 2.0);
    CHECK(json_number(other.out, "noise_multiplier") >= sigma * 0.999);
  }
}

TEST_CASE("dptune privacy, plan and run print the same epsilon for the same DP-SGD run") {
  // One DP-SGD run of the example pipeline, with its defaults (fixed-size lots, secure noise):
  // the shortcut, the planner's "one run" line and the run's guarantee must agree to the
  // printed digit.  The tuner runs K = 1 candidate with the validation split declared public, so
  // the run's whole event is one training run.
  const std::string pipeline = "examples/pipelines/repetition_dp_sgd_learning_rate.yaml";
  const std::string single =
      " --set tuner.params.distribution=fixed --set tuner.params.runs=1"
      " --set tuner.params.scoring=public_validation";
  // 341 training rows, lots of 32, 4 epochs, σ = 6 (the pipeline's).
  const auto privacy = run_dptune(
      "privacy --dataset-size 341 --batch-size 32 --epochs 4 --noise-multiplier 6 --delta 1e-5",
      "same_event_privacy");
  REQUIRE(privacy.exit_code == 0);
  const auto eps_at = privacy.out.find("epsilon:    ");
  REQUIRE(eps_at != std::string::npos);
  const double eps = std::stod(privacy.out.substr(eps_at + 12));
  CHECK(privacy.out.find("{self_composed: {count: 44, event: {sampled_without_replacement: "
                         "{source_size: 341, sample_size: 32, event: "
                         "{discrete_gaussian_on_grid: {noise_multiplier: 6.0, min_scale: "
                         "4194304.0}}}}}}") != std::string::npos);
  const auto plan =
      run_dptune("plan repetition --pipeline " + pipeline + single, "same_event_plan");
  REQUIRE(plan.exit_code == 0);
  const auto one_run = plan.out.find("one run:    epsilon ");
  REQUIRE(one_run != std::string::npos);
  const std::string planned =
      plan.out.substr(one_run + 20, plan.out.find(' ', one_run + 20) - one_run - 20);
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.4g", eps);
  CHECK(planned == shown);
  const auto out = dptune_test::fresh_dir("same_event_run");
  const auto run = run_dptune("run " + pipeline + single + " --seed 3 --no-progress --out '" +
                                  (out / "study").string() + "'",
                              "same_event_run");
  REQUIRE(run.exit_code == 0);
  const std::string summary = dptune_test::slurp(out / "study" / "summary.json");
  const auto guarantee = summary.find("\"epsilon\":", summary.find("\"guarantee\""));
  REQUIRE(guarantee != std::string::npos);
  CHECK(std::stod(summary.substr(guarantee + 10)) == eps);
  // The console line, as the run prints it.
  std::snprintf(shown, sizeof shown, "%.5g", eps);
  CHECK(run.out.find(std::string("(epsilon, delta) = (") + shown + ", 1e-05)") !=
        std::string::npos);
}
