// dptune host: built-in data sources (the pipeline's `data:` section).  Not plugins: the data layer
// belongs to the host, which splits, partitions and shards data for the tuners.
//
// Sources: binary_queries (a synthetic workload), csv, libsvm, idx, blobs, and builtin:NAME for the
// datasets bundled in data/ (see data/NOTICE).  Every labelled source shares the split, scaling and
// sharding parameters documented in docs/data.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dptune/data.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/params.hpp"
#include "dptune/rng.hpp"
#include "dptune/schema.hpp"

namespace dptune::host {

/// Training data and the held-out data the utility oracle scores on.
struct DataSplits {
  dptune::Dataset train;
  dptune::Dataset validation;
  /// Held out for the final score (`utility: {split: test}`); empty when the source has none.
  dptune::Dataset test;
  /// How far the algorithm's input moves between neighbouring datasets (for mechanisms applied to
  /// the answers vector directly).
  dptune::Sensitivity sensitivity;
  /// The preprocessing applied to every split (prepared: fitted_standardize holds the statistics
  /// of `train`).  Written with a released model when it is public (never the fitted statistics).
  Preprocessing preprocessing;
};

/// How client shards (DataScope::client) are cut from the training split.
struct ShardSettings {
  ShardOptions options;
  /// Each client's shard is split again into the client's own train and validation parts.
  double client_validation_fraction = 0.2;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  /// True when every run needs a fresh draw (a synthetic workload in a new random order per run).
  virtual bool varies_per_run() const = 0;
  /// Loads or generates the data and splits it.  The host calls this once per pipeline with the
  /// data-layout stream (unless varies_per_run), so the split is fixed for the whole pipeline.
  virtual DataSplits make(dptune::RandomBitGenerator& rng) const = 0;
  /// make() for the pipeline's fixed data: `rng` is the data-layout stream and `seed` the seed it
  /// derives from (nullopt: secure randomness, whose words are never drawn twice).  A source may
  /// keep what it read and hand it out again, so that a process holding one source reads its
  /// files once: `dptune run` checks the pipeline on the data and then runs the study on the same
  /// rows.  The result is the one make() would return.
  virtual DataSplits make_fixed(dptune::RandomBitGenerator& rng,
                                std::optional<std::uint64_t> seed) const {
    static_cast<void>(seed);
    return make(rng);
  }
  virtual std::string describe() const = 0;
  virtual ShardSettings sharding() const { return {}; }
  /// Drops what make_fixed keeps for its next call, so that a process that keeps only some rows
  /// (HostEvaluator::confine) frees the others; a later make_fixed reads the data again.
  virtual void forget() const {}
};

struct DataSourceInfo {
  std::string name;
  std::string description;
  dptune::ParamSchema schema;
  /// String parameters that name files: the config loader resolves them against the pipeline
  /// file's folder.
  std::vector<std::string> path_params;
};

/// A data source's parameters are inconsistent in a way its schema cannot say; `key()` names the
/// parameter to point at.
class DataParamError : public dptune::ConfigError {
 public:
  DataParamError(std::string key, const std::string& message)
      : dptune::ConfigError(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

const std::vector<DataSourceInfo>& data_sources();
const DataSourceInfo* find_data_source(const std::string& name);

/// Checks what the schema cannot (fractions summing below 1, files that exist, ...) on complete
/// params whose paths are already resolved.  Throws DataParamError.
void check_data_params(const std::string& name, const dptune::Params& params);

/// The categorical columns a data source's params declare (csv's `categorical`), in their order;
/// empty for other sources.  Throws DataParamError for a malformed declaration.
std::vector<CategoricalColumn> declared_categorical(const std::string& name,
                                                    const dptune::Params& params);
/// A `categorical` text (YAML flow text of a map of columns to category lists) as columns.
std::vector<CategoricalColumn> parse_categorical(const std::string& text);

/// The declared label set of a data section (docs/data.md, "A public schema"): the labels in class
/// order from `classes` (csv, libsvm, idx), the public description (builtin:NAME), or 0..C-1 for
/// blobs; empty when the classes are inferred from the rows.  `params` complete.  Throws
/// DataParamError("classes") for a malformed list.
std::vector<std::string> declared_class_names(const std::string& name,
                                              const dptune::Params& params);

/// What a private tuner's data section must declare and does not: the key under data.params and a
/// message saying what to add.
struct MissingSchema {
  std::string key;
  std::string message;
};
/// Nothing that shapes a private run may be counted from the private rows: the label set
/// (csv, libsvm, idx) and libsvm's feature count must be declared.  nullopt when they are (or
/// the source's schema is public by construction: bundled files, blobs, binary_queries).
std::optional<MissingSchema> missing_public_schema(const std::string& name,
                                                   const dptune::Params& params);

/// `params` complete (validated by the config loader); `preprocessing` applies to labelled sources
/// (absent: default_preprocessing(name)).  `threads`: how many threads a generated source may use
/// to compute its values (the run's executor threads; the data do not depend on it).
std::unique_ptr<DataSource> make_data_source(
    const std::string& name, const dptune::Params& params,
    const std::optional<Preprocessing>& preprocessing = std::nullopt, std::size_t threads = 1);

/// The preprocessing of a data section that names none: for a bundled dataset, `standardize` with
/// the public per-feature mean and scale frozen in data/public_stats/NAME.yaml (constants of the
/// repository, not fitted on any run's split); for every other source normalize_rows
/// (record-local).
Preprocessing default_preprocessing(const std::string& name);

/// Where a bundled file lives: $DPTUNE_DATA_DIR, then <exe>/../share/dptune/data (installed), then
/// the source tree's data/ (build tree).  Throws ConfigError listing the folders tried.
std::filesystem::path bundled_data_file(const std::string& file_name);

}  // namespace dptune::host
