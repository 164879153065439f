// The privacy ledger's composition across studies: RDP curves added when every charge has one,
// the accountant's basic composition otherwise, whichever is smaller (dptune/host/ledger.hpp).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/sqlite_db.hpp"
#include "built_plugins.hpp"
#include "dptune/dptune.hpp"
#include "dptune/host/ledger.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "temp_dir.hpp"

namespace host = dptune::host;
using dptune::DpEvent;
using dptune_test::TempDir;

namespace {

std::shared_ptr<dptune::Accountant> rdp_accountant() {
  return dptune_test::built_accountant("rdp");
}

constexpr double kDelta = 1e-5;

}  // namespace

TEST_CASE("ledger: charges with RDP curves compose by adding the curves") {
  const auto acc = rdp_accountant();
  // One run: 10 Gaussian steps with sigma 2 (RDP alpha / (2 sigma^2) per step).
  const DpEvent run = DpEvent::self_composed(DpEvent::gaussian(2.0), 10);
  const dptune::PrivacyGuarantee g = acc->epsilon(run, kDelta);
  REQUIRE_FALSE(g.rdp_curve.empty());
  // Four such runs are, as RDP, exactly 40 steps: the accountant's own price of those.
  const double four_runs =
      acc->epsilon(DpEvent::self_composed(DpEvent::gaussian(2.0), 40), kDelta).epsilon;
  // Basic composition cannot even price two runs at the budget's delta (their deltas add up).
  CHECK_THROWS(
      acc->epsilon(DpEvent::self_composed(DpEvent::approx_dp(g.epsilon, g.delta), 2), kDelta));
  REQUIRE(four_runs < 2.5 * g.epsilon);  // far below 4 epsilon

  TempDir dir;
  host::Ledger ledger(dir.path() / "ledger.db");
  // A budget that fits four runs by RDP composition (basic composition could not charge two).
  const host::LedgerBudget budget{1.05 * four_runs, kDelta};
  host::LedgerCharge last;
  for (int i = 0; i < 4; ++i)
    last = ledger.charge("adult", budget, "study" + std::to_string(i), "/out", "charge",
                         DpEvent::approx_dp(g.epsilon, g.delta), g, *acc, "run");
  CHECK(last.entry.total_epsilon == doctest::Approx(four_runs).epsilon(1e-9));
  const auto rows = ledger.read("adult");
  REQUIRE(rows.size() == 1);
  REQUIRE(rows[0].entries.size() == 4);
  CHECK(rows[0].entries[0].rdp_curve.size() == g.rdp_curve.size());
  CHECK(rows[0].entries[1].total_epsilon < rows[0].entries[3].total_epsilon);  // monotone
  // A fifth run does not fit: refused, naming the route and the remainder.
  try {
    ledger.charge("adult", budget, "study4", "/out", "charge",
                  DpEvent::approx_dp(g.epsilon, g.delta), g, *acc, "run");
    FAIL("the fifth charge should have been refused");
  } catch (const host::LedgerRefused& e) {
    CHECK(std::string(e.what()).find("RDP composition of the charges' curves") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("in 4 charges") != std::string::npos);
  }
}

TEST_CASE("ledger: a charge without an RDP curve makes the total the basic composition") {
  const auto acc = rdp_accountant();
  const DpEvent run = DpEvent::self_composed(DpEvent::gaussian(2.0), 10);
  const dptune::PrivacyGuarantee g = acc->epsilon(run, kDelta);
  dptune::PrivacyGuarantee pure;  // e.g. from an accountant without RDP curves
  pure.epsilon = 0.5;
  TempDir dir;
  host::Ledger ledger(dir.path() / "ledger.db");
  const host::LedgerBudget budget{100, kDelta};
  ledger.charge("d", budget, "a", "/out", "charge", DpEvent::approx_dp(g.epsilon, g.delta), g, *acc,
                "");
  const auto last =
      ledger.charge("d", budget, "b", "/out", "charge", DpEvent::pure_dp(0.5), pure, *acc, "");
  const double basic =
      acc->epsilon(
             DpEvent::composed({DpEvent::approx_dp(g.epsilon, g.delta), DpEvent::pure_dp(0.5)}),
             kDelta)
          .epsilon;
  CHECK(last.entry.total_epsilon == doctest::Approx(basic).epsilon(1e-12));
}

TEST_CASE("ledger: compose_charges takes the smaller bound and shares orders only") {
  const auto acc = rdp_accountant();
  // Two curves with one shared order: alpha = 2 (0.1 + 0.2); alpha = 3 and 4 are not shared.
  const std::vector<std::vector<dptune::RdpPoint>> curves = {{{2, 0.1}, {3, 0.15}},
                                                             {{2, 0.2}, {4, 0.4}}};
  const std::vector<DpEvent> events = {DpEvent::approx_dp(50, 1e-6), DpEvent::approx_dp(50, 1e-6)};
  const auto c = host::compose_charges(events, curves, kDelta, *acc);
  // CKS 2020, Proposition 12 at alpha = 2: 0.3 + log(1/2) - (log(1e-5) + log 2) / 1.
  const double expected = 0.3 + std::log(0.5) - (std::log(kDelta) + std::log(2.0));
  CHECK(c.epsilon == doctest::Approx(expected).epsilon(1e-12));
  CHECK(c.how.find("at 1 shared orders") != std::string::npos);
  // Curves worse than basic composition: the basic bound is kept.
  const std::vector<std::vector<dptune::RdpPoint>> weak = {{{2, 50}}, {{2, 50}}};
  const auto b = host::compose_charges(events, weak, kDelta, *acc);
  CHECK(b.epsilon == doctest::Approx(acc->epsilon(DpEvent::composed(events), kDelta).epsilon));
  CHECK(b.how.find("basic composition") != std::string::npos);
  // Neither route prices it (the deltas exceed the budget's, no curves): refused with the reason.
  const std::vector<DpEvent> wide = {DpEvent::approx_dp(1, 1e-5), DpEvent::approx_dp(1, 1e-5)};
  CHECK_THROWS_AS(host::compose_charges(wide, {{}, {}}, kDelta, *acc), host::LedgerRefused);
}

TEST_CASE("ledger: RDP curves round-trip through their text, infinite orders left out") {
  const std::vector<dptune::RdpPoint> curve = {
      {1.5, 0.1234567890123456789}, {2, 1e-300}, {64, std::numeric_limits<double>::infinity()}};
  const auto text = host::curve_to_text(curve);
  const auto back = host::curve_from_text(text);
  REQUIRE(back.size() == 2);
  CHECK(back[0].order == 1.5);
  CHECK(back[0].epsilon == curve[0].epsilon);
  CHECK(back[1].epsilon == 1e-300);
  CHECK(host::curve_from_text("").empty());
  CHECK_THROWS_AS(host::curve_from_text("2:0.1;oops"), dptune::Error);
}

TEST_CASE("ledger: concurrent opens of a new ledger all succeed, an old ledger gains the column") {
  TempDir dir;
  const auto file = dir.path() / "new.db";
  std::vector<std::thread> threads;
  threads.reserve(8);
  std::atomic<int> failures{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      try {
        host::Ledger ledger(file);
      } catch (const std::exception&) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);

  // A ledger written before RDP curves were kept: its rows compose without curves.
  const auto old_file = dir.path() / "old.db";
  {
    host::SqliteDb db(old_file, true);
    db.exec(
        "CREATE TABLE budgets (dataset TEXT PRIMARY KEY, epsilon REAL NOT NULL,"
        " delta REAL NOT NULL);"
        "CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL,"
        " study_id TEXT NOT NULL, study_dir TEXT NOT NULL, time TEXT NOT NULL, kind TEXT NOT NULL,"
        " event TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, total_epsilon REAL NOT"
        " NULL, note TEXT NOT NULL);"
        "INSERT INTO budgets VALUES ('d', 10, 1e-5);"
        "INSERT INTO entries (dataset, study_id, study_dir, time, kind, event, epsilon, delta,"
        " total_epsilon, note) VALUES ('d', 'old', '/out', 't', 'charge',"
        " '{pure_dp: {epsilon: 1}}', 1, 0, 1, '')");
  }
  const auto acc = rdp_accountant();
  host::Ledger ledger(old_file);
  const dptune::PrivacyGuarantee g = acc->epsilon(DpEvent::gaussian(2.0), kDelta);
  const auto charged = ledger.charge("d", {10, kDelta}, "new", "/out", "charge",
                                     DpEvent::approx_dp(g.epsilon, g.delta), g, *acc, "");
  const double basic =
      acc->epsilon(DpEvent::composed({DpEvent::pure_dp(1), DpEvent::approx_dp(g.epsilon, g.delta)}),
                   kDelta)
          .epsilon;
  CHECK(charged.entry.total_epsilon == doctest::Approx(basic).epsilon(1e-12));
  CHECK(ledger.read("d")[0].entries[0].rdp_curve.empty());
}

namespace {

/// Prices pure_dp and approx_dp events and their compositions by adding their epsilons (basic
/// composition, exact in binary for the quarters used below): the ledger's totals are then exact
/// sums a test can state.
class SummingAccountant final : public dptune::Accountant {
 public:
  std::string unsupported_reason(const DpEvent&) const override { return ""; }
  dptune::PrivacyGuarantee epsilon(const DpEvent& event, double) const override {
    dptune::PrivacyGuarantee g;
    g.epsilon = sum(event);
    return g;
  }
  dptune::PrivacyGuarantee delta(const DpEvent&, double) const override {
    throw dptune::PrivacyError("not needed");
  }

 private:
  static double sum(const DpEvent& event) {
    if (event.kind() != DpEvent::Kind::Composed) return event.epsilon();
    double total = 0;
    for (const auto& e : event.events()) total += sum(e);
    return total;
  }
};

dptune::PrivacyGuarantee pure(double epsilon) {
  dptune::PrivacyGuarantee g;
  g.epsilon = epsilon;
  return g;
}

host::LedgerReservation reserve(double epsilon) {
  return {DpEvent::approx_dp(epsilon, 0), pure(epsilon)};
}

std::vector<std::string> entry_kinds(const host::Ledger& ledger) {
  std::vector<std::string> out;
  // Held in a variable: a range-for over a member of a temporary's element would read freed
  // memory (the temporary ends before the loop body runs, until C++23).
  const auto datasets = ledger.read("d");
  for (const auto& e : datasets[0].entries) out.push_back(e.kind);
  return out;
}

}  // namespace

TEST_CASE("ledger: a worst-case supplement is reserved with its charge and counts until settled") {
  const SummingAccountant acc;
  TempDir dir;
  host::Ledger ledger(dir.path() / "ledger.db");
  const host::LedgerBudget budget{3.0, kDelta};
  const auto charge = [&](const std::string& study, double epsilon,
                          const std::optional<host::LedgerReservation>& reservation) {
    return ledger.charge("d", budget, study, "/out", "charge", DpEvent::approx_dp(epsilon, 0),
                         pure(epsilon), acc, "", reservation);
  };
  // Study a: 1 charged and 1.5 reserved (2.5 of 3), in one transaction.
  const auto a = charge("a", 1.0, reserve(1.5));
  CHECK(a.entry.total_epsilon == 1.0);
  CHECK(entry_kinds(ledger) == std::vector<std::string>{"charge", "reservation"});
  CHECK(ledger.read("d")[0].entries[1].total_epsilon == 2.5);
  // The open reservation counts: 1 more does not fit (3.5), and a run whose charge fits (0.25)
  // but whose worst case does not (0.25 + 0.5 = 3.25 in all) is refused, writing nothing.
  CHECK_THROWS_AS(charge("b", 1.0, std::nullopt), host::LedgerRefused);
  try {
    charge("c", 0.25, reserve(0.5));
    FAIL("a run whose worst case does not fit must be refused");
  } catch (const host::LedgerRefused& e) {
    CHECK(std::string(e.what()).find("with its worst-case supplement") != std::string::npos);
    CHECK(std::string(e.what()).find("to 3.25") != std::string::npos);
  }
  CHECK(entry_kinds(ledger).size() == 2);
  // Study a needed 1.25 of its 1.5: the reservation row becomes that supplement (2.25 in all).
  const auto settled = ledger.settle("d", "a", "/out", DpEvent::approx_dp(1.25, 0), pure(1.25), acc,
                                     "final guarantee above the charge");
  CHECK_FALSE(settled.over_reservation);
  CHECK_FALSE(settled.over_budget);
  CHECK(settled.entry.total_epsilon == 2.25);
  CHECK(entry_kinds(ledger) == std::vector<std::string>{"charge", "supplement"});
  CHECK(ledger.read("d")[0].entries[1].epsilon == 1.25);
  // What the settlement freed is available again: 0.75 fits exactly (3), 0.25 more does not.
  CHECK(charge("b", 0.75, std::nullopt).entry.total_epsilon == 3.0);
  CHECK_THROWS_AS(charge("e", 0.25, std::nullopt), host::LedgerRefused);
  // A resumed study is not charged or reserved again.
  CHECK(charge("a", 1.0, reserve(1.5)).already_charged);
  CHECK(entry_kinds(ledger).size() == 3);
}

TEST_CASE("ledger: an unneeded reservation stops counting, a supplement past the budget is kept") {
  const SummingAccountant acc;
  TempDir dir;
  host::Ledger ledger(dir.path() / "ledger.db");
  const host::LedgerBudget budget{2.0, kDelta};
  ledger.charge("d", budget, "a", "/out", "charge", DpEvent::approx_dp(1.0, 0), pure(1.0), acc, "",
                reserve(1.0));
  // Nothing needed beyond the charge: the reservation is settled and counts nothing.
  const auto none = ledger.settle("d", "a", "/out", std::nullopt, {}, acc, "");
  CHECK(none.entry.kind == "settled");
  CHECK(none.entry.total_epsilon == 1.0);
  CHECK(entry_kinds(ledger) == std::vector<std::string>{"charge", "settled"});
  // Settling again (a resumed study's second report) changes nothing.
  ledger.settle("d", "a", "/out", std::nullopt, {}, acc, "");
  CHECK(entry_kinds(ledger).size() == 2);
  // Study b reserved nothing and needs 1.5 beyond its 0.5: recorded in full although it takes
  // the total to 3 of 2 (budget spent is never under-reported); the caller releases nothing.
  ledger.charge("d", budget, "b", "/out", "charge", DpEvent::approx_dp(0.5, 0), pure(0.5), acc, "");
  const auto over =
      ledger.settle("d", "b", "/out", DpEvent::approx_dp(1.5, 0), pure(1.5), acc, "supplement");
  CHECK(over.over_budget);
  CHECK(over.over_reservation);
  CHECK(over.entry.total_epsilon == 3.0);
  CHECK(entry_kinds(ledger) ==
        std::vector<std::string>{"charge", "settled", "charge", "supplement"});
  // A resumed study settles again: its supplement is not charged twice.
  CHECK(ledger.settle("d", "b", "/out", DpEvent::approx_dp(1.5, 0), pure(1.5), acc, "")
            .already_charged);
  CHECK(entry_kinds(ledger).size() == 4);
  // Every later charge is refused.
  CHECK_THROWS_AS(ledger.charge("d", budget, "c", "/out", "charge", DpEvent::approx_dp(0.25, 0),
                                pure(0.25), acc, ""),
                  host::LedgerRefused);
}

TEST_CASE("ledger: check decides as charge does, names the worst case and writes nothing") {
  const SummingAccountant acc;
  TempDir dir;
  const auto file = dir.path() / "ledger.db";
  const host::LedgerBudget budget{3.0, kDelta};
  const auto check = [&](double epsilon,
                         const std::optional<host::LedgerReservation>& reservation) {
    return host::Ledger::check(file, "d", budget, DpEvent::approx_dp(epsilon, 0), pure(epsilon),
                               acc, reservation);
  };
  // No ledger yet: the run alone against the budget, and the file is not created.
  CHECK(check(1.0, reserve(1.5)).entry.total_epsilon == 2.5);
  CHECK_THROWS_AS(check(1.0, reserve(2.5)), host::LedgerRefused);
  CHECK_FALSE(std::filesystem::exists(file));

  host::Ledger ledger(file);
  ledger.charge("d", budget, "a", "/out", "charge", DpEvent::approx_dp(1.0, 0), pure(1.0), acc, "");
  // 1 spent: a charge of 0.5 fits alone (1.5), and with a worst case of 1 (2.5) ...
  CHECK(check(0.5, std::nullopt).entry.total_epsilon == 1.5);
  CHECK(check(0.5, reserve(1.0)).entry.total_epsilon == 2.5);
  // ... but not with a worst case of 2 (3.5): refused with the ledger, the remaining budget, the
  // charge and the worst case named, as charge() refuses it, and nothing is written.
  std::string refused;
  try {
    check(0.5, reserve(2.0));
  } catch (const host::LedgerRefused& e) {
    refused = e.what();
  }
  CHECK(refused.find(file.string() + ": dataset 'd'") != std::string::npos);
  CHECK(refused.find("remaining: epsilon 2 ") != std::string::npos);
  CHECK(refused.find(DpEvent::approx_dp(0.5, 0).to_string()) != std::string::npos);
  CHECK(refused.find("with its worst-case supplement " + DpEvent::approx_dp(2.0, 0).to_string()) !=
        std::string::npos);
  CHECK(refused.find("to 3.5") != std::string::npos);
  std::string charged;
  try {
    ledger.charge("d", budget, "b", "/out", "charge", DpEvent::approx_dp(0.5, 0), pure(0.5), acc,
                  "", reserve(2.0));
  } catch (const host::LedgerRefused& e) {
    charged = e.what();
  }
  CHECK(charged == refused);
  CHECK(entry_kinds(ledger) == std::vector<std::string>{"charge"});
  // Another budget than the one the first charge fixed is refused by check too.
  CHECK_THROWS_AS(host::Ledger::check(file, "d", {4.0, kDelta}, DpEvent::approx_dp(0.1, 0),
                                      pure(0.1), acc, std::nullopt),
                  host::LedgerRefused);
}
