// The secure stream's ChaCha20 (framework/src/base/random.cpp): the AVX-512 kernel that computes 16
// blocks at once against RFC 8439's known answers and, byte for byte, against libsodium's ChaCha20,
// which computed the stream before it (the stream of a key must not change).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/host/random.hpp"
#include "dptune/rng.hpp"

namespace {

using Key = std::array<unsigned char, 32>;
using Nonce = std::array<unsigned char, 12>;

std::vector<unsigned char> keystream(const Key& key, const Nonce& nonce, std::uint32_t counter,
                                     std::size_t bytes, bool allow_vector) {
  std::vector<unsigned char> out(bytes, 0xA5);
  dptune::host::chacha20_keystream(key, nonce, counter, out, allow_vector);
  return out;
}

Key counting_key() {
  Key key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<unsigned char>(i);
  return key;
}

}  // namespace

TEST_CASE("secure random: the vectorised ChaCha20 gives RFC 8439's known answers") {
  MESSAGE("AVX-512 kernel on this CPU: " << dptune::host::chacha20_vectorised());
  for (const bool allow_vector : {true, false}) {
    CAPTURE(allow_vector);
    // RFC 8439, Appendix A.1, test vector #1: key and nonce zero, block counter 0.
    const std::vector<unsigned char> zero = keystream(Key{}, Nonce{}, 0, 16 * 64, allow_vector);
    const std::array<unsigned char, 64> zero_block = {
        0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53,
        0x86, 0xbd, 0x28, 0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d, 0xed, 0x1a, 0xa8, 0x36,
        0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7, 0xda, 0x41, 0x59, 0x7c, 0x51, 0x57, 0x48,
        0x8d, 0x77, 0x24, 0xe0, 0x3f, 0xb8, 0xd8, 0x4a, 0x37, 0x6a, 0x43, 0xb8, 0xf4,
        0x15, 0x18, 0xa1, 0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86};
    CHECK(std::equal(zero_block.begin(), zero_block.end(), zero.begin()));
    // RFC 8439, section 2.3.2: key 00 01 .. 1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00,
    // block counter 1 (the first lane of a 16-block run; the other lanes are compared with
    // libsodium below).
    const Nonce nonce = {0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0};
    const std::array<unsigned char, 64> block = {
        0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3,
        0x20, 0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22,
        0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa,
        0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1,
        0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
    const std::vector<unsigned char> first =
        keystream(counting_key(), nonce, 1, 16 * 64, allow_vector);
    CHECK(std::equal(block.begin(), block.end(), first.begin()));
  }
}

TEST_CASE("secure random: the vectorised ChaCha20 is libsodium's keystream byte for byte") {
  // Keys and nonces from a seeded generator; lengths around the 16-block runs (a part-block
  // end, the 4 KiB + 32 of SecureRandom's refill) and counters up to the last block.
  dptune::Xoshiro256 rng(29, 7);
  for (int round = 0; round < 8; ++round) {
    Key key{};
    Nonce nonce{};
    for (auto& byte : key) byte = static_cast<unsigned char>(rng.next_u64());
    for (auto& byte : nonce) byte = static_cast<unsigned char>(rng.next_u64());
    for (const std::size_t bytes : {std::size_t{1}, std::size_t{1023}, std::size_t{1024},
                                    std::size_t{1025}, std::size_t{4128}, std::size_t{5000}}) {
      for (const std::uint32_t counter : {0U, 1U, 77U, 0xFFFFFFFFU - 80U}) {
        CAPTURE(round);
        CAPTURE(bytes);
        CAPTURE(counter);
        CHECK(keystream(key, nonce, counter, bytes, true) ==
              keystream(key, nonce, counter, bytes, false));
      }
    }
  }
}

TEST_CASE("secure random: the ChaCha20 keystream refuses a block counter that would wrap") {
  std::vector<unsigned char> out(2 * 64);
  CHECK_NOTHROW(dptune::host::chacha20_keystream(Key{}, Nonce{}, 0xFFFFFFFEU, out));
  CHECK_THROWS_AS(dptune::host::chacha20_keystream(Key{}, Nonce{}, 0xFFFFFFFFU, out),
                  dptune::Error);
}
