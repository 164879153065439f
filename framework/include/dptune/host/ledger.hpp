// dptune host: the privacy ledger — a privacy filter shared by the
// studies on one dataset.
//
// Every private run is charged its full guarantee BEFORE it trains (write-ahead) in one IMMEDIATE
// transaction that composes all charges on the dataset with the pipeline's accountant and refuses
// the run when the composition would exceed the budget: a privacy filter (Rogers, Roth, Ullman &
// Vadhan 2016, "Privacy Odometers and Filters"; Whitehouse, Ramdas, Rogers & Wu 2023 show that
// filters stay valid under fully adaptive composition, where each run's parameters may depend on
// the results of earlier ones).  SQLite's write lock serialises concurrent runs, so two processes
// can never both spend the last of a budget.  Charges are never removed (budget spent is never
// refunded); maps for trusted analysts are recorded as such, never as charges.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/plugin.hpp"
#include "dptune/privacy.hpp"

namespace dptune::host {

/// One row of the ledger.
struct LedgerEntry {
  std::int64_t id = 0;
  std::string dataset, study_id, study_dir, time;
  /// "charge" (write-ahead, before training), "reservation" (a run's worst-case supplement,
  /// reserved with its charge and counted until settled), "supplement" (a run whose final
  /// guarantee exceeded its write-ahead charge), "settled" (a reservation the run did not need:
  /// counts nothing), "map" (not DP, trusted analysts: no charge), "none" (no guarantee claimed
  /// and nothing released under DP).
  std::string kind;
  std::string event;              // DpEvent text (charges)
  double epsilon = 0, delta = 0;  // the run's own guarantee (charges)
  double total_epsilon = 0;       // composed ε of the dataset after this row, at budget δ
  std::string note;
  /// The run's RDP curve (PrivacyGuarantee::rdp_curve) when its accountant had one: charges that
  /// all have one compose by adding the curves (see compose_charges).
  std::vector<dptune::RdpPoint> rdp_curve;
};

/// The composed ε at `delta` of charges with guarantees (ε_i, δ_i) and RDP curves, the smaller
/// of two sound bounds, with how it was obtained:
///  * the accountant's price of composed(approx_dp(ε_i, δ_i)) (basic composition), always;
///  * when every charge has an RDP curve: the curves added at the orders they all share (RDP
///    composition, Mironov 2017, Proposition 1; valid for adaptively chosen runs) and converted
///    at `delta` by Canonne, Kamath & Steinke 2020, Proposition 12 (the rdp accountant's default
///    conversion): ε = ε(α) + log((α − 1)/α) − (log δ + log α)/(α − 1), minimised over α.
/// The sum of RDP curves at the orders every one of them has (RDP composition, Mironov 2017,
/// Proposition 1); empty when they share none.
std::vector<dptune::RdpPoint> add_curves(const std::vector<std::vector<dptune::RdpPoint>>& curves);

struct ComposedCharges {
  double epsilon = 0;
  std::string how;
};
ComposedCharges compose_charges(const std::vector<dptune::DpEvent>& events,
                                const std::vector<std::vector<dptune::RdpPoint>>& curves,
                                double delta, const dptune::Accountant& accountant);

/// "α:ε(α);…" with full precision, and back (empty text: no curve).  Throws dptune::Error on a
/// malformed text.
std::string curve_to_text(const std::vector<dptune::RdpPoint>& curve);
std::vector<dptune::RdpPoint> curve_from_text(const std::string& text);

struct LedgerBudget {
  double epsilon = 0, delta = 0;
};

/// A run's worst-case supplement, reserved write-ahead with its charge: the most its final
/// guarantee may be charged on top of the charge (as a second approx_dp event, like a supplement).
struct LedgerReservation {
  dptune::DpEvent event;
  dptune::PrivacyGuarantee guarantee;
};

/// What charge() or settle() did.
struct LedgerCharge {
  bool already_charged = false;  // the study was charged by an earlier process (resume)
  LedgerEntry entry;
  /// charge(): the reservation row written with the charge (its total_epsilon: the composed
  /// total with the worst case).
  std::optional<LedgerEntry> reservation;
  LedgerBudget budget;
  /// settle(): the supplement needed more than the study had reserved (recorded in full anyway).
  bool over_reservation = false;
  /// settle(): the composed total after the supplement exceeds the budget (recorded anyway).
  bool over_budget = false;
};

class Ledger {
 public:
  /// Opens or creates the ledger file.
  explicit Ledger(const std::filesystem::path& file);
  ~Ledger();

  /// Records `kind` for `study_id` unless the study has a row of kind charge/map/none already.
  /// For a charge, composes `event` with every charge and supplement on `dataset` (a Composed
  /// DpEvent priced by `accountant` at the budget's δ) and refuses (LedgerRefused, a ConfigError:
  /// exit 2) when the total would exceed the budget.  The first row of a dataset fixes its budget;
  /// a different budget later is refused too.  With a `reservation` (a charge only), the charge
  /// and the reservation are composed and written in the same transaction: refused together, so
  /// a run whose worst case does not fit never starts, and nothing is written.  Open reservations
  /// of other studies count like charges.
  LedgerCharge charge(const std::string& dataset, const LedgerBudget& budget,
                      const std::string& study_id, const std::string& study_dir,
                      const std::string& kind, const std::optional<dptune::DpEvent>& event,
                      const dptune::PrivacyGuarantee& guarantee,
                      const dptune::Accountant& accountant, const std::string& note,
                      const std::optional<LedgerReservation>& reservation = std::nullopt);

  /// What charge() would decide for a new study's charge `event` with its `reservation`, without
  /// writing anything (`dptune validate`): the same composition and the same LedgerRefused (exit
  /// 2) when the charge and its worst case do not fit.  A ledger file that does not exist is not
  /// created: the run is composed alone against `budget`.  The returned entry holds the charge
  /// and, as total_epsilon, the composed total with the reservation.
  static LedgerCharge check(const std::filesystem::path& file, const std::string& dataset,
                            const LedgerBudget& budget, const dptune::DpEvent& event,
                            const dptune::PrivacyGuarantee& guarantee,
                            const dptune::Accountant& accountant,
                            const std::optional<LedgerReservation>& reservation);

  /// After the run: settles `study_id`'s reservation to what it needed, in one transaction.
  /// `needed` (the supplement: the final guarantee as an event, charged beside the charge) turns
  /// the reservation row into a "supplement" row; nothing needed turns it into a "settled" row
  /// that counts nothing.  Without a reservation a needed supplement is added as a new row.  A
  /// supplement is recorded in full even above the reservation or the budget (budget spent is never
  /// under-reported): over_reservation / over_budget say so, and the caller releases nothing then.
  LedgerCharge settle(const std::string& dataset, const std::string& study_id,
                      const std::string& study_dir, const std::optional<dptune::DpEvent>& needed,
                      const dptune::PrivacyGuarantee& guarantee,
                      const dptune::Accountant& accountant, const std::string& note);

  struct Dataset {
    std::string name;
    LedgerBudget budget;
    std::vector<LedgerEntry> entries;
  };
  /// Everything on `dataset`, or on every dataset when empty.
  std::vector<Dataset> read(const std::string& dataset) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class LedgerRefused : public dptune::ConfigError {
 public:
  using dptune::ConfigError::ConfigError;
};

}  // namespace dptune::host
