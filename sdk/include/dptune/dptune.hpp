// dptune SDK: the plugin contract, everything the host and a plugin share (docs/sdk-contract.md).
// The helpers plugins may call (Pareto fronts, repetition distributions, calibration, the exact
// samplers, grid noise, evaluate_for_map, ...) are not included: they are under dptune/helpers/
// and in the library dptune::helpers.
#pragma once
#include "dptune/abi.hpp"
#include "dptune/data.hpp"
#include "dptune/dp_event.hpp"
#include "dptune/errors.hpp"
#include "dptune/event_kinds.hpp"
#include "dptune/model_files.hpp"
#include "dptune/params.hpp"
#include "dptune/plugin.hpp"
#include "dptune/privacy.hpp"
#include "dptune/rng.hpp"
#include "dptune/schema.hpp"
#include "dptune/search_space.hpp"
