// dptune host: `dptune audit`, a black-box statistical search for evidence that a mechanism plugin
// releases more than its event() claims, and the audit record store that reports cite.
//
// Design (after StatDP, Ding, Wang, Wang, Zhang & Kifer, CCS 2018, and Google's stochastic tester):
// for neighbouring inputs (D, D') with their exact sensitivity, sample M(D) and M(D') N times,
// search output events S on those samples, then test each pair's best S on fresh samples with
// one-sided Clopper–Pearson bounds, Bonferroni-corrected over the pairs tested.  A violation is
// certified only when p_lower(S | D) > e^ε p_upper(S | D') + δ for a point (ε, δ) of the claim,
// so a mechanism that keeps its claim raises an alarm with probability at most α.  Auditing is
// never proof (docs/audit.md): it only finds what sampling can see.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dptune/data.hpp"
#include "dptune/dp_event.hpp"
#include "dptune/host/config.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

class PluginRegistry;

// ---- exact binomial bounds ------------------------------------------------------------------
/// The regularized incomplete beta function I_x(a, b), a, b > 0, x in [0, 1].
double regularized_beta(double a, double b, double x);
/// One-sided Clopper–Pearson (1934) bounds for k successes in n trials: P[p < lower] <= alpha and
/// P[p > upper] <= alpha for every true p.  lower(0) = 0, upper(n) = 1.
double clopper_pearson_lower(std::uint64_t k, std::uint64_t n, double alpha);
double clopper_pearson_upper(std::uint64_t k, std::uint64_t n, double alpha);

// ---- the claim ---------------------------------------------------------------------------------
struct ClaimPoint {
  double delta = 0, epsilon = 0;
};
/// What a mechanism's event() claims, as points of its privacy curve: one point (ε, 0) for a
/// pure-DP event, else ε(δ) at several δ (any of them violated is a violation of the claim).
struct Claim {
  std::string event;
  bool pure = false;
  std::vector<ClaimPoint> curve;
  /// The δ at which the report states ε and its lower bound (0 for pure claims, else 1e-6).
  double primary_delta = 0;
  std::string accountant;
  double epsilon_at_primary() const;
};
/// δ values of an approximate-DP claim that the audit checks.
std::vector<double> audit_deltas();
/// Prices `event` with `rdp` (an rdp accountant, analytic Gaussian on): pure when finite at δ = 0.
Claim claimed_privacy(const dptune::DpEvent& event, const dptune::Accountant& rdp);

// ---- neighbouring inputs ----------------------------------------------------------------------
struct NeighbourPair {
  std::string name;
  std::vector<double> d, d_prime;
  dptune::Sensitivity sensitivity;  // exact norms of d - d_prime
};
/// One-coordinate shifts (scale 1 and 16) and the patterns of Ding et al. (2018, §5.1) that break
/// sparse-vector variants: one above / below, one above rest below, one below rest above, half
/// half, all above, all below, x shape.  Integer values (so integer-only mechanisms accept them).
std::vector<NeighbourPair> neighbour_pairs();
dptune::Sensitivity exact_sensitivity(std::span<const double> d, std::span<const double> d_prime);

// ---- output events --------------------------------------------------------------------------
/// A set S of outputs: {g(y) > t}, {g(y) <= t}, {g(y) == t} for a statistic g (one coordinate, the
/// sum, the maximum, the number of non-zero coordinates), or {y == v} for one output vector.
struct OutputEvent {
  enum class Statistic { Coordinate, Sum, Max, NonZero, Vector };
  enum class Op { Greater, AtMost, Equal };
  Statistic statistic = Statistic::Coordinate;
  std::size_t index = 0;
  Op op = Op::Greater;
  double value = 0;
  std::vector<double> vector;
  bool contains(std::span<const double> y) const;
  std::string describe() const;
};
double statistic_of(OutputEvent::Statistic statistic, std::size_t index, std::span<const double> y);

// ---- the audit --------------------------------------------------------------------------------
struct AuditOptions {
  std::size_t samples = 200000;  // per input per phase (search, then fresh test)
  std::optional<std::uint64_t> seed;
  double alpha = 1e-3;
};

struct PairOutcome {
  NeighbourPair pair;
  std::string skipped;  // why the pair was not tested (the mechanism refused its input)
  OutputEvent event;
  bool swapped = false;  // true: S is likelier under D' (the roles of D and D' are exchanged)
  std::uint64_t n = 0, count_first = 0, count_second = 0;  // fresh counts, first = likelier side
  double p_lower = 0, p_upper = 0;                         // bounds for first / second
  /// Per claim point: log((p_lower − δ) / p_upper), −inf when p_lower <= δ.
  std::vector<double> epsilon_lower;
  bool violation = false;
  double margin = 0;  // max over claim points of epsilon_lower − ε
};

struct AuditResult {
  Claim claim;
  AuditOptions options;
  std::string randomness;
  std::vector<PairOutcome> pairs;
  std::size_t tests = 0;  // pairs tested on fresh samples (the Bonferroni count)
  bool violation = false;
  std::optional<std::size_t> best;  // pair with the largest margin
  /// Per claim point: the largest certified lower bound over the tested pairs (confidence 1 − α).
  std::vector<double> epsilon_lower;
  double seconds = 0;
};

AuditResult run_audit(const dptune::Mechanism& mechanism, const Claim& claim,
                      const AuditOptions& options);

// ---- audit records ---------------------------------------------------------------------------
struct AuditRecord {
  std::string plugin, version, library, sha256, dptune_version, params;
  /// The audited configuration: every parameter of the mechanism (defaults filled in) as the text
  /// a user writes.  A verdict holds for this configuration only: a mechanism may be private for
  /// one value of a parameter and broken for another.  Empty in records written before dptune kept
  /// verdicts per configuration; such a record matches no run.
  std::map<std::string, std::string> configuration;
  std::uint64_t samples = 0;
  std::string seed;  // empty: secure randomness
  double alpha = 0;
  std::string result;  // "no violation found" or "violation certified"
  double epsilon_claimed = 0, epsilon_lower_bound = 0, delta = 0;
  std::string date;  // UTC, ISO 8601
};
/// $DPTUNE_AUDIT_STORE, else $XDG_CACHE_HOME/dptune/audits.json, else ~/.cache/dptune/audits.json.
std::filesystem::path audit_store_path();
std::vector<AuditRecord> read_audit_records(const std::filesystem::path& store);
/// Appends `record` (replacing an older record of the same plugin, library hash and configuration).
void save_audit_record(const AuditRecord& record, const std::filesystem::path& store);
std::string sha256_file(const std::filesystem::path& file);
std::string utc_now_iso8601();
/// True for a library in the plugin folder that ships with this dptune (beside the executable or
/// in the install prefix): built-in plugins are tested with dptune itself.
bool is_builtin_library(const std::filesystem::path& library);
/// One line for `plugins describe`: "mechanism plugin X (library L, sha256 H): audited by dptune V
/// on DATE: no violation found at alpha = A (params {...})", one verdict per audited configuration,
/// or "...: not audited: run `dptune audit X`".
std::string trust_statement(const std::string& plugin, const std::filesystem::path& library);

/// The complete configuration of a mechanism as audit records hold it (defaults filled in).
std::map<std::string, std::string> audit_configuration(const dptune::Params& complete);

/// A third-party mechanism as a run uses it: the parameters the pipeline fixes (defaults filled
/// in) and those set per run (by the search space, or by the trainer that draws its noise from it).
struct MechanismUse {
  std::string plugin;
  std::filesystem::path library;
  dptune::Params fixed;
  std::set<std::string> varied;
  SourceLocation where;  // the `use` of the mechanism in the pipeline
  std::string key_path;  // "algorithm.use" or "mechanism.use"
};

/// What the audit records say about one use.  `applies` holds the records whose configuration
/// agrees with every fixed parameter (a run may use each of them); `violation` is true when one of
/// those certified a violation.
struct AuditVerdict {
  std::string statement;  // one line for the console and the report
  bool violation = false;
};
AuditVerdict audit_verdict(const MechanismUse& use, const std::vector<AuditRecord>& records);

/// audit_verdict of every use, as report lines.
std::vector<std::string> mechanism_trust(const std::vector<MechanismUse>& uses);

}  // namespace dptune::host
