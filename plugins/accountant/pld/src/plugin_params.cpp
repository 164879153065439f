// The pld accountant's parameters: see pld/plugin_params.hpp.
#include "pld/plugin_params.hpp"

namespace dptune::pld {

dptune::ParamSchema plugin_schema() {
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

Options options_from(const dptune::Params& params) {
  Options options;
  options.value_discretization_interval = params.get_double("value_discretization_interval");
  options.tail_mass_truncation = params.get_double("tail_mass_truncation");
  return options;
}

}  // namespace dptune::pld
