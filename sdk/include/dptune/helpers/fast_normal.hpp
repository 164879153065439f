// dptune helpers: fast floating-point standard normals for `noise: fast` (insecure by design: a
// floating-point sampler has a finite, value-dependent support, Mironov 2012; the secure path is
// grid_noise.hpp).
//
// The ziggurat method (Marsaglia & Tsang 2000, "The Ziggurat Method for Generating Random
// Variables", J. Stat. Software 5(8)), 256 layers: the area under f(x) = exp(-x²/2), x >= 0, is
// covered by 255 rectangles and a base strip of equal area v; a draw picks a layer and a point in
// it with ONE 64-bit word (8 bits layer, 1 bit sign, 53 bits position) and is accepted at once
// when the point lies inside the next layer's width (about 99% of draws): one multiplication and
// one comparison, no logarithm.  The rest are the wedge test (one exp) and the tail beyond r
// (Marsaglia 1964: x = -ln(U1)/r, accepted when -2 ln(U2) > x²).  Every word comes from the
// caller's generator, so a seeded run draws the same normals on every machine with the same libm
// (the tables use exp/log/sqrt at set-up).
//
// Header only (inline, no exported symbol): plugins compile it in; it changes no ABI.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "dptune/rng.hpp"

namespace dptune {

class ZigguratNormal {
 public:
  /// The shared tables (built once, thread-safe static initialisation).
  static const ZigguratNormal& instance() {
    static const ZigguratNormal tables;
    return tables;
  }

  /// One standard normal.
  double operator()(RandomBitGenerator& rng) const {
    for (;;) {
      const std::uint64_t word = rng.next_u64();
      const auto layer = static_cast<unsigned>(word & 0xFFU);
      const double u = static_cast<double>(word >> 11) * 0x1.0p-53;  // [0, 1)
      const double x = u * width_[layer];
      const double sign = (word & 0x100U) != 0 ? -1.0 : 1.0;
      if (x < width_[layer + 1]) return sign * x;  // inside the layer above: accepted
      if (layer == 0) return sign * tail(rng);
      // The wedge between the two widths: a uniform height in the layer, kept under the curve.
      const double height = height_[layer] + uniform01(rng) * (height_[layer + 1] - height_[layer]);
      if (height < std::exp(-0.5 * x * x)) return sign * x;
    }
  }

  /// values[i] += sd · N(0, 1), one normal per value in order.
  void add_to(RandomBitGenerator& rng, double sd, std::span<double> values) const {
    for (double& v : values) v += sd * (*this)(rng);
  }

 private:
  // r and v for 256 layers (Marsaglia & Tsang 2000, section 3): v = r f(r) + ∫_r^∞ f.
  static constexpr double kR = 3.6541528853610088;
  static constexpr double kV = 4.92867323399e-3;

  ZigguratNormal() {
    // width_[i] is the right edge of layer i; layer 0 is the base strip, whose pseudo-width
    // v / f(r) makes its area v (the tail is drawn separately); height_[i] = f(width_[i]).
    const double fr = std::exp(-0.5 * kR * kR);
    width_[0] = kV / fr;
    width_[1] = kR;
    height_[0] = 0;
    height_[1] = fr;
    for (int i = 1; i < 255; ++i) {
      height_[i + 1] = height_[i] + kV / width_[i];  // equal areas: width · (height step) = v
      width_[i + 1] = std::sqrt(-2.0 * std::log(height_[i + 1]));
    }
    width_[256] = 0;
    height_[256] = 1;
  }

  /// A standard normal conditioned on x > r (Marsaglia 1964).
  static double tail(RandomBitGenerator& rng) {
    for (;;) {
      const double x = -std::log(uniform_open01(rng)) / kR;
      const double y = -std::log(uniform_open01(rng));
      if (2 * y > x * x) return kR + x;
    }
  }

  double width_[257];
  double height_[257];
};

}  // namespace dptune
