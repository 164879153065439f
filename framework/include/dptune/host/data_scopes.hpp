// dptune host: what each DataScope means on a pipeline's data.  The evaluator owns one DataScopes
// per pipeline; the layouts (k-way partitions, n client shards) are drawn once per count from
// their own deterministic streams and reused, so partition i or client j means the same rows in
// every evaluation (subsample-and-aggregate needs disjoint, fixed parts: Ding et al., Lemma 2).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "dptune/data.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/rng.hpp"

namespace dptune::host {

/// Stream ids of the data layout (the evaluator's own streams are 0 for the tuner and
/// (batch + 1) << 32 | task for runs, which never collide with these).
struct LayoutStreams {
  static constexpr std::uint64_t kSplit = 1;                            // the split
  static constexpr std::uint64_t kPartitionBase = 2;                    // + k
  static constexpr std::uint64_t kClientBase = std::uint64_t{1} << 31;  // + n
  static constexpr std::uint64_t kSubsample = std::uint64_t{3} << 30;   // the one shuffle
};

/// The data of one run: what it trains on and what it is scored on.  Shared pointers so that the
/// whole-data scope refers to the fixed split without copying it (they then point into the
/// DataSplits given to select(), which must outlive them).  A partition or a client's part is an
/// owned Dataset whose float rows are a view (an index list) of the split's one storage: no run
/// copies the features, whatever its scope, trial or thread.
struct ScopedData {
  std::shared_ptr<const dptune::Dataset> train;
  std::shared_ptr<const dptune::Dataset> scored;
  dptune::Sensitivity sensitivity;
};

/// True when `a` and `b` name the same rows (kind, index and count).
inline bool same_scope(const dptune::DataScope& a, const dptune::DataScope& b) {
  return a.kind == b.kind && a.index == b.index && a.count == b.count;
}

/// The data of some scopes alone (a rank of a distributed run that evaluates only these:
/// Tuner::rank_scopes, ABI 2.10): every train and scored set of `data` as an owned Dataset whose
/// float rows are re-indexed into new storage holding just the rows some set uses (in their
/// stored order), so that nothing refers to the storage they came from and it can be freed.  Each
/// set keeps its rows, their order and its labels exactly: a run on it computes what it computed
/// on the whole data's view.
std::vector<ScopedData> keep_only(const std::vector<ScopedData>& data);

/// How many float rows the storages behind `sets` hold together (each storage counted once).
std::size_t stored_rows(const std::vector<const dptune::Dataset*>& sets);

class DataScopes {
 public:
  using MakeRng = std::function<std::unique_ptr<dptune::RandomBitGenerator>(std::uint64_t stream)>;

  /// `train` is the pipeline's fixed training split (its rows and labels define the layouts).
  DataScopes(const dptune::Dataset& train, ShardSettings sharding, MakeRng make_rng);

  /// Throws InvalidArgument unless index < count <= training rows, or, for a subsample,
  /// 1 <= rows <= training rows.
  void check(const dptune::DataScope& scope) const;
  /// k disjoint parts of the training rows, sizes differing by at most 1.
  const std::vector<Indices>& partitions(std::size_t count) const;
  /// n client shards of the training rows (iid or Dirichlet by label, as the data section says),
  /// each split into the client's own train and validation parts.  Throws ConfigError when the
  /// training split cannot give n shards of min_shard_size rows.
  const std::vector<ClientSplit>& clients(std::size_t count) const;
  /// A subsample of m training rows (sorted): the first m of one shuffle of all n rows, drawn
  /// from the layout's own stream (kSubsample) once, so it depends on n and the seed alone and
  /// every row is in it with probability m/n; smaller subsamples are nested in larger ones.
  Indices subsample(std::size_t rows) const;
  /// Rows a run on `scope` trains on.
  std::size_t train_rows(const dptune::DataScope& scope) const;

  /// The data of one run on `scope`: `train` holds the rows it trains on, `scored` what it is
  /// scored on — the pipeline's held-out split (`score_split`) for the whole data and partitions,
  /// the client's own validation part for a client.  `all` is the fixed split or, for a workload
  /// (`workload`: a fresh draw per run), that run's draw, whose truth is its own answers.
  ScopedData select(const DataSplits& all, const dptune::DataScope& scope, ScoreSplit score_split,
                    bool workload) const;

 private:
  std::size_t rows_;
  std::vector<double> labels_;
  std::size_t num_classes_;
  ShardSettings sharding_;
  MakeRng make_rng_;
  mutable std::mutex mutex_;
  mutable std::map<std::size_t, std::vector<Indices>> partitions_;
  mutable std::map<std::size_t, std::vector<ClientSplit>> clients_;
  mutable Indices subsample_order_;  // the shuffle subsample() takes prefixes of (drawn once)
};

}  // namespace dptune::host
