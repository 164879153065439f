// Shamir secret sharing (Shamir 1979) over the prime field GF(p), p = 2^61 - 1 (a Mersenne prime,
// so reduction is a shift and an add).  Used by the secure aggregation of DP-Hype (Bonawitz et al.
// 2017, §4) to share each client's X25519 mask key and self-mask seed among its neighbours, so that
// the server can remove the masks of clients that drop out after key exchange.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dptune {
class RandomBitGenerator;
}

namespace dptune::dp_hype::shamir {

inline constexpr std::uint64_t kPrime = (std::uint64_t{1} << 61) - 1;

std::uint64_t add(std::uint64_t a, std::uint64_t b);
std::uint64_t sub(std::uint64_t a, std::uint64_t b);
std::uint64_t mul(std::uint64_t a, std::uint64_t b);
/// a^(p-2): the inverse of a ≠ 0 (Fermat).
std::uint64_t inverse(std::uint64_t a);
/// Uniform field element (rejection sampling of 61-bit words).
std::uint64_t random_element(dptune::RandomBitGenerator& rng);

/// A 32-byte secret (an X25519 secret key or a ChaCha20 seed) as 5 field elements of 7 bytes each
/// (the last holds 4): 5 * 56 bits ≥ 256 and every chunk < 2^56 < p.
inline constexpr std::size_t kChunks = 5;
using Secret = std::array<std::uint8_t, 32>;
using Chunks = std::array<std::uint64_t, kChunks>;
Chunks to_chunks(const Secret& secret);
/// Throws dptune::Error if a chunk does not encode bytes of a 32-byte secret (corrupted shares).
Secret from_chunks(const Chunks& chunks);

/// One share: the evaluation at x ≠ 0 of the sharing polynomials (one per chunk).
struct Share {
  std::uint64_t x = 0;
  Chunks y{};
};

/// Shares `secret` with threshold t (any t shares reconstruct, t - 1 reveal nothing) at the
/// distinct non-zero points `xs`.  Random polynomials of degree t - 1 with constant term the
/// secret. Throws dptune::InvalidArgument if t == 0, t > xs.size(), or a point is 0, ≥ p or
/// repeated.
std::vector<Share> split(const Secret& secret, std::size_t threshold,
                         std::span<const std::uint64_t> xs, dptune::RandomBitGenerator& rng);

/// Lagrange interpolation at 0 from the first `threshold` shares.  Throws dptune::Error with a
/// clear message if fewer than `threshold` shares are given or two share the same point.
Secret reconstruct(std::span<const Share> shares, std::size_t threshold);

/// Lagrange coefficients λ_i with f(0) = Σ λ_i f(x_i) for the given distinct points.
std::vector<std::uint64_t> lagrange_at_zero(std::span<const std::uint64_t> xs);

}  // namespace dptune::dp_hype::shamir
