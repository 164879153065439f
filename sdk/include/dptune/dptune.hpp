// dptune SDK: everything a plugin author needs.
#pragma once
#include "dptune/abi.hpp"
#include "dptune/data.hpp"
#include "dptune/dp_event.hpp"
#include "dptune/errors.hpp"
#include "dptune/params.hpp"
#include "dptune/pareto.hpp"
#include "dptune/plugin.hpp"
#include "dptune/privacy.hpp"
#include "dptune/rng.hpp"
#include "dptune/schema.hpp"
#include "dptune/search_space.hpp"
#include "dptune/tuning.hpp"
