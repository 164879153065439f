// dptune helpers: exact samplers on the integers.
//
// The continuous samplers of rng.hpp draw doubles and transform them with log/cos; their outputs
// live on a finite, value-dependent set of floating-point numbers, which breaks differential
// privacy as implemented (Mironov 2012, "On significance of the least significant bits for
// differential privacy").  The samplers here follow Canonne, Kamath & Steinke (2020), "The Discrete
// Gaussian for Differential Privacy", Algorithms 1-3: every accept/reject decision compares random
// bits with an exact rational number in integer arithmetic, so the output distribution is exactly
// the stated one (given ideal random bits), whatever the FPU does.  No floating point is used
// anywhere.
//
// Parameters are rationals given as numerator and denominator (gamma = n/d, ...).  Randomness is
// read from the generator 64 bits at a time and consumed bit by bit, most significant bit first
// (a comparison may look at 32 bits ahead but consumes only those it needed); a single-draw call
// discards what is left in its buffer (under two words), a batch call (the span overloads) shares
// the words between its draws.  Nothing allocates.
//
// Overflow and precision: internal values are 128-bit.  Where a value could exceed its type only on
// an event of astronomically small probability (below e^-128 per draw, documented per function),
// the sampler throws dptune::Error instead of returning a wrong value; it never silently wraps.
// Bernoulli(exp(-1)), the step of every geometric count, compares random bits with the first 128
// bits of the expansion of exp(-1) (computed exactly offline); if all 128 tie (probability 2^-128
// per comparison) it throws rather than guess the 129th.  From scale 256 on (discrete Laplace scale
// numerator, discrete Gaussian sigma >= 255), every Bernoulli(exp(-x)) of Algorithms 2-3 is
// the product of floor(x) Bernoulli(exp(-1)), one Bernoulli(exp(-j/256)) compared in the same way
// with 128 exact bits of exp(-j/256) (a table), and Algorithm 1 on the rest below 2^-8, which
// mostly ends after eight random bits: the same law, fewer divisions and branches.
#pragma once

#include <cstdint>
#include <span>

#include "dptune/abi.hpp"

namespace dptune {

class RandomBitGenerator;

/// Uniform integer in [0, m), m >= 1, without modulo bias: ceil(log2 m) fresh bits, rejected and
/// redrawn while >= m (fewer than 2 rounds on average).  m == 1 returns 0 and reads no bits.
std::uint64_t uniform_below(RandomBitGenerator& rng, std::uint64_t m);
void uniform_below(RandomBitGenerator& rng, std::uint64_t m, std::span<std::uint64_t> out);

/// Bernoulli(exp(-gamma)) for gamma = gamma_num / gamma_den >= 0 (CKS 2020, Algorithm 1; gamma > 1
/// as the product of floor(gamma) Bernoulli(exp(-1)) and one Bernoulli(exp(-frac(gamma)))).
/// Any gamma_num; gamma_den >= 1.  Returns true with probability exactly exp(-gamma) (for
/// gamma >= 1 it may throw, with probability at most 2^-128 per unit of gamma; see above).
bool bernoulli_exp(RandomBitGenerator& rng, std::uint64_t gamma_num, std::uint64_t gamma_den);

/// Discrete Laplace with scale t = scale_num / scale_den: P(k) ∝ exp(-|k| / t) on the integers
/// (CKS 2020, Algorithm 2).  Supported: 1 <= scale_num <= 2^56, scale_den >= 1 (so that the
/// geometric part overflows int64 only with probability below e^-128, in which case it throws).
std::int64_t discrete_laplace(RandomBitGenerator& rng, std::uint64_t scale_num,
                              std::uint64_t scale_den);
void discrete_laplace(RandomBitGenerator& rng, std::uint64_t scale_num, std::uint64_t scale_den,
                      std::span<std::int64_t> out);

/// Discrete Gaussian with sigma^2 = sigma2_num / sigma2_den: P(k) ∝ exp(-k^2 / (2 sigma^2)) on the
/// integers (CKS 2020, Algorithm 3: discrete Laplace proposals of scale t = floor(sigma) + 1, from
/// sigma >= 255 on the power of two nearest sigma, accepted with Bernoulli(exp(-(|k| -
/// sigma^2/t)^2 / (2 sigma^2))), exact for any t).  Supported: 0 <= sigma2_num <= 2^48,
/// 1 <= sigma2_den <= 2^48 (sigma up to 2^24); sigma2_num == 0 returns 0.  Note that the
/// variance of the discrete Gaussian is slightly below sigma^2 (CKS 2020, Corollary 9).
std::int64_t discrete_gaussian(RandomBitGenerator& rng, std::uint64_t sigma2_num,
                               std::uint64_t sigma2_den);
void discrete_gaussian(RandomBitGenerator& rng, std::uint64_t sigma2_num, std::uint64_t sigma2_den,
                       std::span<std::int64_t> out);

/// The same two laws drawn by a faster exact method (the block-table sampler of discrete.cpp:
/// rejection from a piecewise-constant envelope with integer weights, chosen by an alias table;
/// every decision an integer comparison of random bits, exact up to a thrown Error of probability
/// below 2^-110 per draw where 128 bits of an exponential would not suffice).  Faster than the
/// functions above (Gaussian about 6-9 times at sigma = 2^22 and 12-17 times at sigma = 10,
/// Laplace 3-4 times; bench/discrete/README.md) and about 30 random bits per draw at sigma = 2^22
/// (the functions above: about 77); the outputs differ from theirs draw by draw, the law does not.
/// The same parameter ranges and refusals as above.  The first call with new parameters builds a
/// table (a few milliseconds); each thread keeps the last four.
std::int64_t discrete_gaussian_tabled(RandomBitGenerator& rng, std::uint64_t sigma2_num,
                                      std::uint64_t sigma2_den);
void discrete_gaussian_tabled(RandomBitGenerator& rng, std::uint64_t sigma2_num,
                              std::uint64_t sigma2_den, std::span<std::int64_t> out);
std::int64_t discrete_laplace_tabled(RandomBitGenerator& rng, std::uint64_t scale_num,
                                     std::uint64_t scale_den);
void discrete_laplace_tabled(RandomBitGenerator& rng, std::uint64_t scale_num,
                             std::uint64_t scale_den, std::span<std::int64_t> out);

/// The documented limits above, for callers that pick parameters (e.g. a grid).
inline constexpr std::uint64_t kDiscreteLaplaceMaxScaleNum = std::uint64_t{1} << 56;
inline constexpr std::uint64_t kDiscreteGaussianMaxTerm = std::uint64_t{1} << 48;

}  // namespace dptune
