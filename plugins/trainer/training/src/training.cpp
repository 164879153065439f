#include "training/training.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dptune/errors.hpp"
#include "dptune/masked_label.hpp"

namespace dptune::trainers {

namespace {

using MapVector = Eigen::Map<Eigen::VectorXd>;
using ConstMapVector = Eigen::Map<const Eigen::VectorXd>;

std::size_t num_classes(const Dataset& data) { return std::max<std::size_t>(data.num_classes, 2); }

void check_data(const Dataset& data, const std::string& who) {
  require(data.rows > 0, who + ": the training data is empty");
  require(data.cols > 0, who + ": the training data has no features");
  require(consistent(data), who + ": the training data's buffers do not match rows x cols");
}

// Draws the first `m` entries of `perm` as a uniformly random m-subset (partial Fisher–Yates on a
// permutation kept between calls: uniform whatever order it starts in).
void sample_without_replacement(RandomBitGenerator& rng, std::vector<std::size_t>& perm,
                                std::size_t m) {
  const std::size_t n = perm.size();
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(uniform_index(rng, n - i));
    std::swap(perm[i], perm[j]);
  }
}

// Each of n examples independently with probability q, by geometric gaps between selected indices
// (a gap of G − 1 skipped examples, P(G = g) = (1 − q)^{g−1} q).
void sample_poisson(RandomBitGenerator& rng, std::size_t n, double q,
                    std::vector<std::size_t>& out) {
  out.clear();
  if (q >= 1.0) {
    out.resize(n);
    std::iota(out.begin(), out.end(), std::size_t{0});
    return;
  }
  const double log1mq = std::log1p(-q);
  double position = -1;
  while (true) {
    position += 1.0 + std::floor(std::log(uniform_open01(rng)) / log1mq);
    if (!(position < static_cast<double>(n))) break;
    out.push_back(static_cast<std::size_t>(position));
  }
}

}  // namespace

Architecture make_architecture(const std::string& model, std::size_t hidden1, std::size_t hidden2,
                               const Dataset& data) {
  Architecture a;
  a.inputs = data.cols;
  a.classes = num_classes(data);
  if (model == "logistic") {
    a.loss = LossKind::CrossEntropy;
  } else if (model == "svm") {
    a.loss = LossKind::Hinge;
  } else if (model == "mlp") {
    a.loss = LossKind::CrossEntropy;
    require(hidden1 > 0, "model mlp: hidden1 must be > 0");
    a.hidden.push_back(hidden1);
    if (hidden2 > 0) a.hidden.push_back(hidden2);
  } else {
    throw InvalidArgument("model: expected logistic, svm or mlp, got '" + model + "'");
  }
  return a;
}

// ---- SGD ----------------------------------------------------------------------------------------

void train_sgd(Network& network, const Dataset& data, const SgdOptions& o,
               RandomBitGenerator& rng) {
  check_data(data, "sgd");
  require(o.epochs > 0 && o.batch_size > 0, "sgd: epochs and batch_size must be > 0");
  const std::size_t n = data.rows, p = network.num_params();
  const std::size_t batch = std::min(o.batch_size, n);
  BatchGradient gradient(network, batch);
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::vector<double> grad(p), velocity(p, 0.0);
  MapVector w(network.params().data(), static_cast<Eigen::Index>(p));
  MapVector g(grad.data(), static_cast<Eigen::Index>(p)),
      v(velocity.data(), static_cast<Eigen::Index>(p));
  for (std::size_t epoch = 0; epoch < o.epochs; ++epoch) {
    const double eta = o.learning_rate / (1.0 + o.lr_decay * static_cast<double>(epoch));
    shuffle(rng, perm);
    for (std::size_t start = 0; start < n; start += batch) {
      const std::size_t count = std::min(batch, n - start);
      gradient.compute(network, data, perm.data() + start, count, false);
      g.setZero();
      gradient.accumulate(nullptr, grad.data());
      g = g / static_cast<double>(count) + o.l2 * w;
      v = o.momentum * v + g;
      w -= eta * v;
      if (!w.allFinite()) throw_non_finite("a weight after an SGD step");
    }
  }
}

// ---- DP-SGD / DP-Adam ---------------------------------------------------------------------------

DpSchedule dp_schedule(std::size_t n, const DpSgdOptions& o) {
  require(n > 0, "dp_sgd: no training rows");
  require(o.epochs > 0 && o.lot_size > 0, "dp_sgd: epochs and lot_size must be > 0");
  DpSchedule s;
  s.n = static_cast<std::int64_t>(n);
  s.lot = static_cast<std::int64_t>(std::min(o.lot_size, n));
  s.steps = static_cast<std::int64_t>(o.epochs) * ((s.n + s.lot - 1) / s.lot);
  s.q = static_cast<double>(s.lot) / static_cast<double>(s.n);
  s.sampling = o.sampling;
  return s;
}

DpEvent dp_sgd_event(const DpSchedule& s, DpEvent step_event) {
  DpEvent sampled = s.sampling == Sampling::Poisson
                        ? DpEvent::poisson_sampled(s.q, std::move(step_event))
                        : DpEvent::sampled_without_replacement(s.n, s.lot, std::move(step_event));
  return DpEvent::self_composed(std::move(sampled), s.steps);
}

double dp_step_sensitivity(const DpSgdOptions& o) { return o.clipping_norm; }

namespace {

/// γ_k = k u / (1 − k u), u = 2^-53 (Higham 2002, Lemma 3.1), rounded up.
double gamma_bound(double k) {
  const double ku = k * std::ldexp(1.0, -53);
  require(ku < 0.5, "dp_sgd: too many terms for the floating-point error bound");
  return std::nextafter(ku / (1.0 - ku), 1.0) * (1.0 + std::ldexp(1.0, -50));
}

}  // namespace

std::size_t padded_rows(std::size_t count) {
  return (count + kRowBlock - 1) / kRowBlock * kRowBlock;
}

double dp_sum_sensitivity(const DpSgdOptions& o, std::size_t rows, std::size_t params,
                          std::size_t capacity) {
  const DpSchedule schedule = dp_schedule(rows, o);
  const double lot_bound = o.sampling == Sampling::Poisson ? static_cast<double>(rows)
                                                           : static_cast<double>(schedule.lot);
  const double c = static_cast<double>(capacity);
  const double chunks = std::ceil(lot_bound / c);
  // (1 + 2^-24)(1 + u)^2 / sqrt(1 - γ) <= 1 + 2^-24 + 8u + 2γ, as 1/sqrt(1 - γ) <= 1 + γ.
  const double eta = std::ldexp(1.0, -24) + 8.0 * std::ldexp(1.0, -53) +
                     2.0 * gamma_bound(2.0 * static_cast<double>(params) + 8.0);
  const double sum_error = 2.0 * gamma_bound(c + chunks) * lot_bound;
  // Each product rounded up by a relative 2^-50 at least: the bound is never computed short.
  const double widened = o.clipping_norm * (1.0 + eta) * (1.0 + sum_error);
  return widened * (1.0 + std::ldexp(1.0, -50));
}

std::size_t dp_chunk_capacity(const DpSchedule& schedule) {
  return padded_rows(std::min<std::size_t>(static_cast<std::size_t>(schedule.lot), 256));
}

std::optional<std::pair<std::size_t, double>> dp_noisy_sum(const DpSgdOptions& options,
                                                           const std::string& model,
                                                           std::size_t hidden1, std::size_t hidden2,
                                                           const DataShape& shape) {
  if (shape.rows == 0 || shape.features == 0) return std::nullopt;
  Dataset described;  // the shape only: make_architecture reads cols and num_classes
  described.cols = shape.features;
  described.num_classes = shape.num_classes;
  const std::size_t params =
      Network(make_architecture(model, hidden1, hidden2, described)).num_params();
  const DpSchedule schedule = dp_schedule(shape.rows, options);
  return std::pair{params,
                   dp_sum_sensitivity(options, shape.rows, params, dp_chunk_capacity(schedule))};
}

namespace {

/// Row → canary index (−1: a real row) of an audit's gradient canaries, checked against the run.
std::vector<std::ptrdiff_t> canary_index(const GradientCanaries& canaries, std::size_t n,
                                         std::size_t p) {
  require(canaries.coordinates.size() == canaries.rows.size() &&
              canaries.values.size() == canaries.rows.size(),
          "dp_sgd: gradient canaries need one coordinate and one value per row");
  std::vector<std::ptrdiff_t> index(n, -1);
  for (std::size_t c = 0; c < canaries.rows.size(); ++c) {
    require(canaries.rows[c] < n && index[canaries.rows[c]] < 0,
            "dp_sgd: gradient canary rows must be distinct rows of the training set");
    require(canaries.coordinates[c] < p && std::isfinite(canaries.values[c]),
            "dp_sgd: a gradient canary's coordinate is not a parameter or its value not finite");
    index[canaries.rows[c]] = static_cast<std::ptrdiff_t>(c);
  }
  return index;
}

/// The canaries among a chunk's `count` members: their computed gradient is weighted 0 and their
/// canary gradient, clipped to L as any example's (factor L / max(‖g‖, L)), added to the sum.
void insert_canaries(const std::vector<std::size_t>& chunk, std::size_t count,
                     const std::vector<std::ptrdiff_t>& canary_of, const GradientCanaries& canaries,
                     double clipping_norm, std::vector<double>& factors, std::vector<double>& sum) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::ptrdiff_t c = canary_of[chunk[i]];
    if (c < 0) continue;
    factors[i] = 0.0;
    const double value = canaries.values[static_cast<std::size_t>(c)];
    sum[canaries.coordinates[static_cast<std::size_t>(c)]] +=
        value * (clipping_norm / std::max(std::abs(value), clipping_norm));
  }
}

}  // namespace

void train_dp_sgd(Network& network, const Dataset& data, const DpSgdOptions& o,
                  RandomBitGenerator& rng, const NoiseFunction& noise,
                  const GradientCanaries* canaries) {
  check_data(data, "dp_sgd");
  require(o.clipping_norm > 0, "dp_sgd: clipping_norm must be > 0");
  const DpSchedule schedule = dp_schedule(data.rows, o);
  const std::size_t n = data.rows, p = network.num_params();
  // Empty unless an audit offers gradient canaries: the loop then tests one empty vector a chunk.
  const std::vector<std::ptrdiff_t> canary_of =
      canaries ? canary_index(*canaries, n, p) : std::vector<std::ptrdiff_t>{};
  const std::size_t m = static_cast<std::size_t>(schedule.lot);
  // Lots are processed in chunks of at most `capacity` examples (Poisson lots vary in size),
  // each padded to a whole number of kRowBlock rows (padded_rows).
  const std::size_t capacity = dp_chunk_capacity(schedule);
  BatchGradient gradient(network, capacity);
  std::vector<std::size_t> perm(n), lot, chunk;
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  lot.reserve(n);
  chunk.reserve(capacity);
  std::vector<double> sum(p), factors(capacity), mu, nu;
  if (o.optimizer == Optimizer::Adam) {
    mu.assign(p, 0.0);
    nu.assign(p, 0.0);
  }
  const double sensitivity = dp_sum_sensitivity(o, n, p, capacity),
               inv_m = 1.0 / static_cast<double>(m);
  MapVector w(network.params().data(), static_cast<Eigen::Index>(p));
  double beta1_power = 1, beta2_power = 1;
  for (std::int64_t step = 0; step < schedule.steps; ++step) {
    const std::size_t* members;
    std::size_t size;
    if (o.sampling == Sampling::Poisson) {
      sample_poisson(rng, n, schedule.q, lot);
      members = lot.data();
      size = lot.size();
    } else {
      sample_without_replacement(rng, perm, m);
      members = perm.data();
      size = m;
    }
    std::fill(sum.begin(), sum.end(), 0.0);
    for (std::size_t start = 0; start < size; start += capacity) {
      const std::size_t count = std::min(capacity, size - start);
      // Padding rows repeat a member and are weighted 0: they add exact zeros.
      chunk.assign(members + start, members + start + count);
      chunk.resize(padded_rows(count), members[start]);
      gradient.compute(network, data, chunk.data(), chunk.size(), false);
      clip_factors(gradient.squared_norms(), o.clipping_norm, factors);
      std::fill(factors.begin() + static_cast<std::ptrdiff_t>(count),
                factors.begin() + static_cast<std::ptrdiff_t>(chunk.size()), 0.0);
      if (!canary_of.empty())
        insert_canaries(chunk, count, canary_of, *canaries, o.clipping_norm, factors, sum);
      gradient.accumulate(factors.data(), sum.data());
    }
    if (noise) noise(sum, sensitivity);
    require(sum.size() == p, "dp_sgd: the mechanism changed the gradient's length");
    if (canaries && canaries->observe) canaries->observe(sum);
    MapVector g(sum.data(), static_cast<Eigen::Index>(p));
    g *= inv_m;
    if (o.optimizer == Optimizer::Sgd) {
      w -= o.learning_rate * g;  // Alg. 3
      if (!w.allFinite()) throw_non_finite("a weight after a DP-SGD step");
      continue;
    }
    // Alg. 4: moment estimates, de-biased, then w ← w − η µ̂ / (√ν̂ + κ).
    MapVector mu_v(mu.data(), static_cast<Eigen::Index>(p)),
        nu_v(nu.data(), static_cast<Eigen::Index>(p));
    mu_v = o.beta1 * mu_v + (1.0 - o.beta1) * g;
    nu_v = o.beta2 * nu_v + (1.0 - o.beta2) * g.cwiseProduct(g);
    beta1_power *= o.beta1;
    beta2_power *= o.beta2;
    const double c1 = 1.0 / (1.0 - beta1_power), c2 = 1.0 / (1.0 - beta2_power);
    w.array() -=
        o.learning_rate * (c1 * mu_v.array()) / ((c2 * nu_v.array()).sqrt() + o.adam_epsilon);
    if (!w.allFinite()) throw_non_finite("a weight after a DP-Adam step");
  }
}

// ---- output perturbation ------------------------------------------------------------------------

namespace {

// B = ⌈n / b⌉ balanced batches per pass: batch j covers [n j / B, n (j + 1) / B), ⌊n/B⌋ or ⌈n/B⌉
// examples.
std::size_t op_batches(std::size_t n, std::size_t batch_size) {
  return (n + std::min(batch_size, n) - 1) / std::min(batch_size, n);
}

}  // namespace

double output_perturbation_sensitivity(std::size_t n, double regularization,
                                       std::size_t batch_size) {
  require(n > 0, "output_perturbation: no training rows");
  require(regularization > 0, "output_perturbation: regularization must be > 0");
  require(batch_size > 0, "output_perturbation: batch_size must be > 0");
  const double lipschitz = 2.0;  // 1 (logistic loss, ‖x̃‖ ≤ 1) + γ R with R = 1/γ
  const std::size_t batches = op_batches(n, batch_size), smallest = n / batches;
  // Wu et al. 2017: 2L/(γ n) for B c_min = n; see training.hpp for the mini-batch step.
  return 2.0 * lipschitz /
         (regularization * static_cast<double>(batches) * static_cast<double>(smallest));
}

std::size_t output_perturbation_models(std::size_t classes) { return classes <= 2 ? 1 : classes; }

double output_perturbation_joint_sensitivity(std::size_t n, double regularization,
                                             std::size_t batch_size, std::size_t classes) {
  return std::sqrt(static_cast<double>(output_perturbation_models(classes))) *
         output_perturbation_sensitivity(n, regularization, batch_size);
}

void output_perturbation_features(const double* x, std::size_t d, double* out) {
  const double norm = ConstMapVector(x, static_cast<Eigen::Index>(d)).norm();
  const double scale = 1.0 / (std::max(1.0, norm) * std::sqrt(2.0));
  for (std::size_t j = 0; j < d; ++j) out[j] = x[j] * scale;
  out[d] = 1.0 / std::sqrt(2.0);
}

std::vector<double> train_output_perturbation(const Dataset& data,
                                              const OutputPerturbationOptions& o,
                                              RandomBitGenerator& rng) {
  check_data(data, "output_perturbation");
  require(o.regularization > 0 && o.epochs > 0 && o.batch_size > 0,
          "output_perturbation: regularization, epochs and batch_size must be > 0");
  const std::size_t n = data.rows, d = data.cols, dim = d + 1;
  const std::size_t classes = num_classes(data), models = output_perturbation_models(classes);
  for (std::size_t i = 0; i < n; ++i) {
    const double label = data.labels[i];
    require(is_masked_label(label) ||
                (label >= 0 && label == std::round(label) && label < static_cast<double>(classes)),
            "output_perturbation: row " + std::to_string(i) + " has label " +
                std::to_string(label) + ", expected a class in 0.." + std::to_string(classes - 1));
  }
  // x̃ is made per example when it is used, not stored for all n rows: a stored copy would cost
  // n (d + 1) doubles per run (226 MB for Fashion-MNIST's 36 000 x 784 training rows).
  std::vector<double> xt(dim), raw(d);
  std::vector<double> weights(models * dim, 0.0), grad(dim);
  MapVector g(grad.data(), static_cast<Eigen::Index>(dim));
  const double gamma = o.regularization, beta = 0.25 + gamma, radius = 1.0 / gamma;
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  const std::size_t batches = op_batches(n, o.batch_size);
  for (std::size_t k = 0; k < models; ++k) {
    // Binary: class 1 is positive.  One-vs-rest: class k is positive.
    const double positive = models == 1 ? 1.0 : static_cast<double>(k);
    MapVector w(weights.data() + k * dim, static_cast<Eigen::Index>(dim));
    std::size_t t = 0;
    for (std::size_t epoch = 0; epoch < o.epochs; ++epoch) {
      shuffle(rng, perm);
      for (std::size_t b = 0; b < batches; ++b) {
        const std::size_t begin = n * b / batches, end = n * (b + 1) / batches;
        g.setZero();
        for (std::size_t j = begin; j < end; ++j) {
          const std::size_t i = perm[j];
          // A masked record keeps its place in the batch (the batch mean still divides by the
          // batch's size, a function of n) and adds no gradient.
          if (is_masked_label(data.labels[i])) continue;
          read_row(data, i, raw.data());
          output_perturbation_features(raw.data(), d, xt.data());
          ConstMapVector x(xt.data(), static_cast<Eigen::Index>(dim));
          const double label = data.labels[i] == positive ? 1.0 : -1.0;
          // ∂/∂w log(1 + exp(−t wᵀx)) = −t x σ(−t wᵀx)
          const double margin = label * w.dot(x);
          g -= (label / (1.0 + std::exp(margin))) * x;
        }
        g = g / static_cast<double>(end - begin) + gamma * w;
        ++t;
        const double eta = std::min(1.0 / beta, 1.0 / (gamma * static_cast<double>(t)));
        w -= eta * g;
        const double norm = w.norm();
        if (norm > radius) w *= radius / norm;  // projection onto the ball of radius 1/γ
        if (!w.allFinite()) throw_non_finite("a weight of output perturbation's minimiser");
      }
    }
  }
  return weights;
}

OutputPerturbationModel::OutputPerturbationModel(std::vector<double> weights, std::size_t classes)
    : weights_(std::move(weights)), classes_(std::max<std::size_t>(classes, 2)) {
  const std::size_t models = output_perturbation_models(classes_);
  require(weights_.size() >= models * 2 && weights_.size() % models == 0,
          "output_perturbation: " + std::to_string(weights_.size()) + " weights for " +
              std::to_string(models) + " models");
}

Predictions OutputPerturbationModel::predict(const Dataset& data) const {
  const std::size_t models = output_perturbation_models(classes_), dim = weights_.size() / models;
  require(data.cols + 1 == dim, "model expects " + std::to_string(dim - 1) +
                                    " features, the data has " + std::to_string(data.cols));
  Predictions out;
  out.num_classes = classes_;
  out.values.resize(data.rows);
  out.probabilities.resize(classes_ * data.rows);
  require(consistent(data), "predict: the data's buffers do not match rows x cols");
  std::vector<double> x(dim), z(models), raw(data.cols);
  for (std::size_t i = 0; i < data.rows; ++i) {
    read_row(data, i, raw.data());
    output_perturbation_features(raw.data(), data.cols, x.data());
    const ConstMapVector xv(x.data(), static_cast<Eigen::Index>(dim));
    for (std::size_t k = 0; k < models; ++k)
      z[k] = ConstMapVector(weights_.data() + k * dim, static_cast<Eigen::Index>(dim)).dot(xv);
    double* p = out.probabilities.data() + classes_ * i;
    if (models == 1) {
      const double p1 = 1.0 / (1.0 + std::exp(-z[0]));
      out.values[i] = z[0] > 0 ? 1.0 : 0.0;
      p[0] = 1.0 - p1;
      p[1] = p1;
      continue;
    }
    // One-vs-rest: the class with the largest score; probabilities by a softmax of the scores
    // (a normalisation of the K one-vs-rest scores, for score functions that need them).
    const std::size_t best =
        static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin());
    out.values[i] = static_cast<double>(best);
    double total = 0;
    for (std::size_t k = 0; k < models; ++k) total += p[k] = std::exp(z[k] - z[best]);
    for (std::size_t k = 0; k < models; ++k) p[k] /= total;
  }
  return out;
}

std::string OutputPerturbationModel::describe() const {
  const std::size_t models = output_perturbation_models(classes_);
  const std::string d = std::to_string(weights_.size() / models - 1);
  if (models == 1)
    return "logistic regression " + d +
           "-1 (output perturbation, features scaled to the unit ball)";
  return "one-vs-rest logistic regression " + d + "-" + std::to_string(models) +
         " (output perturbation, features scaled to the unit ball)";
}

std::optional<ModelExport> NetworkModel::export_model() const {
  const Architecture& a = network_.architecture();
  const std::vector<std::size_t> sizes = a.layer_sizes();
  ModelExport e;
  e.kind = "network";
  e.description = describe();
  e.features = a.inputs;
  e.num_classes = std::max<std::size_t>(a.classes, 2);
  const std::vector<double>& p = network_.params();
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    ModelExport::Layer layer;
    layer.inputs = sizes[l];
    layer.outputs = sizes[l + 1];
    // Stored as W_l (inputs × outputs, row-major) then b_l: exported as is.
    const auto w = p.begin() + static_cast<std::ptrdiff_t>(network_.layer_offset(l));
    const auto b = w + static_cast<std::ptrdiff_t>(layer.inputs * layer.outputs);
    layer.weights.assign(w, b);
    layer.bias.assign(b, b + static_cast<std::ptrdiff_t>(layer.outputs));
    layer.activation = l + 2 < sizes.size() ? "relu" : "identity";
    e.layers.push_back(std::move(layer));
  }
  const bool one_output = sizes.back() == 1;
  if (a.loss == LossKind::Hinge)
    e.output = one_output ? "hinge" : "multiclass_hinge";
  else
    e.output = one_output ? "sigmoid" : "softmax";
  return e;
}

std::optional<ModelExport> OutputPerturbationModel::export_model() const {
  const std::size_t models = output_perturbation_models(classes_), dim = weights_.size() / models;
  ModelExport e;
  e.kind = "output_perturbation_logistic";
  e.description = describe();
  e.features = dim - 1;
  e.num_classes = classes_;
  e.input_map = "unit_ball_intercept";
  ModelExport::Layer layer;
  layer.inputs = dim;
  layer.outputs = models;
  layer.weights.resize(dim * models);
  // Stored model after model (each d weights then the intercept's); exported inputs × outputs.
  for (std::size_t k = 0; k < models; ++k)
    for (std::size_t j = 0; j < dim; ++j) layer.weights[j * models + k] = weights_[k * dim + j];
  layer.bias.assign(models, 0.0);
  layer.activation = "identity";
  e.layers.push_back(std::move(layer));
  e.output = models == 1 ? "sigmoid" : "one_vs_rest";
  return e;
}

}  // namespace dptune::trainers
