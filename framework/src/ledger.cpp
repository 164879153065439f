#include "ledger.hpp"

#include <cmath>
#include <ctime>
#include <sstream>

#include "dptune/host/event_yaml.hpp"
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

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
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
  return e;
}

constexpr const char* kColumns =
    "id, dataset, study_id, study_dir, time, kind, event, epsilon, delta, total_epsilon, note";

}  // namespace

struct Ledger::Impl {
  explicit Impl(const fs::path& file) : db(file, true) {}
  SqliteDb db;
};

Ledger::Ledger(const fs::path& file) {
  if (file.has_parent_path()) fs::create_directories(file.parent_path());
  impl_ = std::make_unique<Impl>(file);
  impl_->db.exec(
      "CREATE TABLE IF NOT EXISTS budgets (dataset TEXT PRIMARY KEY, epsilon REAL NOT NULL,"
      " delta REAL NOT NULL);"
      "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY AUTOINCREMENT,"
      " dataset TEXT NOT NULL, study_id TEXT NOT NULL, study_dir TEXT NOT NULL, time TEXT NOT NULL,"
      " kind TEXT NOT NULL, event TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL,"
      " total_epsilon REAL NOT NULL, note TEXT NOT NULL)");
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
                            fmt(result.budget.epsilon) + ", " + fmt(result.budget.delta) +
                            "), fixed by its first charge; the pipeline's ledger.budget says (" +
                            fmt(budget.epsilon) + ", " + fmt(budget.delta) +
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
  double total = 0;
  {
    SqliteStatement s(db,
                      "SELECT event FROM entries WHERE dataset = ? AND kind IN ('charge',"
                      " 'supplement') ORDER BY id");
    s.bind(1, dataset);
    while (s.step()) events.push_back(parse_event(s.text_at(0), db.file().string()));
  }
  if (event) {
    events.push_back(*event);
    const dptune::PrivacyGuarantee spent =
        accountant.epsilon(dptune::DpEvent::composed(events), result.budget.delta);
    total = spent.epsilon;
    if (!(total <= result.budget.epsilon)) {
      events.pop_back();
      const double before =
          events.empty()
              ? 0.0
              : accountant.epsilon(dptune::DpEvent::composed(events), result.budget.delta).epsilon;
      throw LedgerRefused(
          where + ": refused: this run's guarantee " + event->to_string() +
          " would bring the composed epsilon at delta " + fmt(result.budget.delta) + " to " +
          fmt(total) + ", over the budget epsilon " + fmt(result.budget.epsilon) +
          "; remaining: epsilon " + fmt(std::max(0.0, result.budget.epsilon - before)) +
          " at delta " + fmt(result.budget.delta) + " (spent " + fmt(before) + " in " +
          std::to_string(events.size()) + " charges; nothing of this run was trained)");
    }
  } else if (!events.empty()) {
    total = accountant.epsilon(dptune::DpEvent::composed(events), result.budget.delta).epsilon;
  }
  SqliteStatement put(
      db,
      "INSERT INTO entries (dataset, study_id, study_dir, time, kind, event,"
      " epsilon, delta, total_epsilon, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  put.bind(1, dataset)
      .bind(2, study_id)
      .bind(3, study_dir)
      .bind(4, now_utc())
      .bind(5, kind)
      .bind(6, event ? event->to_string() : std::string())
      .bind(7, event ? guarantee.epsilon : 0.0)
      .bind(8, event ? guarantee.delta : 0.0)
      .bind(9, total)
      .bind(10, note)
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
                  total,
                  note};
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

}  // namespace dptune::host
