// The test build of the dp_hype plugin (tests/mpi only): when the plugin is loaded, installs the
// client-input observer of the secure vote from the environment.  The product plugin does not link
// this file.
//   DPTUNE_DP_HYPE_CAPTURE=DIR  each client rank writes client j's plaintext input words, then its
//                               vote words, to DIR/client_<j>.bin (read by dp_hype_check.py)
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "dp_hype/peer_vote.hpp"
#include "dptune/errors.hpp"

namespace {

std::string capture_dir() {
  const char* dir = std::getenv("DPTUNE_DP_HYPE_CAPTURE");
  return dir ? dir : "";
}

void write_words(std::ofstream& file, const std::vector<std::uint64_t>& words) {
  file.write(reinterpret_cast<const char*>(words.data()),
             static_cast<std::streamsize>(words.size() * sizeof(std::uint64_t)));
}

void capture_client(std::uint32_t client, const std::vector<std::uint64_t>& input,
                    const std::vector<std::uint64_t>& votes) {
  const std::string dir = capture_dir();
  std::ofstream file(dir + "/client_" + std::to_string(client) + ".bin",
                     std::ios::binary | std::ios::trunc);
  write_words(file, input);
  write_words(file, votes);
  if (!file) throw dptune::Error("DPTUNE_DP_HYPE_CAPTURE: cannot write to " + dir);
}

const bool installed = [] {
  if (!capture_dir().empty()) dptune::dp_hype::peer::set_client_input_observer(capture_client);
  return true;
}();

}  // namespace
