#include "run/mpi_wire.hpp"

#include <bit>

#include "dptune/errors.hpp"

namespace dptune::host::mpi {

const char* tag_name(int tag) {
  switch (tag) {
    case kInit:
      return "init";
    case kHello:
      return "hello";
    case kTask:
      return "task";
    case kResult:
      return "result";
    case kFail:
      return "fail";
    case kBeat:
      return "heartbeat";
    case kBye:
      return "bye";
    case kStop:
      return "stop";
    case kPeer:
      return "peer";
    default:
      return "unknown";
  }
}

WireWriter& WireWriter::u8(std::uint8_t v) {
  out_.push_back(static_cast<char>(v));
  return *this;
}

WireWriter& WireWriter::u64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return *this;
}

WireWriter& WireWriter::f64(double v) { return u64(std::bit_cast<std::uint64_t>(v)); }

WireWriter& WireWriter::str(std::string_view v) {
  u64(v.size());
  out_.append(v);
  return *this;
}

std::string_view WireReader::take(std::size_t n) {
  if (n > in_.size() - at_)
    throw dptune::Error("malformed MPI " + what_ + " message: " + std::to_string(in_.size()) +
                        " bytes, truncated at byte " + std::to_string(at_));
  const std::string_view out = in_.substr(at_, n);
  at_ += n;
  return out;
}

std::uint8_t WireReader::u8() { return static_cast<std::uint8_t>(take(1)[0]); }

std::uint64_t WireReader::u64() {
  const std::string_view b = take(8);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(b[i])} << (8 * i);
  return v;
}

double WireReader::f64() { return std::bit_cast<double>(u64()); }

std::string WireReader::str() { return std::string(take(u64())); }

void WireReader::end() const {
  if (at_ != in_.size())
    throw dptune::Error("malformed MPI " + what_ + " message: " + std::to_string(in_.size() - at_) +
                        " bytes left over");
}

namespace {

void write_value(WireWriter& w, const dptune::Value& v) {
  w.u8(static_cast<std::uint8_t>(v.index()));
  if (const auto* d = std::get_if<double>(&v))
    w.f64(*d);
  else if (const auto* i = std::get_if<std::int64_t>(&v))
    w.u64(static_cast<std::uint64_t>(*i));
  else if (const auto* b = std::get_if<bool>(&v))
    w.u8(*b ? 1 : 0);
  else
    w.str(std::get<std::string>(v));
}

dptune::Value read_value(WireReader& r) {
  switch (r.u8()) {
    case 0:
      return r.f64();
    case 1:
      return static_cast<std::int64_t>(r.u64());
    case 2:
      return r.u8() != 0;
    case 3:
      return r.str();
    default:
      throw dptune::Error("malformed MPI task message: unknown value type");
  }
}

}  // namespace

std::string encode_task(std::uint64_t seq, const RemoteTask& task) {
  WireWriter w;
  w.u64(seq).u64(task.batch).u64(task.task);
  const dptune::EvaluationRequest& q = task.request;
  w.u64(q.candidate.size());
  for (const auto& [name, value] : q.candidate) {
    w.str(name);
    write_value(w, value);
  }
  w.u8(static_cast<std::uint8_t>(q.scope.kind)).u64(q.scope.index).u64(q.scope.count);
  w.u8(q.private_run ? 1 : 0).u64(q.repetitions).u8(q.keep_output ? 1 : 0);
  return w.bytes();
}

RemoteTask decode_task(std::string_view bytes, std::uint64_t& seq) {
  WireReader r(bytes, "task");
  RemoteTask task;
  seq = r.u64();
  task.batch = r.u64();
  task.task = r.u64();
  const std::uint64_t n = r.u64();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string name = r.str();
    task.request.candidate.set(name, read_value(r));
  }
  const std::uint8_t kind = r.u8();
  if (kind > static_cast<std::uint8_t>(dptune::DataScope::Kind::Subsample))
    throw dptune::Error("malformed MPI task message: unknown data scope");
  task.request.scope.kind = static_cast<dptune::DataScope::Kind>(kind);
  task.request.scope.index = r.u64();
  task.request.scope.count = r.u64();
  task.request.private_run = r.u8() != 0;
  task.request.repetitions = r.u64();
  task.request.keep_output = r.u8() != 0;
  r.end();
  return task;
}

std::string encode_reply(const Reply& reply) {
  WireWriter w;
  w.u64(reply.seq);
  if (reply.result) {
    const RemoteResult& r = *reply.result;
    w.u8(1).f64(r.score).f64(r.seconds).u8(r.model_stayed ? 1 : 0).u8(r.model ? 1 : 0);
    if (r.model) w.str(*r.model);
  } else {
    w.u8(0).str(reply.error);
  }
  return w.bytes();
}

Reply decode_reply(std::string_view bytes) {
  WireReader r(bytes, "result");
  Reply reply;
  reply.seq = r.u64();
  if (r.u8()) {
    RemoteResult result;
    result.score = r.f64();
    result.seconds = r.f64();
    result.model_stayed = r.u8() != 0;
    if (r.u8()) result.model = r.str();
    reply.result = std::move(result);
  } else {
    reply.error = r.str();
  }
  r.end();
  return reply;
}

std::string encode_init(const std::optional<LayoutKey>& key) {
  WireWriter w;
  w.u8(key ? 1 : 0);
  if (key) w.str(std::string_view(reinterpret_cast<const char*>(key->data()), key->size()));
  return w.bytes();
}

std::optional<LayoutKey> decode_init(std::string_view bytes) {
  WireReader r(bytes, "init");
  std::optional<LayoutKey> key;
  if (r.u8()) {
    const std::string k = r.str();
    if (k.size() != LayoutKey{}.size())
      throw dptune::Error("malformed MPI init message: a key of " + std::to_string(k.size()) +
                          " bytes");
    key.emplace();
    for (std::size_t i = 0; i < k.size(); ++i) (*key)[i] = static_cast<unsigned char>(k[i]);
  }
  r.end();
  return key;
}

std::string key_to_hex(const LayoutKey& key) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : key) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

LayoutKey key_from_hex(const std::string& hex) {
  LayoutKey key{};
  const auto nibble = [&](char c) -> unsigned {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    throw dptune::Error("the study's MPI layout key is not 64 hex digits");
  };
  if (hex.size() != 2 * key.size())
    throw dptune::Error("the study's MPI layout key is not 64 hex digits");
  for (std::size_t i = 0; i < key.size(); ++i)
    key[i] = static_cast<unsigned char>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  return key;
}

}  // namespace dptune::host::mpi
