// The rdp accountant's parameters: their schema and the calculator options they give.  Shared by
// the rdp plugin and the `best` accountant, which builds an rdp member from its own parameters.
#pragma once

#include "dptune/params.hpp"
#include "dptune/schema.hpp"
#include "rdp/calculator.hpp"

namespace dptune::rdp {

/// `orders`, `conversion`, `analytic_gaussian`, with their bounds, choices and defaults.
dptune::ParamSchema plugin_schema();
/// The calculator options of complete parameters of plugin_schema().
Options options_from(const dptune::Params& params);

}  // namespace dptune::rdp
