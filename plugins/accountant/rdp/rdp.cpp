// The `rdp` accountant plugin: Rényi DP over a grid of orders, for every DpEvent kind (see
// rdp/calculator.hpp for the theorems).  The math lives in dptune_rdp_core (rdp::Calculator, its
// parameters in rdp/plugin_params.hpp); this is the plugin face.
#include "dptune/dptune.hpp"
#include "rdp/calculator.hpp"
#include "rdp/plugin_params.hpp"

namespace {

class RdpAccountant final : public dptune::rdp::AccountantAdapter {
 public:
  explicit RdpAccountant(const dptune::Params& params)
      : AccountantAdapter(dptune::rdp::options_from(params)) {}

  static dptune::ParamSchema schema() { return dptune::rdp::plugin_schema(); }
};

}  // namespace

DPTUNE_PLUGIN(accountant, rdp, RdpAccountant, "1.0.0",
              "Renyi DP accountant: Gaussian, Laplace, pure DP, zCDP, Poisson- and "
              "without-replacement-sampled Gaussian, composition, repeat-and-select (Papernot & "
              "Steinke 2022)")
