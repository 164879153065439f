#include "dptune/data.hpp"

namespace dptune {

std::string DataScope::to_string() const {
  switch (kind) {
    case Kind::Whole:
      return "whole";
    case Kind::Partition:
      return "partition " + std::to_string(index) + "/" + std::to_string(count);
    case Kind::Client:
      return "client " + std::to_string(index) + "/" + std::to_string(count);
    case Kind::Subsample:
      return "subsample of " + std::to_string(index) + " rows";
  }
  return "?";
}

}  // namespace dptune
