// The host hands an accountant only event kinds its ABI minor knows (event_kinds.hpp says which
// minor appended each kind).  tests/test_plugins/careless_accountant.cpp, built for ABI 2.2 and
// 2.7, claims every event and prices a kind it does not know as free: without the host's refusal
// it would report ε = 0 for replace_one (2.3) or discrete_gaussian (2.8) noise.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli_support.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace fs = std::filesystem;
using dptune::DpEvent;

namespace {

const fs::path kPluginDir = fs::path(DPTUNE_TEST_PLUGIN_DIR) / "careless_accountant";

std::shared_ptr<dptune::Accountant> careless(int minor) {
  static dptune::host::PluginRegistry* registry = [] {
    auto* r = new dptune::host::PluginRegistry();  // never unloaded: proxies may outlive a test
    r->scan(kPluginDir);
    return r;
  }();
  const std::string name = "careless_accountant_v2_" + std::to_string(minor);
  const auto* info = registry->find(dptune::PluginKind::Accountant, name);
  REQUIRE_MESSAGE(info != nullptr, name);
  CHECK(info->abi_minor == minor);
  return registry->create_accountant(name, {});
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("accountant minor: kinds its minor knows reach the accountant") {
  for (const int minor : {2, 7}) {
    CAPTURE(minor);
    const auto accountant = careless(minor);
    // Basic composition of pure ε: 1/1 + 2 × 1/4.
    const DpEvent event =
        DpEvent::composed({DpEvent::laplace(1), DpEvent::self_composed(DpEvent::laplace(4), 2),
                           DpEvent::one_of({DpEvent::pure_dp(0.25)})});
    CHECK(accountant->unsupported_reason(event).empty());
    CHECK(accountant->supports(event));
    CHECK(accountant->epsilon(event, 1e-5).epsilon == doctest::Approx(1.5).epsilon(1e-15));
  }
  // replace_one appeared in ABI 2.3: a 2.7 accountant knows it (group privacy of size 2).
  CHECK(careless(7)->epsilon(DpEvent::replace_one(DpEvent::laplace(2)), 1e-5).epsilon == 1.0);
}

TEST_CASE("accountant minor: a kind appended after the accountant's minor is refused, nested too") {
  struct Case {
    int minor;
    DpEvent event;
    std::string kind, appended;
  };
  const Case cases[] = {
      {2, DpEvent::replace_one(DpEvent::laplace(1)), "replace_one", "2.3"},
      {2,
       DpEvent::self_composed(
           DpEvent::composed({DpEvent::laplace(1), DpEvent::replace_one(DpEvent::laplace(1))}), 3),
       "replace_one", "2.3"},
      {7, DpEvent::discrete_gaussian(2), "discrete_gaussian", "2.8"},
      {7,
       DpEvent::repeat_and_select(
           DpEvent::one_of({DpEvent::laplace(1), DpEvent::sampled_without_replacement(
                                                     100, 10, DpEvent::discrete_gaussian(3))}),
           5, 1),
       "discrete_gaussian", "2.8"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.event.to_string());
    const auto accountant = careless(c.minor);
    const std::string why = accountant->unsupported_reason(c.event);
    CHECK_FALSE(accountant->supports(c.event));
    CHECK(mentions(why, "built for plugin ABI 2." + std::to_string(c.minor)));
    CHECK(mentions(
        why, "cannot know the event kind '" + c.kind + "' (appended in ABI " + c.appended + ")"));
    CHECK(mentions(why, "careless_accountant_v2_" + std::to_string(c.minor)));
    CHECK_THROWS_WITH_AS(accountant->epsilon(c.event, 1e-5), why.c_str(), dptune::ConfigError);
    CHECK_THROWS_WITH_AS(accountant->delta(c.event, 1.0), why.c_str(), dptune::ConfigError);
  }
}

TEST_CASE("accountant minor: dptune privacy refuses the kind with exit code 2") {
  const std::string common = " --delta 1e-5 --accountant careless_accountant_v2_7 --plugin-path '" +
                             kPluginDir.string() + "' --json";
  const auto known = dptune_test::run_dptune(
      "privacy --event '{laplace: {noise_multiplier: 2}}'" + common, "careless_known");
  REQUIRE_MESSAGE(known.exit_code == 0, known.err);
  CHECK(mentions(known.out, "\"epsilon\": 0.5"));
  const auto refused = dptune_test::run_dptune(
      "privacy --event '{discrete_gaussian: {noise_multiplier: 2}}'" + common, "careless_new");
  CHECK(refused.exit_code == 2);
  CHECK(mentions(refused.err,
                 "cannot know the event kind 'discrete_gaussian' (appended in ABI "
                 "2.8); use an accountant built for ABI 2.8 or later"));
  CHECK(refused.out.empty());
}
