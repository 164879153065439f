// The pld accountant's parameters: their schema and the calculator options they give.  Shared by
// the pld plugin and the `best` accountant, which builds a pld member from its own parameters.
#pragma once

#include "dptune/params.hpp"
#include "dptune/schema.hpp"
#include "pld/calculator.hpp"

namespace dptune::pld {

/// `value_discretization_interval`, `tail_mass_truncation`, with their bounds and defaults.
dptune::ParamSchema plugin_schema();
/// The calculator options of complete parameters of plugin_schema().
Options options_from(const dptune::Params& params);

}  // namespace dptune::pld
