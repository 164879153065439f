#include "dpareto/halton.hpp"

#include <numeric>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune::dpareto {

namespace {

constexpr unsigned kPrimes[64] = {2,   3,   5,   7,   11,  13,  17,  19,  23,  29,  31,  37,  41,
                                  43,  47,  53,  59,  61,  67,  71,  73,  79,  83,  89,  97,  101,
                                  103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167,
                                  173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239,
                                  241, 251, 257, 263, 269, 271, 277, 281, 283, 293, 307, 311};
constexpr std::size_t kDigits = 24;  // enough for 2^24 points in base 2; more in larger bases

}  // namespace

Eigen::MatrixXd scrambled_halton(std::size_t n, std::size_t d, RandomBitGenerator& rng) {
  require(d >= 1 && d <= 64, "Halton: 1 to 64 dimensions");
  Eigen::MatrixXd out(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
  // A random start skips the (unscrambled-looking) beginning and varies the set between calls.
  const std::uint64_t start = uniform_index(rng, 1u << 20);
  for (std::size_t j = 0; j < d; ++j) {
    const unsigned base = kPrimes[j];
    // One random permutation of the digits per digit position (Fisher–Yates on our own RNG).
    std::vector<std::vector<unsigned>> perm(kDigits, std::vector<unsigned>(base));
    for (auto& p : perm) {
      std::iota(p.begin(), p.end(), 0u);
      for (std::size_t k = base - 1; k > 0; --k) std::swap(p[k], p[uniform_index(rng, k + 1)]);
    }
    // Digits of the index kept as an odometer (incremented with carries) instead of recomputed by
    // divisions for every point: the divisions were most of the cost.  Only digits whose weight
    // b^{-(k+1)} is above 1e-17 matter in double precision.
    std::size_t digits = 0;
    for (double scale = 1.0 / base; digits < kDigits && scale >= 1e-17; scale /= base) ++digits;
    std::vector<double> weight(digits);
    weight[0] = 1.0 / base;
    for (std::size_t k = 1; k < digits; ++k) weight[k] = weight[k - 1] / base;
    std::vector<unsigned> digit(digits, 0);
    std::uint64_t index = start;
    for (std::size_t k = 0; k < digits; ++k) {
      digit[k] = static_cast<unsigned>(index % base);
      index /= base;
    }
    for (std::size_t i = 0; i < n; ++i) {
      // Permuting the trailing zero digits too makes every point a random point of its
      // elementary interval rather than its left end.
      double value = 0;
      for (std::size_t k = 0; k < digits; ++k) value += perm[k][digit[k]] * weight[k];
      out(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = value;
      for (std::size_t k = 0; k < digits; ++k) {
        if (++digit[k] < base) break;
        digit[k] = 0;
      }
    }
  }
  return out;
}

}  // namespace dptune::dpareto
