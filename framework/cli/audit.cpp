// `dptune audit MECHANISM`: looks for statistical evidence that a mechanism plugin releases more
// than its event() claims (dptune/host/audit.hpp; docs/audit.md).  Exit 0 when no violation is
// found, 3 when one is certified, 2 for usage or configuration errors.
#include <cmath>
#include <iostream>

#include "audit_common.hpp"
#include "cli_common.hpp"
#include "dptune/abi.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/audit.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/json.hpp"

namespace po = boost::program_options;

namespace dptune::cli {

namespace {

constexpr int kViolation = 3;

/// Six significant figures; a lower bound of -inf (no evidence against the claim) is "none".
std::string num(double x) { return std::isinf(x) && x < 0 ? "none" : significant(x); }

std::string vec(const std::vector<double>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + ")";
}

}  // namespace

dptune::Params typed_params(const dptune::ParamSchema& schema, const std::string& owner,
                            const std::vector<std::string>& given) {
  dptune::Params params;
  for (const auto& g : given) {
    const auto eq = g.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--param " + g + ": expected NAME=VALUE");
    const std::string name = g.substr(0, eq), text = g.substr(eq + 1);
    const auto* spec = schema.find(name);
    if (!spec) {
      std::string message = "--param " + name + ": ";
      message += owner;
      message += " has no such parameter";
      throw UsageError(message);
    }
    try {
      std::size_t used = 0;
      switch (spec->type) {
        case dptune::ParamType::Float:
          params.set(name, dptune::Value{std::stod(text, &used)});
          break;
        case dptune::ParamType::Int:
          params.set(name, dptune::Value{static_cast<std::int64_t>(std::stoll(text, &used))});
          break;
        case dptune::ParamType::Bool:
          if (text != "true" && text != "false") throw std::invalid_argument(text);
          params.set(name, dptune::Value{text == "true"});
          used = text.size();
          break;
        case dptune::ParamType::String:
          params.set(name, dptune::Value{text});
          used = text.size();
          break;
      }
      if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::logic_error&) {
      throw UsageError("--param " + g + ": expected " +
                       dptune::ParamSchema::describe_domain(*spec));
    }
  }
  return params;
}

namespace {

/// --param NAME=VALUE, typed by the plugin's schema, then completed (defaults) and checked.
dptune::Params mechanism_params(const dptune::host::PluginInfo& info,
                                const std::vector<std::string>& given) {
  const dptune::Params params = typed_params(info.schema, "mechanism " + info.name, given);
  try {
    return info.schema.complete(params);
  } catch (const dptune::InvalidArgument& e) {
    throw UsageError("mechanism " + info.name + ": " + e.what());
  }
}

void print_json(const dptune::host::PluginInfo& info, const dptune::Params& params,
                const dptune::host::AuditResult& r) {
  dptune::host::JsonWriter w(std::cout);
  w.begin_object().key("mechanism").value(info.name).key("version").value(info.version);
  w.key("library").value(info.library.string()).key("params").value(params);
  w.key("dptune_version").value(DPTUNE_VERSION_STRING);
  w.key("claimed_event").value(r.claim.event).key("pure").value(r.claim.pure);
  w.key("claim").begin_array();
  for (std::size_t j = 0; j < r.claim.curve.size(); ++j) {
    w.begin_object().key("delta").value(r.claim.curve[j].delta);
    w.key("epsilon").value(r.claim.curve[j].epsilon).key("epsilon_lower_bound");
    if (std::isfinite(r.epsilon_lower[j]))
      w.value(r.epsilon_lower[j]);
    else
      w.null();
    w.end_object();
  }
  w.end_array();
  w.key("samples").value(r.options.samples).key("alpha").value(r.options.alpha);
  w.key("tests").value(r.tests).key("randomness").value(r.randomness);
  w.key("violation").value(r.violation).key("seconds").value(r.seconds);
  w.key("pairs").begin_array();
  for (const auto& p : r.pairs) {
    w.begin_object().key("name").value(p.pair.name);
    w.key("d").begin_array();
    for (double v : p.pair.d) w.value(v);
    w.end_array().key("d_prime").begin_array();
    for (double v : p.pair.d_prime) w.value(v);
    w.end_array();
    w.key("sensitivity").begin_object().key("l1").value(p.pair.sensitivity.l1);
    w.key("l2")
        .value(p.pair.sensitivity.l2)
        .key("linf")
        .value(p.pair.sensitivity.linf)
        .end_object();
    if (!p.skipped.empty()) {
      w.key("skipped").value(p.skipped).end_object();
      continue;
    }
    w.key("event")
        .value(p.event.describe())
        .key("likelier_under")
        .value(p.swapped ? "d_prime" : "d");
    w.key("count_likelier").value(static_cast<std::int64_t>(p.count_first));
    w.key("count_other").value(static_cast<std::int64_t>(p.count_second));
    w.key("p_likelier_lower").value(p.p_lower).key("p_other_upper").value(p.p_upper);
    w.key("violation").value(p.violation).end_object();
  }
  w.end_array().end_object();
  std::cout << "\n";
}

void print_text(const dptune::host::PluginInfo& info, const dptune::Params& params,
                const dptune::host::AuditResult& r) {
  const auto& c = r.claim;
  std::cout << "audit of mechanism " << info.name << " " << info.version << " ("
            << info.library.string() << ")\nparams: " << params.to_string()
            << "\nclaimed event: " << c.event << "\n";
  if (c.pure)
    std::cout << "claimed privacy: epsilon = " << num(c.curve[0].epsilon) << ", delta = 0 (pure, "
              << c.accountant << ")\n";
  else
    std::cout << "claimed privacy: epsilon = " << num(c.epsilon_at_primary())
              << " at delta = " << num(c.primary_delta) << " (" << c.accountant
              << "; the claim is also checked at "
              << "delta 1e-4, 1e-3, 0.01, 0.05, 0.1)\n";
  std::cout << "samples: " << r.options.samples
            << " per input for the search, as many fresh for the test; " << r.tests
            << " input pairs tested, alpha = " << num(r.options.alpha)
            << " (Bonferroni)\nrandomness: " << r.randomness << "\n";
  for (const auto& p : r.pairs)
    if (!p.skipped.empty())
      std::cout << "skipped pair '" << p.pair.name << "': " << p.skipped << "\n";
  std::size_t primary = 0;
  for (std::size_t j = 0; j < c.curve.size(); ++j)
    if (c.curve[j].delta == c.primary_delta) primary = j;
  std::cout << "certified epsilon lower bound at delta = " << num(c.primary_delta) << ": "
            << num(r.epsilon_lower[primary]) << " (confidence " << num(1 - r.options.alpha)
            << ")\n";
  if (r.best) {
    const auto& p = r.pairs[*r.best];
    const char* first = p.swapped ? "D'" : "D";
    const char* second = p.swapped ? "D" : "D'";
    std::cout << (r.violation ? "VIOLATION" : "strongest evidence") << ": inputs '" << p.pair.name
              << "' D = " << vec(p.pair.d) << ", D' = " << vec(p.pair.d_prime)
              << ", sensitivity l1 " << num(p.pair.sensitivity.l1) << " l2 "
              << num(p.pair.sensitivity.l2) << " linf " << num(p.pair.sensitivity.linf)
              << "\n  event S: " << p.event.describe() << "\n  P[M(" << first
              << ") in S] = " << num(double(p.count_first) / double(p.n)) << " (lower bound "
              << num(p.p_lower) << "), P[M(" << second
              << ") in S] = " << num(double(p.count_second) / double(p.n)) << " (upper bound "
              << num(p.p_upper) << ")\n";
    std::size_t closest = 0;  // the claim point this evidence comes nearest to breaking
    for (std::size_t j = 0; j < c.curve.size(); ++j)
      if (p.epsilon_lower[j] - c.curve[j].epsilon >
          p.epsilon_lower[closest] - c.curve[closest].epsilon)
        closest = j;
    if (!p.violation)
      std::cout << "  nearest to the claim at delta = " << num(c.curve[closest].delta)
                << ": epsilon >= " << num(p.epsilon_lower[closest]) << " (claimed "
                << num(c.curve[closest].epsilon) << ")\n";
    for (std::size_t j = 0; j < c.curve.size(); ++j)
      if (p.epsilon_lower[j] > c.curve[j].epsilon)
        std::cout << "  at delta = " << num(c.curve[j].delta)
                  << ": epsilon >= " << num(p.epsilon_lower[j]) << " > claimed "
                  << num(c.curve[j].epsilon) << "\n";
  }
  std::cout << (r.violation
                    ? "result: VIOLATION certified: the mechanism does not keep its claim\n"
                    : "result: no violation found (auditing is never proof; see docs/audit.md)\n")
            << "time: " << num(r.seconds) << " s\n";
}

/// The claim is the mechanism's event priced as tightly as the accountant can: exactly for a
/// Gaussian (Balle & Wang 2018) when the accountant declares `analytic_gaussian`.
dptune::Params claim_accountant_params(const dptune::host::PluginRegistry& registry,
                                       const std::string& accountant) {
  dptune::Params params;
  const dptune::ParamSchema* schema =
      registry.schema(dptune::host::ComponentKind::Accountant, accountant);
  if (schema == nullptr) return params;
  for (const auto& spec : schema->specs())
    if (spec.name == "analytic_gaussian") params.set(spec.name, dptune::Value{true});
  return params;
}

}  // namespace

int cmd_audit(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune audit MECHANISM [options]\n"
      "(dptune audit trainer PIPELINE: see dptune audit trainer --help)\n\n"
      "Samples the mechanism plugin on neighbouring inputs and looks for an output event S with\n"
      "P[M(D) in S] > e^epsilon P[M(D') in S] + delta for its claimed event(); a candidate found "
      "on\n"
      "one set of samples is tested on fresh ones with exact (Clopper-Pearson) bounds, "
      "Bonferroni-\n"
      "corrected, so a mechanism that keeps its claim is flagged with probability <= --alpha.\n"
      "The result is recorded in $DPTUNE_AUDIT_STORE (default "
      "$XDG_CACHE_HOME/dptune/audits.json).\n"
      "Exit codes: 0 no violation found, 3 violation certified, 2 usage error, 1 "
      "failure.\n\noptions");
  std::vector<std::string> param_texts, plugin_paths;
  std::size_t samples = 200000;
  double alpha = 1e-3;
  opts.add_options()("help,h", "this help")("param", po::value(&param_texts)->composing(),
                                            "mechanism parameter NAME=VALUE (repeatable)")(
      "plugin-path", po::value(&plugin_paths)->composing(),
      "extra plugin folder or file (repeatable)")("samples", po::value(&samples),
                                                  "samples per input and phase (default 200000)")(
      "seed", po::value<std::uint64_t>(),
      "deterministic xoshiro256** stream (default: libsodium CSPRNG)")(
      "alpha", po::value(&alpha), "false-alarm level (default 0.001)")(
      "json", "machine-readable output")("no-record",
                                         "do not write the result to the audit record store");
  if (!args.empty() && args.front() == "trainer")
    return cmd_audit_trainer(std::vector<std::string>(args.begin() + 1, args.end()));
  std::string name;
  const auto parsed = parse_command(opts, args, {{"mechanism", po::value(&name)}});
  if (!parsed) return kOk;
  const po::variables_map& vm = *parsed;
  if (name.empty()) throw UsageError("audit: missing MECHANISM (see --help)");
  if (!(alpha > 0 && alpha < 1)) throw UsageError("--alpha must be in (0, 1)");
  if (samples < 100) throw UsageError("--samples must be at least 100");
  dptune::host::PluginRegistry registry;
  scan_plugins(registry, plugin_paths, {});
  const auto* info = registry.find(dptune::PluginKind::Mechanism, name);
  if (!info) {
    std::vector<std::string> names;
    for (const auto& p : registry.plugins())
      if (p.kind == dptune::PluginKind::Mechanism) names.push_back(p.name);
    const auto hint = dptune::host::did_you_mean(name, names);
    throw UsageError("audit: no mechanism plugin '" + name + "'" +
                     (hint ? " (did you mean '" + *hint + "'?)" : std::string()));
  }
  const dptune::Params params = mechanism_params(*info, param_texts);
  std::shared_ptr<dptune::Mechanism> mechanism;
  try {
    mechanism = registry.create_mechanism(name, params);
  } catch (const dptune::host::ParamsRejected& e) {
    throw UsageError("mechanism " + name + " refused its parameters: " + e.reason());
  }
  const auto accountant = create_accountant(registry, kDefaultAccountant,
                                            claim_accountant_params(registry, kDefaultAccountant));
  const auto claim = dptune::host::claimed_privacy(mechanism->event(), *accountant);
  dptune::host::AuditOptions options;
  options.samples = samples;
  options.alpha = alpha;
  if (vm.count("seed")) options.seed = vm["seed"].as<std::uint64_t>();
  const auto result = dptune::host::run_audit(*mechanism, claim, options);
  if (vm.count("json"))
    print_json(*info, params, result);
  else
    print_text(*info, params, result);
  if (!vm.count("no-record")) {
    dptune::host::AuditRecord rec;
    rec.plugin = info->name;
    rec.version = info->version;
    rec.library = info->library.string();
    rec.sha256 = dptune::host::sha256_file(info->library);
    rec.dptune_version = DPTUNE_VERSION_STRING;
    rec.params = params.to_string();
    rec.configuration = dptune::host::audit_configuration(info->schema.complete(params));
    rec.samples = samples;
    rec.seed = options.seed ? std::to_string(*options.seed) : std::string();
    rec.alpha = alpha;
    rec.result = result.violation ? "violation certified" : "no violation found";
    rec.epsilon_claimed = claim.epsilon_at_primary();
    rec.delta = claim.primary_delta;
    for (std::size_t j = 0; j < claim.curve.size(); ++j)
      if (claim.curve[j].delta == claim.primary_delta)
        rec.epsilon_lower_bound = result.epsilon_lower[j];
    rec.date = dptune::host::utc_now_iso8601();
    dptune::host::save_audit_record(rec, dptune::host::audit_store_path());
  }
  return result.violation ? kViolation : kOk;
}

}  // namespace dptune::cli
