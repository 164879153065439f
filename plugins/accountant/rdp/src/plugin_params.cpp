// The rdp accountant's parameters: see rdp/plugin_params.hpp.
#include "rdp/plugin_params.hpp"

#include <string>

namespace dptune::rdp {

dptune::ParamSchema plugin_schema() {
  // One parameter per group of lines, with its bounds, choices and default.
  // clang-format off
  return dptune::ParamSchema{}
      .add_string("orders",
                  "Renyi orders: \"default\" (1.01..1.09, 1.1..10.9 by 0.1, 11..64, 80, 96, "
                  "128, 192, 256, 384, 512, 1024; doubled beyond 1024 while the largest wins) "
                  "or a comma-separated list of orders > 1")
          .default_to(std::string("default"))
      .add_string("conversion",
                  "RDP to (eps, delta): improved (Liebenow et al. 2025, Thm I.1) or classic "
                  "(Mironov 2017)")
          .default_to(std::string("improved")).one_of({"improved", "classic"})
      .add_bool("analytic_gaussian",
                "account events made only of Gaussians exactly, by the analytic Gaussian "
                "mechanism (Balle & Wang 2018), when that is tighter")
          .default_to(false);
  // clang-format on
}

Options options_from(const dptune::Params& params) {
  Options options;
  options.orders = parse_orders(params.get_string("orders"));
  // Listed orders are taken as meant; the default grid grows where its top order wins.
  options.extend_beyond_grid = params.get_string("orders") == "default";
  options.conversion =
      params.get_string("conversion") == "classic" ? Conversion::Classic : Conversion::Improved;
  options.analytic_gaussian = params.get_bool("analytic_gaussian");
  return options;
}

}  // namespace dptune::rdp
