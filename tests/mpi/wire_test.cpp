// The MPI executor's messages and shared layout streams (docs/mpi.md), without MPI: every task
// field survives the trip exactly, a damaged message is an error (never a crash), and ranks that
// share the layout key draw the same split while their noise stays their own.
#include <doctest/doctest.h>
#include <sodium.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "dptune/errors.hpp"
#include "dptune/host/data_scopes.hpp"
#include "dptune/host/random.hpp"
#include "run/mpi_wire.hpp"
#include "study/study.hpp"

using namespace dptune::host;

namespace {

RemoteTask sample_task() {
  RemoteTask t;
  t.batch = 7;
  t.task = (std::uint64_t{1} << 40) + 3;
  t.request.candidate.set("learning_rate", 0.1 + 0.2);  // not a short decimal: must be exact
  t.request.candidate.set("epochs", std::int64_t{-12});
  t.request.candidate.set("momentum", true);
  t.request.candidate.set("model", std::string("mlp\n\"x\"\0y", 9));
  t.request.scope = dptune::DataScope::client(4, 9);
  t.request.private_run = false;
  t.request.repetitions = 5;
  t.request.keep_output = true;
  return t;
}

}  // namespace

TEST_CASE("mpi.wire a task survives encoding exactly") {
  const RemoteTask t = sample_task();
  std::uint64_t seq = 0;
  const RemoteTask back = mpi::decode_task(mpi::encode_task(0xabcdef0123ULL, t), seq);
  CHECK(seq == 0xabcdef0123ULL);
  CHECK(back.batch == 7);
  CHECK(back.task == t.task);
  CHECK(back.request.candidate == t.request.candidate);
  CHECK(back.request.candidate.get_double("learning_rate") == 0.1 + 0.2);
  CHECK(back.request.candidate.get_string("model").size() == 9);
  CHECK(back.request.scope.kind == dptune::DataScope::Kind::Client);
  CHECK(back.request.scope.index == 4);
  CHECK(back.request.scope.count == 9);
  CHECK_FALSE(back.request.private_run);
  CHECK(back.request.repetitions == 5);
  CHECK(back.request.keep_output);
}

TEST_CASE("mpi.wire replies carry a result or an error") {
  mpi::Reply ok;
  ok.seq = 42;
  ok.result = RemoteResult{
      .score = 0.9736842105263158, .seconds = 1.25, .model = {}, .model_stayed = false};
  const mpi::Reply a = mpi::decode_reply(mpi::encode_reply(ok));
  CHECK(a.seq == 42);
  REQUIRE(a.result);
  CHECK(a.result->score == 0.9736842105263158);
  CHECK(a.result->seconds == 1.25);
  CHECK_FALSE(a.result->model);
  CHECK_FALSE(a.result->model_stayed);
  mpi::Reply bad;
  bad.seq = 43;
  bad.error = "trainer 'dp_sgd' returned no model";
  const mpi::Reply b = mpi::decode_reply(mpi::encode_reply(bad));
  CHECK_FALSE(b.result);
  CHECK(b.error == bad.error);
  // A NaN score travels as it is (the evaluator refuses it, as for a local run).
  ok.result->score = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(mpi::decode_reply(mpi::encode_reply(ok)).result->score));
}

TEST_CASE("mpi.wire a kept model travels with its result, exact to the bit") {
  dptune::ModelExport model;
  model.kind = "network";
  model.description = "logistic regression, 3 features";
  model.features = 3;
  model.num_classes = 2;
  model.output = "sigmoid";
  model.layers.push_back({3, 1, {0.1, -2.5e-300, std::nextafter(1.0, 2.0)}, {-0.0}, "identity"});
  mpi::Reply ok;
  ok.seq = 7;
  ok.result = RemoteResult{.score = 0.5, .seconds = 2.0, .model = {}, .model_stayed = false};
  ok.result->model = encode_model(model);
  const mpi::Reply back = mpi::decode_reply(mpi::encode_reply(ok));
  REQUIRE(back.result);
  REQUIRE(back.result->model);
  const dptune::ModelExport m = decode_model(*back.result->model);
  CHECK(m.description == model.description);
  CHECK(m.features == 3);
  REQUIRE(m.layers.size() == 1);
  CHECK(m.layers[0].weights == model.layers[0].weights);
  CHECK(std::signbit(m.layers[0].bias[0]));
  // The model, read back, exports the same numbers and describes itself the same way.
  const auto restored = model_from_export(m);
  CHECK(restored->describe() == model.description);
  CHECK(restored->export_model()->layers[0].weights == model.layers[0].weights);
  // A kept model that cannot be exported is said so (rank 0 then runs the task itself).
  mpi::Reply stayed;
  stayed.result = RemoteResult{.score = 0.5, .seconds = 2.0, .model = {}, .model_stayed = false};
  stayed.result->model_stayed = true;
  const mpi::Reply s = mpi::decode_reply(mpi::encode_reply(stayed));
  CHECK(s.result->model_stayed);
  CHECK_FALSE(s.result->model);
}

TEST_CASE("mpi.wire damaged messages are errors") {
  const std::string task = mpi::encode_task(1, sample_task());
  std::uint64_t seq = 0;
  // Every truncation, and a trailing byte, is refused.
  for (std::size_t n = 0; n < task.size(); ++n)
    CHECK_THROWS_WITH_AS(mpi::decode_task(task.substr(0, n), seq),
                         doctest::Contains("malformed MPI task message"), dptune::Error);
  CHECK_THROWS_WITH_AS(mpi::decode_task(task + "x", seq), doctest::Contains("left over"),
                       dptune::Error);
  // An unknown value type (byte 8 + 8 + 8 + 8 + 8 + len("epochs") is the first value's type).
  std::string wrong = task;
  wrong[40 + 6] = 9;
  CHECK_THROWS_WITH_AS(mpi::decode_task(wrong, seq), doctest::Contains("unknown value type"),
                       dptune::Error);
  // A string length far beyond the message.
  mpi::WireWriter w;
  w.u64(1).u8(0).u64(1000);
  CHECK_THROWS_AS(mpi::decode_reply(w.bytes()), dptune::Error);
  CHECK_THROWS_AS(mpi::decode_init(std::string("\x01\x03\0\0\0\0\0\0\0abc", 12)), dptune::Error);
}

TEST_CASE("mpi.wire the layout key travels and is kept as hex") {
  LayoutKey key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<unsigned char>(i * 37 + 5);
  CHECK(mpi::decode_init(mpi::encode_init(key)) == key);
  CHECK_FALSE(mpi::decode_init(mpi::encode_init(std::nullopt)));
  const std::string hex = mpi::key_to_hex(key);
  CHECK(hex.size() == 64);
  CHECK(hex.substr(0, 6) == "052a4f");
  CHECK(mpi::key_from_hex(hex) == key);
  CHECK_THROWS_AS(mpi::key_from_hex(hex.substr(1)), dptune::Error);
  CHECK_THROWS_AS(mpi::key_from_hex("G" + hex.substr(1)), dptune::Error);
}

TEST_CASE("mpi.keyed_random is ChaCha20 of RFC 8439") {
  // RFC 8439 section 2.3.2: key 00..1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00, block counter
  // 1.  Our nonce is the stream id, little-endian, then four zero bytes; block 1 is words 8..15.
  std::array<unsigned char, 32> key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<unsigned char>(i);
  KeyedRandom rng(key, (std::uint64_t{0x4a} << 56) | (std::uint64_t{0x09} << 24));
  for (int i = 0; i < 8; ++i) rng.next_u64();
  // Serialized block: 10 f1 e7 e4 d1 3b 59 15 50 0f dd 1f a3 20 71 c4 ...
  CHECK(rng.next_u64() == 0x15593bd1e4e7f110ULL);
  CHECK(rng.next_u64() == 0xc47120a31fdd0f50ULL);
}

TEST_CASE("mpi.keyed_random ranks sharing the key draw the same layout and their own noise") {
  LayoutKey key{};
  key[0] = 1;
  LayoutKey other = key;
  other[31] = 2;
  const RandomSource a(std::nullopt, nullptr, key), b(std::nullopt, nullptr, key),
      c(std::nullopt, nullptr, other);
  CHECK(a.secure());
  for (std::uint64_t stream : {LayoutStreams::kSplit, LayoutStreams::kPartitionBase + 4,
                               LayoutStreams::kClientBase + 100}) {
    auto x = a.make(stream), y = b.make(stream), z = c.make(stream);
    std::vector<std::uint64_t> wx, wy, wz;
    for (int i = 0; i < 200; ++i) {  // across buffer refills
      wx.push_back(x->next_u64());
      wy.push_back(y->next_u64());
      wz.push_back(z->next_u64());
    }
    CHECK(wx == wy);
    CHECK(wx != wz);
    CHECK(x->cryptographically_secure());
  }
  CHECK(a.make(LayoutStreams::kSplit)->next_u64() != a.make(LayoutStreams::kSplit + 1)->next_u64());
  // The tuner's stream (0) and every run's stream ((batch + 1) << 32 | task) are not shared.
  for (std::uint64_t stream : {std::uint64_t{0}, (std::uint64_t{2} << 32) | 5})
    CHECK(a.make(stream)->next_u64() != b.make(stream)->next_u64());
}
