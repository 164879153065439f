// A fixture for include_graph.py (never compiled): a public header of folder alpha (src/alpha/a.cpp).
#pragma once
