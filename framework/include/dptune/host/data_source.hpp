// dptune host: built-in data sources (the pipeline's `data:` section).  Not plugins: the data layer
// belongs to the host, which partitions and shards data for the tuners.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dptune/data.hpp"
#include "dptune/params.hpp"
#include "dptune/rng.hpp"
#include "dptune/schema.hpp"

namespace dptune::host {

/// Training data and the held-out data the utility oracle scores on.
struct DataSplits {
  dptune::Dataset train;
  dptune::Dataset validation;
  /// How far the algorithm's input moves between neighbouring datasets (for mechanisms applied to
  /// the answers vector directly).
  dptune::Sensitivity sensitivity;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  /// True when every run needs a fresh draw (a synthetic workload in a new random order per run).
  virtual bool varies_per_run() const = 0;
  virtual DataSplits make(dptune::RandomBitGenerator& rng) const = 0;
  virtual std::string describe() const = 0;
};

struct DataSourceInfo {
  std::string name;
  std::string description;
  dptune::ParamSchema schema;
};

const std::vector<DataSourceInfo>& data_sources();
const DataSourceInfo* find_data_source(const std::string& name);
/// `params` complete (validated by the config loader).
std::unique_ptr<DataSource> make_data_source(const std::string& name, const dptune::Params& params);

}  // namespace dptune::host
