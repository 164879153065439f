#include "dptune/host/ledger.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <sstream>

#include "base/sqlite_db.hpp"
#include "dptune/helpers/rdp_conversion.hpp"
#include "dptune/host/event_yaml.hpp"
#include "dptune/host/format.hpp"

namespace dptune::host {

namespace fs = std::filesystem;

namespace {

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

/// ε at `delta` of an RDP curve (dptune/helpers/rdp_conversion.hpp); +inf when no order gives a
/// finite value.
double epsilon_of_curve(const std::vector<dptune::RdpPoint>& curve, double delta) {
  return dptune::curve_epsilon(curve, delta).value;
}

/// The rows that count on a dataset (charges, supplements, open reservations), as events with
/// their RDP curves.
struct Counted {
  std::vector<dptune::DpEvent> events;
  std::vector<std::vector<dptune::RdpPoint>> curves;
  void add(const dptune::DpEvent& event, const std::vector<dptune::RdpPoint>& curve) {
    events.push_back(event);
    curves.push_back(curve);
  }
  ComposedCharges compose(double delta, const dptune::Accountant& accountant) const {
    return compose_charges(events, curves, delta, accountant);
  }
};

Counted counted_rows(SqliteDb& db, const std::string& dataset) {
  Counted counted;
  SqliteStatement s(db,
                    "SELECT event, rdp_curve FROM entries WHERE dataset = ? AND kind IN"
                    " ('charge', 'supplement', 'reservation') ORDER BY id");
  s.bind(1, dataset);
  while (s.step())
    counted.add(parse_event(s.text_at(0), db.file().string()), curve_from_text(s.text_at(1)));
  return counted;
}

/// Inserts `e` (its id is ignored) and returns it with the id it got.
LedgerEntry insert_row(SqliteDb& db, LedgerEntry e) {
  SqliteStatement put(
      db,
      "INSERT INTO entries (dataset, study_id, study_dir, time, kind, event,"
      " epsilon, delta, total_epsilon, note, rdp_curve) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  put.bind(1, e.dataset)
      .bind(2, e.study_id)
      .bind(3, e.study_dir)
      .bind(4, e.time)
      .bind(5, e.kind)
      .bind(6, e.event)
      .bind(7, e.epsilon)
      .bind(8, e.delta)
      .bind(9, e.total_epsilon)
      .bind(10, e.note)
      .bind(11, curve_to_text(e.rdp_curve))
      .run();
  e.id = db.last_insert_id();
  return e;
}

/// The budget `dataset` was given by its first row, if it has one.
std::optional<LedgerBudget> stored_budget(SqliteDb& db, const std::string& dataset) {
  SqliteStatement b(db, "SELECT epsilon, delta FROM budgets WHERE dataset = ?");
  b.bind(1, dataset);
  if (!b.step()) return std::nullopt;
  return LedgerBudget{b.double_at(0), b.double_at(1)};
}

/// Refuses a pipeline budget other than the one the dataset's first charge fixed.
void require_same_budget(const std::string& where, const LedgerBudget& fixed,
                         const LedgerBudget& given) {
  if (fixed.epsilon != given.epsilon || fixed.delta != given.delta)
    throw LedgerRefused(where + " has the budget (epsilon, delta) = (" +
                        significant(fixed.epsilon) + ", " + significant(fixed.delta) +
                        "), fixed by its first charge; the pipeline's ledger.budget says (" +
                        significant(given.epsilon) + ", " + significant(given.delta) +
                        "): a filter's budget cannot change");
}

/// The composed totals after a new charge `event` (and its reservation) joins `counted`.
struct NewCharge {
  ComposedCharges total;             // the counted rows and the charge
  ComposedCharges with_reservation;  // and the reservation (= total without one)
};

/// Composes a new charge, and its worst-case supplement when reserved, with the counted rows of
/// the dataset; throws LedgerRefused, naming the ledger, the remaining budget, the charge and the
/// worst case, when the total with the reservation exceeds the budget.
NewCharge compose_new_charge(Counted counted, const std::string& where, const LedgerBudget& budget,
                             const dptune::DpEvent& event,
                             const dptune::PrivacyGuarantee& guarantee,
                             const dptune::Accountant& accountant,
                             const std::optional<LedgerReservation>& reservation) {
  const double delta = budget.delta;
  const ComposedCharges before = counted.events.empty() ? ComposedCharges{0.0, "nothing charged"}
                                                        : counted.compose(delta, accountant);
  const std::size_t earlier = counted.events.size();
  NewCharge out;
  counted.add(event, guarantee.rdp_curve);
  out.total = counted.compose(delta, accountant);
  out.with_reservation = out.total;
  if (reservation) {
    counted.add(reservation->event, reservation->guarantee.rdp_curve);
    out.with_reservation = counted.compose(delta, accountant);
  }
  if (!(out.with_reservation.epsilon <= budget.epsilon))
    throw LedgerRefused(
        where + ": refused: this run's guarantee " + event.to_string() +
        (reservation ? " with its worst-case supplement " + reservation->event.to_string() +
                           " (reserved write-ahead: the most the run may need after it ends)"
                     : std::string()) +
        " would bring the composed epsilon at delta " + significant(delta) + " to " +
        significant(out.with_reservation.epsilon) + " (" + out.with_reservation.how +
        "), over the budget epsilon " + significant(budget.epsilon) + "; remaining: epsilon " +
        significant(std::max(0.0, budget.epsilon - before.epsilon)) + " at delta " +
        significant(delta) + " (spent " + significant(before.epsilon) + " in " +
        std::to_string(earlier) + " charges; nothing of this run was trained)");
  return out;
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
                            const dptune::Accountant& accountant, const std::string& note,
                            const std::optional<LedgerReservation>& reservation) {
  SqliteDb& db = impl_->db;
  const std::string where = db.file().string() + ": dataset '" + dataset + "'";
  // IMMEDIATE: the write lock is held from the first read of the charges to the commit, so a
  // concurrent run waits and then sees this charge (no two runs both fit in the same remainder).
  SqliteTransaction tx(db);
  LedgerCharge result;
  if (const auto fixed = stored_budget(db, dataset)) {
    require_same_budget(where, *fixed, budget);
    result.budget = *fixed;
  } else {
    result.budget = budget;
    SqliteStatement(db, "INSERT INTO budgets (dataset, epsilon, delta) VALUES (?, ?, ?)")
        .bind(1, dataset)
        .bind(2, budget.epsilon)
        .bind(3, budget.delta)
        .run();
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
  Counted counted = counted_rows(db, dataset);
  NewCharge composed;
  if (event)
    composed = compose_new_charge(counted, where, result.budget, *event, guarantee, accountant,
                                  reservation);
  else if (!counted.events.empty())
    composed.total = counted.compose(result.budget.delta, accountant);
  const ComposedCharges& total = composed.total;
  const ComposedCharges& with_reservation = composed.with_reservation;
  result.entry = insert_row(
      db, {0, dataset, study_id, study_dir, now_utc(), kind, event ? event->to_string() : "",
           event ? guarantee.epsilon : 0.0, event ? guarantee.delta : 0.0, total.epsilon, note,
           event ? guarantee.rdp_curve : std::vector<dptune::RdpPoint>{}});
  if (event && reservation)
    result.reservation =
        insert_row(db, {0, dataset, study_id, study_dir, now_utc(), "reservation",
                        reservation->event.to_string(), reservation->guarantee.epsilon,
                        reservation->guarantee.delta, with_reservation.epsilon,
                        "worst-case supplement reserved write-ahead, settled after the run",
                        reservation->guarantee.rdp_curve});
  tx.commit();
  return result;
}

LedgerCharge Ledger::check(const fs::path& file, const std::string& dataset,
                           const LedgerBudget& budget, const dptune::DpEvent& event,
                           const dptune::PrivacyGuarantee& guarantee,
                           const dptune::Accountant& accountant,
                           const std::optional<LedgerReservation>& reservation) {
  const std::string where = file.string() + ": dataset '" + dataset + "'";
  LedgerCharge result;
  result.budget = budget;
  Counted counted;
  if (fs::exists(file)) {
    Ledger ledger(file);
    SqliteDb& db = ledger.impl_->db;
    SqliteTransaction read(db);  // one consistent view; rolled back, nothing is written
    if (const auto fixed = stored_budget(db, dataset)) {
      require_same_budget(where, *fixed, budget);
      result.budget = *fixed;
    }
    counted = counted_rows(db, dataset);
  }
  const NewCharge composed =
      compose_new_charge(counted, where, result.budget, event, guarantee, accountant, reservation);
  result.entry.dataset = dataset;
  result.entry.kind = "charge";
  result.entry.event = event.to_string();
  result.entry.epsilon = guarantee.epsilon;
  result.entry.delta = guarantee.delta;
  result.entry.total_epsilon = composed.with_reservation.epsilon;
  result.entry.note = composed.with_reservation.how;
  return result;
}

LedgerCharge Ledger::settle(const std::string& dataset, const std::string& study_id,
                            const std::string& study_dir,
                            const std::optional<dptune::DpEvent>& needed,
                            const dptune::PrivacyGuarantee& guarantee,
                            const dptune::Accountant& accountant, const std::string& note) {
  SqliteDb& db = impl_->db;
  SqliteTransaction tx(db);
  LedgerCharge result;
  {
    SqliteStatement b(db, "SELECT epsilon, delta FROM budgets WHERE dataset = ?");
    b.bind(1, dataset);
    if (!b.step())
      throw dptune::Error(db.file().string() + ": dataset '" + dataset +
                          "' has no budget to settle");
    result.budget = {b.double_at(0), b.double_at(1)};
  }
  {
    // Settled already (a resumed study reports again): never charged twice.
    SqliteStatement done(db, std::string("SELECT ") + kColumns +
                                 " FROM entries WHERE dataset = ? AND study_id = ? AND kind ="
                                 " 'supplement' ORDER BY id LIMIT 1");
    done.bind(1, dataset).bind(2, study_id);
    if (done.step()) {
      result.already_charged = true;
      result.entry = entry_of(done);
      result.over_budget = !(result.entry.total_epsilon <= result.budget.epsilon);
      return result;
    }
  }
  std::optional<LedgerEntry> reserved;
  {
    SqliteStatement r(db, std::string("SELECT ") + kColumns +
                              " FROM entries WHERE dataset = ? AND study_id = ? AND kind ="
                              " 'reservation' ORDER BY id DESC LIMIT 1");
    r.bind(1, dataset).bind(2, study_id);
    if (r.step()) reserved = entry_of(r);
  }
  if (!needed && !reserved) return result;  // nothing reserved, nothing needed
  if (reserved) {
    // The reservation stops counting; what the run needed takes its place.
    SqliteStatement(db, "UPDATE entries SET kind = 'settled' WHERE id = ?")
        .bind(1, reserved->id)
        .run();
  }
  Counted counted = counted_rows(db, dataset);
  if (needed) counted.add(*needed, guarantee.rdp_curve);
  const ComposedCharges total = counted.events.empty()
                                    ? ComposedCharges{0.0, "nothing charged"}
                                    : counted.compose(result.budget.delta, accountant);
  result.over_budget = !(total.epsilon <= result.budget.epsilon);
  LedgerEntry entry{0,
                    dataset,
                    study_id,
                    study_dir,
                    now_utc(),
                    needed ? "supplement" : "settled",
                    needed ? needed->to_string() : "",
                    needed ? guarantee.epsilon : 0.0,
                    needed ? guarantee.delta : 0.0,
                    total.epsilon,
                    note,
                    needed ? guarantee.rdp_curve : std::vector<dptune::RdpPoint>{}};
  if (reserved) {
    // Nothing needed beyond the charge: the reserved epsilon is not spent.  A supplement needs at
    // most what was reserved unless the tuner broke its worst case.
    result.over_reservation =
        needed && (guarantee.epsilon > reserved->epsilon || guarantee.delta > reserved->delta);
    entry.id = reserved->id;
    entry.time = reserved->time;
    SqliteStatement(db,
                    "UPDATE entries SET kind = ?, event = ?, epsilon = ?, delta = ?,"
                    " total_epsilon = ?, note = ?, rdp_curve = ? WHERE id = ?")
        .bind(1, entry.kind)
        .bind(2, entry.event)
        .bind(3, entry.epsilon)
        .bind(4, entry.delta)
        .bind(5, entry.total_epsilon)
        .bind(6, entry.note)
        .bind(7, curve_to_text(entry.rdp_curve))
        .bind(8, entry.id)
        .run();
    result.entry = entry;
  } else {
    result.over_reservation = true;
    result.entry = insert_row(db, entry);
  }
  tx.commit();
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
