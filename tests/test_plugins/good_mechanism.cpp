// A well-formed mechanism plugin: adds a fixed offset to every value.
#include <vector>

#include "dptune/plugin.hpp"
#include "dptune/rng.hpp"

namespace {

class OffsetMechanism final : public dptune::Mechanism {
 public:
  explicit OffsetMechanism(const dptune::Params& params)
      : offset_(params.get_double("offset")), epsilon_(params.get_double("epsilon")) {}

  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_float("offset", "added to every value").default_to(1.0);
    schema.add_float("epsilon", "privacy of one release").min_exclusive(0).default_to(2.0);
    return schema;
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity&,
                              dptune::RandomBitGenerator&) const override {
    std::vector<double> out(values.begin(), values.end());
    for (double& value : out) value += offset_;
    return out;
  }
  dptune::DpEvent event() const override { return dptune::DpEvent::pure_dp(epsilon_); }

 private:
  double offset_;
  double epsilon_;
};

}  // namespace

DPTUNE_PLUGIN(mechanism, test_offset, OffsetMechanism, "1.2.3", "test: adds an offset")
