// A fixture for include_graph.py (never compiled): alpha uses beta, and beta uses alpha.
#include "beta/b.hpp"
