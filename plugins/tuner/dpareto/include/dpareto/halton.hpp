// DPareto core: scrambled Halton points (Halton 1960; random digit permutations per dimension and
// digit position, in the spirit of Braaten & Weller 1979 / Owen's permutation scrambling), the
// space-filling candidates of the acquisition optimisation.
#pragma once

#include <Eigen/Dense>
#include <cstddef>

namespace dptune {
class RandomBitGenerator;
}

namespace dptune::dpareto {

/// n points in [0, 1)^d, rows; a fresh scrambling (and a random start index) drawn from rng.
/// d ≤ 64.
Eigen::MatrixXd scrambled_halton(std::size_t n, std::size_t d, RandomBitGenerator& rng);

}  // namespace dptune::dpareto
