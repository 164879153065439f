// The test build of the dptune executable (dptune_with_test_hooks, tests/mpi only): before main,
// installs the host's test seams from the environment of the tests/mpi cases.  The product dptune
// does not link this file, so none of these variables means anything to it.
//   DPTUNE_MPI_CAPTURE=FILE   rank 0 writes every peer message it receives to FILE (little-endian
//                             source u32, length u64, payload), read by dp_hype_check.py
//   DPTUNE_MPI_HELD_ROWS=DIR  each rank writes what it holds to DIR/rank_<r>.txt
//   (held_rows_check.py) DPTUNE_MPI_KEEP_ROWS=1    every rank keeps every row
//   DPTUNE_MPI_RESULTS=FILE   rank 0 writes a line "<source rank> <model|score>" to FILE for every
//                             run result a worker sends
//   DPTUNE_MPI_WORKERS_TAKE_QUEUE=1  rank 0 leaves every task a worker may run to the workers
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "base/test_seams.hpp"
#include "dptune/errors.hpp"

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

void capture_peer_message(int source, std::string_view payload) {
  // Called on the executor's service thread only, so one stream without a lock.
  static std::unique_ptr<std::ofstream> capture;
  if (!capture) {
    const std::string path = env("DPTUNE_MPI_CAPTURE");
    capture = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
    if (!*capture) throw dptune::Error("DPTUNE_MPI_CAPTURE: cannot write " + path);
  }
  const auto from = static_cast<std::uint32_t>(source);
  const auto length = static_cast<std::uint64_t>(payload.size());
  capture->write(reinterpret_cast<const char*>(&from), 4);
  capture->write(reinterpret_cast<const char*>(&length), 8);
  capture->write(payload.data(), static_cast<std::streamsize>(payload.size()));
  capture->flush();
}

void write_held_rows(int rank, int ranks, const std::string& held_rows) {
  const std::string path = env("DPTUNE_MPI_HELD_ROWS") + "/rank_" + std::to_string(rank) + ".txt";
  std::ofstream file(path, std::ios::trunc);
  file << "rank " << rank << " of " << ranks << "\n" << held_rows;
  if (!file) throw dptune::Error("DPTUNE_MPI_HELD_ROWS: cannot write " + path);
}

void log_result(int source, bool carries_model) {
  // Called on the executor's service thread only, so one stream without a lock.
  static std::unique_ptr<std::ofstream> log;
  if (!log) {
    const std::string path = env("DPTUNE_MPI_RESULTS");
    log = std::make_unique<std::ofstream>(path, std::ios::trunc);
    if (!*log) throw dptune::Error("DPTUNE_MPI_RESULTS: cannot write " + path);
  }
  *log << source << (carries_model ? " model\n" : " score\n") << std::flush;
}

const bool installed = [] {
  auto& seams = dptune::host::test_seams();
  if (!env("DPTUNE_MPI_CAPTURE").empty()) seams.peer_message_received = capture_peer_message;
  if (!env("DPTUNE_MPI_HELD_ROWS").empty()) seams.rank_holds = write_held_rows;
  if (!env("DPTUNE_MPI_RESULTS").empty()) seams.result_received = log_result;
  seams.keep_every_row = !env("DPTUNE_MPI_KEEP_ROWS").empty();
  seams.workers_take_the_queue = !env("DPTUNE_MPI_WORKERS_TAKE_QUEUE").empty();
  return true;
}();

}  // namespace
