// dptune host (internal): the messages of the MPI executor (docs/mpi.md) as bytes.  Plain
// little-endian fields with lengths, read with bounds checks: a malformed message is an error
// naming what was being read, never a crash.  No MPI here (tested without it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dptune/host/executor.hpp"

namespace dptune::host::mpi {

/// Message tags.  Worker to rank 0: hello (its pipeline), result, fail (it cannot start), beat,
/// bye (it received stop and is finalising).  Rank 0 to workers: init (the layout key), task,
/// stop, beat.  Between any two ranks: peer (a tuner's own message, dptune::PeerChannel, e.g.
/// DP-Hype's secure aggregation).
enum Tag : int { kInit = 7101, kHello, kTask, kResult, kFail, kBeat, kStop, kPeer, kBye };
const char* tag_name(int tag);

class WireWriter {
 public:
  WireWriter& u8(std::uint8_t v);
  WireWriter& u64(std::uint64_t v);
  WireWriter& f64(double v);
  WireWriter& str(std::string_view v);
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class WireReader {
 public:
  WireReader(std::string_view bytes, std::string what) : in_(bytes), what_(std::move(what)) {}
  std::uint8_t u8();
  std::uint64_t u64();
  double f64();
  std::string str();
  /// Throws unless every byte was read.
  void end() const;

 private:
  std::string_view take(std::size_t n);
  std::string_view in_;
  std::size_t at_ = 0;
  std::string what_;
};

/// A task as rank 0 sends it: `seq` names it in the reply.
std::string encode_task(std::uint64_t seq, const RemoteTask& task);
RemoteTask decode_task(std::string_view bytes, std::uint64_t& seq);

/// A worker's reply: the result, or the error the run threw.
struct Reply {
  std::uint64_t seq = 0;
  std::optional<RemoteResult> result;
  std::string error;
};
std::string encode_reply(const Reply& reply);
Reply decode_reply(std::string_view bytes);

/// The init message: the layout key under secure randomness, none when seeded.
std::string encode_init(const std::optional<LayoutKey>& key);
std::optional<LayoutKey> decode_init(std::string_view bytes);

/// A layout key as 64 hex digits (kept in the study, so that a resumed study shares it again).
std::string key_to_hex(const LayoutKey& key);
LayoutKey key_from_hex(const std::string& hex);

}  // namespace dptune::host::mpi
