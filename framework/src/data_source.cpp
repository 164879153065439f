#include "dptune/host/data_source.hpp"

#include <cmath>
#include <numeric>

#include "dptune/errors.hpp"

namespace dptune::host {

namespace {

// The workload of paper 000, §2.2 (sparse vector example): m binary queries of which exactly
// `positives` answer 1, in a fresh random order on every run.  Neighbouring datasets may change
// every answer by at most 1 (sensitivity Δ = 1 per query, as in Algorithm 1), hence l1 = m and l2 =
// √m.
class BinaryQueries final : public DataSource {
 public:
  explicit BinaryQueries(const dptune::Params& p)
      : queries_(static_cast<std::size_t>(p.get_int("queries"))),
        positives_(static_cast<std::size_t>(p.get_int("positives"))) {
    if (positives_ > queries_)
      throw dptune::ConfigError("data.params.positives: expected at most queries (" +
                                std::to_string(queries_) + "), got " + std::to_string(positives_));
  }
  bool varies_per_run() const override { return true; }
  DataSplits make(dptune::RandomBitGenerator& rng) const override {
    std::vector<std::size_t> order(queries_);
    std::iota(order.begin(), order.end(), 0);
    dptune::shuffle(rng, order);
    dptune::Dataset d;
    d.name = "binary_queries";
    d.rows = queries_;
    d.cols = 0;
    d.labels.assign(queries_, 0.0);
    for (std::size_t i = 0; i < positives_; ++i) d.labels[order[i]] = 1.0;
    d.num_classes = 2;
    DataSplits s;
    s.validation = d;  // the utility compares the release with these true answers
    s.train = std::move(d);
    const auto m = static_cast<double>(queries_);
    s.sensitivity = {1.0, m, std::sqrt(m)};
    return s;
  }
  std::string describe() const override {
    return std::to_string(queries_) + " binary queries, " + std::to_string(positives_) +
           " true, shuffled per run";
  }

 private:
  std::size_t queries_, positives_;
};

std::vector<DataSourceInfo> build_catalogue() {
  std::vector<DataSourceInfo> all;
  all.push_back({"binary_queries",
                 "m binary queries, exactly k of them true, in a fresh random order per run (paper "
                 "000 §2.2, sparse vector example)",
                 dptune::ParamSchema{}
                     .add_int("queries", "number of binary queries m")
                     .min(1)
                     .default_to(std::int64_t{100})
                     .add_int("positives", "queries whose true answer is 1")
                     .min(0)
                     .default_to(std::int64_t{10})});
  return all;
}

}  // namespace

const std::vector<DataSourceInfo>& data_sources() {
  static const std::vector<DataSourceInfo> catalogue = build_catalogue();
  return catalogue;
}

const DataSourceInfo* find_data_source(const std::string& name) {
  for (const auto& info : data_sources())
    if (info.name == name) return &info;
  return nullptr;
}

std::unique_ptr<DataSource> make_data_source(const std::string& name,
                                             const dptune::Params& params) {
  if (name == "binary_queries") return std::make_unique<BinaryQueries>(params);
  throw dptune::ConfigError("unknown data source '" + name + "'");
}

}  // namespace dptune::host
