#include "svt_doubling/core.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <sstream>
#include <string_view>

#include "dptune/errors.hpp"
#include "dptune/helpers/format.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/plugin.hpp"
#include "dptune/rng.hpp"
#include "dptune/search_space.hpp"

namespace dptune::svt_doubling {

const char* to_string(Stop stop) {
  switch (stop) {
    case Stop::StepZero:
      return "step reached 0";
    case Stop::ReachedOne:
      return "u reached 1";
    case Stop::Cap:
      return "iteration cap T_max reached";
    case Stop::Optimizer:
      return "the adaptive optimiser proposed no more candidates";
  }
  return "?";
}

namespace {

void check_ladder(double u0, double g) {
  if (!(u0 >= 0 && u0 < 1)) throw dptune::InvalidArgument("svt_doubling: u0 must be in [0, 1)");
  if (!(g > 0 && g < 1)) throw dptune::InvalidArgument("svt_doubling: g must be in (0, 1)");
}

double level(double u0, double g, std::int64_t units) {
  return u0 + static_cast<double>(units) * g;
}

/// x rounded to the nearest multiple of `grid` (> 0), or x itself when grid is 0.  Refuses values
/// beyond 2^52 grid steps, where the sums of the secure path would stop being exact.
double on_grid(double x, double grid) {
  if (grid == 0) return x;
  const double steps = x / grid;  // exact: grid is a power of two
  if (!(std::abs(steps) <= 4503599627370496.0))
    throw dptune::InvalidArgument("svt_doubling: value " + std::to_string(x) +
                                  " is beyond 2^52 grid steps of " + std::to_string(grid));
  return std::nearbyint(steps) * grid;
}

std::size_t floor_log2(std::uint64_t x) {  // x >= 1
  std::size_t r = 0;
  while (x >>= 1) ++r;
  return r;
}

}  // namespace

LoopResult run_loop(std::span<const double> utilities, const LoopOptions& options,
                    const NoiseFn& threshold_noise, const NoiseFn& query_noise) {
  if (utilities.empty()) throw dptune::InvalidArgument("svt_doubling: no candidates");
  Batch all;
  all.utilities.assign(utilities.begin(), utilities.end());
  all.ids.resize(utilities.size());
  for (std::size_t s = 0; s < all.ids.size(); ++s) all.ids[s] = s;
  return run_adaptive_loop(
      options, [&all](const Feedback&) -> Batch { return all; }, threshold_noise, query_noise);
}

LoopResult run_adaptive_loop(const LoopOptions& options, const BatchFn& next_batch,
                             const NoiseFn& threshold_noise, const NoiseFn& query_noise) {
  check_ladder(options.u0, options.g);
  if (options.t_max == 0) throw dptune::InvalidArgument("svt_doubling: t_max must be >= 1");
  const double g = options.g;
  LoopResult r;
  std::int64_t step = 1;
  Feedback feedback;
  // Ding et al. Algorithm 1 line 14 (`while step != 0`), with Ding & Wu lines 29-31 (`if u >= 1
  // break`) and the cap.
  while (true) {
    if (r.iterations == options.t_max) {
      r.stop = Stop::Cap;
      break;
    }
    // §4.1: O chooses this iteration's candidates from the released transcript only.
    feedback.iteration = r.iterations;
    feedback.selected = r.selected;
    const Batch batch = next_batch(feedback);
    if (batch.ids.size() != batch.utilities.size())
      throw dptune::InvalidArgument("svt_doubling: a batch has " +
                                    std::to_string(batch.ids.size()) + " ids and " +
                                    std::to_string(batch.utilities.size()) + " utilities");
    if (batch.ids.empty()) {
      if (r.iterations == 0) throw dptune::InvalidArgument("svt_doubling: no candidates");
      r.stop = Stop::Optimizer;
      break;
    }
    ++r.iterations;
    const double u = level(options.u0, g, r.units);
    // Line 16: propose a noisy threshold one step above the current level.
    const double grid = options.noise_grid;
    const double u_hat = on_grid(u + static_cast<double>(step) * g, grid) + threshold_noise();
    bool accumulated = false;
    for (std::size_t s = 0; s < batch.ids.size(); ++s) {
      // Lines 20-21: AboveThreshold test of candidate s with fresh noise.
      if (on_grid(batch.utilities[s], grid) + query_noise() >= u_hat) {
        r.selected = batch.ids[s];  // line 22
        r.units += step;            // line 23
        step *= 2;                  // line 25
        accumulated = true;
        ++r.passes;
        break;  // line 27
      }
    }
    if (!accumulated) step /= 2;  // line 31: floor(step / 2) for step >= 1
    feedback.passed = accumulated;
    if (options.trace) r.selected_after.push_back(r.selected);
    if (step == 0) {
      r.stop = Stop::StepZero;
      break;
    }
    if (level(options.u0, g, r.units) >= 1) {
      r.stop = Stop::ReachedOne;
      break;
    }
  }
  r.step = step;
  r.u = level(options.u0, g, r.units);
  return r;
}

LocalSearch::LocalSearch(const dptune::SearchSpace& space, std::size_t batch, double radius)
    : space_(space), batch_(batch), radius_(radius) {
  if (batch == 0) throw dptune::InvalidArgument("svt_doubling: adaptive_batch must be >= 1");
  if (!(radius > 0 && radius <= 0.5))
    throw dptune::InvalidArgument("svt_doubling: adaptive_radius must be in (0, 0.5]");
  if (space.empty()) throw dptune::InvalidArgument("svt_doubling: the search space is empty");
}

std::vector<dptune::Params> LocalSearch::propose(const dptune::Params* incumbent, bool passed,
                                                 bool first, dptune::RandomBitGenerator& rng) {
  if (!first) radius_ = passed ? std::min(0.5, 2 * radius_) : std::max(1.0 / 1024, radius_ / 2);
  std::vector<dptune::Params> out;
  if (!incumbent) {
    for (std::size_t i = 0; i < batch_; ++i) out.push_back(space_.sample(rng));
    return out;
  }
  // The perturbations first, the incumbent last: AboveThreshold takes the first candidate that
  // passes, so new points get their chance before the incumbent passes again.
  const std::vector<double> centre = space_.to_unit(*incumbent);
  for (std::size_t i = 1; i < batch_; ++i) {
    std::vector<double> x = centre;
    for (double& v : x) v = std::clamp(v + dptune::gaussian(rng, radius_), 0.0, 1.0);
    out.push_back(space_.from_unit(x));
  }
  out.push_back(*incumbent);
  return out;
}

std::int64_t levels_to_one(double u0, double g) {
  check_ladder(u0, g);
  auto m = static_cast<std::int64_t>(std::ceil((1 - u0) / g));
  // Align with the loop's own test `u0 + units * g >= 1` under rounding.
  while (m > 1 && level(u0, g, m - 1) >= 1) --m;
  while (level(u0, g, m) < 1) ++m;
  return std::max<std::int64_t>(m, 1);
}

std::size_t worst_case_iterations(double u0, double g) {
  return static_cast<std::size_t>(2 * levels_to_one(u0, g) - 1);
}

std::size_t noise_free_worst_iterations(double u0, double g) {
  const auto m = static_cast<std::uint64_t>(levels_to_one(u0, g));
  return std::min(4 * floor_log2(m) + 1, worst_case_iterations(u0, g));
}

std::size_t default_t_max(double u0, double g) {
  const auto m = static_cast<std::uint64_t>(levels_to_one(u0, g));
  const std::size_t slack = floor_log2(m) + ((m & (m - 1)) ? 1 : 0);  // ceil(log2 M)
  return std::min(noise_free_worst_iterations(u0, g) + slack, worst_case_iterations(u0, g));
}

Scales laplace_scales(std::size_t k, double epsilon, double validation_sensitivity) {
  if (k == 0) throw dptune::InvalidArgument("svt_doubling: k must be >= 1");
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    throw dptune::InvalidArgument("svt_doubling: epsilon_svt must be finite and > 0");
  Scales s;
  s.sensitivity = 1.0 / static_cast<double>(k);
  if (!(validation_sensitivity >= 0 && validation_sensitivity <= 1))
    throw dptune::InvalidArgument(
        "svt_doubling: the utility's sensitivity to one held-out record must be in [0, 1]");
  s.sensitivity = std::max(s.sensitivity, validation_sensitivity);
  s.threshold = 2 * s.sensitivity / epsilon;
  s.query = 4 * s.sensitivity / epsilon;
  return s;
}

Noise make_noise(dptune::TunerContext& context, const Scales& scales, double epsilon) {
  using dptune::DpEvent;
  auto fmt = [](double x) { return dptune::significant_digits(x, 6); };
  Noise noise;
  auto& rng = context.rng();
  const std::string source =
      rng.description() + (rng.cryptographically_secure() ? ", cryptographically secure"
                                                          : ", NOT cryptographically secure");
  const double b_threshold = 2 / epsilon, b_query = 4 / epsilon;  // scale / Δ
  std::string why_not;
  std::shared_ptr<const dptune::Mechanism> mt, mq;
  try {
    mt = context.mechanism(dptune::Params{{"noise_multiplier", b_threshold}});
    mq = context.mechanism(dptune::Params{{"noise_multiplier", b_query}});
    auto is = [](const DpEvent& e, double b) {
      return e.kind() == DpEvent::Kind::Laplace && std::abs(e.noise_multiplier() - b) <= 1e-12 * b;
    };
    if (!mt || !mq) {
      why_not = "the host returned no mechanism";
    } else if (!is(mt->event(), b_threshold) || !is(mq->event(), b_query)) {
      why_not = "its event for noise_multiplier " + fmt(b_threshold) + " is " +
                mt->event().to_string() + ", not Laplace(" + fmt(b_threshold) + ")";
    }
  } catch (const dptune::Error& e) {
    why_not = e.what();
  }
  if (why_not.empty()) {
    dptune::Sensitivity s;
    s.linf = s.l1 = s.l2 = scales.sensitivity;
    auto draw = [s, &rng](std::shared_ptr<const dptune::Mechanism> m) -> NoiseFn {
      return [m = std::move(m), s, &rng] {
        const std::array<double, 1> zero{0.0};
        const auto v = m->release(zero, s, rng);
        if (v.size() != 1)
          throw dptune::PluginError("svt_doubling: the mechanism released " +
                                    std::to_string(v.size()) + " values for one query");
        return v[0];
      };
    };
    noise.threshold = draw(mt);
    noise.query = draw(mq);
    noise.from_mechanism = true;
    noise.description = "Laplace noise from the pipeline's mechanism (events Laplace(" +
                        fmt(b_threshold) + ") and Laplace(" + fmt(b_query) + "), L1 sensitivity " +
                        fmt(scales.sensitivity) + ") on " + source;
  } else {
    noise.threshold = [&rng, b = scales.threshold] { return dptune::laplace(rng, b); };
    noise.query = [&rng, b = scales.query] { return dptune::laplace(rng, b); };
    noise.description =
        "Laplace noise from the SDK sampler dptune::laplace on the tuner's generator (" + source +
        "); the pipeline's mechanism was not used: " + why_not;
  }
  return noise;
}

Noise make_secure_noise(dptune::TunerContext& context, const Scales& scales, double epsilon) {
  auto& rng = context.rng();
  const double delta = scales.sensitivity;
  const double b_threshold = 2 / epsilon, b_query = 4 / epsilon;  // scale / Δ
  Noise noise;
  // Scales the grid sampler cannot hold are refused whatever the values, so they are refused here,
  // as the configuration's mistake, before the first draw: the host's preflight meets this in the
  // tuner's dry run, before any privacy is charged.
  try {
    noise.grid = dptune::laplace_grid(delta, b_threshold, 1);
    for (const double b : {b_threshold, b_query})
      (void)dptune::grid_laplace_scale(delta, b, noise.grid, 1);
  } catch (const dptune::ConfigError&) {
    throw;
  } catch (const dptune::Error& e) {
    std::ostringstream what;
    what.precision(6);
    what << "svt_doubling: noise: secure: the loop's epsilon " << epsilon
         << " asks for Laplace noise of scale " << b_query << " x " << delta
         << ", which the exact grid sampler cannot draw (" << e.what()
         << "); raise the tuner's epsilon or use noise: fast";
    throw dptune::ConfigError(what.str());
  }
  auto draw = [&rng, delta, grid = noise.grid](double multiplier) -> NoiseFn {
    return [&rng, delta, grid, multiplier] {
      const std::array<double, 1> zero{0.0};
      return dptune::grid_laplace(zero, delta, multiplier, grid, rng)[0];
    };
  };
  noise.threshold = draw(b_threshold);
  noise.query = draw(b_query);
  std::ostringstream d;
  d.precision(6);
  d << "exact discrete Laplace (Canonne, Kamath & Steinke 2020) on the grid " << noise.grid
    << ": utilities and thresholds rounded to it, noise scales 2/eps and 4/eps times the rounded "
       "sensitivity "
    << delta << " + " << noise.grid << ", comparisons exact; the tuner's generator is "
    << (rng.cryptographically_secure() ? "cryptographically secure"
                                       : "NOT cryptographically secure (seeded run)");
  noise.description = d.str();
  return noise;
}

double nominal_delta_prime(double n, double g, double k_epsilon) {
  if (!(n > 1)) return 1;  // the asymptotic statement says nothing for n <= 1
  return std::min(1.0, std::pow(n, -g * k_epsilon / 4) * std::log(n));
}

namespace {
std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\n") - first + 1);
}
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}
}  // namespace

namespace {
/// Throws InvalidArgument with `where` followed by `parts` (one candidate's problem).
[[noreturn]] void fail(const std::string& where, std::initializer_list<std::string_view> parts) {
  std::string message = where;
  for (const std::string_view part : parts) message += part;
  throw dptune::InvalidArgument(message);
}
}  // namespace

std::vector<dptune::Params> parse_candidate_list(const std::string& text,
                                                 const dptune::SearchSpace& space) {
  std::vector<dptune::Params> out;
  std::string names;
  for (const auto& d : space.dimensions()) names += (names.empty() ? "" : ", ") + d.name;
  const auto items = split(text, ';');
  for (std::size_t k = 0; k < items.size(); ++k) {
    const std::string where =
        "svt_doubling: candidate_list: candidate " + std::to_string(k + 1) + ": ";
    if (trim(items[k]).empty()) {
      if (k + 1 == items.size() && k > 0) break;  // a trailing ';'
      throw dptune::InvalidArgument(where + "empty");
    }
    dptune::Params p;
    for (const std::string& pair : split(items[k], ',')) {
      const auto eq = pair.find('=');
      if (eq == std::string::npos) fail(where, {"expected name=value, got '", trim(pair), "'"});
      const std::string name = trim(pair.substr(0, eq)), value = trim(pair.substr(eq + 1));
      const dptune::Dimension* d = space.find(name);
      if (!d) fail(where, {"'", name, "' is not a dimension of the search space (", names, ")"});
      if (p.contains(name)) fail(where, {"'", name, "' given twice"});
      std::size_t used = 0;
      try {
        if (d->kind == dptune::Dimension::Kind::Float) {
          p.set(name, std::stod(value, &used));
        } else if (d->kind == dptune::Dimension::Kind::Int) {
          p.set(name, static_cast<std::int64_t>(std::stoll(value, &used)));
        } else {
          for (const auto& choice : d->choices)
            if (dptune::to_string(choice) == value) p.set(name, choice);
          used = p.contains(name) ? value.size() : 0;
        }
      } catch (const std::exception&) {
        used = 0;
      }
      if (value.empty() || used != value.size())
        fail(where, {name, ": '", value, "' is not a value of the ",
                     d->kind == dptune::Dimension::Kind::Float ? "float"
                     : d->kind == dptune::Dimension::Kind::Int ? "int"
                                                               : "categorical",
                     " dimension"});
    }
    for (const auto& d : space.dimensions())
      if (!p.contains(d.name)) throw dptune::InvalidArgument(where + "'" + d.name + "' missing");
    if (!space.contains(p))
      throw dptune::InvalidArgument(where + p.to_string() + " is outside the search space");
    out.push_back(std::move(p));
  }
  if (out.empty()) throw dptune::InvalidArgument("svt_doubling: candidate_list is empty");
  return out;
}

}  // namespace dptune::svt_doubling
