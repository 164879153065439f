#include "support.hpp"

#include "build_paths.hpp"
#include "dptune/host/event_yaml.hpp"

#include <regex>

#include <doctest/doctest.h>

namespace trainer_tests {

dptune::Dataset blobs(std::size_t n, std::size_t d, std::size_t classes, double separation,
                      std::uint64_t seed) {
  dptune::Xoshiro256 rng(seed);
  std::vector<double> centres(classes * d);
  for (double& c : centres) c = dptune::gaussian(rng, separation);
  dptune::Dataset data;
  data.name = "blobs";
  data.rows = n;
  data.cols = d;
  data.num_classes = classes;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t y = i % classes;
    for (std::size_t j = 0; j < d; ++j)
      data.features.push_back(centres[y * d + j] + dptune::gaussian(rng, 1.0));
    data.labels.push_back(static_cast<double>(y));
  }
  return data;
}

dptune::Dataset slice(const dptune::Dataset& data, std::size_t begin, std::size_t end) {
  dptune::Dataset out = data;
  out.rows = end - begin;
  out.features.assign(data.features.begin() + static_cast<std::ptrdiff_t>(begin * data.cols),
                      data.features.begin() + static_cast<std::ptrdiff_t>(end * data.cols));
  out.labels.assign(data.labels.begin() + static_cast<std::ptrdiff_t>(begin),
                    data.labels.begin() + static_cast<std::ptrdiff_t>(end));
  return out;
}

double accuracy(const dptune::Dataset& data, const dptune::Predictions& p) {
  std::size_t correct = 0;
  for (std::size_t i = 0; i < data.rows; ++i) correct += p.values[i] == data.labels[i];
  return static_cast<double>(correct) / static_cast<double>(data.rows);
}

const dptune::host::PluginRegistry& registry() {
  static dptune::host::PluginRegistry* r = [] {
    auto* reg = new dptune::host::PluginRegistry();
    reg->scan(dptune_test::build_paths::built_plugin_dir);
    return reg;
  }();
  return *r;
}

namespace {
dptune::Params complete(dptune::PluginKind kind, const std::string& name,
                        const dptune::Params& params) {
  const auto* info = registry().find(kind, name);
  REQUIRE_MESSAGE(info != nullptr, "plugin " << name << " not built");
  return info->schema.complete(params);
}
}  // namespace

dptune::DpEvent secure_noise(const dptune::DpEvent& event) {
  // Every {gaussian: {noise_multiplier: σ}} becomes what the secure `gaussian` mechanism states,
  // {discrete_gaussian_on_grid: {noise_multiplier: σ, min_scale: 2^22}}.
  const std::string text = std::regex_replace(
      event.to_string(), std::regex(R"(\{gaussian: \{noise_multiplier: ([^}]*)\}\})"),
      "{discrete_gaussian_on_grid: {noise_multiplier: $1, min_scale: 4194304}}");
  return dptune::host::parse_event(text, "secure_noise");
}

std::shared_ptr<dptune::Trainer> trainer(const std::string& name, const dptune::Params& params) {
  return registry().create_trainer(name, complete(dptune::PluginKind::Trainer, name, params));
}
std::shared_ptr<dptune::Mechanism> mechanism(const std::string& name,
                                             const dptune::Params& params) {
  return registry().create_mechanism(name, complete(dptune::PluginKind::Mechanism, name, params));
}
std::shared_ptr<dptune::Accountant> accountant(const std::string& name) {
  return registry().create_accountant(name, complete(dptune::PluginKind::Accountant, name, {}));
}
std::shared_ptr<dptune::Utility> utility(const std::string& name, const dptune::Params& params) {
  return registry().create_utility(name, complete(dptune::PluginKind::Utility, name, params));
}

}  // namespace trainer_tests
