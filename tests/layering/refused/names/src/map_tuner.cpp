// What the name check refuses: the host deciding a rule from a bundled plugin's name.
#include <string>

bool known_map_tuner(const std::string& tuner) { return tuner == "grid"; }
