#include "training/network.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "dptune/errors.hpp"
#include "dptune/masked_label.hpp"

namespace dptune::trainers {

namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapMatrix = Eigen::Map<RowMatrix>;
using ConstMapMatrix = Eigen::Map<const RowMatrix>;
using MapVector = Eigen::Map<Eigen::VectorXd>;
using ConstMapVector = Eigen::Map<const Eigen::VectorXd>;
using ConstMapRowVector = Eigen::Map<const Eigen::RowVectorXd>;
using MapRowVector = Eigen::Map<Eigen::RowVectorXd>;

// log(1 + e^z) without overflow.
double softplus(double z) { return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))); }

std::size_t label_index(double label, std::size_t classes) {
  // One comparison chain and a conversion (this runs once per example per step): a label is valid
  // when it is a whole number in [0, classes).
  if (label >= 0 && label < static_cast<double>(classes)) {
    const auto k = static_cast<std::size_t>(label);
    if (static_cast<double>(k) == label) return k;
  }
  throw InvalidArgument("label " + std::to_string(label) + " is not a class index in [0, " +
                        std::to_string(classes) + ")");
}

// Loss of one example given its output scores z (length K = outputs), and, when `delta` is not
// null, ∂loss/∂z written to delta (which may alias z).
double output_loss(LossKind loss, std::size_t classes, const double* z, std::size_t outputs,
                   double label, double* delta) {
  if (is_masked_label(label)) {
    // A masked record (a label outside the declared set) contributes nothing: no loss and a zero
    // gradient, whatever its features, so its clipped gradient is exactly zero.
    if (delta)
      for (std::size_t j = 0; j < outputs; ++j) delta[j] = 0.0;
    return 0.0;
  }
  const std::size_t y = label_index(label, std::max<std::size_t>(classes, 2));
  if (outputs == 1) {
    const double s = z[0];
    if (loss == LossKind::CrossEntropy) {
      // Binary logistic loss: softplus(s) − y s, gradient σ(s) − y.
      const double value = softplus(s) - static_cast<double>(y) * s;
      if (delta) delta[0] = 1.0 / (1.0 + std::exp(-s)) - static_cast<double>(y);
      return value;
    }
    // Hinge with t = ±1: max(0, 1 − t s), subgradient −t where the margin is violated.
    const double t = y == 1 ? 1.0 : -1.0, margin = 1.0 - t * s;
    if (delta) delta[0] = margin > 0 ? -t : 0.0;
    return std::max(margin, 0.0);
  }
  if (loss == LossKind::CrossEntropy) {
    // Softmax cross-entropy: logsumexp(z) − z_y, gradient softmax(z) − e_y.
    double top = z[0];
    for (std::size_t j = 1; j < outputs; ++j) top = std::max(top, z[j]);
    double sum = 0;
    for (std::size_t j = 0; j < outputs; ++j) sum += std::exp(z[j] - top);
    const double value = top + std::log(sum) - z[y];
    if (delta) {
      for (std::size_t j = 0; j < outputs; ++j) delta[j] = std::exp(z[j] - top) / sum;
      delta[y] -= 1.0;
    }
    return value;
  }
  // Crammer–Singer multiclass hinge: max(0, 1 + max_{j≠y} z_j − z_y).
  std::size_t rival = y == 0 ? 1 : 0;
  for (std::size_t j = 0; j < outputs; ++j)
    if (j != y && z[j] > z[rival]) rival = j;
  const double margin = 1.0 + z[rival] - z[y];
  if (delta) {
    for (std::size_t j = 0; j < outputs; ++j) delta[j] = 0.0;
    if (margin > 0) {
      delta[rival] = 1.0;
      delta[y] = -1.0;
    }
  }
  return std::max(margin, 0.0);
}

}  // namespace

std::vector<std::size_t> Architecture::layer_sizes() const {
  std::vector<std::size_t> sizes{inputs};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(outputs());
  return sizes;
}

std::string Architecture::describe() const {
  std::string kind;
  if (!hidden.empty())
    kind = "MLP";
  else if (loss == LossKind::Hinge)
    kind = "linear SVM";
  else
    kind = classes <= 2 ? "logistic regression" : "multinomial logistic regression";
  std::string text = kind + " " + std::to_string(inputs);
  for (std::size_t h : hidden) text += "-" + std::to_string(h);
  text += "-" + std::to_string(outputs());
  text += loss == LossKind::Hinge ? " (hinge" : " (cross-entropy";
  text += ", " + std::to_string(classes) + " classes)";
  return text;
}

Network::Network(Architecture architecture) : architecture_(std::move(architecture)) {
  require(architecture_.inputs > 0, "network: inputs must be > 0");
  require(architecture_.classes >= 2, "network: classes must be >= 2");
  for (std::size_t h : architecture_.hidden)
    require(h > 0, "network: hidden layer sizes must be > 0");
  sizes_ = architecture_.layer_sizes();
  std::size_t total = 0;
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    offsets_.push_back(total);
    total += sizes_[l] * sizes_[l + 1] + sizes_[l + 1];
  }
  params_.assign(total, 0.0);
}

void Network::initialise(RandomBitGenerator& rng) {
  std::fill(params_.begin(), params_.end(), 0.0);
  for (std::size_t l = 0; l + 2 < sizes_.size(); ++l) {
    const double sd = std::sqrt(2.0 / static_cast<double>(sizes_[l]));
    double* w = params_.data() + offsets_[l];
    for (std::size_t k = 0; k < sizes_[l] * sizes_[l + 1]; ++k) w[k] = gaussian(rng, sd);
  }
}

void Network::logits(const double* x, std::size_t rows, std::vector<double>& out) const {
  const std::size_t layers = sizes_.size() - 1;
  out.resize(rows * sizes_.back());
  RowMatrix a =
      ConstMapMatrix(x, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(sizes_[0]));
  for (std::size_t l = 0; l < layers; ++l) {
    ConstMapMatrix w(params_.data() + offsets_[l], static_cast<Eigen::Index>(sizes_[l]),
                     static_cast<Eigen::Index>(sizes_[l + 1]));
    ConstMapRowVector b(params_.data() + offsets_[l] + sizes_[l] * sizes_[l + 1],
                        static_cast<Eigen::Index>(sizes_[l + 1]));
    RowMatrix z = a * w;
    z.rowwise() += b;
    if (l + 1 < layers) z = z.cwiseMax(0.0);
    a = std::move(z);
  }
  std::copy(a.data(), a.data() + a.size(), out.begin());
}

double Network::mean_loss(const double* x, const double* labels, std::size_t rows) const {
  std::vector<double> z;
  logits(x, rows, z);
  const std::size_t k = sizes_.back();
  double total = 0;
  for (std::size_t i = 0; i < rows; ++i)
    total += output_loss(architecture_.loss, architecture_.classes, z.data() + i * k, k, labels[i],
                         nullptr);
  return rows ? total / static_cast<double>(rows) : 0.0;
}

Predictions Network::predict(const Dataset& data) const {
  require(data.cols == architecture_.inputs,
          "model expects " + std::to_string(architecture_.inputs) + " features, the data has " +
              std::to_string(data.cols));
  require(consistent(data), "predict: the data's buffers do not match rows x cols");
  Predictions out;
  const std::size_t classes = architecture_.classes, k = sizes_.back();
  out.num_classes = classes;
  out.values.resize(data.rows);
  out.probabilities.resize(data.rows * classes);
  std::vector<double> z(data.rows * k), chunk_z, x;
  // Float rows (a view of the host's shared storage) are scored in chunks gathered as doubles.
  constexpr std::size_t kChunk = 256;
  for (std::size_t begin = 0; begin < data.rows; begin += kChunk) {
    const std::size_t count = std::min(kChunk, data.rows - begin);
    const double* rows = nullptr;
    if (data.float_rows.empty()) {
      rows = data.row(begin);
    } else {
      x.resize(count * data.cols);
      for (std::size_t i = 0; i < count; ++i) read_row(data, begin + i, x.data() + i * data.cols);
      rows = x.data();
    }
    logits(rows, count, chunk_z);
    std::copy(chunk_z.begin(), chunk_z.end(), z.begin() + static_cast<std::ptrdiff_t>(begin * k));
  }
  for (std::size_t i = 0; i < data.rows; ++i) {
    const double* zi = z.data() + i * k;
    double* p = out.probabilities.data() + i * classes;
    if (k == 1) {
      p[1] = 1.0 / (1.0 + std::exp(-zi[0]));
      p[0] = 1.0 - p[1];
      out.values[i] = zi[0] > 0 ? 1.0 : 0.0;
      continue;
    }
    std::size_t best = 0;
    for (std::size_t j = 1; j < k; ++j)
      if (zi[j] > zi[best]) best = j;
    double sum = 0;
    for (std::size_t j = 0; j < k; ++j) sum += p[j] = std::exp(zi[j] - zi[best]);
    for (std::size_t j = 0; j < k; ++j) p[j] /= sum;
    out.values[i] = static_cast<double>(best);
  }
  return out;
}

void read_row(const Dataset& data, std::size_t i, double* out) {
  if (data.float_rows.empty()) {
    std::copy(data.row(i), data.row(i) + data.cols, out);
    return;
  }
  const float* row = data.float_rows.row(i);
  std::copy(row, row + data.cols, out);
}

bool consistent(const Dataset& data) {
  if (data.labels.size() != data.rows) return false;
  if (!data.float_rows.empty())
    return data.float_rows.rows() == data.rows && data.float_rows.cols() == data.cols;
  return data.features.size() == data.rows * data.cols;
}

// ---- BatchGradient ------------------------------------------------------------------------------

namespace {

/// The batch's activations and δ of every layer, in double or float.
template <class T>
struct LayerBuffers {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  // a[l] holds layer l's input for the batch (a[0]: the gathered examples) and delta[l] the loss
  // gradient with respect to layer l's pre-activation output.
  std::vector<Matrix> a, delta;
  std::vector<T> params;  // float: the network's parameters rounded, per compute()
  std::vector<T> grad;    // float: one layer's weight gradient before it is added in double
  std::vector<T> bias;    // float: one layer's bias gradient, likewise
  std::vector<T> factor;  // the clipping factors in T

  void allocate(const std::vector<std::size_t>& sizes, std::size_t capacity) {
    if (!a.empty()) return;
    const auto cap = static_cast<Eigen::Index>(capacity);
    std::size_t widest = 0, outputs = 0;
    for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
      a.emplace_back(cap, static_cast<Eigen::Index>(sizes[l]));
      delta.emplace_back(cap, static_cast<Eigen::Index>(sizes[l + 1]));
      widest = std::max(widest, sizes[l] * sizes[l + 1]);
      outputs = std::max(outputs, sizes[l + 1]);
    }
    factor.resize(capacity);
    if constexpr (std::is_same_v<T, float>) {
      grad.resize(widest);
      bias.resize(outputs);
    }
  }
};

/// x[0] + x[1] + … + x[n−1], added in index order.  Eigen's vectorised row sum first adds a
/// row's entries up to the next packet boundary one by one, so its summation order, and its
/// rounding, depended on the row's address: in a row-major chunk of 10 classes, on whether the
/// row's position in the chunk was even or odd under SSE2.  A row's clipped gradient must be a
/// function of the row alone (dp_sum_sensitivity, training.hpp, point 3).
template <class T>
T sum_in_order(const T* x, std::size_t n) {
  T sum = 0;
  for (std::size_t j = 0; j < n; ++j) sum += x[j];
  return sum;
}

/// out = a w for float layers, with a long inner dimension cut into pieces of at most 512 (784
/// inputs: two of 392) whose products are added.  Measured on the 2-core Zen 4 machine (Eigen
/// 3.4, AVX-512, lots of 256): 256 x 784 times 784 x 256 ran at about 65 GFLOP/s in one product
/// and 80-83 GFLOP/s in two halves (Eigen's cache blocking for this depth is the likely cause;
/// the weight-gradient product, depth 256, already ran at about 82).  Float only: the pieces
/// change the order of the sums, and the double path keeps its seeded outputs.
template <class A, class W, class Out>
void forward_product(const A& a, const W& w, Out& out) {
  constexpr Eigen::Index kPiece = 512;
  const Eigen::Index depth = w.rows();
  if (depth <= kPiece) {
    out.noalias() = a * w;
    return;
  }
  const Eigen::Index pieces = (depth + kPiece - 1) / kPiece;
  const Eigen::Index step = ((depth + pieces - 1) / pieces + 15) / 16 * 16;
  out.noalias() = a.leftCols(step) * w.topRows(step);
  for (Eigen::Index k = step; k < depth; k += step) {
    const Eigen::Index n = std::min(step, depth - k);
    out.noalias() += a.middleCols(k, n) * w.middleRows(k, n);
  }
}

}  // namespace

struct BatchGradient::Impl {
  std::vector<std::size_t> sizes, offsets;
  std::size_t capacity = 0, count = 0;
  LossKind loss = LossKind::CrossEntropy;
  std::size_t classes = 2;
  // A binary linear model (one output, no hidden layer) reads its rows in place: no gather.
  bool linear_binary = false;
  std::vector<const double*> rows;
  std::vector<double> gathered;      // float rows of the batch, as doubles (linear path)
  std::vector<double> linear_delta;  // δ_i of the single output
  std::vector<double> input_norm2;   // ‖x_i‖²
  // Otherwise the layers' buffers: double for double rows, float for float rows (the host's
  // storage), in which the products run at twice the width (single = the last compute's).
  LayerBuffers<double> dbl;
  LayerBuffers<float> flt;
  bool single = false;
  std::vector<double> norms2;
  const double* params = nullptr;
  RowMatrix chunk_sum;  // one layer's private weight-gradient sum over the chunk, in double

  template <class T>
  LayerBuffers<T>& buffers() {
    if constexpr (std::is_same_v<T, float>)
      return flt;
    else
      return dbl;
  }
};

BatchGradient::BatchGradient(const Network& network, std::size_t capacity)
    : impl_(std::make_unique<Impl>()) {
  require(capacity > 0, "batch gradient: capacity must be > 0");
  Impl& s = *impl_;
  s.sizes = network.architecture().layer_sizes();
  for (std::size_t l = 0; l + 1 < s.sizes.size(); ++l) s.offsets.push_back(network.layer_offset(l));
  s.capacity = capacity;
  s.loss = network.architecture().loss;
  s.classes = network.architecture().classes;
  s.linear_binary = s.sizes.size() == 2 && s.sizes[1] == 1;
  s.norms2.resize(capacity);
  if (s.linear_binary) {
    s.rows.resize(capacity);
    s.gathered.resize(capacity * s.sizes[0]);
    s.linear_delta.resize(capacity);
    s.input_norm2.resize(capacity);
  }
  // The layer buffers of the precision a compute() asks for are made on its first call.
}

BatchGradient::~BatchGradient() = default;

std::size_t BatchGradient::capacity() const { return impl_->capacity; }

double BatchGradient::compute(const Network& network, const double* x, const double* labels,
                              const std::size_t* index, std::size_t count, bool with_loss) {
  Impl& s = *impl_;
  require(count <= s.capacity, "batch gradient: " + std::to_string(count) +
                                   " examples exceed the capacity " + std::to_string(s.capacity));
  s.count = count;
  s.params = network.params().data();
  s.single = false;
  if (!s.linear_binary) s.dbl.allocate(s.sizes, s.capacity);
  const std::size_t d = s.sizes[0];
  // A binary linear model reads its rows in place; the others gather the batch into a[0].
  for (std::size_t i = 0; i < count; ++i) {
    const double* row = x + index[i] * d;
    if (s.linear_binary)
      s.rows[i] = row;
    else
      std::copy(row, row + d, s.dbl.a[0].row(static_cast<Eigen::Index>(i)).data());
  }
  return forward_backward(labels, index, with_loss);
}

double BatchGradient::compute(const Network& network, const FloatRows& x, const double* labels,
                              const std::size_t* index, std::size_t count, bool with_loss) {
  Impl& s = *impl_;
  require(count <= s.capacity, "batch gradient: " + std::to_string(count) +
                                   " examples exceed the capacity " + std::to_string(s.capacity));
  const std::size_t d = s.sizes[0];
  require(x.cols() == d, "batch gradient: the rows have " + std::to_string(x.cols()) +
                             " features, the network " + std::to_string(d) + " inputs");
  s.count = count;
  s.params = network.params().data();
  // A binary linear model (a dot product per example) stays in double; the layers of the others
  // run in float on the float rows, gathered as they are.
  s.single = !s.linear_binary;
  if (s.single) {
    s.flt.allocate(s.sizes, s.capacity);
    s.flt.params.assign(network.params().begin(), network.params().end());
  }
  for (std::size_t i = 0; i < count; ++i) {
    const float* row = x.row(index[i]);
    if (s.single) {
      std::copy(row, row + d, s.flt.a[0].row(static_cast<Eigen::Index>(i)).data());
      continue;
    }
    double* to = s.gathered.data() + i * d;
    std::copy(row, row + d, to);
    s.rows[i] = to;
  }
  return forward_backward(labels, index, with_loss);
}

double BatchGradient::compute(const Network& network, const Dataset& data, const std::size_t* index,
                              std::size_t count, bool with_loss) {
  if (!data.float_rows.empty())
    return compute(network, data.float_rows, data.labels.data(), index, count, with_loss);
  return compute(network, data.features.data(), data.labels.data(), index, count, with_loss);
}

double BatchGradient::forward_backward(const double* labels, const std::size_t* index,
                                       bool with_loss) {
  Impl& s = *impl_;
  const std::size_t d = s.sizes[0], count = s.count;
  const auto c = static_cast<Eigen::Index>(count);
  double total = 0;
  if (s.linear_binary) {
    ConstMapVector w(s.params, static_cast<Eigen::Index>(d));
    const double b = s.params[d];
    for (std::size_t i = 0; i < count; ++i) {
      ConstMapVector xi(s.rows[i], static_cast<Eigen::Index>(d));
      s.linear_delta[i] = xi.dot(w) + b;  // the score z_i, turned into δ_i below
      s.input_norm2[i] = xi.squaredNorm();
    }
    MapVector delta(s.linear_delta.data(), c);
    if (with_loss || s.loss != LossKind::CrossEntropy) {
      for (std::size_t i = 0; i < count; ++i) {
        const double z = s.linear_delta[i];
        total += output_loss(s.loss, s.classes, &z, 1, labels[index[i]], &s.linear_delta[i]);
      }
    } else {
      // δ_i = σ(z_i) − y_i, one example at a time: Eigen's vectorised exp rounds differently
      // from its scalar head and tail, which would make an example's δ depend on its position
      // in the batch (dp_sum_sensitivity needs it to depend on the example alone).  A masked
      // record's δ is zero (output_loss's rule).  Labels were checked by the data's owner and
      // are re-checked here cheaply.
      for (std::size_t i = 0; i < count; ++i) {
        const double label = labels[index[i]];
        if (is_masked_label(label)) {
          s.linear_delta[i] = 0.0;
          continue;
        }
        const double y = static_cast<double>(label_index(label, 2));
        s.linear_delta[i] = 1.0 / (1.0 + std::exp(-s.linear_delta[i])) - y;
      }
    }
    MapVector norms(s.norms2.data(), c);
    norms = delta.array().square() * (MapVector(s.input_norm2.data(), c).array() + 1.0);
    return total;
  }
  return s.single ? layer_passes<float>(labels, index, with_loss)
                  : layer_passes<double>(labels, index, with_loss);
}

template <class T>
double BatchGradient::layer_passes(const double* labels, const std::size_t* index, bool with_loss) {
  using Matrix = typename LayerBuffers<T>::Matrix;
  using ConstMap = Eigen::Map<const Matrix>;
  using ConstMapRow = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;
  Impl& s = *impl_;
  LayerBuffers<T>& L = s.buffers<T>();
  const T* params = nullptr;
  if constexpr (std::is_same_v<T, float>)
    params = L.params.data();
  else
    params = s.params;
  const std::size_t count = s.count, layers = s.sizes.size() - 1;
  const auto c = static_cast<Eigen::Index>(count);
  double total = 0;
  // Forward: a[l+1] = relu(a[l] W_l + b_l); the output layer's scores go to delta[last].
  for (std::size_t l = 0; l < layers; ++l) {
    ConstMap w(params + s.offsets[l], static_cast<Eigen::Index>(s.sizes[l]),
               static_cast<Eigen::Index>(s.sizes[l + 1]));
    ConstMapRow b(params + s.offsets[l] + s.sizes[l] * s.sizes[l + 1],
                  static_cast<Eigen::Index>(s.sizes[l + 1]));
    auto out = l + 1 < layers ? L.a[l + 1].topRows(c) : L.delta[l].topRows(c);
    if constexpr (std::is_same_v<T, float>)
      forward_product(L.a[l].topRows(c), w, out);
    else
      out.noalias() = L.a[l].topRows(c) * w;
    out.rowwise() += b;
    if (l + 1 < layers) out = out.cwiseMax(T(0));
  }
  const std::size_t k = s.sizes.back();
  Matrix& top = L.delta[layers - 1];
  if (!with_loss && s.loss == LossKind::CrossEntropy && k > 1) {
    // Softmax − one-hot on the whole block, with Eigen's vectorised exp.
    auto z = top.topRows(c);
    z.colwise() -= z.rowwise().maxCoeff();
    z = z.array().exp().matrix();
    for (Eigen::Index i = 0; i < c; ++i) z.row(i) /= sum_in_order(z.row(i).data(), k);
    for (std::size_t i = 0; i < count; ++i) {
      const double label = labels[index[i]];
      if (is_masked_label(label))  // a masked record's δ is zero (output_loss's rule)
        z.row(static_cast<Eigen::Index>(i)).setZero();
      else
        z(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(label_index(label, k))) -= T(1);
    }
  } else {
    std::vector<double> zi(k);  // the loss in double whatever T is
    for (std::size_t i = 0; i < count; ++i) {
      T* row = top.row(static_cast<Eigen::Index>(i)).data();
      std::copy(row, row + k, zi.begin());
      total += output_loss(s.loss, s.classes, zi.data(), k, labels[index[i]], zi.data());
      for (std::size_t j = 0; j < k; ++j) row[j] = static_cast<T>(zi[j]);
    }
  }
  // Backward: δ_{l-1} = (δ_l W_lᵀ) ⊙ 1[a_l > 0].
  for (std::size_t l = layers - 1; l >= 1; --l) {
    ConstMap w(params + s.offsets[l], static_cast<Eigen::Index>(s.sizes[l]),
               static_cast<Eigen::Index>(s.sizes[l + 1]));
    auto prev = L.delta[l - 1].topRows(c);
    prev.noalias() = L.delta[l].topRows(c) * w.transpose();
    prev = (L.a[l].topRows(c).array() > T(0)).select(prev, T(0));
  }
  ghost_norms<T>();
  return total;
}

namespace {

/// ‖x‖² of n floats or doubles, accumulated in double: a float's square is exact in double
/// (24 + 24 bits), and 16 independent lanes let the compiler keep two AVX-512 (four AVX2)
/// accumulators busy, where Eigen's reduction of a float-to-double cast ran one scalar addition
/// chain per row (the 256 x 784 inputs of a lot of 256 cost about 0.3 ms a step that way).  The
/// lanes are indexed by position, not by address, so a row's norm does not depend on where the
/// row sits in its chunk (see sum_in_order).
template <class T>
double squared_norm(const T* x, std::size_t n) {
  constexpr std::size_t kLanes = 16;
  std::array<double, kLanes> lanes{};
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k) {
      const double v = x[j + k];
      lanes[k] += v * v;
    }
  double sum = 0;
  for (; j < n; ++j) sum += static_cast<double>(x[j]) * static_cast<double>(x[j]);
  for (const double lane : lanes) sum += lane;
  return sum;
}

}  // namespace

template <class T>
void BatchGradient::ghost_norms() {
  // Ghost norms: ‖g_i‖² = Σ_l ‖δ_{l,i}‖² (‖a_{l,i}‖² + 1), summed in double also for float
  // layers, so that the clipping factors are those of the float values exactly (to double
  // rounding).
  Impl& s = *impl_;
  LayerBuffers<T>& L = s.buffers<T>();
  const auto c = static_cast<Eigen::Index>(s.count);
  MapVector norms(s.norms2.data(), c);
  norms.setZero();
  for (std::size_t l = 0; l + 1 < s.sizes.size(); ++l) {
    const std::size_t in = s.sizes[l], out = s.sizes[l + 1];
    for (std::size_t i = 0; i < s.count; ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      s.norms2[i] += squared_norm(L.delta[l].row(r).data(), out) *
                     (squared_norm(L.a[l].row(r).data(), in) + 1.0);
    }
  }
}

std::span<const double> BatchGradient::squared_norms() const {
  return {impl_->norms2.data(), impl_->count};
}

void BatchGradient::example_gradient(std::size_t i, double* out) const {
  const Impl& s = *impl_;
  require(i < s.count, "batch gradient: example index out of range");
  if (s.linear_binary) {
    const std::size_t d = s.sizes[0];
    for (std::size_t j = 0; j < d; ++j) out[j] = s.linear_delta[i] * s.rows[i][j];
    out[d] = s.linear_delta[i];
    return;
  }
  const auto r = static_cast<Eigen::Index>(i);
  const auto each = [&](const auto& L) {
    for (std::size_t l = 0; l + 1 < s.sizes.size(); ++l) {
      MapMatrix gw(out + s.offsets[l], static_cast<Eigen::Index>(s.sizes[l]),
                   static_cast<Eigen::Index>(s.sizes[l + 1]));
      gw.noalias() = (L.a[l].row(r).transpose() * L.delta[l].row(r)).template cast<double>();
      MapRowVector gb(out + s.offsets[l] + s.sizes[l] * s.sizes[l + 1],
                      static_cast<Eigen::Index>(s.sizes[l + 1]));
      gb = L.delta[l].row(r).template cast<double>();
    }
  };
  if (s.single)
    each(s.flt);
  else
    each(s.dbl);
}

void BatchGradient::accumulate(const double* weights, double* grad) {
  Impl& s = *impl_;
  if (s.linear_binary) {
    const std::size_t d = s.sizes[0];
    MapVector g(grad, static_cast<Eigen::Index>(d));
    double gb = 0;
    if (weights) {
      // Private: the chunk's sum first, then one addition to the lot's sum, so that every term
      // meets at most count + 1 roundings here (dp_sum_sensitivity, training.hpp).
      Eigen::VectorXd chunk = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(d));
      for (std::size_t i = 0; i < s.count; ++i) {
        const double di = weights[i] * s.linear_delta[i];
        chunk += di * ConstMapVector(s.rows[i], static_cast<Eigen::Index>(d));
        gb += di;
      }
      g += chunk;
      grad[d] += gb;
      return;
    }
    for (std::size_t i = 0; i < s.count; ++i) {
      const double di = weights ? weights[i] * s.linear_delta[i] : s.linear_delta[i];
      g += di * ConstMapVector(s.rows[i], static_cast<Eigen::Index>(d));
      gb += di;
    }
    grad[d] += gb;
    return;
  }
  if (s.single)
    accumulate_layers<float>(weights, grad);
  else
    accumulate_layers<double>(weights, grad);
}

template <class T>
void BatchGradient::accumulate_layers(const double* weights, double* grad) {
  Impl& s = *impl_;
  LayerBuffers<T>& L = s.buffers<T>();
  const auto c = static_cast<Eigen::Index>(s.count);
  if (weights) {
    // Clipping factors rounded DOWN to T, so a clipped example's gradient never grows past L
    // by the rounding of its factor.
    std::vector<T>& factor = L.factor;
    for (std::size_t i = 0; i < s.count; ++i) {
      factor[i] = static_cast<T>(weights[i]);
      if (static_cast<double>(factor[i]) > weights[i]) factor[i] = std::nextafter(factor[i], T(0));
    }
    const Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> f(factor.data(), c);
    for (std::size_t l = 0; l + 1 < s.sizes.size(); ++l)
      L.delta[l].topRows(c).array().colwise() *= f.array();
  }
  for (std::size_t l = 0; l + 1 < s.sizes.size(); ++l) {
    const auto rows = static_cast<Eigen::Index>(s.sizes[l]),
               cols = static_cast<Eigen::Index>(s.sizes[l + 1]);
    auto delta = L.delta[l].topRows(c);
    MapMatrix gw(grad + s.offsets[l], rows, cols);
    MapRowVector gb(grad + s.offsets[l] + s.sizes[l] * s.sizes[l + 1], cols);
    if (weights) {
      // Private sums in double, also for float layers: a float product is exact in double, and
      // the chunk's sum is formed apart and added to the lot's once, so every term meets at most
      // count + 1 roundings here and the sum's error stays within the bound the noise is scaled
      // for (dp_sum_sensitivity, training.hpp).  A float GEMM's error reached 28 grid steps of
      // the secure noise, past the sqrt(d) the rounding analysis allows.
      s.chunk_sum.noalias() =
          L.a[l].topRows(c).transpose().template cast<double>() * delta.template cast<double>();
      gw += s.chunk_sum;
      gb += delta.template cast<double>().colwise().sum();
      continue;
    }
    if constexpr (std::is_same_v<T, float>) {
      // One float product per layer, added to the double sum.
      Eigen::Map<typename LayerBuffers<T>::Matrix> gf(L.grad.data(), rows, cols);
      gf.noalias() = L.a[l].topRows(c).transpose() * delta;
      gw += gf.template cast<double>();
      // The bias gradient as rows of δ added in turn (vectorised along the row, where a column
      // sum of the row-major block strides through memory).
      Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>> bias(L.bias.data(), cols);
      bias.setZero();
      for (Eigen::Index i = 0; i < c; ++i) bias += delta.row(i);
      gb += bias.template cast<double>();
    } else {
      gw.noalias() += L.a[l].topRows(c).transpose() * delta;
      gb += delta.colwise().sum();
    }
  }
}

void throw_non_finite(const std::string& what) {
  throw Error("training failed: " + what +
              " is not finite (NaN or infinite: diverging learning rate or extreme feature "
              "values); the run releases nothing, and the privacy it spent is spent");
}

void clip_factors(std::span<const double> squared_norms, double clipping_norm,
                  std::span<double> factors) {
  require(factors.size() >= squared_norms.size(), "clip_factors: factors too short");
  const double l2 = clipping_norm * clipping_norm;
  for (std::size_t i = 0; i < squared_norms.size(); ++i) {
    const double n2 = squared_norms[i];
    // `n2 > l2` is false for NaN: a non-finite gradient would pass unclipped.
    if (!std::isfinite(n2)) throw_non_finite("a per-example gradient");
    factors[i] = n2 > l2 ? clipping_norm / std::sqrt(n2) : 1.0;
  }
}

}  // namespace dptune::trainers
