#include "dptune/host/ledger.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <sstream>

#include "dptune/host/event_yaml.hpp"
#include "dptune/host/format.hpp"
#include "rdp_conversion.hpp"
#include "sqlite_db.hpp"

namespace dptune::host {

namespace fs = std::filesystem;

namespace {

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

LedgerEntry entry_of(const SqliteStatement& s) {
  LedgerEntry e;
  e.id = s.int_at(0);
  e.dataset = s.text_at(1);
  e.study_id = s.text_at(2);
  e.study_dir = s.text_at(3);
  e.time = s.text_at(4);
  e.kind = s.text_at(5);
  e.event = s.text_at(6);
  e.epsilon = s.double_at(7);
  e.delta = s.double_at(8);
  e.total_epsilon = s.double_at(9);
  e.note = s.text_at(10);
  e.rdp_curve = curve_from_text(s.text_at(11));
  return e;
}

constexpr const char* kColumns =
    "id, dataset, study_id, study_dir, time, kind, event, epsilon, delta, total_epsilon, note,"
    " rdp_curve";

/// ε at `delta` of an RDP curve (rdp_conversion.hpp); +inf when no order gives a finite value.
double epsilon_of_curve(const std::vector<dptune::RdpPoint>& curve, double delta) {
  return curve_epsilon(curve, delta).value;
}

}  // namespace

struct Ledger::Impl {
  explicit Impl(const fs::path& file) : db(file, true) {}
  SqliteDb db;
};

Ledger::Ledger(const fs::path& file) {
  if (file.has_parent_path()) fs::create_directories(file.parent_path());
  impl_ = std::make_unique<Impl>(file);
  // Concurrent runs may open a new ledger at the same instant: the schema is created, and a ledger
  // written before RDP curves were kept gains their column (its rows: no curve, so they compose
  // by basic composition), inside one IMMEDIATE transaction, so only one process ever does either.
  SqliteTransaction tx(impl_->db);
  impl_->db.exec(
      "CREATE TABLE IF NOT EXISTS budgets (dataset TEXT PRIMARY KEY, epsilon REAL NOT NULL,"
      " delta REAL NOT NULL);"
      "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY AUTOINCREMENT,"
      " dataset TEXT NOT NULL, study_id TEXT NOT NULL, study_dir TEXT NOT NULL, time TEXT NOT NULL,"
      " kind TEXT NOT NULL, event TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL,"
      " total_epsilon REAL NOT NULL, note TEXT NOT NULL, rdp_curve TEXT NOT NULL DEFAULT '')");
  bool has_curve_column = false;
  {
    SqliteStatement columns(impl_->db, "PRAGMA table_info(entries)");
    while (columns.step()) has_curve_column |= columns.text_at(1) == "rdp_curve";
  }
  if (!has_curve_column)
    impl_->db.exec("ALTER TABLE entries ADD COLUMN rdp_curve TEXT NOT NULL DEFAULT ''");
  tx.commit();
}

Ledger::~Ledger() = default;

LedgerCharge Ledger::charge(const std::string& dataset, const LedgerBudget& budget,
                            const std::string& study_id, const std::string& study_dir,
                            const std::string& kind, const std::optional<dptune::DpEvent>& event,
                            const dptune::PrivacyGuarantee& guarantee,
                            const dptune::Accountant& accountant, const std::string& note) {
  SqliteDb& db = impl_->db;
  const std::string where = db.file().string() + ": dataset '" + dataset + "'";
  // IMMEDIATE: the write lock is held from the first read of the charges to the commit, so a
  // concurrent run waits and then sees this charge (no two runs both fit in the same remainder).
  SqliteTransaction tx(db);
  LedgerCharge result;
  {
    SqliteStatement b(db, "SELECT epsilon, delta FROM budgets WHERE dataset = ?");
    b.bind(1, dataset);
    if (b.step()) {
      result.budget = {b.double_at(0), b.double_at(1)};
      if (result.budget.epsilon != budget.epsilon || result.budget.delta != budget.delta)
        throw LedgerRefused(where + " has the budget (epsilon, delta) = (" +
                            significant(result.budget.epsilon) + ", " +
                            significant(result.budget.delta) +
                            "), fixed by its first charge; the pipeline's ledger.budget says (" +
                            significant(budget.epsilon) + ", " + significant(budget.delta) +
                            "): a filter's budget cannot change");
    } else {
      result.budget = budget;
      SqliteStatement(db, "INSERT INTO budgets (dataset, epsilon, delta) VALUES (?, ?, ?)")
          .bind(1, dataset)
          .bind(2, budget.epsilon)
          .bind(3, budget.delta)
          .run();
    }
  }
  if (kind != "supplement") {
    SqliteStatement s(db, std::string("SELECT ") + kColumns +
                              " FROM entries WHERE study_id = ? AND kind IN"
                              " ('charge', 'map', 'none') ORDER BY id LIMIT 1");
    s.bind(1, study_id);
    if (s.step()) {
      result.already_charged = true;
      result.entry = entry_of(s);
      return result;  // rolled back: nothing was written
    }
  }
  std::vector<dptune::DpEvent> events;
  std::vector<std::vector<dptune::RdpPoint>> curves;
  {
    SqliteStatement s(db,
                      "SELECT event, rdp_curve FROM entries WHERE dataset = ? AND kind IN"
                      " ('charge', 'supplement') ORDER BY id");
    s.bind(1, dataset);
    while (s.step()) {
      events.push_back(parse_event(s.text_at(0), db.file().string()));
      curves.push_back(curve_from_text(s.text_at(1)));
    }
  }
  const double delta = result.budget.delta;
  ComposedCharges total;
  if (event) {
    const ComposedCharges before = events.empty()
                                       ? ComposedCharges{0.0, "nothing charged"}
                                       : compose_charges(events, curves, delta, accountant);
    events.push_back(*event);
    curves.push_back(guarantee.rdp_curve);
    total = compose_charges(events, curves, delta, accountant);
    if (!(total.epsilon <= result.budget.epsilon))
      throw LedgerRefused(
          where + ": refused: this run's guarantee " + event->to_string() +
          " would bring the composed epsilon at delta " + significant(delta) + " to " +
          significant(total.epsilon) + " (" + total.how + "), over the budget epsilon " +
          significant(result.budget.epsilon) + "; remaining: epsilon " +
          significant(std::max(0.0, result.budget.epsilon - before.epsilon)) + " at delta " +
          significant(delta) + " (spent " + significant(before.epsilon) + " in " +
          std::to_string(events.size() - 1) + " charges; nothing of this run was trained)");
  } else if (!events.empty()) {
    total = compose_charges(events, curves, delta, accountant);
  }
  SqliteStatement put(
      db,
      "INSERT INTO entries (dataset, study_id, study_dir, time, kind, event,"
      " epsilon, delta, total_epsilon, note, rdp_curve) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  put.bind(1, dataset)
      .bind(2, study_id)
      .bind(3, study_dir)
      .bind(4, now_utc())
      .bind(5, kind)
      .bind(6, event ? event->to_string() : std::string())
      .bind(7, event ? guarantee.epsilon : 0.0)
      .bind(8, event ? guarantee.delta : 0.0)
      .bind(9, total.epsilon)
      .bind(10, note)
      .bind(11, event ? curve_to_text(guarantee.rdp_curve) : std::string())
      .run();
  const std::int64_t id = db.last_insert_id();
  tx.commit();
  result.entry = {id,
                  dataset,
                  study_id,
                  study_dir,
                  now_utc(),
                  kind,
                  event ? event->to_string() : "",
                  event ? guarantee.epsilon : 0.0,
                  event ? guarantee.delta : 0.0,
                  total.epsilon,
                  note,
                  event ? guarantee.rdp_curve : std::vector<dptune::RdpPoint>{}};
  return result;
}

std::vector<Ledger::Dataset> Ledger::read(const std::string& dataset) const {
  SqliteDb& db = impl_->db;
  std::vector<Dataset> out;
  SqliteStatement b(db, dataset.empty()
                            ? "SELECT dataset, epsilon, delta FROM budgets ORDER BY dataset"
                            : "SELECT dataset, epsilon, delta FROM budgets WHERE dataset = ?");
  if (!dataset.empty()) b.bind(1, dataset);
  while (b.step()) {
    Dataset d;
    d.name = b.text_at(0);
    d.budget = {b.double_at(1), b.double_at(2)};
    SqliteStatement s(
        db, std::string("SELECT ") + kColumns + " FROM entries WHERE dataset = ? ORDER BY id");
    s.bind(1, d.name);
    while (s.step()) d.entries.push_back(entry_of(s));
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<dptune::RdpPoint> add_curves(const std::vector<std::vector<dptune::RdpPoint>>& curves) {
  std::map<double, std::pair<double, std::size_t>> sum;  // order -> (sum of ε(α), curves)
  for (const auto& curve : curves)
    for (const auto& [alpha, rdp] : curve) {
      auto& [total, count] = sum[alpha];
      total += rdp;
      ++count;
    }
  std::vector<dptune::RdpPoint> composed;
  for (const auto& [alpha, entry] : sum)
    if (entry.second == curves.size()) composed.push_back({alpha, entry.first});
  return composed;
}

ComposedCharges compose_charges(const std::vector<dptune::DpEvent>& events,
                                const std::vector<std::vector<dptune::RdpPoint>>& curves,
                                double delta, const dptune::Accountant& accountant) {
  // Basic composition needs the charges' δ to add up to at most `delta`; when they do not, only
  // the RDP route can price them (and without curves the charge is refused with the reason).
  ComposedCharges basic{std::numeric_limits<double>::infinity(),
                        "basic composition of the charges' (epsilon, delta)"};
  std::string basic_failure;
  try {
    basic.epsilon = accountant.epsilon(dptune::DpEvent::composed(events), delta).epsilon;
  } catch (const dptune::Error& e) {
    basic_failure = e.what();
  }
  const bool all_curves =
      !curves.empty() &&
      std::all_of(curves.begin(), curves.end(), [](const auto& curve) { return !curve.empty(); });
  if (!all_curves) {
    if (!basic_failure.empty()) throw LedgerRefused(basic_failure);
    return basic;
  }
  const std::vector<dptune::RdpPoint> composed = add_curves(curves);
  const double rdp = epsilon_of_curve(composed, delta);
  if (!(rdp < basic.epsilon)) {
    if (!basic_failure.empty()) throw LedgerRefused(basic_failure);
    return basic;
  }
  return {rdp, "RDP composition of the charges' curves at " + std::to_string(composed.size()) +
                   " shared orders"};
}

std::string curve_to_text(const std::vector<dptune::RdpPoint>& curve) {
  std::ostringstream out;
  out.precision(17);
  // Orders with an infinite ε are left out: an order missing from one curve is not shared, so it
  // never takes part in the composition.
  bool first = true;
  for (const auto& [order, epsilon] : curve) {
    if (!std::isfinite(order) || !std::isfinite(epsilon)) continue;
    out << (first ? "" : ";") << order << ":" << epsilon;
    first = false;
  }
  return out.str();
}

std::vector<dptune::RdpPoint> curve_from_text(const std::string& text) {
  std::vector<dptune::RdpPoint> curve;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    const auto colon = item.find(':');
    double order = 0, epsilon = 0;
    std::istringstream a(item.substr(0, colon)),
        b(colon == std::string::npos ? "" : item.substr(colon + 1));
    if (colon == std::string::npos || !(a >> order) || !(b >> epsilon))
      throw dptune::Error("ledger: malformed RDP curve entry '" + item + "'");
    curve.push_back({order, epsilon});
  }
  return curve;
}

}  // namespace dptune::host
