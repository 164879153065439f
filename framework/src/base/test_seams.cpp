#include "base/test_seams.hpp"

namespace dptune::host {

TestSeams& test_seams() {
  static TestSeams seams;
  return seams;
}

}  // namespace dptune::host
