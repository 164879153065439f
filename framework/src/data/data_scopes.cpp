#include "dptune/host/data_scopes.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "dptune/errors.hpp"

namespace dptune::host {

DataScopes::DataScopes(const dptune::Dataset& train, ShardSettings sharding, MakeRng make_rng)
    : rows_(train.rows),
      labels_(train.labels),
      num_classes_(train.num_classes),
      sharding_(sharding),
      make_rng_(std::move(make_rng)) {}

void DataScopes::check(const dptune::DataScope& scope) const {
  if (scope.kind == dptune::DataScope::Kind::Whole) return;
  if (scope.kind == dptune::DataScope::Kind::Subsample) {
    if (scope.index == 0 || scope.index > rows_)
      throw dptune::InvalidArgument("data scope " + scope.to_string() + ": need 1 to " +
                                    std::to_string(rows_) + " rows (the training rows)");
    return;
  }
  if (scope.count == 0 || scope.index >= scope.count)
    throw dptune::InvalidArgument("data scope " + scope.to_string() + ": index must be < count");
  if (scope.count > rows_)
    throw dptune::InvalidArgument("data scope " + scope.to_string() + ": only " +
                                  std::to_string(rows_) + " training rows");
}

const std::vector<Indices>& DataScopes::partitions(std::size_t count) const {
  std::lock_guard lock(mutex_);
  auto it = partitions_.find(count);
  if (it == partitions_.end()) {
    auto rng = make_rng_(LayoutStreams::kPartitionBase + count);
    it = partitions_.emplace(count, partition_indices(rows_, count, *rng)).first;
  }
  return it->second;  // std::map never moves its elements
}

Indices DataScopes::subsample(std::size_t rows) const {
  check(dptune::DataScope::subsample(rows));
  std::lock_guard lock(mutex_);
  if (subsample_order_.empty()) {
    // One shuffle of the n row slots from the layout's own stream: a public function of n and the
    // seed.  A replaced record keeps its slot, so it is in the subsample on both neighbours or on
    // neither (the replace-one argument of docs/tuners/subsampled.md).
    subsample_order_.resize(rows_);
    std::iota(subsample_order_.begin(), subsample_order_.end(), std::size_t{0});
    auto rng = make_rng_(LayoutStreams::kSubsample);
    dptune::shuffle(*rng, subsample_order_);
  }
  Indices out(subsample_order_.begin(),
              subsample_order_.begin() + static_cast<std::ptrdiff_t>(rows));
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<ClientSplit>& DataScopes::clients(std::size_t count) const {
  std::lock_guard lock(mutex_);
  auto it = clients_.find(count);
  if (it == clients_.end()) {
    // Shards of the training split, iid or Dirichlet(β) by label (Liebenow et al. 2025 §V-B), each
    // split into the client's own train and validation parts: a client tunes on nothing but its own
    // data.  Slot-keyed: one record's replacement moves that record alone (client_layout).
    auto rng = make_rng_(LayoutStreams::kClientBase + count);
    std::vector<ClientSplit> splits;
    try {
      splits = client_layout(labels_, num_classes_, count, sharding_.options,
                             sharding_.client_validation_fraction, *rng);
    } catch (const dptune::InvalidArgument& e) {
      throw dptune::ConfigError("data: cannot shard the training split (" + std::to_string(rows_) +
                                " rows) for " + std::to_string(count) + " clients: " + e.what());
    }
    it = clients_.emplace(count, std::move(splits)).first;
  }
  return it->second;
}

std::size_t DataScopes::train_rows(const dptune::DataScope& scope) const {
  check(scope);
  switch (scope.kind) {
    case dptune::DataScope::Kind::Whole:
      return rows_;
    case dptune::DataScope::Kind::Partition:
      return partitions(scope.count)[scope.index].size();
    case dptune::DataScope::Kind::Subsample:
      return scope.index;
    case dptune::DataScope::Kind::Client:
      return clients(scope.count)[scope.index].train.size();
  }
  return rows_;
}

namespace {
/// A non-owning pointer (the aliasing constructor with an empty owner).
std::shared_ptr<const dptune::Dataset> borrow(const dptune::Dataset& d) {
  return std::shared_ptr<const dptune::Dataset>(std::shared_ptr<void>{}, &d);
}
std::shared_ptr<const dptune::Dataset> own(dptune::Dataset d) {
  return std::make_shared<const dptune::Dataset>(std::move(d));
}
}  // namespace

ScopedData DataScopes::select(const DataSplits& all, const dptune::DataScope& scope,
                              ScoreSplit score_split, bool workload) const {
  check(scope);
  const dptune::Dataset& held_out = score_split == ScoreSplit::Test ? all.test : all.validation;
  ScopedData out;
  out.sensitivity = all.sensitivity;
  switch (scope.kind) {
    case dptune::DataScope::Kind::Whole:
      out.train = borrow(all.train);
      out.scored = borrow(held_out);
      break;
    case dptune::DataScope::Kind::Partition:
    case dptune::DataScope::Kind::Subsample:
      out.train = own(subset(all.train, scope.kind == dptune::DataScope::Kind::Subsample
                                            ? subsample(scope.index)
                                            : partitions(scope.count)[scope.index]));
      out.scored = workload ? out.train : borrow(held_out);
      break;
    case dptune::DataScope::Kind::Client: {
      const ClientSplit& client = clients(scope.count)[scope.index];
      out.train = own(subset(all.train, client.train));
      out.scored = workload ? out.train : own(subset(all.train, client.validation));
      break;
    }
  }
  if (out.scored->rows == 0)
    throw dptune::ConfigError(
        "data scope " + scope.to_string() + ": nothing to score on: " +
        (scope.kind == dptune::DataScope::Kind::Client
             ? std::string("the client's validation part is empty (raise min_shard_size or "
                           "client_validation_fraction)")
             : std::string("the ") + to_string(score_split) +
                   " split is empty (raise its fraction in the data section)"));
  return out;
}

namespace {

using Storage = std::vector<float>;

/// True when `d` holds feature values as float rows (a workload has no columns).
bool has_float_rows(const dptune::Dataset& d) {
  return !d.float_rows.empty() && d.float_rows.cols() > 0;
}

/// Stored row (index into the storage) of every row of `rows` (cols > 0), in the view's order.
Indices stored_index(const dptune::FloatRows& rows) {
  const std::size_t cols = std::max<std::size_t>(1, rows.cols());
  Indices out(rows.rows());
  const float* base = rows.storage()->data();
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::size_t>(rows.row(i) - base) / cols;
  return out;
}

/// One storage's rows that the kept sets use, copied into a new storage.
struct Compacted {
  std::set<std::size_t> used;
  std::shared_ptr<Storage> values;
  std::vector<std::size_t> position;  // stored row -> its row in `values` (used rows only)
};

}  // namespace

std::vector<ScopedData> keep_only(const std::vector<ScopedData>& data) {
  // Each set becomes an owned copy first (labels and any double features are the set's own).
  std::vector<ScopedData> out = data;
  std::vector<dptune::Dataset*> sets;
  for (auto& d : out) {
    auto train = std::make_shared<dptune::Dataset>(*d.train);
    auto scored = d.scored == d.train ? train : std::make_shared<dptune::Dataset>(*d.scored);
    sets.push_back(train.get());
    if (scored != train) sets.push_back(scored.get());
    d.train = std::move(train);
    d.scored = std::move(scored);
  }
  std::map<const Storage*, Compacted> storages;
  for (const dptune::Dataset* set : sets)
    if (has_float_rows(*set)) {
      const Indices rows = stored_index(set->float_rows);
      storages[set->float_rows.storage()].used.insert(rows.begin(), rows.end());
    }
  for (dptune::Dataset* set : sets) {
    if (!has_float_rows(*set)) continue;
    Compacted& c = storages[set->float_rows.storage()];
    const std::size_t cols = std::max<std::size_t>(1, set->float_rows.cols());
    if (!c.values) {
      c.values = std::make_shared<Storage>();
      c.values->reserve(c.used.size() * cols);
      c.position.assign(set->float_rows.storage()->size() / cols, 0);
      const float* base = set->float_rows.storage()->data();
      std::size_t next = 0;
      for (std::size_t r : c.used) {
        c.values->insert(c.values->end(), base + r * cols, base + (r + 1) * cols);
        c.position[r] = next++;
      }
    }
    auto index = std::make_shared<Indices>(stored_index(set->float_rows));
    for (auto& r : *index) r = c.position[r];
    set->float_rows = dptune::FloatRows(c.values, cols, std::move(index));
  }
  return out;
}

std::size_t stored_rows(const std::vector<const dptune::Dataset*>& sets) {
  std::map<const Storage*, std::size_t> rows;
  for (const dptune::Dataset* set : sets)
    if (set && has_float_rows(*set))
      rows[set->float_rows.storage()] = set->float_rows.storage()->size() / set->float_rows.cols();
  std::size_t total = 0;
  for (const auto& [storage, n] : rows) total += n;
  return total;
}

}  // namespace dptune::host
