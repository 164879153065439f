#include "repetition/selection.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dptune/helpers/format.hpp"
#include "dptune/helpers/grid_noise.hpp"
#include "dptune/helpers/tuning.hpp"

namespace dptune::repetition {

std::string fmt(double x) { return significant_digits(x, 6); }

void add_run_count_params(ParamSchema& schema, std::string_view count) {
  schema
      .add_float("eta",
                 "shape of the truncated negative binomial (distribution: negative_binomial)")
      .min_exclusive(-1)
      .default_to(0.5)
      .add_float("mean", "E[" + std::string(count) +
                             "]; 0: set by gamma, or 10 when gamma is not given either")
      .min(0)
      .default_to(0.0)
      .add_float("gamma", "gamma of the truncated negative binomial instead of the mean (0: unset)")
      .min(0)
      .max_exclusive(1)
      .default_to(0.0);
}

void add_scoring_params(ParamSchema& schema) {
  schema
      .add_string("scoring",
                  "private: add Laplace noise (scale: the utility's sensitivity / score_epsilon) "
                  "to every run's held-out score and compose its cost into the tuner's event; "
                  "public_validation: score exactly, assuming the scored split is public "
                  "(your declaration: its records are then not protected)")
      .one_of({"private", "public_validation"})
      .default_to(std::string("private"))
      .add_float("score_epsilon",
                 "scoring: private: the epsilon of each run's noisy score (pure DP, Laplace); "
                 "its cost is composed into every run")
      .min_exclusive(0)
      .default_to(0.1)
      .add_string("noise",
                  "scoring noise: secure (exact discrete Laplace on a power-of-two grid, "
                  "dptune/helpers/grid_noise.hpp) or fast (floating-point inversion: insecure, "
                  "Mironov 2012; labelled in every report)")
      .one_of({"secure", "fast"})
      .default_to(std::string("secure"));
}

RunCountParams RunCountParams::read(const Params& p) {
  RunCountParams r;
  r.distribution = p.get_string("distribution");
  r.eta = p.get_double("eta");
  r.mean = p.get_double("mean");
  r.gamma = p.get_double("gamma");
  return r;
}

RepetitionDistribution RunCountParams::law() const {
  if (distribution == "poisson") return RepetitionDistribution::poisson(mean > 0 ? mean : 10);
  const double shape = distribution == "logarithmic" ? 0.0
                       : distribution == "geometric" ? 1.0
                                                     : eta;
  const double m = mean > 0    ? mean
                   : gamma > 0 ? RepetitionDistribution::tnb_mean(shape, gamma)
                               : 10.0;
  return RepetitionDistribution::from_mean(m, shape);
}

DpEvent scoring_event(double multiplier, const DpEvent& trainer_base) {
  const DpEvent leaf = DpEvent::laplace(multiplier);
  return neighbouring_of(trainer_base) == Neighbouring::ReplaceOne ? DpEvent::replace_one(leaf)
                                                                   : leaf;
}

Scoring scoring(TunerContext& context, const ScoringOptions& options, const DpEvent& trainer_base,
                std::string_view tuner) {
  Scoring s;
  if (!options.private_scoring) return s;
  const DataSizes sizes = context.data_sizes();
  const UtilitySensitivity sens = context.utility_sensitivity(sizes.scored);
  const std::string name(tuner);
  if (!sens.per_record)
    throw ConfigError(name +
                      ": scoring: private (the default) needs the utility's sensitivity to one "
                      "scored record, unknown for utility '" +
                      sens.utility + "' (" + sens.derivation +
                      "); use a utility with a known sensitivity (accuracy, log_loss_score, f1), "
                      "or declare the scored split public with scoring: public_validation");
  const double delta_u = *sens.per_record;
  if (!(delta_u > 0 && std::isfinite(delta_u)))
    throw PluginError(name + ": the host gave utility sensitivity " + fmt(delta_u) +
                      ", not a positive number");
  s.noisy = true;
  s.secure = options.secure_noise;
  s.scale = delta_u / options.score_epsilon;
  s.sensitivity = delta_u;
  s.scored_rows = sizes.scored;
  s.derivation = sens.derivation;
  // DpEvent::laplace takes the noise multiplier b / Δ = 1 / ε_score.
  s.event = scoring_event(s.scale / delta_u, trainer_base);
  return s;
}

double released_score(TunerContext& context, const Scoring& s, const Evaluation& run) {
  if (!s.noisy) return run.utility_mean;
  if (!s.secure) return run.utility_mean + laplace(context.rng(), s.scale);
  const double multiplier = s.scale / s.sensitivity;
  const double value[] = {run.utility_mean};
  return grid_laplace(value, s.sensitivity, multiplier, laplace_grid(s.sensitivity, multiplier, 1),
                      context.rng())[0];
}

std::vector<Evaluation> evaluate_in_chunks(TunerContext& context,
                                           const std::vector<EvaluationRequest>& requests,
                                           const std::function<void(const Evaluation&)>& check) {
  constexpr std::size_t kChunk = 8;
  std::vector<Evaluation> runs;
  runs.reserve(requests.size());
  for (std::size_t at = 0; at < requests.size(); at += kChunk) {
    const std::vector<EvaluationRequest> chunk(
        requests.begin() + static_cast<std::ptrdiff_t>(at),
        requests.begin() + static_cast<std::ptrdiff_t>(std::min(requests.size(), at + kChunk)));
    for (auto& e : context.evaluator().evaluate(chunk)) {
      check(e);
      runs.push_back(std::move(e));
    }
  }
  return runs;
}

EvaluationRequest private_run(const Params& candidate, const DataScope& scope, bool keep_output) {
  EvaluationRequest r;
  r.candidate = candidate;
  r.scope = scope;
  r.private_run = true;
  r.repetitions = 1;
  r.keep_output = keep_output;
  return r;
}

std::size_t best_run(const std::vector<double>& scores) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < scores.size(); ++i)
    if (scores[i] > scores[best]) best = i;
  return best;
}

void release_run(TuningResult& result, const std::vector<Evaluation>& runs,
                 const std::vector<double>& scores, std::size_t id) {
  Trial selected;
  selected.params = runs[id].request.candidate;
  selected.utility_mean = selected.utility_min = selected.utility_max = scores[id];
  // id (the run's index) and seconds (its run time) would leak information about K: fixed values.
  selected.id = 0;
  selected.seconds = 0;
  selected.repetitions = 1;
  result.selected = selected;
  // A function of the released run (its candidate's model), declared as DP output.
  if (runs[id].model)
    result.notes.push_back(std::string(kDpOutputNote) +
                           "released model: " + runs[id].model->describe());
  keep_runs(result, runs, scores);
}

void keep_runs(TuningResult& result, const std::vector<Evaluation>& runs,
               const std::vector<double>& scores) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Trial t = to_trial(runs[i], i);
    t.utility_mean = t.utility_min = t.utility_max = scores[i];
    result.trials.push_back(std::move(t));
  }
  result.trials_sensitive = true;
}

SpaceCandidates probe_space(const SearchSpace& space, const CandidateEvents& events,
                            std::string_view tuner) {
  constexpr std::size_t kProbes = 17, kMaxFinite = 4096, kMaxCombinations = 4096;
  const std::string name(tuner);
  SpaceCandidates out;
  out.centre = space.from_unit(std::vector<double>(space.size(), 0.5));
  const std::vector<DpEvent> centre_events = events(out.centre);
  std::vector<std::pair<std::string, std::vector<Value>>> relevant;
  std::size_t combinations = 1;
  for (const auto& d : space.dimensions()) {
    const std::size_t card = d.cardinality();
    const bool finite = card > 0 && card <= kMaxFinite;
    std::vector<Value> values;
    if (finite) {
      values = SearchSpace::grid_values(d, card);
    } else {
      for (std::size_t i = 0; i < kProbes; ++i) {
        std::vector<double> unit = space.to_unit(out.centre);
        const std::size_t k = static_cast<std::size_t>(&d - space.dimensions().data());
        unit[k] = static_cast<double>(i) / (kProbes - 1);
        values.push_back(space.from_unit(unit).at(d.name));
      }
    }
    for (const auto& v : values) {
      Params probe = out.centre;
      probe.set(d.name, v);
      const std::vector<DpEvent> e = events(probe);
      if (e == centre_events) continue;
      std::size_t differs = 0;
      while (differs + 1 < e.size() && e[differs] == centre_events[differs]) ++differs;
      if (!finite)
        throw InvalidArgument(
            name + ": dimension '" + d.name + "' changes the privacy cost (" + d.name + " = " +
            to_string(out.centre.at(d.name)) + " gives " + centre_events[differs].to_string() +
            ", " + d.name + " = " + to_string(v) + " gives " + e[differs].to_string() +
            "), so the worst case over the candidates the tuner may draw cannot be computed "
            "exactly; make it finite (int, categorical, or float with step) or use candidates: "
            "grid (Papernot & Steinke 2022, Sec. 3: the base algorithm's privacy must hold for "
            "every candidate)");
      relevant.emplace_back(d.name, values);
      if (combinations > kMaxCombinations / values.size())
        throw InvalidArgument(name + ": more than " + std::to_string(kMaxCombinations) +
                              " combinations of the privacy-relevant dimensions; use "
                              "candidates: grid");
      combinations *= values.size();
      break;
    }
  }
  // The product of the privacy-relevant finite dimensions, the others at the centre.
  std::vector<std::size_t> index(relevant.size(), 0);
  out.relevant.reserve(combinations);
  for (std::size_t t = 0; t < combinations; ++t) {
    Params c = out.centre;
    for (std::size_t k = 0; k < relevant.size(); ++k)
      c.set(relevant[k].first, relevant[k].second[index[k]]);
    out.relevant.push_back(std::move(c));
    for (std::size_t k = relevant.size(); k-- > 0;) {
      if (++index[k] < relevant[k].second.size()) break;
      index[k] = 0;
    }
  }
  std::string names;
  for (const auto& r : relevant) {
    out.names.push_back(r.first);
    names += (names.empty() ? "" : ", ") + r.first;
  }
  out.note =
      "candidates: drawn from the search space; privacy-relevant dimensions (finite, "
      "enumerated): " +
      (names.empty() ? std::string("none") : names) +
      "; the others left the trainer's event unchanged over all their values (finite) or " +
      std::to_string(kProbes) +
      " probes (continuous), and every drawn candidate is checked "
      "against the base event before any run";
  return out;
}

void check_drawn(const Params& candidate, const std::vector<DpEvent>& events,
                 const std::vector<std::vector<DpEvent>>& declared, std::string_view tuner) {
  for (std::size_t i = 0; i < events.size() && i < declared.size(); ++i)
    if (std::find(declared[i].begin(), declared[i].end(), events[i]) == declared[i].end())
      throw InvalidArgument(
          std::string(tuner) + ": candidate " + candidate.to_string() + " has event " +
          events[i].to_string() +
          ", which the probe of the search space did not find (a dimension changes the "
          "privacy cost only in combination with another); use candidates: grid.  Nothing "
          "was run");
}

}  // namespace dptune::repetition
