#include "presets.hpp"

namespace dptune::figures {
namespace {

using Values = std::vector<std::pair<std::string, std::string>>;

// Liebenow et al. 2025 §IV-B: n = 250 clients, δ = 1e-5, σ from the rdp accountant (Theorem III.1
// + Theorem I.1), 5000 repetitions; the common point of Figures 2a-c is σ_loss = 0.2,
// |H_good| = 5, |H| = 100.  The paper does not list its k values; {1, 3, 5, 10, 25, 100} covers
// the ones it discusses.
const Values kDpHypeDefaults = {{"clients", "250"},      {"repetitions", "5000"},
                                {"epsilons", "0.25, 1"}, {"k", "1, 3, 5, 10, 100"},
                                {"sigma-loss", "0.2"},   {"good", "5"},
                                {"candidates", "100"},   {"calibration", "rdp"},
                                {"accountant", "rdp"},   {"delta", "1e-5"}};
constexpr const char* kPaperKs = "1, 3, 5, 10, 25, 100";

// Ding, Wu, Xu & Pan §4.2: |S| = 100 utilities uniform on (0, 1), g = 0.01.
const Values kSvtDefaults = {{"g", "0.01"},
                             {"candidates", "100"},
                             {"k-epsilons", "0.5, 5, 10"},
                             {"repetitions", "2000"},
                             {"trace-repetitions", "500"}};

// " --key 'value'", as a shell reads it back (no value holds a quote).
std::string option_text(const std::string& key, const std::string& value) {
  std::string text = " --";
  text.append(key).append(" '").append(value).append("'");
  return text;
}

const Values& defaults_of(const std::string& simulator) {
  return simulator == "dp_hype" ? kDpHypeDefaults : kSvtDefaults;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"dp_hype_simulation",
       "dp_hype",
       "Liebenow et al. 2025 Figure 2 at its common point: accuracy against k, one curve per "
       "epsilon (about 10 CPU seconds)",
       {}},
      {"dp_hype_figure2a",
       "dp_hype",
       "Liebenow et al. 2025 Figure 2a: accuracy against sigma_loss, one curve per (k, epsilon) "
       "(about 70 CPU seconds)",
       {{"k", kPaperKs}, {"sigma-loss", "0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0"}}},
      {"dp_hype_figure2b",
       "dp_hype",
       "Liebenow et al. 2025 Figure 2b: accuracy against |H_good| (about 72 CPU seconds)",
       {{"k", kPaperKs}, {"good", "1, 2, 4, 8, 16, 32, 64"}}},
      {"dp_hype_figure2c",
       "dp_hype",
       "Liebenow et al. 2025 Figure 2c: accuracy against |H|, 1000 repetitions (the paper: "
       "5000; Monte Carlo error <= 0.0158 instead of <= 0.0071) (about 56 CPU seconds)",
       {{"k", kPaperKs}, {"repetitions", "1000"}, {"candidates", "100, 300, 900, 2700"}}},
      {"svt_doubling_simulation",
       "svt_doubling",
       "Ding et al. Figures 3 and 4, the legend read literally (k epsilon in {0.5, 5, 10}) and "
       "low-noise settings (about a second)",
       {{"k-epsilons", "0.5, 5, 10, 50, 100, 1000"}}},
      {"svt_doubling_simulation_paper_fig3",
       "svt_doubling",
       "Ding et al. Figure 3 in the reading that reproduces it: the legend is the per-iteration "
       "epsilon with k = 10, k epsilon in {5, 50, 100}",
       {{"k-epsilons", "5, 50, 100"}, {"repetitions", "500"}}},
  };
  return all;
}

const Preset* find_preset(const std::string& name) {
  for (const auto& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string out;
  for (const auto& p : presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

std::map<std::string, std::string> resolved_values(const Preset& preset) {
  std::map<std::string, std::string> values = {
      {"seed", ""}, {"out", "results/" + preset.name}, {"threads", "0"}};
  for (const auto& [key, value] : defaults_of(preset.simulator)) values[key] = value;
  for (const auto& [key, value] : preset.values) values[key] = value;
  return values;
}

std::string option_names(const Preset& preset) {
  std::string out;
  for (const auto& [key, value] : resolved_values(preset))
    out += (out.empty() ? "--" : ", --") + key;
  return out + ", --overwrite, --no-plot";
}

std::string describe_presets() {
  std::string out;
  for (const auto& p : presets()) {
    out.append(p.name).append(" (").append(p.simulator).append("): ").append(p.summary);
    out += "\n ";
    for (const auto& [key, value] : resolved_values(p))
      if (key != "out" && key != "seed" && key != "threads") out += option_text(key, value);
    out += "\n";
  }
  return out;
}

std::string command_line(const Preset& preset, const std::map<std::string, std::string>& values) {
  std::string out = "dptune-figures " + preset.name;
  for (const auto& [key, value] : values)
    if (!value.empty()) out += option_text(key, value);
  return out;
}

}  // namespace dptune::figures
