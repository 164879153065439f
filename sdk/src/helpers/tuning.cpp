#include "dptune/helpers/tuning.hpp"

#include <algorithm>

namespace dptune {

Trial to_trial(const Evaluation& evaluation, std::size_t id) {
  Trial t;
  t.id = id;
  t.params = evaluation.request.candidate;
  t.privacy = evaluation.privacy;
  t.utility_mean = evaluation.utility_mean;
  t.utility_min = evaluation.utility_min;
  t.utility_max = evaluation.utility_max;
  t.repetitions = evaluation.request.repetitions;
  t.seconds = evaluation.seconds;
  return t;
}

std::vector<Trial> evaluate_for_map(TunerContext& context, const std::vector<Params>& candidates,
                                    std::string_view phase, std::size_t first_id) {
  return evaluate_for_map(context, candidates, phase, first_id, true);
}

std::vector<Trial> evaluate_for_map(TunerContext& context, const std::vector<Params>& candidates,
                                    std::string_view phase, std::size_t first_id,
                                    bool private_run) {
  constexpr std::size_t kChunk = 16;
  std::vector<Trial> trials;
  trials.reserve(candidates.size());
  context.progress().start(phase, candidates.size());
  double best = -1;
  for (std::size_t begin = 0; begin < candidates.size(); begin += kChunk) {
    const std::size_t end = std::min(candidates.size(), begin + kChunk);
    std::vector<EvaluationRequest> requests;
    for (std::size_t i = begin; i < end; ++i) {
      EvaluationRequest r;
      r.candidate = candidates[i];
      r.private_run = private_run;
      requests.push_back(std::move(r));
    }
    for (const auto& e : context.evaluator().evaluate(requests)) {
      trials.push_back(to_trial(e, first_id + trials.size()));
      best = std::max(best, e.utility_mean);
    }
    context.progress().advance(end, best);
  }
  return trials;
}

}  // namespace dptune
