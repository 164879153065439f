// A fixture for include_graph.py (never compiled).
#pragma once
#include "dptune/host/a.hpp"
