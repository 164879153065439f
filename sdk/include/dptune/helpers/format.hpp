// dptune helpers: numbers as the plugins' notes and reasons print them.
#pragma once

#include <string>

namespace dptune {

/// `x` with at most `digits` significant digits and no trailing zeros, as a person reads it in a
/// note or an error ("0.1", "1e-05", "12.3457" for 6 digits); machine files keep full precision.
std::string significant_digits(double x, int digits = 6);

}  // namespace dptune
