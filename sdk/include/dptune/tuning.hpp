// Moved to dptune/helpers/tuning.hpp (the helper library libdptune_helpers, CMake target
// dptune::helpers), which is not part of the plugin contract (docs/sdk-contract.md, "Contract and
// helpers").  This header stays so that source written before the split still compiles; new code
// includes the new path and links dptune::helpers.
#pragma once
#include "dptune/helpers/tuning.hpp"
