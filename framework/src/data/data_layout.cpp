#include "dptune/host/data_layout.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>

#include "dptune/errors.hpp"
#include "dptune/host/random.hpp"
#include "dptune/masked_label.hpp"

namespace dptune::host {

const char* to_string(ScoreSplit split) {
  return split == ScoreSplit::Test ? "test" : "validation";
}

namespace {

void sort(Indices& rows) { std::sort(rows.begin(), rows.end()); }

std::size_t round_count(double fraction, std::size_t n) {
  return static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n)));
}

/// Class index of every label, and num_classes for a masked record (dptune::kMaskedLabel: a label
/// outside the declared set), which so forms a group of its own and keeps its slot; throws unless
/// the other labels are integers in [0, num_classes).
std::vector<std::size_t> class_of(const std::vector<double>& labels, std::size_t num_classes,
                                  const char* who) {
  std::vector<std::size_t> out(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double l = labels[i];
    if (dptune::is_masked_label(l)) {
      out[i] = num_classes;
      continue;
    }
    if (!(l >= 0 && l < static_cast<double>(num_classes) && l == std::floor(l)))
      throw dptune::InvalidArgument(std::string(who) + ": label " + std::to_string(l) + " of row " +
                                    std::to_string(i) + " is not a class index below " +
                                    std::to_string(num_classes));
    out[i] = static_cast<std::size_t>(l);
  }
  return out;
}

/// The rows of each class, and last the masked rows (empty when there are none).
std::vector<Indices> rows_by_class(const std::vector<std::size_t>& cls, std::size_t num_classes) {
  std::vector<Indices> by(num_classes + 1);
  for (std::size_t i = 0; i < cls.size(); ++i) by[cls[i]].push_back(i);
  return by;
}

/// Largest-remainder apportionment (Hamilton's method): integer counts summing to `total` with
/// count_c close to quota_c and count_c <= capacity_c.  Ties go to the lower index.
std::vector<std::size_t> apportion(std::size_t total, const std::vector<double>& quota,
                                   const std::vector<std::size_t>& capacity) {
  std::vector<std::size_t> count(quota.size());
  std::size_t given = 0;
  for (std::size_t c = 0; c < quota.size(); ++c) {
    count[c] = std::min(capacity[c], static_cast<std::size_t>(std::floor(quota[c])));
    given += count[c];
  }
  std::vector<std::size_t> order(quota.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return quota[a] - std::floor(quota[a]) > quota[b] - std::floor(quota[b]);
  });
  // Hand out the remainder in order of largest fractional part, cycling while capacity remains.
  while (given < total) {
    bool progressed = false;
    for (std::size_t c : order) {
      if (given == total) break;
      if (count[c] < capacity[c]) {
        ++count[c];
        ++given;
        progressed = true;
      }
    }
    if (!progressed) break;
  }
  return count;
}

/// log of a Gamma(shape, 1) draw; log space keeps tiny shapes (β = 0.01) from underflowing to 0.
double log_gamma_sample(dptune::RandomBitGenerator& rng, double shape) {
  if (shape < 1) {
    // Marsaglia & Tsang (2000), §6: if X ~ Gamma(a + 1) and U ~ U(0, 1), X·U^(1/a) ~ Gamma(a).
    return log_gamma_sample(rng, shape + 1) + std::log(dptune::uniform_open01(rng)) / shape;
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    const double x = dptune::gaussian(rng, 1.0);
    const double t = 1.0 + c * x;
    if (t <= 0) continue;
    const double v = t * t * t;
    const double u = dptune::uniform_open01(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return std::log(d * v);
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return std::log(d * v);
  }
}

/// Dir(β, ..., β) of dimension k from normalised Gamma(β) draws (computed in log space).
std::vector<double> dirichlet(dptune::RandomBitGenerator& rng, std::size_t k, double beta) {
  std::vector<double> logs(k);
  for (auto& l : logs) l = log_gamma_sample(rng, beta);
  const double top = *std::max_element(logs.begin(), logs.end());
  double sum = 0;
  for (auto& l : logs) sum += (l = std::exp(l - top));
  for (auto& l : logs) l /= sum;
  return logs;
}

/// A uniform double in [0, 1) from the top 53 bits of a word.
double unit_interval(std::uint64_t word) { return static_cast<double>(word >> 11) * 0x1.0p-53; }

/// Index of the first cumulative weight above u · total (never a client of weight 0).
std::size_t inverse_cdf(const std::vector<double>& cumulative, double u) {
  const double x = u * cumulative.back();
  const auto at = std::upper_bound(cumulative.begin(), cumulative.end(), x);
  return std::min<std::size_t>(static_cast<std::size_t>(at - cumulative.begin()),
                               cumulative.size() - 1);
}

/// Where every row goes under Dirichlet(β) shards by label: its client and whether it is in that
/// client's validation part.
struct Placement {
  std::vector<std::size_t> client;
  std::vector<char> validation;
};

/// Dirichlet(β) client shards by label, keyed by slot (row index) so that one record's label can
/// move that record and nothing else.  What is drawn from `rng`, in this order, depends on public
/// sizes only (num_classes, clients, n):
///   1. for every declared class c, proportions p_c ~ Dir(β, ..., β) over the clients
///      (Hsu, Qi & Brown 2019; Liebenow et al. 2025 §V-B);
///   2. a 256-bit slot key K;
///   3. a permutation of the n slots, whose first clients · m slots (m = min_shard_size) are the
///      base: the t-th goes to client t mod clients, at base position ⌊t / clients⌋.
/// A base slot's client ignores its label, so every client holds at least m rows whatever the
/// labels (no retry or repair that looks at them).  Every other slot i reads two words of the
/// ChaCha20 keystream under K with nonce i (KeyedRandom(K, i): a PRF of i), u_i and v_i, and goes
/// to the client where u_i falls in the cumulative proportions of its own label's p.  Its part is
/// validation iff v_i < validation_fraction; base position 0 is always validation (when the
/// fraction is > 0) and base position 1 always training, so every client has both.
/// Hence (slot i's client, part) is a function of (K, the permutation, i, label_i) alone: replacing
/// record i changes its own placement and nobody else's, so at most two clients' data change.
Placement place_by_label(const std::vector<std::size_t>& cls, std::size_t num_classes,
                         std::size_t clients, std::size_t minimum, double beta,
                         double validation_fraction, dptune::RandomBitGenerator& rng) {
  const std::size_t n = cls.size();
  std::vector<std::vector<double>> cumulative(num_classes);
  for (auto& c : cumulative) {
    c = dirichlet(rng, clients, beta);
    std::partial_sum(c.begin(), c.end(), c.begin());
  }
  // A label outside the declared classes (a masked record) is placed by equal proportions: a rule
  // that does not look at which undeclared value it is.
  std::vector<double> equal(clients);
  for (std::size_t j = 0; j < clients; ++j) equal[j] = static_cast<double>(j + 1);

  std::array<unsigned char, 32> key{};
  for (std::size_t w = 0; w < 4; ++w) {
    const std::uint64_t word = rng.next_u64();
    std::memcpy(key.data() + 8 * w, &word, 8);
  }
  Indices order(n);
  std::iota(order.begin(), order.end(), 0);
  dptune::shuffle(rng, order);
  std::vector<std::size_t> base_position(n, SIZE_MAX);
  Placement out{std::vector<std::size_t>(n), std::vector<char>(n, 0)};
  for (std::size_t t = 0; t < clients * minimum; ++t) {
    out.client[order[t]] = t % clients;
    base_position[order[t]] = t / clients;
  }
  for (std::size_t i = 0; i < n; ++i) {
    KeyedRandom slot(key, i);
    const double u = unit_interval(slot.next_u64()), v = unit_interval(slot.next_u64());
    bool validation = v < validation_fraction;
    if (base_position[i] == SIZE_MAX)
      out.client[i] = inverse_cdf(cls[i] < num_classes ? cumulative[cls[i]] : equal, u);
    else if (base_position[i] == 0)
      validation = validation_fraction > 0;
    else if (base_position[i] == 1)
      validation = false;
    out.validation[i] = validation ? 1 : 0;
  }
  return out;
}

/// Checks the shard parameters that do not depend on the distribution.
void check_shard_counts(std::size_t n, std::size_t clients, std::size_t min_shard_size) {
  if (clients == 0) throw dptune::InvalidArgument("shards: need at least one client");
  if (clients * min_shard_size > n || clients > n)
    throw dptune::InvalidArgument("shards: " + std::to_string(n) + " rows cannot give " +
                                  std::to_string(clients) + " clients " +
                                  std::to_string(std::max<std::size_t>(1, min_shard_size)) +
                                  " rows each (min_shard_size)");
}

/// Placement of the Dirichlet layout after checking its parameters.
Placement dirichlet_placement(const std::vector<double>& labels, std::size_t num_classes,
                              std::size_t clients, const ShardOptions& options,
                              double validation_fraction, dptune::RandomBitGenerator& rng) {
  if (num_classes == 0)
    throw dptune::InvalidArgument(
        "shards: Dirichlet sharding is by label and needs a classification dataset");
  if (!(options.dirichlet_beta > 0) || !std::isfinite(options.dirichlet_beta))
    throw dptune::InvalidArgument("shards: dirichlet_beta must be > 0 and finite");
  const std::size_t minimum = std::max<std::size_t>(1, options.min_shard_size);
  if (validation_fraction > 0 && minimum < 2)
    throw dptune::InvalidArgument(
        "shards: Dirichlet clients with a validation part need min_shard_size >= 2 (one "
        "validation and one training row each, whatever the labels)");
  return place_by_label(class_of(labels, num_classes, "shards"), num_classes, clients, minimum,
                        options.dirichlet_beta, validation_fraction, rng);
}

}  // namespace

dptune::Dataset subset(const dptune::Dataset& d, const Indices& rows) {
  dptune::Dataset out;
  out.name = d.name;
  out.cols = d.cols;
  out.rows = rows.size();
  out.num_classes = d.num_classes;
  out.feature_names = d.feature_names;
  out.labels.reserve(rows.size());
  for (std::size_t r : rows) {
    dptune::require(r < d.rows, "subset: row index out of range");
    out.labels.push_back(d.labels[r]);
  }
  if (!d.float_rows.empty()) {
    out.float_rows = d.float_rows.select(rows);
    return out;
  }
  out.features.reserve(rows.size() * d.cols);
  for (std::size_t r : rows) out.features.insert(out.features.end(), d.row(r), d.row(r) + d.cols);
  return out;
}

dptune::Dataset with_double_features(const dptune::Dataset& d) {
  dptune::Dataset out;
  out.name = d.name;
  out.rows = d.rows;
  out.cols = d.cols;
  out.labels = d.labels;
  out.num_classes = d.num_classes;
  out.feature_names = d.feature_names;
  if (d.float_rows.empty()) {
    out.features = d.features;
    return out;
  }
  out.features.resize(d.rows * d.cols);
  for (std::size_t i = 0; i < d.rows; ++i)
    std::copy(d.float_rows.row(i), d.float_rows.row(i) + d.cols,
              out.features.begin() + static_cast<std::ptrdiff_t>(i * d.cols));
  return out;
}

SplitIndices split_indices(const std::vector<double>& labels, std::size_t num_classes,
                           double validation_fraction, double test_fraction, bool stratify,
                           dptune::RandomBitGenerator& rng) {
  const std::size_t n = labels.size();
  dptune::require(
      validation_fraction >= 0 && test_fraction >= 0 && validation_fraction + test_fraction < 1,
      "split: validation_fraction and test_fraction must be >= 0 with a sum below 1");
  const std::size_t n_val = round_count(validation_fraction, n);
  const std::size_t n_test = round_count(test_fraction, n);
  if (n_val + n_test >= n)
    throw dptune::InvalidArgument("split: " + std::to_string(n) +
                                  " rows leave no training rows after " + std::to_string(n_val) +
                                  " validation and " + std::to_string(n_test) + " test rows");
  SplitIndices out;
  if (!stratify || num_classes == 0) {
    Indices order(n);
    std::iota(order.begin(), order.end(), 0);
    dptune::shuffle(rng, order);
    out.test.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_test));
    out.validation.assign(order.begin() + static_cast<std::ptrdiff_t>(n_test),
                          order.begin() + static_cast<std::ptrdiff_t>(n_test + n_val));
    out.train.assign(order.begin() + static_cast<std::ptrdiff_t>(n_test + n_val), order.end());
  } else {
    const auto by_class = rows_by_class(class_of(labels, num_classes, "split"), num_classes);
    const std::size_t groups = by_class.size();  // the classes and the masked rows
    std::vector<double> quota_test(groups), quota_val(groups);
    std::vector<std::size_t> capacity(groups);
    for (std::size_t c = 0; c < groups; ++c) {
      const double size = static_cast<double>(by_class[c].size());
      quota_test[c] = test_fraction * size;
      quota_val[c] = validation_fraction * size;
      capacity[c] = by_class[c].size();
    }
    const auto test_count = apportion(n_test, quota_test, capacity);
    for (std::size_t c = 0; c < groups; ++c) capacity[c] -= test_count[c];
    const auto val_count = apportion(n_val, quota_val, capacity);
    for (std::size_t c = 0; c < groups; ++c) {
      Indices rows = by_class[c];
      dptune::shuffle(rng, rows);
      auto at = rows.begin();
      out.test.insert(out.test.end(), at, at + static_cast<std::ptrdiff_t>(test_count[c]));
      at += static_cast<std::ptrdiff_t>(test_count[c]);
      out.validation.insert(out.validation.end(), at,
                            at + static_cast<std::ptrdiff_t>(val_count[c]));
      at += static_cast<std::ptrdiff_t>(val_count[c]);
      out.train.insert(out.train.end(), at, rows.end());
    }
  }
  sort(out.train);
  sort(out.validation);
  sort(out.test);
  return out;
}

std::vector<Indices> partition_indices(std::size_t n, std::size_t k,
                                       dptune::RandomBitGenerator& rng) {
  if (k == 0 || k > n)
    throw dptune::InvalidArgument("partition: " + std::to_string(k) + " parts of " +
                                  std::to_string(n) + " rows: need 1 <= k <= rows");
  Indices order(n);
  std::iota(order.begin(), order.end(), 0);
  dptune::shuffle(rng, order);
  std::vector<Indices> parts(k);
  for (std::size_t i = 0; i < k; ++i) {
    parts[i].assign(order.begin() + static_cast<std::ptrdiff_t>(i * n / k),
                    order.begin() + static_cast<std::ptrdiff_t>((i + 1) * n / k));
    sort(parts[i]);
  }
  return parts;
}

std::vector<Indices> shard_indices(const std::vector<double>& labels, std::size_t num_classes,
                                   std::size_t clients, const ShardOptions& options,
                                   dptune::RandomBitGenerator& rng) {
  const std::size_t n = labels.size();
  check_shard_counts(n, clients, options.min_shard_size);
  if (options.distribution == ShardOptions::Distribution::Iid)
    return partition_indices(n, clients, rng);
  const Placement placed = dirichlet_placement(labels, num_classes, clients, options, 0.0, rng);
  std::vector<Indices> shards(clients);
  for (std::size_t i = 0; i < n; ++i) shards[placed.client[i]].push_back(i);
  return shards;
}

std::vector<ClientSplit> client_layout(const std::vector<double>& labels, std::size_t num_classes,
                                       std::size_t clients, const ShardOptions& options,
                                       double validation_fraction,
                                       dptune::RandomBitGenerator& rng) {
  dptune::require(validation_fraction >= 0 && validation_fraction < 1,
                  "client split: validation fraction must be in [0, 1)");
  const std::size_t n = labels.size();
  check_shard_counts(n, clients, options.min_shard_size);
  std::vector<ClientSplit> splits;
  splits.reserve(clients);
  if (options.distribution == ShardOptions::Distribution::Iid) {
    // Shards and splits of public sizes, drawn without looking at any record.
    for (const auto& shard : partition_indices(n, clients, rng))
      splits.push_back(split_client(shard, validation_fraction, rng));
    return splits;
  }
  const Placement placed =
      dirichlet_placement(labels, num_classes, clients, options, validation_fraction, rng);
  splits.resize(clients);
  for (std::size_t i = 0; i < n; ++i) {
    ClientSplit& c = splits[placed.client[i]];
    (placed.validation[i] ? c.validation : c.train).push_back(i);
  }
  return splits;
}

ClientSplit split_client(const Indices& shard, double validation_fraction,
                         dptune::RandomBitGenerator& rng) {
  dptune::require(validation_fraction >= 0 && validation_fraction < 1,
                  "client split: validation fraction must be in [0, 1)");
  Indices rows = shard;
  dptune::shuffle(rng, rows);
  std::size_t n_val = round_count(validation_fraction, rows.size());
  if (validation_fraction > 0 && rows.size() >= 2)
    n_val = std::clamp<std::size_t>(n_val, 1, rows.size() - 1);
  if (rows.size() < 2) n_val = 0;
  ClientSplit out;
  out.validation.assign(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n_val));
  out.train.assign(rows.begin() + static_cast<std::ptrdiff_t>(n_val), rows.end());
  sort(out.train);
  sort(out.validation);
  return out;
}

double mean_label_skew(const std::vector<double>& labels, std::size_t num_classes,
                       const std::vector<Indices>& shards) {
  const auto cls = class_of(labels, num_classes, "label skew");
  const std::size_t groups = num_classes + 1;  // the classes and the masked rows
  std::vector<double> global(groups, 0.0);
  for (std::size_t c : cls) global[c] += 1.0 / static_cast<double>(cls.size());
  double total = 0;
  std::size_t counted = 0;
  for (const auto& shard : shards) {
    if (shard.empty()) continue;
    std::vector<double> local(groups, 0.0);
    for (std::size_t r : shard) local[cls[r]] += 1.0 / static_cast<double>(shard.size());
    double tv = 0;
    for (std::size_t c = 0; c < groups; ++c) tv += std::abs(local[c] - global[c]);
    total += 0.5 * tv;
    ++counted;
  }
  return counted ? total / static_cast<double>(counted) : 0.0;
}

double gamma_sample(dptune::RandomBitGenerator& rng, double shape) {
  dptune::require(shape > 0 && std::isfinite(shape), "gamma_sample: shape must be > 0 and finite");
  return std::exp(log_gamma_sample(rng, shape));
}

namespace {
/// Calls f(row pointer) for every row, from the float rows when there are any, else the doubles.
template <class F>
void for_each_row(const dptune::Dataset& data, F&& f) {
  if (!data.float_rows.empty())
    for (std::size_t i = 0; i < data.rows; ++i) f(data.float_rows.row(i));
  else
    for (std::size_t i = 0; i < data.rows; ++i) f(data.row(i));
}
}  // namespace

Standardizer Standardizer::fit(const dptune::Dataset& train) {
  Standardizer s;
  s.mean.assign(train.cols, 0.0);
  s.scale.assign(train.cols, 1.0);
  if (train.rows == 0) return s;
  const double n = static_cast<double>(train.rows);
  for_each_row(train, [&](const auto* row) {
    for (std::size_t j = 0; j < train.cols; ++j) s.mean[j] += row[j];
  });
  for (auto& m : s.mean) m /= n;
  std::vector<double> var(train.cols, 0.0);
  for_each_row(train, [&](const auto* row) {
    for (std::size_t j = 0; j < train.cols; ++j) {
      const double d = row[j] - s.mean[j];
      var[j] += d * d;
    }
  });
  for (std::size_t j = 0; j < train.cols; ++j) {
    const double sd = std::sqrt(var[j] / n);
    // A constant column (sd = 0, or numerically tiny next to its mean) is only centred.
    s.scale[j] = sd > 1e-12 * std::max(1.0, std::abs(s.mean[j])) && std::isfinite(sd) ? sd : 1.0;
  }
  return s;
}

void Standardizer::apply(dptune::Dataset& data) const {
  dptune::require(data.cols == mean.size(), "standardize: column count differs from the fit");
  for (std::size_t i = 0; i < data.rows; ++i)
    for (std::size_t j = 0; j < data.cols; ++j) {
      double& x = data.features[i * data.cols + j];
      x = (x - mean[j]) / scale[j];
    }
}

}  // namespace dptune::host
