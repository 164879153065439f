// dptune SDK: data as plugins see it.  Plain vectors, no Eigen in this header: a plugin that wants
// Eigen maps the row-major buffer (Eigen::Map<const Eigen::Matrix<double, -1, -1,
// Eigen::RowMajor>>).
#pragma once

#include <boost/config.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace dptune {

/// Labelled tabular data: `rows` examples of `cols` features, row-major, and one label per row.
/// A workload of queries (e.g. the sparse vector example) is a Dataset with cols = 0 whose labels
/// are the true answers.
struct BOOST_SYMBOL_VISIBLE Dataset {
  std::string name;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> features;  // rows * cols, row-major
  std::vector<double> labels;    // rows; class index for classification, value for queries
  std::size_t num_classes = 0;   // 0: not a classification problem
  std::vector<std::string> feature_names;

  const double* row(std::size_t i) const { return features.data() + i * cols; }
};

/// Sensitivity of a vector-valued query: how far it moves between neighbouring datasets, in the
/// norms mechanisms need.  A mechanism uses the one its analysis is about.
struct BOOST_SYMBOL_VISIBLE Sensitivity {
  double linf = 1;  // per coordinate (sparse vector, report-noisy-max)
  double l1 = 1;    // Laplace, geometric
  double l2 = 1;    // Gaussian
};

/// What an algorithm outputs for the utility oracle: predicted values (class indices, released
/// answers) and, optionally, class probabilities (rows x num_classes, row-major) for loss-based
/// scores.
struct BOOST_SYMBOL_VISIBLE Predictions {
  std::vector<double> values;
  std::vector<double> probabilities;
  std::size_t num_classes = 0;
};

/// Which data an evaluation uses: the whole training split, one of k disjoint partitions of it
/// (subsample-and-aggregate, paper 002), or one client's shard (federated, paper 003).
struct BOOST_SYMBOL_VISIBLE DataScope {
  enum class Kind { Whole, Partition, Client };
  Kind kind = Kind::Whole;
  std::size_t index = 0;  // partition or client index
  std::size_t count = 1;  // number of partitions or clients

  static DataScope whole() { return {}; }
  static DataScope partition(std::size_t index, std::size_t count) {
    return {Kind::Partition, index, count};
  }
  static DataScope client(std::size_t index, std::size_t count) {
    return {Kind::Client, index, count};
  }
  std::string to_string() const;
};

}  // namespace dptune
