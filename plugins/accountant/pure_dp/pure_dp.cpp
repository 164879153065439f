// The `pure_dp` accountant: the rdp accountant restricted to events that have a pure or approximate
// DP bound (NoOp, PureDp, ApproxDp, Laplace, and their compositions, sampling and
// repeat-and-select). It delegates every number to the rdp accountant's calculator
// (rdp::Calculator), so the two never disagree; what it adds is the refusal of events without
// such a bound (Gaussian, zCDP, sampled Gaussian), which need `rdp`.
#include "dptune/dptune.hpp"
#include "rdp/calculator.hpp"

namespace {

class PureDpAccountant final : public dptune::rdp::AccountantAdapter {
 public:
  explicit PureDpAccountant(const dptune::Params&) : AccountantAdapter(options()) {}
  static dptune::ParamSchema schema() { return {}; }

 private:
  static dptune::rdp::Options options() {
    dptune::rdp::Options o;
    o.name = "pure_dp";
    o.pure_only = true;
    return o;
  }
};

}  // namespace

DPTUNE_PLUGIN(accountant, pure_dp, PureDpAccountant, "2.0.0",
              "pure and approximate DP events (Laplace, PureDp, ApproxDp and compositions); "
              "delegates to the rdp accountant")
