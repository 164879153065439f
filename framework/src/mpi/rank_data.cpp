// What each rank of a distributed run holds of the data (docs/mpi.md, "What each rank reads and
// holds"): a tuner that evaluates only some scopes on a rank says which (Tuner::rank_scopes, ABI
// 2.10), and that rank keeps only their rows.
#include <vector>

#include "base/test_seams.hpp"
#include "run/evaluator.hpp"

namespace dptune::host {

void keep_rank_data(const PipelineConfig& config, const dptune::Tuner& tuner,
                    EvaluationStack& stack, int rank, int ranks) {
  if (ranks < 2) return;
  // Rank 0 hands out the runs of its own evaluations: none may go to a rank without its rows.
  if (rank == 0)
    if (RemoteTasks* remote = stack.executor->remote())
      for (int r = 1; r < ranks; ++r) remote->confine_rank(r, tuner.rank_scopes(r, ranks));
  const auto scopes = tuner.rank_scopes(rank, ranks);
  // Rank 0 scores the released model on the test split after the tuning: it keeps the data then.
  const bool scores_test = rank == 0 && config.output.test_score.has_value();
  const TestSeams& seams = test_seams();
  if (scopes && !scores_test && !seams.keep_every_row) stack.evaluator.confine(*scopes);
  if (seams.rank_holds)
    seams.rank_holds(rank, ranks,
                     stack.evaluator.held_rows(scopes.value_or(std::vector<dptune::DataScope>{})));
}

}  // namespace dptune::host
