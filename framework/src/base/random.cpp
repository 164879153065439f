#include "dptune/host/random.hpp"

#include <sodium.h>

#include <cstring>

#include "dptune/errors.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DPTUNE_CHACHA20_AVX512 1
#endif

namespace dptune::host {

namespace {
void ensure_sodium() {
  // sodium_init is idempotent and thread-safe; it returns 1 when already initialised.
  static const int status = sodium_init();
  if (status < 0)
    throw dptune::Error("libsodium failed to initialise: no secure randomness available");
}

constexpr std::size_t kBlockBytes = 64;
constexpr std::size_t kVectorBlocks = 16;

#ifdef DPTUNE_CHACHA20_AVX512
// g++ 12's _mm512_rol_epi32 passes an undefined register as its unused merge source, which
// -Wuninitialized reports at every call; nothing uninitialised is read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// RFC 8439, section 2.1, on 16 states at once (x[i]: word i of each).
__attribute__((target("avx512f"), always_inline)) inline void chacha20_quarter_round(__m512i* x,
                                                                                     int a, int b,
                                                                                     int c, int d) {
  x[a] = _mm512_add_epi32(x[a], x[b]);
  x[d] = _mm512_rol_epi32(_mm512_xor_si512(x[d], x[a]), 16);
  x[c] = _mm512_add_epi32(x[c], x[d]);
  x[b] = _mm512_rol_epi32(_mm512_xor_si512(x[b], x[c]), 12);
  x[a] = _mm512_add_epi32(x[a], x[b]);
  x[d] = _mm512_rol_epi32(_mm512_xor_si512(x[d], x[a]), 8);
  x[c] = _mm512_add_epi32(x[c], x[d]);
  x[b] = _mm512_rol_epi32(_mm512_xor_si512(x[b], x[c]), 7);
}

/// ChaCha20 (Nir & Langley, RFC 8439, sections 2.1-2.4) of the 16 blocks `counter` ..
/// `counter` + 15 of one key and nonce, one block per 32-bit lane of an AVX-512 register
/// (register i holds word i of the 16 states), written to `out` in block order as the scalar
/// definition writes them; the caller keeps `counter` + 15 below 2^32.  The rounds are the RFC's
/// quarter rounds word for word; the transpose at the end (two unpack stages, then 128-bit lanes
/// exchanged twice) only moves words.  Compiled for AVX-512F alone and called only when the CPU
/// has it, so a portable build stays portable.
__attribute__((target("avx512f"))) void chacha20_16_blocks(const std::uint32_t input[16],
                                                           std::uint32_t counter,
                                                           unsigned char* out) {
  __m512i start[16], x[16];
  for (int i = 0; i < 16; ++i) start[i] = _mm512_set1_epi32(static_cast<int>(input[i]));
  start[12] =
      _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(counter)),
                       _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  for (int i = 0; i < 16; ++i) x[i] = start[i];
  for (int double_round = 0; double_round < 10; ++double_round) {
    chacha20_quarter_round(x, 0, 4, 8, 12);  // columns
    chacha20_quarter_round(x, 1, 5, 9, 13);
    chacha20_quarter_round(x, 2, 6, 10, 14);
    chacha20_quarter_round(x, 3, 7, 11, 15);
    chacha20_quarter_round(x, 0, 5, 10, 15);  // diagonals
    chacha20_quarter_round(x, 1, 6, 11, 12);
    chacha20_quarter_round(x, 2, 7, 8, 13);
    chacha20_quarter_round(x, 3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) x[i] = _mm512_add_epi32(x[i], start[i]);
  // Transpose: after the unpacks, 128-bit lane L of x[4g + k] holds words 4g .. 4g + 3 of block
  // 4L + k; block 4L + k is then lane L of x[k], x[4 + k], x[8 + k], x[12 + k].
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(x[i], x[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(x[i], x[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    x[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    x[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    x[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    x[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512i low_ab = _mm512_shuffle_i32x4(x[k], x[4 + k], 0x44);  // lanes a0 a1 b0 b1
    const __m512i high_ab = _mm512_shuffle_i32x4(x[k], x[4 + k], 0xEE);
    const __m512i low_cd = _mm512_shuffle_i32x4(x[8 + k], x[12 + k], 0x44);
    const __m512i high_cd = _mm512_shuffle_i32x4(x[8 + k], x[12 + k], 0xEE);
    _mm512_storeu_si512(out + kBlockBytes * k, _mm512_shuffle_i32x4(low_ab, low_cd, 0x88));
    _mm512_storeu_si512(out + kBlockBytes * (4 + k), _mm512_shuffle_i32x4(low_ab, low_cd, 0xDD));
    _mm512_storeu_si512(out + kBlockBytes * (8 + k), _mm512_shuffle_i32x4(high_ab, high_cd, 0x88));
    _mm512_storeu_si512(out + kBlockBytes * (12 + k), _mm512_shuffle_i32x4(high_ab, high_cd, 0xDD));
  }
}

#pragma GCC diagnostic pop

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") != 0;
  return has;
}
#endif

std::uint32_t load_le32(const unsigned char* bytes) {
  return std::uint32_t{bytes[0]} | std::uint32_t{bytes[1]} << 8 | std::uint32_t{bytes[2]} << 16 |
         std::uint32_t{bytes[3]} << 24;
}
}  // namespace

bool chacha20_vectorised() {
#ifdef DPTUNE_CHACHA20_AVX512
  return cpu_has_avx512();
#else
  return false;
#endif
}

void chacha20_keystream(const std::array<unsigned char, 32>& key,
                        const std::array<unsigned char, 12>& nonce, std::uint32_t counter,
                        std::span<unsigned char> out, bool allow_vector) {
  ensure_sodium();
  const std::size_t blocks = (out.size() + kBlockBytes - 1) / kBlockBytes;
  if (blocks > std::size_t{UINT32_MAX} - counter + 1)
    throw dptune::Error("chacha20_keystream: the 32-bit block counter would wrap");
  std::size_t done = 0;
#ifdef DPTUNE_CHACHA20_AVX512
  if (allow_vector && cpu_has_avx512()) {
    // The state of RFC 8439, section 2.3: constants, key, counter, nonce (little-endian words).
    std::uint32_t input[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    for (std::size_t i = 0; i < 8; ++i) input[4 + i] = load_le32(key.data() + 4 * i);
    for (std::size_t i = 0; i < 3; ++i) input[13 + i] = load_le32(nonce.data() + 4 * i);
    for (; out.size() - done >= kVectorBlocks * kBlockBytes; done += kVectorBlocks * kBlockBytes) {
      chacha20_16_blocks(input, counter, out.data() + done);
      counter += kVectorBlocks;
    }
    sodium_memzero(input, sizeof input);
  }
#else
  (void)allow_vector;
#endif
  if (done == out.size()) return;
  std::memset(out.data() + done, 0, out.size() - done);
  crypto_stream_chacha20_ietf_xor_ic(out.data() + done, out.data() + done, out.size() - done,
                                     nonce.data(), counter, key.data());
}

SecureRandom::SecureRandom() {
  ensure_sodium();
  randombytes_buf(key_.data(), key_.size());
}

SecureRandom::~SecureRandom() {
  sodium_memzero(key_.data(), key_.size());
  sodium_memzero(buffer_, sizeof buffer_);
}

std::uint64_t SecureRandom::next_u64() {
  if (next_ == kWords) {
    // One key per run, so the all-zero nonce never repeats under a key; the old key is
    // overwritten at once (fast key erasure).
    // The same keystream as libsodium's crypto_stream_chacha20_ietf, 16 blocks at a time where
    // the CPU has AVX-512 (test: "secure random: the vectorised ChaCha20 ...").
    static_assert(sizeof buffer_ - kWords * 8 == crypto_stream_chacha20_ietf_KEYBYTES);
    const std::array<unsigned char, crypto_stream_chacha20_ietf_NONCEBYTES> nonce{};
    auto* bytes = reinterpret_cast<unsigned char*>(buffer_);
    chacha20_keystream(key_, nonce, 0, std::span(bytes, sizeof buffer_));
    std::memcpy(key_.data(), bytes + kWords * 8, key_.size());
    sodium_memzero(bytes + kWords * 8, key_.size());
    next_ = 0;
  }
  const std::uint64_t word = buffer_[next_];
  buffer_[next_++] = 0;  // a handed-out word does not stay in memory
  return word;
}

std::string SecureRandom::description() const {
  return std::string("libsodium ChaCha20, fast key erasure, keyed from randombytes (") +
         randombytes_implementation_name() + ", cryptographically secure)";
}

KeyedRandom::KeyedRandom(const std::array<unsigned char, 32>& key, std::uint64_t stream)
    : key_(key) {
  ensure_sodium();
  static_assert(sizeof nonce_ == crypto_stream_chacha20_ietf_NONCEBYTES);
  static_assert(sizeof key_ == crypto_stream_chacha20_ietf_KEYBYTES);
  for (std::size_t i = 0; i < 8; ++i) nonce_[i] = static_cast<unsigned char>(stream >> (8 * i));
}

std::uint64_t KeyedRandom::next_u64() {
  if (next_ == std::size(buffer_)) {
    // 512 bytes = 8 ChaCha20 blocks from block counter block_; 2^32 blocks (256 GiB) per stream.
    constexpr std::uint32_t kBlocks = sizeof buffer_ / 64;
    if (block_ > UINT32_MAX - kBlocks) throw dptune::Error("keyed random stream exhausted");
    std::memset(buffer_, 0, sizeof buffer_);
    auto* bytes = reinterpret_cast<unsigned char*>(buffer_);
    crypto_stream_chacha20_ietf_xor_ic(bytes, bytes, sizeof buffer_, nonce_.data(), block_,
                                       key_.data());
    block_ += kBlocks;
    next_ = 0;
  }
  return buffer_[next_++];
}

std::string KeyedRandom::description() const {
  return "ChaCha20 keystream under a shared secret key (cryptographically secure)";
}

std::unique_ptr<dptune::RandomBitGenerator> RandomSource::make(std::uint64_t stream) const {
  std::unique_ptr<dptune::RandomBitGenerator> fresh;
  if (seed_)
    fresh = std::make_unique<dptune::Xoshiro256>(*seed_, stream);
  else if (layout_key_ && stream != 0 && stream < (std::uint64_t{1} << 32))
    fresh = std::make_unique<KeyedRandom>(*layout_key_, stream);
  else
    fresh = std::make_unique<SecureRandom>();
  if (recorder_ && stream < (std::uint64_t{1} << 32))
    return recorder_->wrap(stream, std::move(fresh));
  return fresh;
}

std::string RandomSource::description() const {
  if (seed_)
    return "xoshiro256** seeded with " + std::to_string(*seed_) +
           " (deterministic, NOT cryptographically secure: for tests and reproducible experiments)";
  return SecureRandom().description();
}

}  // namespace dptune::host
