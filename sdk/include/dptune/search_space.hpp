// dptune SDK: SearchSpace in Optuna's vocabulary: float (optionally log), int (optionally log or
// stepped) and categorical dimensions.  Bounds are inclusive.
#pragma once

#include <boost/config.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "dptune/params.hpp"

namespace dptune {

class RandomBitGenerator;

struct BOOST_SYMBOL_VISIBLE Dimension {
  enum class Kind { Float, Int, Categorical };
  std::string name;
  Kind kind = Kind::Float;
  double low = 0, high = 0;    // Float and Int, inclusive
  bool log = false;            // sample and map uniformly in log space (low > 0)
  std::int64_t step = 1;       // Int only: values low, low+step, ... <= high
  double float_step = 0;       // Float only: 0 = continuous
  std::vector<Value> choices;  // Categorical only

  /// Number of distinct values; 0 for a continuous float.
  std::size_t cardinality() const;
};

class BOOST_SYMBOL_VISIBLE SearchSpace {
 public:
  // Builders validate (low < high, log needs low > 0, step > 0, non-empty distinct choices) and
  // throw InvalidArgument naming the dimension.
  SearchSpace& add_float(std::string name, double low, double high, bool log = false,
                         double step = 0);
  SearchSpace& add_int(std::string name, std::int64_t low, std::int64_t high, bool log = false,
                       std::int64_t step = 1);
  SearchSpace& add_categorical(std::string name, std::vector<Value> choices);

  const std::vector<Dimension>& dimensions() const { return dims_; }
  std::size_t size() const { return dims_.size(); }
  bool empty() const { return dims_.empty(); }
  const Dimension* find(const std::string& name) const;

  /// One candidate drawn independently per dimension (uniform, or log-uniform).
  Params sample(RandomBitGenerator& rng) const;

  /// The grid: every value of int/categorical dimensions with at most `points_per_dimension` values
  /// (otherwise that many evenly spaced ones, rounded to the step, duplicates removed), and
  /// `points_per_dimension` evenly spaced floats (in log space for log dimensions), endpoints
  /// included. Row-major order, the last dimension varying fastest.
  std::vector<Params> grid(std::size_t points_per_dimension) const;
  /// The values of one dimension in the grid.
  static std::vector<Value> grid_values(const Dimension& dim, std::size_t points_per_dimension);

  /// Bijection (up to rounding of ints and steps) with the unit cube, one coordinate per dimension:
  /// log dimensions are linear in log space; categoricals map choice i of n to (i + 0.5) / n.
  std::vector<double> to_unit(const Params& params) const;
  Params from_unit(const std::vector<double>& unit) const;

  /// True when `params` holds a value of the right type inside every dimension's bounds.
  bool contains(const Params& params) const;

 private:
  std::vector<Dimension> dims_;
  void check_new_name(const std::string& name) const;
};

}  // namespace dptune
