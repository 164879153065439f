// dptune-figures: what one paper-figure simulation produces.  The simulations reproduce published
// figures from simulated utilities or losses (no data, no private release); they live here, out of
// the tuner plugins, so that a tuner plugin holds only its tuning.
#pragma once

#include <string>
#include <vector>

#include "dptune/plugin.hpp"

namespace dptune::figures {

/// The figure's curves (written like a tuner's series: one CSV and one SVG per group), its table
/// (a CSV: header first, then one line per row) and notes that say how it was made.
struct Figure {
  std::vector<dptune::Series> series;
  std::string table_name;  // file stem of the table
  std::vector<std::string> table;
  std::vector<std::string> notes;
};

}  // namespace dptune::figures
