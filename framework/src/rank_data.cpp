// What each rank of a distributed run holds of the data (docs/mpi.md, "What each rank reads and
// holds"): a tuner that evaluates only some scopes on a rank says which (Tuner::rank_scopes, ABI
// 2.10), and that rank keeps only their rows.
#include <cstdlib>
#include <fstream>
#include <string>

#include "dptune/errors.hpp"
#include "evaluator.hpp"

namespace dptune::host {

namespace {
/// The value of environment variable `name`, or empty.
std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}
}  // namespace

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
  if (scopes && !scores_test && env("DPTUNE_MPI_KEEP_ROWS").empty())
    stack.evaluator.confine(*scopes);
  const std::string folder = env("DPTUNE_MPI_HELD_ROWS");
  if (folder.empty()) return;
  const std::string path = folder + "/rank_" + std::to_string(rank) + ".txt";
  std::ofstream file(path, std::ios::trunc);
  file << "rank " << rank << " of " << ranks << "\n"
       << stack.evaluator.held_rows(scopes.value_or(std::vector<dptune::DataScope>{}));
  if (!file) throw dptune::Error("DPTUNE_MPI_HELD_ROWS: cannot write " + path);
}

}  // namespace dptune::host
