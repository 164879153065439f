// A plugin source that includes a host header: the layering check refuses it.
#include "dptune/host/config.hpp"
