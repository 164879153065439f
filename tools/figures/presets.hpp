// dptune-figures: the named figures (each a simulator with the values of one published figure)
// and their command-line options.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dptune::figures {

struct Preset {
  std::string name;       // also the run name in the plots' titles
  std::string simulator;  // "dp_hype" or "svt_doubling"
  std::string summary;    // one line: what it reproduces
  std::vector<std::pair<std::string, std::string>> values;  // over the simulator's defaults
};

const std::vector<Preset>& presets();
/// Null when there is no figure of that name.
const Preset* find_preset(const std::string& name);
/// "a, b, c": every figure's name.
std::string preset_names();
/// Every option of the preset's simulator (with seed, out, threads), resolved: the simulator's
/// defaults, then the preset's values.
std::map<std::string, std::string> resolved_values(const Preset& preset);
/// "--a, --b": the options a figure takes.
std::string option_names(const Preset& preset);
/// `dptune-figures list`: every figure, its summary and its values.
std::string describe_presets();
/// The command that reproduces a figure with these values (every option spelled out).
std::string command_line(const Preset& preset, const std::map<std::string, std::string>& values);

}  // namespace dptune::figures
