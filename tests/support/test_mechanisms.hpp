// Mechanisms written out in the tests (not the plugins), so that a tuner's use of the noise is
// checked against an independent implementation: the Gaussian and the Laplace mechanism.
#pragma once

#include <span>
#include <vector>

#include "dptune/dptune.hpp"

namespace dptune_test {

/// Adds Gaussian noise of standard deviation z · (L2 sensitivity) to every value.
class GaussianNoise final : public dptune::Mechanism {
 public:
  explicit GaussianNoise(double noise_multiplier) : z_(noise_multiplier) {}
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    std::vector<double> out(values.begin(), values.end());
    for (double& v : out) v += dptune::gaussian(rng, z_ * s.l2);
    return out;
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::gaussian(z_); }

 private:
  double z_;
};

/// Adds Laplace noise of scale b · (L1 sensitivity) to every value.
class LaplaceNoise final : public dptune::Mechanism {
 public:
  explicit LaplaceNoise(double b) : b_(b) {}
  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    std::vector<double> out(values.begin(), values.end());
    for (double& v : out) v += dptune::laplace(rng, b_ * s.l1);
    return out;
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::laplace(b_); }

 private:
  double b_;
};

}  // namespace dptune_test
