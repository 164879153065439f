// Points where the test suite observes a distributed run from inside the host.  The product never
// installs anything here: every seam stays empty and the code paths behind them do nothing.  The
// test build of the host (tests/mpi links its own dptune executable with an installer of these
// seams) fills them, so that no switch reaching them ships in a product binary: a deployed dptune
// cannot be made to write peer messages or row checksums to a file, nor to keep rows it should
// drop.
#pragma once

#include <string>
#include <string_view>

namespace dptune::host {

struct TestSeams {
  /// Sees every peer message rank 0 receives (tests check what the server of a secure vote saw).
  void (*peer_message_received)(int source, std::string_view payload) = nullptr;
  /// Sees what rank `rank` of `ranks` holds once keep_rank_data has confined it
  /// (HostEvaluator::held_rows).
  void (*rank_holds)(int rank, int ranks, const std::string& held_rows) = nullptr;
  /// Sees every run result rank 0 receives from rank `source`, and whether it carries the run's
  /// model (tests check that kept models travel instead of pinning their runs to rank 0).
  void (*result_received)(int source, bool carries_model) = nullptr;
  /// Every rank keeps every row, the code path before ranks were confined (tests compare both).
  bool keep_every_row = false;
  /// Rank 0 leaves the tasks a worker may run to the workers while one lives, so that a test sees
  /// a worker's result however fast rank 0 is and however late a worker starts.
  bool workers_take_the_queue = false;
};

/// The process's seams (empty unless a test build installed some before the run).
TestSeams& test_seams();

}  // namespace dptune::host
