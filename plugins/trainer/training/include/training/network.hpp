// dptune trainers: the models (logistic regression, linear SVM, MLP) and their batched gradients.
//
// This header is deliberately free of Eigen: the library is compiled with -march=native (see
// CMakeLists.txt) and Eigen's alignment and vectorisation settings depend on the instruction set,
// so Eigen objects must never cross into code compiled with other flags (the plugins, the tests).
// All buffers here are std::vector<double> / raw row-major pointers; Eigen maps them inside
// network.cpp.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dptune/data.hpp"
#include "dptune/rng.hpp"

namespace dptune::trainers {

enum class LossKind {
  CrossEntropy,  // logistic regression / softmax output
  Hinge,         // linear SVM: binary hinge, or Crammer–Singer multiclass hinge for > 2 classes
};

/// A feed-forward network: dense layers with ReLU between them and a linear output layer.  No
/// hidden layer is a linear model.  Two classes use ONE output (sigmoid cross-entropy, or hinge
/// with labels mapped to ±1); K > 2 classes use K outputs (softmax cross-entropy, or multiclass
/// hinge).
struct Architecture {
  std::size_t inputs = 0;
  std::size_t classes = 2;
  std::vector<std::size_t> hidden;
  LossKind loss = LossKind::CrossEntropy;

  std::size_t outputs() const { return classes <= 2 ? 1 : classes; }
  /// inputs, hidden..., outputs
  std::vector<std::size_t> layer_sizes() const;
  std::string describe() const;
};

/// Parameters, flat: for each layer l, W_l (sizes[l] x sizes[l+1], row-major) then b_l
/// (sizes[l+1]).
class Network {
 public:
  explicit Network(Architecture architecture);

  const Architecture& architecture() const { return architecture_; }
  std::size_t num_params() const { return params_.size(); }
  std::vector<double>& params() { return params_; }
  const std::vector<double>& params() const { return params_; }
  /// Offset of layer l's weights in params(); its bias follows the weights.
  std::size_t layer_offset(std::size_t l) const { return offsets_[l]; }

  /// Zero for the last (output) layer, as Avent et al. 2020 Alg. 3 (w ← 0) does for linear models;
  /// He initialisation N(0, 2 / fan_in) for the weights of hidden layers, which must break
  /// symmetry.
  void initialise(RandomBitGenerator& rng);

  /// Output scores (rows x outputs, row-major) of row-major inputs x (rows x inputs).
  void logits(const double* x, std::size_t rows, std::vector<double>& out) const;
  /// Mean loss (without regularisation) over `rows` examples.
  double mean_loss(const double* x, const double* labels, std::size_t rows) const;
  /// Class indices and class probabilities (softmax / sigmoid of the scores; for the SVM these are
  /// only monotone pseudo-probabilities, for loss-based utilities).
  Predictions predict(const Dataset& data) const;

 private:
  Architecture architecture_;
  std::vector<std::size_t> sizes_;
  std::vector<std::size_t> offsets_;
  std::vector<double> params_;
};

/// Gradients of a batch of up to `capacity` examples, with preallocated buffers (no allocation per
/// step).  Per-example gradient norms come from the layer structure without materialising
/// per-example weight gradients: for a dense layer z = a W + b, example i's gradient is the outer
/// product a_i ⊗ δ_i plus δ_i for the bias, so ‖g_i‖² = ‖δ_i‖² (‖a_i‖² + 1), summed over layers
/// (Goodfellow 2015, "Efficient per-example gradient computations"; "ghost norm").  Clipping then
/// scales example i's rows of every δ by c_i before ONE product per layer, aᵀ diag(c) δ, which is
/// exact because back-propagation is linear in the output δ (the ReLU masks do not change).
class BatchGradient {
 public:
  BatchGradient(const Network& network, std::size_t capacity);
  ~BatchGradient();
  BatchGradient(const BatchGradient&) = delete;
  BatchGradient& operator=(const BatchGradient&) = delete;

  std::size_t capacity() const;
  /// Forward and backward pass on rows index[0..count) of x (row-major, network inputs columns)
  /// with class-index labels.  count <= capacity.  Returns the SUM of the examples' losses, or 0
  /// when `with_loss` is false (training needs only the gradients: no log/softplus per example).
  double compute(const Network& network, const double* x, const double* labels,
                 const std::size_t* index, std::size_t count, bool with_loss = true);
  /// The same on float rows (the host's shared storage, ABI 2.7): the layers run in float (the
  /// GEMMs at twice the width of double), the loss, the norms and the sums of clipped gradients
  /// in double.  A binary linear model stays in double.
  double compute(const Network& network, const FloatRows& x, const double* labels,
                 const std::size_t* index, std::size_t count, bool with_loss = true);
  /// The same on a dataset's features, whichever storage it has.
  double compute(const Network& network, const Dataset& data, const std::size_t* index,
                 std::size_t count, bool with_loss = true);
  /// ‖g_i‖² of the examples of the last compute().
  std::span<const double> squared_norms() const;
  /// Example i's full gradient (num_params values), materialised: for tests only.
  void example_gradient(std::size_t i, double* out) const;
  /// grad += Σ_i weight_i g_i over the examples of the last compute() (weights == nullptr: all 1).
  /// Scales the stored δ rows in place, so call it once per compute(), after example_gradient.
  void accumulate(const double* weights, double* grad);

 private:
  struct Impl;
  /// The passes on the batch already gathered (compute's overloads gather it).
  double forward_backward(const double* labels, const std::size_t* index, bool with_loss);
  template <class T>
  double layer_passes(const double* labels, const std::size_t* index, bool with_loss);
  template <class T>
  void ghost_norms();
  template <class T>
  void accumulate_layers(const double* weights, double* grad);
  std::unique_ptr<Impl> impl_;
};

/// Row i of `data` as doubles, from its float rows or its double features (out: data.cols values).
void read_row(const Dataset& data, std::size_t i, double* out);
/// True when `data` holds rows x cols features in one of its storages and one label a row.
bool consistent(const Dataset& data);

/// Throws dptune::Error: a run whose gradients or weights became NaN or infinite has failed and
/// releases nothing (its privacy is spent all the same).
[[noreturn]] void throw_non_finite(const std::string& what);

/// c_i = min(1, L / ‖g_i‖) (1 for a zero gradient): the clipping factors of Avent et al. 2020 Alg.
/// 3's clip_L, so that ‖c_i g_i‖ ≤ L.  Throws (throw_non_finite) for a NaN or infinite norm.
void clip_factors(std::span<const double> squared_norms, double clipping_norm,
                  std::span<double> factors);

}  // namespace dptune::trainers
