#include "dptune/helpers/format.hpp"

#include <sstream>

namespace dptune {

std::string significant_digits(double x, int digits) {
  std::ostringstream s;
  s.precision(digits);
  s << x;
  return s.str();
}

}  // namespace dptune
