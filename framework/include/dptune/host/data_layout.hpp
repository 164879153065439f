// dptune host: how a dataset is laid out for tuning — train/validation/test splits, k disjoint
// partitions (subsample-and-aggregate, Ding et al.), client shards iid or Dirichlet(β) by label
// (federated tuning, Liebenow et al. 2025 §V-B), and standardisation fitted on the training split
// only. Everything works on row indices, so each algorithm is testable on its own; `subset` turns
// indices into data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dptune/data.hpp"
#include "dptune/rng.hpp"

namespace dptune::host {

/// Which held-out split the utility oracle scores on (`utility: {split: validation|test}`).
enum class ScoreSplit { Validation, Test };
const char* to_string(ScoreSplit split);

using Indices = std::vector<std::size_t>;

/// Rows of `data` at `rows` (in that order), with everything else copied.  Float rows become a
/// view of the same storage (no copy of the features: the splits, partitions and client shards of
/// a pipeline share one); double features are copied.  Labels are always copied (one double a row).
dptune::Dataset subset(const dptune::Dataset& data, const Indices& rows);

/// The same dataset with `features` filled as doubles and no float rows: what a plugin of ABI
/// minor <= 6 expects (abi.hpp, 2.7).  A copy of the features, made per call for such plugins.
dptune::Dataset with_double_features(const dptune::Dataset& data);

struct SplitIndices {
  Indices train, validation, test;  // each in ascending order
};

/// Splits rows 0..n-1 (n = labels.size()) into train, validation and test.  The validation and test
/// sizes are round(fraction · n) each; with `stratify` (needs num_classes > 0) every class is split
/// in the same proportions, the per-class counts chosen by largest remainder so that the totals are
/// exactly those sizes.  Throws InvalidArgument when the training split would be empty.
SplitIndices split_indices(const std::vector<double>& labels, std::size_t num_classes,
                           double validation_fraction, double test_fraction, bool stratify,
                           dptune::RandomBitGenerator& rng);

/// k disjoint parts of rows 0..n-1, complete, sizes floor(n/k) or ceil(n/k), each part ascending;
/// membership is a uniformly random assignment (a shuffle cut in k consecutive blocks).
std::vector<Indices> partition_indices(std::size_t n, std::size_t k,
                                       dptune::RandomBitGenerator& rng);

struct ShardOptions {
  enum class Distribution { Iid, Dirichlet };
  Distribution distribution = Distribution::Iid;
  double dirichlet_beta = 0.5;  // concentration: small = skewed, large = close to iid
  std::size_t min_shard_size = 2;
};

/// `clients` disjoint shards covering rows 0..n-1 (each ascending): the clients' membership in
/// client_layout below (the same draws from `rng`, so the same shards for the same generator).
/// Throws InvalidArgument when clients · min_shard_size > n or clients == 0.
std::vector<Indices> shard_indices(const std::vector<double>& labels, std::size_t num_classes,
                                   std::size_t clients, const ShardOptions& options,
                                   dptune::RandomBitGenerator& rng);

/// A client's own train/validation split of its shard (not stratified: a shard may hold one class).
/// The validation part has round(fraction · size) rows, but at least 1 and at most size - 1 when
/// fraction > 0 and size >= 2.  A seeded shuffle of the shard: used for iid shards, whose sizes
/// are public, so the split never looks at a record.
struct ClientSplit {
  Indices train, validation;
};
ClientSplit split_client(const Indices& shard, double validation_fraction,
                         dptune::RandomBitGenerator& rng);

/// `clients` client shards of rows 0..n-1, each split into the client's own train and validation
/// parts (each ascending), with the guarantee a record-level privacy argument needs: replacing one
/// record (its features, its label or both) changes the placement of that record and of no other,
/// so the data of at most two clients change (docs/threat-model.md, "Data layouts").
///   Iid: a random partition into equal sizes (as partition_indices), each shard split by
///   split_client: membership and split depend on n alone; one record changes one client.
///   Dirichlet(β) by label (Hsu, Qi & Brown 2019; the non-iid split of Liebenow et al. 2025 §V-B):
///   proportions p_c ~ Dir(β,...,β) over the clients for every declared class c; each row's client
///   is drawn from its own label's p_c with randomness keyed by its slot (row index), and its part
///   (validation with probability `validation_fraction`) likewise.  A label-independent base of
///   min_shard_size rows per client (a seeded choice of slots, dealt round-robin) guarantees the
///   minimum without a retry or repair that would look at the labels; base position 0 is the
///   client's validation row and 1 a training row.  One record's label moves at most that record,
///   from one client to another: two clients change.  Needs min_shard_size >= 2 when
///   validation_fraction > 0.
/// Throws InvalidArgument when clients · min_shard_size > n or clients == 0.
std::vector<ClientSplit> client_layout(const std::vector<double>& labels, std::size_t num_classes,
                                       std::size_t clients, const ShardOptions& options,
                                       double validation_fraction, dptune::RandomBitGenerator& rng);

/// Mean total-variation distance between each shard's label distribution and the global one: 0 for
/// perfectly balanced shards, up to 1 - 1/C for single-class shards.  A measure of Dirichlet skew.
double mean_label_skew(const std::vector<double>& labels, std::size_t num_classes,
                       const std::vector<Indices>& shards);

/// Gamma(shape, 1) by Marsaglia & Tsang (2000), "A simple method for generating gamma variables",
/// with the boost U^(1/shape) for shape < 1.  Uses the SDK's gaussian() and uniform_open01().
double gamma_sample(dptune::RandomBitGenerator& rng, double shape);

/// Per-column standardisation (x - mean) / sd, fitted on one dataset and applied to others.
/// A column whose standard deviation is 0 (or not finite) gets scale 1: it is centred only.
struct Standardizer {
  std::vector<double> mean, scale;
  /// From the dataset's float rows when it has them, else from its double features.
  static Standardizer fit(const dptune::Dataset& train);
  /// On double features only (the host keeps its data as float rows, preprocessed once).
  void apply(dptune::Dataset& data) const;
};

/// What the host does to every row before training and scoring (the data section's
/// `preprocessing`, docs/data.md).  A private guarantee covers the preprocessed data only when the
/// preprocessing does not depend on the private data: it is record-local (one record changes its
/// own row only, so the trainers' clipping and sensitivity arguments hold unchanged) or uses
/// statistics the user declares public.  Fitted standardisation (statistics of the private
/// training split) is neither: one record moves every row, so no ε covers it.
struct Preprocessing {
  enum class Kind {
    None,           // rows as read
    ClipRows,       // x ← x · min(1, bound / ‖x‖₂): record-local
    NormalizeRows,  // x ← x / ‖x‖₂ (0 stays 0): record-local; the default
    Standardize,    // x_j ← (x_j − mean_j) / scale_j with PUBLIC mean and scale
    Bounds,         // x_j clamped to PUBLIC [min_j, max_j], mapped affinely onto [-1, 1] or [0, 1]
    FittedStandardize,  // mean and scale of the private training split: explicit opt-in only
  };
  Kind kind = Kind::NormalizeRows;
  double bound = 1.0;                    // ClipRows
  std::vector<double> mean{}, scale{};   // Standardize (given), FittedStandardize (after fitting)
  std::vector<double> lower{}, upper{};  // Bounds
  bool unit_interval = false;            // Bounds: [0, 1] instead of [-1, 1]
  /// The statistics were given as one number for every feature (e.g. pixels in [0, 255]): each
  /// vector holds one value until prepared() repeats it for every column.
  bool every_feature = false;
  /// Statistics given by column name: the name of each value (any order); prepared() puts them in
  /// the features' order.  Empty: the vectors are in the features' order already.
  std::vector<std::string> names{};
  std::string source{};  // where the public statistics came from ("inline", a file)
  /// "file:line:col: data.preprocessing.KEY" of the vectors, for errors found when the data
  /// is loaded (a length that differs from the number of features).
  std::string where{};

  static const char* name(Kind kind);
  std::string name() const { return name(kind); }
  bool fitted() const { return kind == Kind::FittedStandardize; }
  /// What the guarantee takes as public, "" when nothing is (record-local preprocessing).
  std::string assumed_public() const;
  /// One line for the report: what ran and what it assumes.
  std::string describe() const;
  /// The fitted statistics for FittedStandardize (from `train`), a check of the lengths otherwise;
  /// throws ConfigError naming `where` when the public vectors do not match train.cols.
  Preprocessing prepared(const dptune::Dataset& train) const;
  /// Statistics given by name, put in the order of `features`; throws ConfigError naming `where`
  /// for a feature without a value or a name that is no feature.
  Preprocessing in_feature_order(const std::vector<std::string>& features) const;
  /// Applies a prepared preprocessing to one row of `cols` values, in place (computed in double;
  /// a float row is rounded once, at the end).
  void apply_row(double* row, std::size_t cols) const;
  void apply_row(float* row, std::size_t cols) const;
  /// To a dataset's double features (`features`; not float rows, which are shared read-only).
  void apply(dptune::Dataset& data) const;
  /// To `values.size() / cols` float rows in place: the host's storage before it is shared.  The
  /// rows are split over `threads` (each row's values do not depend on it).
  void apply(std::vector<float>& values, std::size_t cols, std::size_t threads = 1) const;
};

}  // namespace dptune::host
