#include "dptune/host/model_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/yaml_load.hpp"
#include "dptune/errors.hpp"

namespace dptune::host {

namespace {

bool known_output(const std::string& output) {
  return output == "sigmoid" || output == "hinge" || output == "softmax" ||
         output == "multiclass_hinge" || output == "one_vs_rest";
}

void write_numbers(JsonWriter& w, const std::vector<double>& values) {
  w.begin_array();
  for (double v : values) w.value(v);
  w.end_array();
}

// ---- reading (JSON is YAML: yaml-cpp parses model.json; numbers by std::from_chars, so every
// double written by JsonWriter's shortest round-trip form comes back bit for bit)

struct Reader {
  std::filesystem::path file;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw dptune::Error(file.string() + ": " + key + ": " + what);
  }
  YAML::Node field(const YAML::Node& node, const std::string& name, const std::string& path) const {
    const YAML::Node child = node[name];
    if (!child) fail(path + name, "missing");
    return child;
  }
  double number(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(key, "not a number");
    const std::string& text = node.Scalar();
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
      fail(key, "'" + text + "' is not a number");
    return value;
  }
  std::size_t count(const YAML::Node& node, const std::string& key) const {
    const double v = number(node, key);
    if (!(v >= 0) || v != std::floor(v)) fail(key, "not a non-negative integer");
    return static_cast<std::size_t>(v);
  }
  std::string text(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(key, "not a string");
    return node.Scalar();
  }
  std::vector<double> numbers(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence()) fail(key, "not a list of numbers");
    std::vector<double> out;
    out.reserve(node.size());
    for (std::size_t i = 0; i < node.size(); ++i)
      out.push_back(number(node[i], key + "[" + std::to_string(i) + "]"));
    return out;
  }
};

void write_preprocessing(JsonWriter& w, const Preprocessing& p) {
  using Kind = Preprocessing::Kind;
  w.key("preprocessing").begin_object();
  w.key("kind").value(p.name());
  w.key("description").value(p.describe());
  switch (p.kind) {
    case Kind::ClipRows:
      w.key("bound").value(p.bound);
      break;
    case Kind::Standardize:
    case Kind::Bounds:
      w.key("assumed_public").value(p.assumed_public());
      w.key("rule").value(p.kind == Kind::Bounds
                              ? "x = (clamp(x, min, max) - mean) / scale, per column"
                              : "x = (x - mean) / scale, per column");
      if (p.kind == Kind::Bounds) {
        w.key("min");
        write_numbers(w, p.lower);
        w.key("max");
        write_numbers(w, p.upper);
      }
      w.key("mean");
      write_numbers(w, p.mean);
      w.key("scale");
      write_numbers(w, p.scale);
      break;
    case Kind::FittedStandardize:
      // The fitted statistics are a function of the private data that no guarantee covers.
      w.key("released").value(false);
      w.key("note").value(
          "mean and scale were fitted on the private training split and are not released; this "
          "model cannot score raw rows");
      break;
    default:
      break;
  }
  w.end_object();
}

Preprocessing read_preprocessing(const Reader& r, const YAML::Node& node, std::size_t features) {
  using Kind = Preprocessing::Kind;
  if (!node.IsMap()) r.fail("preprocessing", "not an object");
  const std::string kind = r.text(r.field(node, "kind", "preprocessing."), "preprocessing.kind");
  Preprocessing p;
  bool known = false;
  for (Kind k : {Kind::None, Kind::ClipRows, Kind::NormalizeRows, Kind::Standardize, Kind::Bounds,
                 Kind::FittedStandardize})
    if (kind == Preprocessing::name(k)) {
      p.kind = k;
      known = true;
    }
  if (!known) r.fail("preprocessing.kind", "unknown preprocessing '" + kind + "'");
  if (p.kind == Kind::ClipRows)
    p.bound = r.number(r.field(node, "bound", "preprocessing."), "preprocessing.bound");
  if (p.kind == Kind::Standardize || p.kind == Kind::Bounds) {
    p.mean = r.numbers(r.field(node, "mean", "preprocessing."), "preprocessing.mean");
    p.scale = r.numbers(r.field(node, "scale", "preprocessing."), "preprocessing.scale");
    if (p.kind == Kind::Bounds) {
      p.lower = r.numbers(r.field(node, "min", "preprocessing."), "preprocessing.min");
      p.upper = r.numbers(r.field(node, "max", "preprocessing."), "preprocessing.max");
    } else {
      p.lower = p.upper = p.mean;
    }
    if (p.mean.size() != features || p.scale.size() != features || p.lower.size() != features ||
        p.upper.size() != features)
      r.fail("preprocessing", "the statistics need " + std::to_string(features) + " values each");
    if (p.kind == Kind::Standardize) p.lower.clear(), p.upper.clear();
  }
  return p;
}

}  // namespace

void check_model_export(const dptune::ModelExport& m) {
  const auto fail = [&](const std::string& what) {
    throw dptune::Error("exported model '" + m.kind + "': " + what);
  };
  if (m.layers.empty()) fail("no layers");
  if (m.input_map != "none" && m.input_map != "unit_ball_intercept")
    fail("unknown input_map '" + m.input_map + "'");
  if (!known_output(m.output)) fail("unknown output '" + m.output + "'");
  std::size_t expected = m.features + (m.input_map == "unit_ball_intercept" ? 1 : 0);
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const auto& layer = m.layers[l];
    const std::string at = "layer " + std::to_string(l) + ": ";
    if (layer.inputs != expected)
      fail(at + std::to_string(layer.inputs) + " inputs, the previous stage gives " +
           std::to_string(expected));
    if (layer.outputs == 0) fail(at + "no outputs");
    if (layer.weights.size() != layer.inputs * layer.outputs)
      fail(at + std::to_string(layer.weights.size()) + " weights for " +
           std::to_string(layer.inputs) + " x " + std::to_string(layer.outputs));
    if (layer.bias.size() != layer.outputs)
      fail(at + std::to_string(layer.bias.size()) + " biases for " + std::to_string(layer.outputs) +
           " outputs");
    if (layer.activation != "relu" && layer.activation != "identity")
      fail(at + "unknown activation '" + layer.activation + "'");
    expected = layer.outputs;
  }
  const bool one = expected == 1;
  if (one != (m.output == "sigmoid" || m.output == "hinge"))
    fail("output '" + m.output + "' with " + std::to_string(expected) + " scores");
  if (m.num_classes < 2 || (!one && m.num_classes != expected))
    fail(std::to_string(m.num_classes) + " classes with " + std::to_string(expected) + " scores");
}

void write_model_fields(JsonWriter& w, const ExportedModel& exported) {
  const dptune::ModelExport& m = exported.model;
  if (!exported.kept_in_files()) check_model_export(m);
  w.key("kind").value(m.kind);
  w.key("description").value(m.description);
  w.key("features").value(m.features);
  if (exported.feature_names.size() == m.features) {
    w.key("feature_names").begin_array();
    for (const auto& name : exported.feature_names) w.value(name);
    w.end_array();
  }
  if (!exported.categorical.empty()) {
    w.key("categorical").begin_object();
    for (const auto& column : exported.categorical) {
      w.key(column.name).begin_array();
      for (const auto& category : column.categories) w.value(category);
      w.end_array();
    }
    w.end_object();
  }
  w.key("num_classes").value(m.num_classes);
  write_preprocessing(w, exported.preprocessing);
  if (exported.kept_in_files()) {
    w.key("files").begin_array();
    for (const auto& f : exported.files) w.value(f);
    w.end_array();
    w.key("trainer_params").value(exported.trainer_params);
    return;
  }
  w.key("input_map").value(m.input_map);
  w.key("layers").begin_array();
  for (const auto& layer : m.layers) {
    w.begin_object();
    w.key("inputs").value(layer.inputs);
    w.key("outputs").value(layer.outputs);
    w.key("activation").value(layer.activation);
    w.key("weights_layout").value("inputs x outputs, row-major; z = a W + b");
    w.key("weights");
    write_numbers(w, layer.weights);
    w.key("bias");
    write_numbers(w, layer.bias);
    w.end_object();
  }
  w.end_array();
  w.key("output").value(m.output);
}

namespace {

/// A parameter value as written by JsonWriter::value(Value): a quoted scalar is a string (yaml-cpp
/// tags it "!"), true/false a bool, an integer an int, any other number a float (a float schema
/// takes an int as well).
dptune::Value param_value(const Reader& r, const YAML::Node& node, const std::string& key) {
  const std::string text = r.text(node, key);
  if (node.Tag() == "!") return dptune::Value{text};
  if (text == "true" || text == "false") return dptune::Value{text == "true"};
  std::int64_t integer = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (ec == std::errc() && end == text.data() + text.size()) return dptune::Value{integer};
  return dptune::Value{r.number(node, key)};
}

/// The fields of a model kept in files: the algorithm, its parameters and the files, each a
/// relative path without "..", as the release wrote them.
void read_files_model(const Reader& r, const YAML::Node& root, ExportedModel& out) {
  out.algorithm = r.text(r.field(root, "algorithm", ""), "algorithm");
  const YAML::Node files = r.field(root, "files", "");
  if (!files.IsSequence() || files.size() == 0) r.fail("files", "expected a list of file names");
  for (std::size_t k = 0; k < files.size(); ++k) {
    const std::string key = "files[" + std::to_string(k) + "]";
    const std::filesystem::path name(r.text(files[k], key));
    bool inside = !name.empty() && name.is_relative();
    for (const auto& part : name) inside = inside && part != "..";
    if (!inside) r.fail(key, "'" + name.string() + "' is not a path inside model.json's folder");
    out.files.push_back(name.string());
  }
  const YAML::Node params = r.field(root, "trainer_params", "");
  if (!params.IsMap()) r.fail("trainer_params", "expected an object");
  for (const auto& entry : params) {
    const std::string name = entry.first.as<std::string>();
    out.trainer_params.set(name, param_value(r, entry.second, "trainer_params." + name));
  }
}

}  // namespace

ExportedModel read_model_file(const std::filesystem::path& file) {
  const Reader r{file};
  YAML::Node root;
  try {
    root = load_yaml_file(file);
  } catch (const YAML::Exception& e) {
    throw dptune::Error(file.string() + ": not a readable model file: " + e.what());
  }
  if (!root.IsMap()) r.fail("(top level)", "not an object");
  const std::string format = r.text(r.field(root, "format", ""), "format");
  if (format != kModelFileFormat && format != kModelFileFormatWithoutNames)
    r.fail("format", std::string("expected '") + kModelFileFormat + "'");
  ExportedModel out;
  dptune::ModelExport& m = out.model;
  m.kind = r.text(r.field(root, "kind", ""), "kind");
  m.description = r.text(r.field(root, "description", ""), "description");
  m.features = r.count(r.field(root, "features", ""), "features");
  m.num_classes = r.count(r.field(root, "num_classes", ""), "num_classes");
  if (const YAML::Node names = root["feature_names"]; names) {
    if (!names.IsSequence() || names.size() != m.features)
      r.fail("feature_names", "expected a list of " + std::to_string(m.features) + " names");
    for (std::size_t j = 0; j < names.size(); ++j)
      out.feature_names.push_back(r.text(names[j], "feature_names[" + std::to_string(j) + "]"));
  }
  if (const YAML::Node categorical = root["categorical"]; categorical) {
    if (!categorical.IsMap()) r.fail("categorical", "expected an object of category lists");
    for (const auto& entry : categorical) {
      CategoricalColumn column{entry.first.as<std::string>(), {}};
      const std::string key = "categorical." + column.name;
      if (!entry.second.IsSequence() || entry.second.size() == 0)
        r.fail(key, "expected a non-empty list of categories");
      for (std::size_t k = 0; k < entry.second.size(); ++k)
        column.categories.push_back(r.text(entry.second[k], key + "[" + std::to_string(k) + "]"));
      out.categorical.push_back(std::move(column));
    }
  }
  out.preprocessing = read_preprocessing(r, r.field(root, "preprocessing", ""), m.features);
  if (out.kept_in_files()) {
    read_files_model(r, root, out);
    return out;
  }
  m.input_map = r.text(r.field(root, "input_map", ""), "input_map");
  m.output = r.text(r.field(root, "output", ""), "output");
  const YAML::Node layers = r.field(root, "layers", "");
  if (!layers.IsSequence()) r.fail("layers", "not a list");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string at = "layers[" + std::to_string(l) + "].";
    dptune::ModelExport::Layer layer;
    layer.inputs = r.count(r.field(layers[l], "inputs", at), at + "inputs");
    layer.outputs = r.count(r.field(layers[l], "outputs", at), at + "outputs");
    layer.activation = r.text(r.field(layers[l], "activation", at), at + "activation");
    layer.weights = r.numbers(r.field(layers[l], "weights", at), at + "weights");
    layer.bias = r.numbers(r.field(layers[l], "bias", at), at + "bias");
    m.layers.push_back(std::move(layer));
  }
  try {
    check_model_export(m);
  } catch (const dptune::Error& e) {
    throw dptune::Error(file.string() + ": " + e.what());
  }
  return out;
}

std::vector<double> exported_scores(const ExportedModel& exported, const dptune::Dataset& raw) {
  const dptune::ModelExport& m = exported.model;
  check_model_export(m);
  if (raw.cols != m.features)
    throw dptune::InvalidArgument("model expects " + std::to_string(m.features) +
                                  " features, the data has " + std::to_string(raw.cols));
  if (exported.preprocessing.fitted())
    throw dptune::Error(
        "the model was trained on rows standardised with a mean and scale fitted on the private "
        "training data (preprocessing: fitted_standardize), which are not released: it cannot "
        "score raw rows");
  const std::size_t outputs = m.layers.back().outputs;
  std::vector<double> scores(raw.rows * outputs);
  std::vector<double> a, z;
  for (std::size_t i = 0; i < raw.rows; ++i) {
    // The host's own data are float rows (ABI 2.7); data read for `dptune predict` are doubles.
    if (raw.float_rows.empty())
      a.assign(raw.row(i), raw.row(i) + raw.cols);
    else
      a.assign(raw.float_rows.row(i), raw.float_rows.row(i) + raw.cols);
    exported.preprocessing.apply_row(a.data(), a.size());
    if (m.input_map == "unit_ball_intercept") {
      // x̃ = [x / max(1, ‖x‖), 1] / √2 (plugins/trainer/training, training/training.hpp).
      double norm2 = 0;
      for (double x : a) norm2 += x * x;
      const double scale = 1.0 / (std::max(1.0, std::sqrt(norm2)) * std::sqrt(2.0));
      for (double& x : a) x *= scale;
      a.push_back(1.0 / std::sqrt(2.0));
    }
    for (const auto& layer : m.layers) {
      z = layer.bias;
      for (std::size_t r = 0; r < layer.inputs; ++r) {
        const double ar = a[r];
        const double* w = layer.weights.data() + r * layer.outputs;
        for (std::size_t c = 0; c < layer.outputs; ++c) z[c] += ar * w[c];
      }
      if (layer.activation == "relu")
        for (double& v : z) v = std::max(0.0, v);
      a.swap(z);
    }
    std::copy(a.begin(), a.end(), scores.begin() + static_cast<std::ptrdiff_t>(i * outputs));
  }
  return scores;
}

std::vector<std::string> copy_released_files(const dptune::ModelFiles& released,
                                             const std::filesystem::path& results) {
  namespace fs = std::filesystem;
  const fs::path folder(released.folder);
  std::vector<std::string> written;
  for (const auto& name : released.files) {
    const fs::path relative = fs::path(name).lexically_normal();
    bool inside = !relative.empty() && relative.is_relative();
    for (const auto& part : relative) inside = inside && part != "..";
    if (!inside)
      throw dptune::Error("the released model's file '" + name + "' is not inside its run folder");
    const fs::path from = folder / relative;
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(from, ec)))
      throw dptune::Error("the released model's file " + from.string() + " is not a regular file");
    const fs::path to = results / kReleasedFilesFolder / relative;
    fs::create_directories(to.parent_path());
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
    written.push_back((fs::path(kReleasedFilesFolder) / relative).generic_string());
  }
  return written;
}

dptune::ModelFiles files_of(const ExportedModel& model, const std::filesystem::path& model_file) {
  namespace fs = std::filesystem;
  dptune::ModelFiles files;
  // The copies keep the names the program gave them, under model/ beside model.json.
  files.folder = (fs::absolute(model_file).parent_path() / kReleasedFilesFolder).string();
  for (const auto& name : model.files)
    files.files.push_back(fs::path(name).lexically_relative(kReleasedFilesFolder).string());
  files.description = model.model.description;
  files.features = model.model.features;
  files.num_classes = model.model.num_classes;
  files.trainer_params = model.trainer_params;
  return files;
}

std::filesystem::path keep_released_run(const dptune::ModelFiles& released) {
  namespace fs = std::filesystem;
  if (released.keep_folder.empty()) return {};
  const fs::path keep(released.keep_folder);
  fs::create_directories(keep);
  fs::permissions(keep, fs::perms::owner_all, fs::perm_options::replace);
  fs::path target = keep / "released-run";
  fs::remove_all(target);
  fs::copy(released.folder, target, fs::copy_options::recursive);
  fs::permissions(target, fs::perms::owner_all, fs::perm_options::replace);
  return target;
}

dptune::Predictions predict_exported(const ExportedModel& exported, const dptune::Dataset& raw) {
  const std::vector<double> scores = exported_scores(exported, raw);
  const std::size_t outputs = exported.model.layers.back().outputs;
  const std::size_t classes = exported.model.num_classes;
  dptune::Predictions out;
  out.num_classes = classes;
  out.values.resize(raw.rows);
  out.probabilities.resize(raw.rows * classes);
  for (std::size_t i = 0; i < raw.rows; ++i) {
    const double* z = scores.data() + i * outputs;
    double* p = out.probabilities.data() + i * classes;
    if (outputs == 1) {  // sigmoid or hinge: class 1 iff z > 0
      p[1] = 1.0 / (1.0 + std::exp(-z[0]));
      p[0] = 1.0 - p[1];
      out.values[i] = z[0] > 0 ? 1.0 : 0.0;
      continue;
    }
    const std::size_t best = static_cast<std::size_t>(std::max_element(z, z + outputs) - z);
    double total = 0;
    for (std::size_t k = 0; k < outputs; ++k) total += p[k] = std::exp(z[k] - z[best]);
    for (std::size_t k = 0; k < outputs; ++k) p[k] /= total;
    out.values[i] = static_cast<double>(best);
  }
  return out;
}

}  // namespace dptune::host
