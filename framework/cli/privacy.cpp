// `dptune privacy`: what a privacy engineer reaches for (compare TF Privacy's
// compute_dp_sgd_privacy). The event comes from YAML (file, stdin or --event) or from the DP-SGD
// shortcut; the number comes from an accountant plugin (rdp by default), never from code here.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>

#include "calibrate.hpp"
#include "cli_common.hpp"
#include "dptune/errors.hpp"
#include "dptune/event_walk.hpp"
#include "dptune/helpers/calibration.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/host/event_yaml.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/json.hpp"
#include "dptune/params.hpp"
#include "dptune/plugin.hpp"

namespace po = boost::program_options;

namespace dptune::cli {

namespace {

// The DP-SGD shortcut prices the event a `dptune run` of dp_sgd / dp_adam with the same numbers
// reports (plugins/trainer/training: dp_schedule and dp_sgd_event), so that `privacy`, `plan` and
// `run` print the same ε: the trainers' default sampling (fixed-size lots), the `gaussian`
// mechanism's default noise (`noise: secure`, stated as discrete_gaussian_on_grid with min_scale
// 2^22), and their schedule (each epoch ⌈n / batch⌉ lots).
struct DpSgd {
  std::int64_t dataset_size = 0, batch_size = 0;
  double epochs = 0;
  std::int64_t fixed_steps = 0;  // when > 0, the steps (--steps, or calibrating them)
  double sigma = 0;
  std::string sampling = "without_replacement";
  std::string noise = "secure";
  std::int64_t lots_per_epoch() const { return (dataset_size + batch_size - 1) / batch_size; }
  std::int64_t steps() const {
    if (fixed_steps > 0) return fixed_steps;
    // The trainers' schedule: epochs · ⌈n / batch⌉ lots; a fractional epoch count (which a run
    // cannot have) rounds the lots up.
    return static_cast<std::int64_t>(
        std::ceil(epochs * static_cast<double>(lots_per_epoch()) - 1e-9));
  }
  DpEvent leaf(double noise_multiplier) const {
    return noise == "fast" ? DpEvent::gaussian(noise_multiplier)
                           : DpEvent::discrete_gaussian_on_grid(noise_multiplier,
                                                                dptune::kGaussianGridMinScale);
  }
  DpEvent event(double noise_multiplier) const {
    const DpEvent step = sampling == "poisson"
                             ? DpEvent::poisson_sampled(static_cast<double>(batch_size) /
                                                            static_cast<double>(dataset_size),
                                                        leaf(noise_multiplier))
                             : DpEvent::sampled_without_replacement(dataset_size, batch_size,
                                                                    leaf(noise_multiplier));
    return DpEvent::self_composed(step, steps());
  }
};

// Printed with every answer: what σ means, so nobody reads one convention as another (Opacus and
// TF Privacy users type noise stddev ÷ clipping norm).
constexpr const char* kConvention =
    "noise_multiplier = noise stddev / the most one record can add (the clipping norm for "
    "DP-SGD); inside replace_one, / the replace-one sensitivity";

}  // namespace

void write_guarantee_json(dptune::host::JsonWriter& w, const DpEvent& event,
                          const PrivacyGuarantee& g) {
  w.key("neighbours").value(to_string(neighbouring_of(event)));
  w.key("noise_multiplier_convention").value(kConvention);
  w.key("epsilon").value(g.epsilon).key("delta").value(g.delta);
  w.key("order");
  if (g.order > 0)
    w.value(g.order);
  else
    w.null();
  w.key("accountant").value(g.accountant).key("derivation").value(g.derivation);
  w.key("rdp_curve").begin_array();
  for (const auto& p : g.rdp_curve)
    w.begin_object().key("order").value(p.order).key("epsilon").value(p.epsilon).end_object();
  w.end_array();
}

void print_guarantee(std::ostream& out, const DpEvent& event, const PrivacyGuarantee& g) {
  out << "neighbours: " << describe(neighbouring_of(event)) << "\n"
      << "convention: " << kConvention << "\n"
      << "epsilon:    " << full_precision(g.epsilon) << "\n"
      << "delta:      " << full_precision(g.delta) << "\n";
  if (g.order > 0) out << "order:      " << full_precision(g.order) << "\n";
  out << "accountant: " << g.accountant << "\n"
      << "derivation: " << g.derivation << "\n";
}

namespace {

/// What --calibrate varies: the event as a function of the parameter, its range, and values
/// derived from it for the report (epochs from steps, the rate from a batch size).
struct Family {
  std::function<DpEvent(double)> of;
  ParameterRange range;
  std::string parameter;
  std::function<std::vector<std::pair<std::string, double>>(double)> derived;
};

/// The DP-SGD shortcut's options, checked; the calibrated one (if any) must be left out.
DpSgd dp_sgd_from(const po::variables_map& vm, const std::string& sampling,
                  const std::string& noise, const std::string& calibrate) {
  static const std::vector<std::pair<std::string, std::string>> option_of{
      {"noise_multiplier", "noise-multiplier"},
      {"steps", "epochs"},
      {"epochs", "epochs"},
      {"batch_size", "batch-size"}};
  std::string calibrated_option;
  if (!calibrate.empty()) {
    for (const auto& [param, option] : option_of)
      if (param == calibrate) calibrated_option = option;
    if (calibrated_option.empty())
      throw UsageError("--calibrate " + calibrate +
                       ": with the DP-SGD shortcut, calibrate noise_multiplier, steps, epochs or "
                       "batch_size");
  }
  if (vm.count("epochs") && vm.count("steps"))
    throw UsageError("give --epochs or --steps, not both");
  for (const char* option : {"dataset-size", "batch-size", "epochs", "noise-multiplier"}) {
    // --steps stands for --epochs.
    const bool given =
        vm.count(option) > 0 || (option == std::string("epochs") && vm.count("steps"));
    if (option == calibrated_option && given)
      throw UsageError("--calibrate " + calibrate + " computes it: leave out --" + option +
                       (option == std::string("epochs") ? " and --steps" : ""));
    if (option != calibrated_option && !given)
      throw UsageError(std::string("the DP-SGD shortcut needs --") + option +
                       (option == std::string("epochs") ? " (or --steps)" : ""));
  }
  DpSgd sgd;
  sgd.dataset_size = vm["dataset-size"].as<std::int64_t>();
  if (sgd.dataset_size < 1) throw UsageError("--dataset-size must be >= 1");
  if (vm.count("batch-size")) {
    sgd.batch_size = vm["batch-size"].as<std::int64_t>();
    if (sgd.batch_size < 1 || sgd.batch_size > sgd.dataset_size)
      throw UsageError("--batch-size must be in [1, --dataset-size]");
  }
  if (vm.count("epochs")) {
    sgd.epochs = vm["epochs"].as<double>();
    if (!(sgd.epochs > 0) || !std::isfinite(sgd.epochs)) throw UsageError("--epochs must be > 0");
  }
  if (vm.count("steps")) {
    sgd.fixed_steps = vm["steps"].as<std::int64_t>();
    if (sgd.fixed_steps < 1) throw UsageError("--steps must be >= 1");
  }
  if (vm.count("noise-multiplier")) {
    sgd.sigma = vm["noise-multiplier"].as<double>();
    if (!(sgd.sigma >= 0)) throw UsageError("--noise-multiplier must be >= 0");
  }
  if (sampling != "poisson" && sampling != "without_replacement")
    throw UsageError("--sampling " + sampling + ": expected without_replacement or poisson");
  if (noise != "secure" && noise != "fast")
    throw UsageError("--noise " + noise + ": expected secure or fast");
  sgd.sampling = sampling;
  sgd.noise = noise;
  return sgd;
}

ParameterRange integers(double lower, double upper) {
  ParameterRange r;
  r.lower = lower;
  r.upper = upper;
  r.integer = true;
  return r;
}

Family dp_sgd_family(const DpSgd& sgd, const std::string& calibrate) {
  const auto n = static_cast<double>(sgd.dataset_size);
  if (calibrate == "noise_multiplier")
    return {[sgd](double s) { return sgd.event(s); }, ParameterRange{}, calibrate, nullptr};
  if (calibrate == "batch_size") {
    // Larger lots raise the rate and lower the steps; the search checks that ε still rises.
    return {[sgd](double m) {
              DpSgd at = sgd;
              at.batch_size = std::llround(m);
              return at.event(at.sigma);
            },
            integers(1, n), calibrate,
            [n](double m) {
              return std::vector<std::pair<std::string, double>>{{"rate", m / n}};
            }};
  }
  // steps (or epochs: the steps, reported as epochs = steps / ⌈n / batch⌉, the trainers' schedule)
  const auto lots = static_cast<double>(sgd.lots_per_epoch());
  return {[sgd](double t) {
            DpSgd at = sgd;
            at.fixed_steps = std::llround(t);
            return at.event(at.sigma);
          },
          integers(1, 1e12), "steps",
          [lots](double t) {
            return std::vector<std::pair<std::string, double>>{{"epochs", t / lots}};
          }};
}

/// The smallest source_size of the event's sampled_without_replacement parts (a sample cannot
/// exceed it).
std::int64_t smallest_source(const DpEvent& e) {
  std::int64_t smallest = std::numeric_limits<std::int64_t>::max();
  dptune::for_each_event(e, [&smallest](const DpEvent& part) {
    if (part.kind() == DpEvent::Kind::SampledWithoutReplacement)
      smallest = std::min(smallest, part.source_size());
  });
  return smallest;
}

/// An event's field calibrated: every occurrence takes the value.  noise_multiplier may be left
/// out of the YAML (as before); other fields must be written, with any placeholder value.
Family event_family(const std::string& text, const std::string& shown,
                    const std::string& calibrate) {
  const CalibratedField field = calibrated_field(calibrate);
  dptune::host::EventParseOptions options;
  if (calibrate == "noise_multiplier") options.noise_multiplier = 1.0;
  const DpEvent base = dptune::host::parse_event(text, shown, options);
  ParameterRange range = field.range;
  if (calibrate == "sample_size") range.upper = static_cast<double>(smallest_source(base));
  int hits = 0;
  (void)with_field(base, calibrate, range.lower, hits);
  if (hits == 0)
    throw UsageError("--calibrate " + calibrate + ": " + shown + " has no " + calibrate +
                     " field to calibrate");
  return {[base, calibrate](double x) {
            int h = 0;
            return with_field(base, calibrate, x, h);
          },
          range, calibrate, nullptr};
}

/// What `dptune privacy` was given: the option values bound to its command line.
struct PrivacyArgs {
  std::string event_text, calibrate, accountant_name = kDefaultAccountant, conversion, orders,
                                     sampling = "without_replacement", noise = "secure", event_file;
  std::vector<std::string> plugin_paths;
};

/// The visible options of `dptune privacy`, bound to `a`.
po::options_description privacy_options(PrivacyArgs& a) {
  po::options_description opts(
      "dptune privacy [EVENT] [options]\n\n"
      "Prints the privacy of a DpEvent: epsilon at --delta, or delta at --epsilon; or, with\n"
      "--calibrate PARAM, the value of one parameter that meets --target-epsilon at --delta: the\n"
      "smallest noise, or the largest count, rate, steps, epochs or batch size (Brent's method).\n"
      "EVENT is a YAML file ('-' for stdin), e.g.\n"
      "  self_composed: {count: 1000, event: {poisson_sampled: {rate: 0.01,\n"
      "                  event: {gaussian: {noise_multiplier: 1.1}}}}}\n"
      "Event kinds: gaussian, discrete_gaussian, laplace {noise_multiplier};\n"
      "discrete_gaussian_on_grid {noise_multiplier, min_scale}; pure_dp {epsilon}; "
      "approx_dp {epsilon, "
      "delta};\nzcdp {rho}; poisson_sampled {rate, event}; sampled_without_replacement "
      "{source_size,\nsample_size, event}; self_composed {count, event}; composed {events: [...]}; "
      "repeat_and_select\n{mean, shape (> -1, or inf for Poisson), event}; one_of {events: [...]} "
      "(the worst "
      "of a\ndata-independent choice); repeat_until_accepted {stop_probability, event}; "
      "replace_one "
      "{event}\n(its noise and epsilon are stated for replace-one neighbours);\n"
      "adaptive_repeat_and_select {mean, shape (finite), density_ratio (C/c >= 1), event}\n"
      "(DP-HyPO, Wang et al. 2023); no_op.\n"
      "Noise multipliers are noise stddev / the most one record can add (the clipping norm), as "
      "in\n"
      "Opacus and TF Privacy: leaves hold for add/remove neighbours; sampled_without_replacement\n"
      "and replace_one are priced for replace-one neighbours (an add/remove leaf's sensitivity\n"
      "doubles); mixing them with poisson_sampled is refused.\n\n"
      "options");
  opts.add_options()("help,h", "this help")("event", po::value(&a.event_text),
                                            "the event as inline YAML instead of a file")(
      "delta", po::value<double>(), "print epsilon at this delta (in [0, 1))")(
      "epsilon", po::value<double>(), "print delta at this epsilon (>= 0)")(
      "calibrate", po::value(&a.calibrate),
      "calibrate this parameter: an event field (noise_multiplier, count, sample_size, rate, "
      "stop_probability, mean, epsilon, rho; every occurrence takes the value) or, with the "
      "DP-SGD shortcut, noise_multiplier, steps, epochs or batch_size")(
      "target-epsilon", po::value<double>(), "the epsilon --calibrate must meet (with --delta)")(
      "dataset-size", po::value<std::int64_t>(), "DP-SGD shortcut: training set size n")(
      "batch-size", po::value<std::int64_t>(),
      "DP-SGD shortcut: batch size (expected, for Poisson)")(
      "epochs", po::value<double>(),
      "DP-SGD shortcut: epochs; steps = epochs ceil(n / batch), the trainers' schedule")(
      "steps", po::value<std::int64_t>(), "DP-SGD shortcut: the steps, instead of --epochs")(
      "noise-multiplier", po::value<double>(),
      "DP-SGD shortcut: noise multiplier sigma = noise stddev / clipping norm")(
      "sampling", po::value(&a.sampling),
      "DP-SGD shortcut: without_replacement (default, as the trainers: fixed-size batches; "
      "replace-one neighbours, so the sum of clipped gradients moves by up to 2x the clipping "
      "norm) or poisson (add/remove neighbours)")(
      "noise", po::value(&a.noise),
      "DP-SGD shortcut: secure (default, as the gaussian mechanism: exact discrete Gaussian "
      "noise, priced as discrete_gaussian_on_grid) or fast (floating-point continuous "
      "Gaussian noise, insecure (Mironov 2012), priced as the continuous gaussian)")(
      "accountant", po::value(&a.accountant_name),
      (std::string("accountant plugin (default ") + kDefaultAccountant +
       "), e.g. rdp, pld (privacy loss distributions), best (the smaller of rdp and pld), "
       "pure_dp, ...")
          .c_str())(
      "value-discretization-interval", po::value<double>(),
      "pld/best: grid step of the privacy losses (default 1e-4; smaller is tighter and slower)")(
      "tail-mass-truncation", po::value<double>(),
      "pld/best: probability mass the tails may lose to an infinite loss (default 1e-15)")(
      "conversion", po::value(&a.conversion), "RDP to (eps, delta): improved (default) or classic")(
      "orders", po::value(&a.orders),
      "Renyi orders: comma-separated list (default: the accountant's)")(
      "analytic-gaussian", "account pure-Gaussian events exactly (Balle & Wang 2018) when tighter")(
      "json", "machine-readable output")("plugin-path", po::value(&a.plugin_paths)->composing(),
                                         "extra plugin folder or file (repeatable)");
  return opts;
}

/// The numbers asked for: epsilon at --delta, delta at --epsilon, or --calibrate's
/// --target-epsilon at --delta.
struct Asked {
  bool calibrating = false;
  std::optional<double> delta, epsilon, target;
};

Asked asked(const po::variables_map& vm, const std::string& calibrate) {
  Asked q;
  q.calibrating = !calibrate.empty();
  auto& [calibrating, delta, epsilon, target] = q;
  if (vm.count("delta")) delta = vm["delta"].as<double>();
  if (vm.count("epsilon")) epsilon = vm["epsilon"].as<double>();
  if (vm.count("target-epsilon")) target = vm["target-epsilon"].as<double>();
  if (delta && !(*delta >= 0 && *delta < 1))
    throw UsageError("--delta " + full_precision(*delta) + ": must be in [0, 1)");
  if (epsilon && !(*epsilon >= 0))
    throw UsageError("--epsilon " + full_precision(*epsilon) + ": must be >= 0");
  if (calibrating) {
    if (!target || !delta) throw UsageError("--calibrate needs --target-epsilon and --delta");
    if (epsilon) throw UsageError("--calibrate takes --target-epsilon, not --epsilon");
    if (!(*target > 0 && std::isfinite(*target)))
      throw UsageError("--target-epsilon " + full_precision(*target) +
                       ": must be a finite number > 0");
    if (*delta == 0) throw UsageError("--calibrate needs --delta in (0, 1)");
  } else {
    if (target) throw UsageError("--target-epsilon needs --calibrate PARAM");
    if (delta.has_value() == epsilon.has_value())
      throw UsageError("give exactly one of --delta (prints epsilon) or --epsilon (prints delta)");
  }
  return q;
}

/// The event, from exactly one source: an EVENT file, --event YAML or the DP-SGD shortcut; when
/// calibrating, the family of events over the calibrated parameter instead.
struct EventSource {
  DpEvent event;
  Family family;
};

EventSource event_source(const po::variables_map& vm, const PrivacyArgs& a, bool calibrating) {
  const bool shortcut = vm.count("dataset-size") || vm.count("batch-size") || vm.count("epochs") ||
                        vm.count("steps") || vm.count("noise-multiplier");
  const int sources =
      (shortcut ? 1 : 0) + (a.event_file.empty() ? 0 : 1) + (vm.count("event") ? 1 : 0);
  if (sources != 1)
    throw UsageError(sources == 0
                         ? "no event: give an EVENT file, --event YAML, or the DP-SGD "
                           "shortcut (--dataset-size --batch-size --epochs "
                           "--noise-multiplier)"
                         : "give only one of an EVENT file, --event, or the DP-SGD shortcut");
  if (!shortcut && (vm.count("sampling") || vm.count("noise")))
    throw UsageError(
        "--sampling and --noise belong to the DP-SGD shortcut; an event states its "
        "own sampling and noise");
  EventSource source;
  if (shortcut) {
    const DpSgd sgd = dp_sgd_from(vm, a.sampling, a.noise, a.calibrate);
    if (calibrating)
      source.family = dp_sgd_family(sgd, a.calibrate);
    else
      source.event = sgd.event(sgd.sigma);
    return source;
  }
  const std::string shown =
      vm.count("event") ? "--event" : (a.event_file == "-" ? "<stdin>" : a.event_file);
  const std::string text = vm.count("event") ? a.event_text : read_event_file(a.event_file);
  if (calibrating)
    source.family = event_family(text, shown, a.calibrate);
  else
    source.event = dptune::host::parse_event(text, shown);
  return source;
}

/// The accountant plugin with the options that tune it (conversion, orders, the PLD grid).
std::shared_ptr<dptune::Accountant> privacy_accountant(const po::variables_map& vm,
                                                       const PrivacyArgs& a) {
  dptune::host::PluginRegistry registry;
  scan_plugins(registry, a.plugin_paths, {});
  dptune::Params given;
  if (!a.conversion.empty()) given.set("conversion", dptune::Value{a.conversion});
  if (!a.orders.empty()) given.set("orders", dptune::Value{a.orders});
  if (vm.count("analytic-gaussian")) given.set("analytic_gaussian", dptune::Value{true});
  if (vm.count("value-discretization-interval"))
    given.set("value_discretization_interval",
              dptune::Value{vm["value-discretization-interval"].as<double>()});
  if (vm.count("tail-mass-truncation"))
    given.set("tail_mass_truncation", dptune::Value{vm["tail-mass-truncation"].as<double>()});
  return create_accountant(registry, a.accountant_name, given);
}

/// --calibrate: the parameter's value that meets the target, printed with its event.
void print_calibrated(const dptune::Accountant& accountant, const Family& family, const Asked& q,
                      bool json) {
  CalibrationReport report;
  report.parameter = family.parameter;
  report.integer = family.range.integer;
  report.result =
      dptune::calibrate_parameter(accountant, family.of, *q.target, *q.delta, family.range);
  report.event = family.of(report.result.value);
  report.at_range_end = report.result.value ==
                        (report.result.direction > 0 ? family.range.upper : family.range.lower);
  if (family.derived) report.derived = family.derived(report.result.value);
  print_calibration(report, *q.target, *q.delta, json);
}

/// The event's epsilon at --delta or delta at --epsilon, as text or JSON.
void print_privacy(const dptune::Accountant& accountant, const std::string& accountant_name,
                   const DpEvent& event, const Asked& q, bool json) {
  if (const auto why = accountant.unsupported_reason(event); !why.empty())
    throw UsageError("accountant " + accountant_name + " cannot account " + event.to_string() +
                     ": " + why);
  const PrivacyGuarantee g =
      q.delta ? accountant.epsilon(event, *q.delta) : accountant.delta(event, *q.epsilon);
  if (json) {
    dptune::host::JsonWriter w(std::cout);
    w.begin_object().key("event").value(event.to_string());
    write_guarantee_json(w, event, g);
    w.end_object();
    std::cout << "\n";
    return;
  }
  std::cout << "event:      " << event.to_string() << "\n";
  print_guarantee(std::cout, event, g);
  if (std::isinf(g.epsilon))
    std::cout << "note:       no finite epsilon can be proven for this event at this delta\n";
}

}  // namespace

int cmd_privacy(const std::vector<std::string>& args) {
  PrivacyArgs a;
  const po::options_description opts = privacy_options(a);
  const auto parsed = parse_command(opts, args, {{"event-file", po::value(&a.event_file)}});
  if (!parsed) return kOk;
  const po::variables_map& vm = *parsed;
  const Asked q = asked(vm, a.calibrate);
  const EventSource source = event_source(vm, a, q.calibrating);
  const auto accountant = privacy_accountant(vm, a);
  const bool json = vm.count("json") != 0;
  if (q.calibrating)
    print_calibrated(*accountant, source.family, q, json);
  else
    print_privacy(*accountant, a.accountant_name, source.event, q, json);
  return kOk;
}

}  // namespace dptune::cli
