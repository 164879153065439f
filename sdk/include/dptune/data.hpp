// dptune SDK: data as plugins see it.  Plain vectors, no Eigen in this header: a plugin that wants
// Eigen maps the row-major buffer (Eigen::Map<const Eigen::Matrix<double, -1, -1,
// Eigen::RowMajor>>).
#pragma once

#include <boost/config.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dptune/abi.hpp"

namespace dptune {

/// Read-only 32-bit feature rows, shared.  `values` holds stored rows x cols floats
/// (row-major); a view's row i is stored row index[i], or stored row i when it has no index.
/// Datasets that differ only in which rows they hold (the splits, k partitions, client shards)
/// share one storage: nothing is copied per trial or per thread, and float halves the memory of
/// double (Fashion-MNIST's 60 000 x 784 training images: 188 MB instead of 376 MB).
class BOOST_SYMBOL_VISIBLE FloatRows {
 public:
  FloatRows() = default;
  FloatRows(std::shared_ptr<const std::vector<float>> values, std::size_t cols,
            std::shared_ptr<const std::vector<std::size_t>> index = {})
      : values_(std::move(values)), index_(std::move(index)), cols_(cols) {}

  bool empty() const { return values_ == nullptr; }
  std::size_t cols() const { return cols_; }
  /// Rows of this view: the index's length, or every stored row.
  std::size_t rows() const {
    if (index_) return index_->size();
    return values_ && cols_ ? values_->size() / cols_ : 0;
  }
  const float* row(std::size_t i) const {
    return values_->data() + (index_ ? (*index_)[i] : i) * cols_;
  }
  /// The first row when the rows are stored consecutively in order (no index), else null.
  const float* contiguous() const { return values_ && !index_ ? values_->data() : nullptr; }
  /// The rows `rows` of this view (indices into the view), sharing the storage.
  FloatRows select(const std::vector<std::size_t>& rows) const {
    auto index = std::make_shared<std::vector<std::size_t>>(rows);
    if (index_)
      for (auto& r : *index) r = (*index_)[r];
    return {values_, cols_, std::move(index)};
  }
  /// The storage every view of it shares (identity: two views with the same storage copy
  /// nothing).
  const std::vector<float>* storage() const { return values_.get(); }

 private:
  std::shared_ptr<const std::vector<float>> values_;
  std::shared_ptr<const std::vector<std::size_t>> index_;
  std::size_t cols_ = 0;
};

/// Labelled tabular data: `rows` examples of `cols` features, row-major, and one label per row.
/// A workload of queries (e.g. the sparse vector example) is a Dataset with cols = 0 whose labels
/// are the true answers.
struct BOOST_SYMBOL_VISIBLE Dataset {
  std::string name;
  std::size_t rows = 0;
  std::size_t cols = 0;
  /// rows * cols, row-major doubles: data a plugin or a test made itself.  Empty in what the host
  /// hands a plugin, which finds the features in `float_rows`.
  std::vector<double> features;
  std::vector<double> labels;   // rows; class index for classification, value for queries
  std::size_t num_classes = 0;  // 0: not a classification problem
  std::vector<std::string> feature_names;

  /// Row i of `features` (the double storage only; see as_float_rows for either storage).
  const double* row(std::size_t i) const { return features.data() + i * cols; }

  /// The features as shared 32-bit rows (rows x cols), or empty when the dataset holds doubles
  /// in `features` (data a plugin or a test made itself).
  FloatRows float_rows;
};

/// The features of `data` as float rows whichever storage it has: `float_rows` itself
/// (shared, no copy), or a float copy of `features` for a dataset that holds only doubles.
inline FloatRows as_float_rows(const Dataset& data) {
  if (!data.float_rows.empty() || data.cols == 0) return data.float_rows;
  auto values = std::make_shared<std::vector<float>>(data.features.begin(), data.features.end());
  return {std::move(values), data.cols};
}

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
/// (subsample-and-aggregate, Ding et al.), one client's shard (federated, Liebenow et al. 2025), or
/// a uniform subsample of public size drawn by the data layout, never from the data (tuning on a
/// subsample, Koskela & Kulkarni 2023; Subsample appended in ABI 3.4).
struct BOOST_SYMBOL_VISIBLE DataScope {
  enum class Kind { Whole, Partition, Client, Subsample };
  Kind kind = Kind::Whole;
  std::size_t index = 0;  // partition or client index; a subsample's number of rows
  std::size_t count = 1;  // number of partitions or clients; 1 for a subsample

  static DataScope whole() { return {}; }
  static DataScope partition(std::size_t index, std::size_t count) {
    return {Kind::Partition, index, count};
  }
  static DataScope client(std::size_t index, std::size_t count) {
    return {Kind::Client, index, count};
  }
  /// `rows` training rows drawn uniformly without replacement by the layout: the first `rows` of
  /// one shuffle of the row slots from the layout's own seed, so subsamples of different sizes
  /// are nested and each is uniform.
  static DataScope subsample(std::size_t rows) { return {Kind::Subsample, rows, 1}; }
  std::string to_string() const;
};

}  // namespace dptune
