// The `pld` accountant plugin: privacy loss distributions with pessimistic discretisation (see
// pld/calculator.hpp).  The math lives in dptune_pld_core (pld::Calculator); this is the plugin
// face.
#include "dptune/dptune.hpp"
#include "pld/calculator.hpp"

namespace {

dptune::pld::Options options_from(const dptune::Params& params) {
  dptune::pld::Options options;
  options.value_discretization_interval = params.get_double("value_discretization_interval");
  options.tail_mass_truncation = params.get_double("tail_mass_truncation");
  return options;
}

class PldAccountant final : public dptune::pld::AccountantAdapter {
 public:
  explicit PldAccountant(const dptune::Params& params) : AccountantAdapter(options_from(params)) {}

  static dptune::ParamSchema schema() {
    // One parameter per group of lines, with its bounds, choices and default.
    // clang-format off
    return dptune::ParamSchema{}
        .add_float("value_discretization_interval",
                   "grid step h of the privacy losses, in (0, 1]: smaller is tighter and slower; "
                   "every answer stays an upper bound (pessimistic discretisation, "
                   "Doroshenko et al. 2022)")
            .min_exclusive(0).max(1).default_to(1e-4)
        .add_float("tail_mass_truncation",
                   "probability mass, in (0, 1e-3], that each discretisation or composition may "
                   "move to the tails (the upper tail to an infinite loss, so it adds at most "
                   "this much to delta)")
            .min_exclusive(0).max(1e-3).default_to(1e-15);
    // clang-format on
  }
};

}  // namespace

DPTUNE_PLUGIN(accountant, pld, PldAccountant, "1.0.0",
              "Privacy loss distribution accountant (Meiser & Mohammadi 2018; Doroshenko et al. "
              "2022): Gaussian, Laplace, pure and approximate DP, Poisson-sampled Gaussian and "
              "Laplace, the Gaussian on fixed-size lots (replace-one), composition by FFT, one_of; "
              "pessimistic (an upper bound)")
