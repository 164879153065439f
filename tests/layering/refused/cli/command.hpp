// A command source that reaches into the host's private headers: the layering check refuses it.
#include "../src/json.hpp"
