// The host asks an accountant each (question, event) once and keeps the answer: a grid prices the
// same few events for every candidate and repetition.  Events that differ in any member, even in
// the last bit of a number, get their own answer.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "build_paths.hpp"
#include "dptune/host/plugin_registry.hpp"

namespace fs = std::filesystem;
using dptune::DpEvent;

TEST_CASE("accountant answers are kept per question and event, never shared between events") {
  static auto* registry = [] {
    auto* r = new dptune::host::PluginRegistry();  // never unloaded: the proxy may outlive it
    r->scan(fs::path(dptune_test::build_paths::test_plugin_dir) / "counting_accountant");
    return r;
  }();
  const auto accountant = registry->create_accountant("counting_accountant", {});
  const DpEvent a = DpEvent::self_composed(DpEvent::laplace(2.0), 3);
  const DpEvent b = DpEvent::self_composed(DpEvent::laplace(std::nextafter(2.0, 3.0)), 3);

  const auto first = accountant->epsilon(a, 1e-5);
  CHECK(first.epsilon == doctest::Approx(1.5));
  const std::string asked = first.derivation;
  CHECK(asked.rfind("question ", 0) == 0);
  // The same question again: answered by the host, the plugin is not asked.
  CHECK(accountant->epsilon(a, 1e-5).derivation == asked);
  CHECK(accountant->epsilon(DpEvent::self_composed(DpEvent::laplace(2.0), 3), 1e-5).derivation ==
        asked);
  // A number one ulp away, another count, another δ, or the other question: asked anew.
  const auto other = accountant->epsilon(b, 1e-5);
  CHECK(other.derivation != asked);
  CHECK(other.epsilon < first.epsilon);
  CHECK(accountant->epsilon(DpEvent::self_composed(DpEvent::laplace(2.0), 4), 1e-5).epsilon ==
        doctest::Approx(2.0));
  CHECK(accountant->epsilon(a, 1e-6).derivation != asked);
  const auto by_delta = accountant->delta(a, 1.5);
  CHECK(by_delta.derivation != asked);
  CHECK(by_delta.delta == 0);
  CHECK(accountant->delta(a, 1.0).delta == 1);
}
