// The `pld` accountant plugin: privacy loss distributions with pessimistic discretisation (see
// pld/calculator.hpp).  The math lives in dptune_pld_core (pld::Calculator, its parameters in
// pld/plugin_params.hpp); this is the plugin face.
#include "dptune/dptune.hpp"
#include "pld/calculator.hpp"
#include "pld/plugin_params.hpp"

namespace {

class PldAccountant final : public dptune::pld::AccountantAdapter {
 public:
  explicit PldAccountant(const dptune::Params& params)
      : AccountantAdapter(dptune::pld::options_from(params)) {}

  static dptune::ParamSchema schema() { return dptune::pld::plugin_schema(); }
};

}  // namespace

DPTUNE_PLUGIN(accountant, pld, PldAccountant, "1.0.0",
              "Privacy loss distribution accountant (Meiser & Mohammadi 2018; Doroshenko et al. "
              "2022): Gaussian, Laplace, pure and approximate DP, Poisson-sampled Gaussian and "
              "Laplace, the Gaussian on fixed-size lots (replace-one), composition by FFT, one_of; "
              "pessimistic (an upper bound)")
