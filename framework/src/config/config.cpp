// dptune host: YAML pipeline -> validated PipelineConfig (see dptune/host/config.hpp).
//
// The loader: reads the position-carrying tree of config_tree.hpp (with --set overrides applied)
// section by section, types every scalar from the schemas, and fails with a ConfigDiagnostic that
// names file, line, column and key.  Diagnostics and suggestions: config_diagnostics.cpp; the
// resolved pipeline as YAML: config_writer.cpp.
#include "dptune/host/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string_view>

#include "config/config_tree.hpp"
#include "dptune/errors.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/format.hpp"

namespace dptune::host {
using namespace config_tree;  // NOLINT(google-build-using-namespace): the loader reads the tree

namespace {

namespace fs = std::filesystem;

// ---- the loader ---------------------------------------------------------------------------------

std::vector<std::string> sorted_names(const Catalog& catalog, ComponentKind kind) {
  std::vector<std::string> names = catalog.names(kind);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

const char* noun(ComponentKind kind) {
  return kind == ComponentKind::Data ? "data source" : to_string(kind);
}

std::vector<std::string> spec_names(const ParamSchema& schema) {
  std::vector<std::string> names;
  for (const auto& spec : schema.specs()) names.push_back(spec.name);
  return names;
}

// What follows "'x' is not a parameter of C": a near-miss suggestion, or the parameters C takes.
std::string parameter_hint(const std::string& key, const ParamSchema& schema,
                           const std::string& component) {
  const auto names = spec_names(schema);
  if (auto best = did_you_mean(key, names)) return " (did you mean '" + *best + "'?)";
  return names.empty() ? "; " + component + " takes no parameters"
                       : "; parameters: " + join_list(names);
}

class Loader {
 public:
  Loader(const fs::path& file, const Catalog& catalog, Node root)
      : catalog_(catalog), root_(std::move(root)), base_(folder_of(file)) {
    config_.file = normalized(fs::absolute(file));
  }

  PipelineConfig load() {
    check_duplicates(root_, "");
    check_keys(root_, "",
               {"name", "plugin_paths", "data", "algorithm", "mechanism", "accountant", "utility",
                "search_space", "tuner", "execution", "output", "ledger"});
    require_keys(root_, root_.loc, "",
                 {"data", "algorithm", "accountant", "utility", "search_space", "tuner"});

    config_.name = config_.file.stem().string();
    if (const Entry* e = root_.find("name")) config_.name = nonempty_string(e->value, "name");
    config_.plugin_paths = plugin_paths_of(root_, base_);

    load_data(*root_.find("data"));
    load_algorithm(*root_.find("algorithm"));
    if (const Entry* e = root_.find("mechanism"); e && e->value.type != Node::Type::Null)
      config_.mechanism = component(*e, ComponentKind::Mechanism, {}, {});
    {
      const Entry& e = *root_.find("accountant");
      config_.accountant = component(e, ComponentKind::Accountant, {"delta"}, {"delta"});
      config_.delta = float_value(e.value.find("delta")->value, "delta", "accountant.delta");
      config_.delta_where = e.value.find("delta")->value.loc;
    }
    {
      const Entry& e = *root_.find("utility");
      config_.utility = component(e, ComponentKind::Utility, {"repetitions", "split"}, {});
      if (const Entry* r = e.value.find("repetitions"))
        config_.repetitions =
            static_cast<std::size_t>(int_value(r->value, "repetitions", "utility.repetitions"));
      if (const Entry* s = e.value.find("split")) {
        const auto split =
            std::get<std::string>(to_value(s->value, host_spec("split"), "utility.split"));
        config_.score_split = split == "test" ? ScoreSplit::Test : ScoreSplit::Validation;
        if (config_.score_split == ScoreSplit::Test &&
            config_.data.params.contains("test_fraction") &&
            config_.data.params.get_double("test_fraction") == 0)
          fail(s->value.loc, "utility.split",
               "the utility scores on the test split, but data.params.test_fraction is 0");
      }
    }
    load_search_space(*root_.find("search_space"));
    check_algorithm_complete(*root_.find("algorithm"));
    config_.tuner = component(*root_.find("tuner"), ComponentKind::Tuner, {}, {});
    // A tuner that declares nothing is private (the defaults of TunerTraits).
    config_.tuner_traits = config_.tuner.traits.tuner.value_or(dptune::TunerTraits{});
    check_preprocessing_for_tuner();
    load_execution();
    load_output();
    load_ledger();
    return std::move(config_);
  }

 private:
  const Catalog& catalog_;
  Node root_;
  fs::path base_;
  PipelineConfig config_;
  const ParamSchema* algorithm_schema_ = nullptr;
  const Node* algorithm_params_ = nullptr;  // the algorithm.params map, if given

  /// Checks a component section's keys and `use`; returns the `use` node.
  const Node& section_use(const Entry& section, const std::vector<std::string>& extra_keys,
                          const std::vector<std::string>& extra_required) {
    const std::string& path = section.key;
    if (section.value.type == Node::Type::Scalar)  // "tuner: grid"
      fail(section.value.loc, path,
           "expected a map, got " + describe(section.value) + " (write " + path +
               ": {use: " + section.value.scalar + "})");
    require_map(section.value, path);
    std::vector<std::string> allowed{"use", "params"};
    allowed.insert(allowed.end(), extra_keys.begin(), extra_keys.end());
    check_keys(section.value, path, allowed);
    std::vector<std::string> required{"use"};
    required.insert(required.end(), extra_required.begin(), extra_required.end());
    require_keys(section.value, section.key_loc, path, required);
    return section.value.find("use")->value;
  }

  /// Reads `params:` value by value against the schema (no completion).
  static Params read_params(const Entry& section, const ParamSchema& schema,
                            const std::string& component,
                            std::map<std::string, SourceLocation>& where) {
    Params params;
    const Entry* e = section.value.find("params");
    if (!e || e->value.type == Node::Type::Null) return params;
    const std::string path = join_path(section.key, "params");
    require_map(e->value, path);
    for (const auto& p : e->value.entries) {
      const std::string key_path = join_path(path, p.key);
      const ParamSpec* spec = schema.find(p.key);
      if (!spec)
        fail(p.key_loc, key_path,
             "unknown parameter '" + p.key + "' of " + component +
                 parameter_hint(p.key, schema, component));
      params.set(p.key, to_value(p.value, *spec, key_path));
      where[p.key] = p.value.loc;
    }
    return params;
  }

  /// The data section: a component, whose file parameters are resolved against the pipeline's
  /// folder, then checked as a whole by the data layer (fractions, files, ...).
  void load_data(const Entry& section) {
    class_list_as_text();
    categorical_map_as_text();
    config_.data = component(section, ComponentKind::Data, {"preprocessing"}, {});
    if (const Entry* pre = section.value.find("preprocessing"))
      load_preprocessing(*pre);
    else if (find_data_source(config_.data.use))
      config_.preprocessing = default_preprocessing(config_.data.use);
    ComponentConfig& c = config_.data;
    const DataSourceInfo* info = find_data_source(c.use);
    if (!info) return;  // a catalog of other data sources (tests): nothing more to check
    const Entry* params = section.value.find("params");
    auto where = [&](const std::string& key) -> std::pair<SourceLocation, std::string> {
      if (key.empty()) return {section.key_loc, "data"};
      const Entry* e =
          params && params->value.type == Node::Type::Map ? params->value.find(key) : nullptr;
      if (e) return {e->value.loc, "data.params." + key};
      return {section.key_loc, "data.params." + key};
    };
    for (const auto& key : info->path_params) {
      const std::string text = c.params.get_string(key);
      if (text.empty()) {
        auto [loc, path] = where(key);
        fail(loc, path, "expected a file name, got ''");
      }
      const fs::path file = resolve(base_, text);
      std::error_code ec;
      if (!fs::exists(file, ec)) {
        auto [loc, path] = where(key);
        fail(loc, path,
             "no such file '" + text + "'" +
                 (fs::path(text).is_relative() ? " (relative to the pipeline's folder)" : ""));
      }
      c.params.set(key, file.string());
    }
    try {
      check_data_params(c.use, c.params);
    } catch (const DataParamError& e) {
      auto [loc, path] = where(e.key());
      fail(loc, path, e.what());
    }
  }

  /// `data.params.classes` may be a list (`[0, 1]`, `[benign, malignant]`): the schema's string
  /// parameter holds it as YAML flow text, which the data layer reads (declared_class_names) and
  /// the resolved config writes back as it is.
  void class_list_as_text() {
    Entry* classes = data_param("classes");
    if (!classes || classes->value.type != Node::Type::Sequence) return;
    YAML::Emitter text;
    text << YAML::Flow << YAML::BeginSeq;
    for (std::size_t i = 0; i < classes->value.items.size(); ++i) {
      const Node& item = classes->value.items[i];
      if (item.type != Node::Type::Scalar || item.scalar.empty())
        fail(item.loc, index_path("data.params.classes", i),
             "expected a label (a number or a name), got " + describe(item));
      text << item.scalar;
    }
    text << YAML::EndSeq;
    replace_by_text(*classes, text.c_str());
  }

  /// data.params.KEY, when the data section has a params map that holds it.
  Entry* data_param(const char* key) {
    Entry* data = root_.find("data");
    Entry* params =
        data && data->value.type == Node::Type::Map ? data->value.find("params") : nullptr;
    return params && params->value.type == Node::Type::Map ? params->value.find(key) : nullptr;
  }

  /// A list or map given to a string parameter becomes its YAML flow text, kept at its location.
  static void replace_by_text(Entry& entry, const std::string& text) {
    Node flat;
    flat.type = Node::Type::Scalar;
    flat.scalar = text;
    flat.quoted = true;
    flat.loc = entry.value.loc;
    entry.value = std::move(flat);
  }

  /// `data.params.categorical` is a map of columns to category lists ({sex: [F, M]}): the
  /// schema's string parameter holds it as YAML flow text, which the data layer reads.
  void categorical_map_as_text() {
    Entry* map = data_param("categorical");
    if (!map || map->value.type == Node::Type::Scalar) return;
    const std::string path = "data.params.categorical";
    if (map->value.type != Node::Type::Map)
      fail(map->value.loc, path,
           "expected a map of columns to their category lists, e.g. {sex: [F, M]}");
    YAML::Emitter text;
    text << YAML::Flow << YAML::BeginMap;
    for (const Entry& column : map->value.entries) {
      if (column.value.type != Node::Type::Sequence || column.value.items.empty())
        fail(column.value.loc, path + "." + column.key,
             "expected a non-empty list of the column's categories, got " + describe(column.value));
      text << YAML::Key << column.key << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (std::size_t i = 0; i < column.value.items.size(); ++i) {
        const Node& item = column.value.items[i];
        if (item.type != Node::Type::Scalar || item.scalar.empty())
          fail(item.loc, index_path(path + "." + column.key, i),
               "expected a category (a number or a name), got " + describe(item));
        text << item.scalar;
      }
      text << YAML::EndSeq;
    }
    text << YAML::EndMap;
    replace_by_text(*map, text.c_str());
  }

  /// `data.preprocessing` (docs/data.md): a name, or a map {use: NAME, ...} whose public
  /// statistics are given inline or in a file (YAML or JSON, relative to the pipeline's folder).
  void load_preprocessing(const Entry& entry) {
    using Kind = Preprocessing::Kind;
    const std::string path = "data.preprocessing";
    const std::vector<std::string> names{"none",        "clip_rows", "normalize_rows",
                                         "standardize", "bounds",    "fitted_standardize"};
    const Node* use = &entry.value;
    const Node* map = nullptr;
    if (entry.value.type == Node::Type::Map) {
      map = &entry.value;
      check_keys(*map, path, {"use", "bound", "mean", "scale", "min", "max", "to", "file"});
      require_keys(*map, entry.key_loc, path, {"use"});
      use = &map->find("use")->value;
    }
    const std::string use_path = map ? path + ".use" : path;
    const std::string name = string_value(*use, use_path);
    const auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end())
      fail(use->loc, use_path,
           "unknown preprocessing '" + name + "'" + suggestion(name, names) +
               "; available: " + join_list(names));
    Preprocessing p;
    p.kind = static_cast<Kind>(found - names.begin());
    auto allow_only = [&](const std::vector<std::string>& keys) {
      if (!map) return;
      std::vector<std::string> allowed{"use"};
      allowed.insert(allowed.end(), keys.begin(), keys.end());
      for (const auto& e : map->entries)
        if (std::find(allowed.begin(), allowed.end(), e.key) == allowed.end())
          fail(e.key_loc, join_path(path, e.key),
               "'" + e.key + "' does not apply to preprocessing " + name +
                   (keys.empty() ? std::string() : "; its keys: " + join_list(keys)));
    };
    switch (p.kind) {
      case Kind::None:
      case Kind::NormalizeRows:
      case Kind::FittedStandardize:
        allow_only({});
        break;
      case Kind::ClipRows:
        allow_only({"bound"});
        if (const Entry* b = map ? map->find("bound") : nullptr) {
          p.bound = float_value(b->value, "float", path + ".bound");
          if (!(p.bound > 0) || !std::isfinite(p.bound))
            fail(b->value.loc, path + ".bound",
                 "expected a finite number > 0, got " + b->value.scalar);
        }
        break;
      case Kind::Standardize:
        allow_only({"mean", "scale", "file"});
        public_statistics(entry, map, "mean", "scale", p);
        for (std::size_t j = 0; j < p.scale.size(); ++j)
          if (!(p.scale[j] > 0))
            fail(second_statistics_loc_, statistics_path_ + "scale",
                 "scale[" + std::to_string(j) + "] must be > 0, got " + full_precision(p.scale[j]));
        break;
      case Kind::Bounds:
        allow_only({"min", "max", "to", "file"});
        public_statistics(entry, map, "min", "max", p);
        for (std::size_t j = 0; j < p.lower.size(); ++j)
          if (!(p.lower[j] <= p.upper[j]))
            fail(second_statistics_loc_, statistics_path_ + "max",
                 "max[" + std::to_string(j) + "] must be >= min[" + std::to_string(j) + "]");
        if (const Entry* to = map->find("to")) {
          const std::string t = string_value(to->value, path + ".to");
          if (t != "minus_one_to_one" && t != "zero_to_one")
            fail(to->value.loc, path + ".to",
                 "expected minus_one_to_one or zero_to_one, got '" + t + "'");
          p.unit_interval = t == "zero_to_one";
        }
        break;
    }
    preprocessing_loc_ = entry.key_loc;
    config_.preprocessing = std::move(p);
  }

  /// Statistics given by column name ({age: 50, sex=F: 0.5}): the values in the order of
  /// `names`, which the first of the two maps sets and the second must match as a set.  The data
  /// layer puts them in the features' order once the columns are known.
  std::vector<double> statistics_by_name(const Entry& e, const std::string& key_path,
                                         std::vector<std::string>& names) {
    if (e.value.type != Node::Type::Map || e.value.entries.empty())
      fail(e.value.loc, key_path,
           "expected a map of column names to numbers (as the other statistic), got " +
               describe(e.value));
    const bool first = names.empty();
    std::vector<double> out(first ? e.value.entries.size() : names.size(),
                            std::numeric_limits<double>::quiet_NaN());
    for (const Entry& column : e.value.entries) {
      const std::string at = key_path + "." + column.key;
      const double v = float_value(column.value, "float", at);
      if (!std::isfinite(v)) fail(column.value.loc, at, "expected a finite number");
      if (first) {
        if (std::find(names.begin(), names.end(), column.key) != names.end())
          fail(column.key_loc, at, "column '" + column.key + "' is given twice");
        out[names.size()] = v;
        names.push_back(column.key);
        continue;
      }
      const auto it = std::find(names.begin(), names.end(), column.key);
      if (it == names.end())
        fail(column.key_loc, at, "column '" + column.key + "' has no value in the other statistic");
      out[static_cast<std::size_t>(it - names.begin())] = v;
    }
    for (std::size_t j = 0; j < out.size(); ++j)
      if (std::isnan(out[j]))
        fail(e.value.loc, key_path, "column '" + names[j] + "' has no value here");
    return out;
  }

  /// Two public vectors (mean/scale or min/max), inline or from `file`: finite numbers, the same
  /// length.  Sets p.source and p.where (the location the data layer names when the length differs
  /// from the number of features).
  void public_statistics(const Entry& entry, const Node* map, const std::string& first,
                         const std::string& second, Preprocessing& p) {
    const std::string path = "data.preprocessing";
    if (!map)
      fail(entry.value.loc, path,
           "preprocessing " + entry.value.scalar +
               " needs public statistics: write {use: " + entry.value.scalar + ", " + first +
               ": [...], " + second + ": [...]} or {use: " + entry.value.scalar + ", file: FILE}");
    const Node* source = map;
    std::string prefix = path + ".";
    Node file_root;
    if (const Entry* f = map->find("file")) {
      if (map->find(first) || map->find(second))
        fail(f->key_loc, path + ".file",
             "give " + first + " and " + second + " inline or in a file, not both");
      const std::string text = nonempty_string(f->value, path + ".file");
      const fs::path file = resolve(base_, text);
      std::error_code ec;
      if (!fs::is_regular_file(file, ec))
        fail(f->value.loc, path + ".file",
             "no such file '" + text + "'" +
                 (fs::path(text).is_relative() ? " (relative to the pipeline's folder)" : ""));
      file_root = load_tree(file, {});
      require_map(file_root, file.string());
      check_keys(file_root, "", {first, second});
      require_keys(file_root, file_root.loc, file.string(), {first, second});
      source = &file_root;
      prefix = "";
      p.source = "file " + file.string();
    } else {
      require_keys(*map, entry.key_loc, path, {first, second});
      p.source = "given inline";
    }
    // One number stands for every feature (e.g. min: 0, max: 255 for pixels): both must then be
    // numbers, repeated over the columns once the data is loaded.
    const bool first_scalar = source->find(first)->value.type == Node::Type::Scalar;
    const bool second_scalar = source->find(second)->value.type == Node::Type::Scalar;
    if (first_scalar != second_scalar)
      fail(source->find(first_scalar ? second : first)->value.loc,
           prefix + (first_scalar ? second : first),
           "give " + first + " and " + second +
               " both as one number (the same for every feature) or both as lists");
    p.every_feature = first_scalar;
    const bool by_name = source->find(first)->value.type == Node::Type::Map;
    auto numbers = [&](const std::string& key) {
      const Entry* e = source->find(key);
      const std::string key_path = prefix + key;
      if (by_name) return statistics_by_name(*e, key_path, p.names);
      if (p.every_feature) {
        const double v = float_value(e->value, "float", key_path);
        if (!std::isfinite(v)) fail(e->value.loc, key_path, "expected a finite number");
        return std::vector<double>{v};
      }
      if (e->value.type != Node::Type::Sequence || e->value.items.empty())
        fail(e->value.loc, key_path,
             "expected a non-empty list of numbers, got " + describe(e->value));
      std::vector<double> out;
      for (std::size_t i = 0; i < e->value.items.size(); ++i) {
        const double v = float_value(e->value.items[i], "float", index_path(key_path, i));
        if (!std::isfinite(v))
          fail(e->value.items[i].loc, index_path(key_path, i), "expected a finite number");
        out.push_back(v);
      }
      return out;
    };
    std::vector<double> a = numbers(first), b = numbers(second);
    const Entry* first_entry = source->find(first);
    second_statistics_loc_ = source->find(second)->value.loc;
    statistics_path_ = prefix;
    if (a.size() != b.size())
      fail(source->find(second)->value.loc, prefix + second,
           second + " has " + std::to_string(b.size()) + " values, " + first + " has " +
               std::to_string(a.size()));
    p.where = first_entry->value.loc.to_string() + ": " + prefix + first;
    if (p.kind == Preprocessing::Kind::Standardize) {
      p.mean = std::move(a);
      p.scale = std::move(b);
    } else {
      p.lower = std::move(a);
      p.upper = std::move(b);
    }
  }

  /// A private tuner's whole point is its guarantee, and no guarantee covers a scaling fitted on
  /// the private data: refuse the opt-in there (the maps may use it, with every ε marked).
  /// Whether the tuner is private is what it declares, never its name: one that declares nothing
  /// is held to these rules.
  void check_preprocessing_for_tuner() {
    if (config_.tuner_traits.outputs != dptune::TunerOutputs::Private) return;
    check_split_for_private_tuner();
    check_schema_for_private_tuner();
    if (!config_.preprocessing.fitted()) return;
    fail(preprocessing_loc_, "data.preprocessing",
         "fitted_standardize fits mean and scale on the private training split, which the "
         "guarantee of the private tuner '" +
             config_.tuner.use +
             "' does not cover; use normalize_rows, clip_rows, none, or public statistics "
             "(standardize with mean and scale, or bounds with min and max)");
  }

  /// A stratified split keeps class proportions, so it depends on every record's label: replacing
  /// one record by one of another class moves other records between the splits, and no event
  /// covers that.  The default split (a seeded permutation of the row count) moves only the
  /// replaced record.
  void check_split_for_private_tuner() {
    if (!config_.data.params.contains("stratify") || !config_.data.params.get_bool("stratify"))
      return;
    const Entry* data = root_.find("data");
    const Entry* params = data ? data->value.find("params") : nullptr;
    const Entry* stratify = params ? params->value.find("stratify") : nullptr;
    fail(stratify ? stratify->value.loc : config_.data.where, "data.params.stratify",
         "a stratified split depends on every record's label (one replaced record can move others "
         "between the splits), which the guarantee of the private tuner '" +
             config_.tuner.use +
             "' does not cover; leave stratify false (the split is then a seeded permutation of "
             "the row count)");
  }

  /// The label set and libsvm's feature count shape the model and are published: a private tuner
  /// needs them declared (docs/data.md, "A public schema"), never counted from the private rows.
  void check_schema_for_private_tuner() {
    if (!find_data_source(config_.data.use)) return;
    const auto missing = missing_public_schema(config_.data.use, config_.data.params);
    if (!missing) return;
    const Entry* data = root_.find("data");
    const Entry* params = data ? data->value.find("params") : nullptr;
    const Entry* given = params ? params->value.find(missing->key) : nullptr;
    const SourceLocation where = given    ? given->value.loc
                                 : params ? params->value.loc
                                          : config_.data.where;
    fail(
        where, "data.params." + missing->key,
        "the private tuner '" + config_.tuner.use + "' needs a public schema: " + missing->message);
  }

  SourceLocation preprocessing_loc_, second_statistics_loc_;
  std::string statistics_path_;

  /// A component that declares a string parameter `pipeline_dir` is told the pipeline's folder
  /// (the command trainer resolves its program against it, dpareto its initial_trials), unless the
  /// pipeline sets it.
  void tell_pipeline_dir(const ParamSchema& schema, Params& params) const {
    if (const ParamSpec* dir = schema.find("pipeline_dir");
        dir && dir->type == ParamType::String && !params.contains("pipeline_dir"))
      params.set("pipeline_dir", base_.string());
  }

  ComponentConfig component(const Entry& section, ComponentKind kind,
                            const std::vector<std::string>& extra_keys,
                            const std::vector<std::string>& extra_required) {
    const Node& use = section_use(section, extra_keys, extra_required);
    const std::string use_path = join_path(section.key, "use");
    ComponentConfig c;
    c.kind = kind;
    c.use = string_value(use, use_path);
    c.where = section.key_loc;
    c.use_where = use.loc;
    const ParamSchema* schema = catalog_.schema(kind, c.use);
    if (!schema) {
      const auto names = sorted_names(catalog_, kind);
      fail(use.loc, use_path,
           std::string("unknown ") + noun(kind) + " '" + c.use + "'" + suggestion(c.use, names) +
               "; available: " + join_list(names));
    }
    c.params = read_params(section, *schema, c.use, c.param_where);
    tell_pipeline_dir(*schema, c.params);
    for (const auto& spec : schema->specs()) {
      if (c.params.contains(spec.name)) continue;
      if (!spec.default_value)
        fail(section.key_loc, section.key,
             "missing required parameter '" + spec.name + "' of " + c.use + " (" + spec.doc +
                 "): give it in " + section.key + ".params");
      c.params.set(spec.name, *spec.default_value);
    }
    if (kind != ComponentKind::Data) c.traits = declared_traits(c);
    return c;
  }

  /// What a plugin declares for its complete params (dptune/traits.hpp).  A traits() that
  /// throws is the plugin's error, reported at its section (exit 2).
  dptune::PluginTraits declared_traits(const ComponentConfig& c) const {
    try {
      return catalog_.traits(c.kind, c.use, c.params);
    } catch (const dptune::Error& e) {
      fail(c.where, to_string(c.kind), e.what());
    }
  }

  void load_algorithm(const Entry& section) {
    const Node& use = section_use(section, {}, {});
    ComponentConfig& c = config_.algorithm;
    c.use = string_value(use, "algorithm.use");
    c.where = section.key_loc;
    c.use_where = use.loc;
    c.kind = ComponentKind::Trainer;
    algorithm_schema_ = catalog_.schema(ComponentKind::Trainer, c.use);
    if (!algorithm_schema_) {
      c.kind = ComponentKind::Mechanism;
      algorithm_schema_ = catalog_.schema(ComponentKind::Mechanism, c.use);
    }
    if (!algorithm_schema_) {
      auto names = sorted_names(catalog_, ComponentKind::Trainer);
      for (const auto& m : sorted_names(catalog_, ComponentKind::Mechanism))
        if (std::find(names.begin(), names.end(), m) == names.end()) names.push_back(m);
      fail(use.loc, "algorithm.use",
           "unknown algorithm '" + c.use + "'" + suggestion(c.use, names) +
               "; available trainers and mechanisms: " + join_list(names));
    }
    c.params = read_params(section, *algorithm_schema_, c.use, c.param_where);
    tell_pipeline_dir(*algorithm_schema_, c.params);
    if (const Entry* p = section.value.find("params"); p && p->value.type == Node::Type::Map)
      algorithm_params_ = &p->value;
  }

  void check_algorithm_complete(const Entry& section) {
    for (const auto& spec : algorithm_schema_->specs()) {
      if (spec.default_value || config_.algorithm.params.contains(spec.name) ||
          config_.space.find(spec.name))
        continue;
      fail(section.key_loc, "algorithm",
           "missing required parameter '" + spec.name + "' of " + config_.algorithm.use +
               ": give it in algorithm.params or search_space");
    }
  }

  void load_search_space(const Entry& section) {
    require_map(section.value, "search_space");
    if (section.value.entries.empty())
      fail(section.value.loc, "search_space",
           "expected at least one dimension, e.g. C: {int: [1, 30]}");
    for (const auto& dim : section.value.entries) load_dimension(dim);
  }

  // Optuna users write {low: a, high: b}; say how dptune spells it rather than guess 'log'.
  static void explain_optuna_spelling(const Node& n, const std::string& path) {
    for (const char* key : {"low", "high"})
      if (const Entry* e = n.find(key))
        fail(e->key_loc, join_path(path, key),
             std::string("'") + key +
                 "' is Optuna's spelling; dptune writes a dimension's range as a list under its "
                 "type: {float: [low, high]} or {int: [low, high]}, with log: true for a log scale "
                 "(e.g. learning_rate: {float: [1.0e-4, 1.0e-1], log: true})");
  }

  /// The algorithm's parameter a search-space dimension names: refused when the algorithm has
  /// no such parameter or fixes it in algorithm.params.
  const ParamSpec& searchable_parameter(const Entry& dim, const std::string& path) {
    const std::string& algo = config_.algorithm.use;
    const ParamSpec* spec = algorithm_schema_->find(dim.key);
    if (!spec)
      fail(dim.key_loc, path,
           "'" + dim.key + "' is not a parameter of " + algo +
               parameter_hint(dim.key, *algorithm_schema_, algo));
    if (const Entry* fixed = algorithm_params_ ? algorithm_params_->find(dim.key) : nullptr)
      fail(dim.key_loc, path,
           "'" + dim.key + "' is also fixed in algorithm.params" +
               (fixed->key_loc.line > 0 ? " (line " + std::to_string(fixed->key_loc.line) + ")"
                                        : std::string(" (with --set)")) +
               ": a parameter is either fixed or searched");
    return *spec;
  }

  /// The dimension's one type key (float, int or categorical).
  const Entry& dimension_type(const Node& n, const std::string& path) {
    const Entry* kind = nullptr;
    for (const auto& e : n.entries) {
      if (e.key != "float" && e.key != "int" && e.key != "categorical") continue;
      if (kind)
        fail(e.key_loc, join_path(path, e.key),
             "'" + kind->key + "' and '" + e.key +
                 "' cannot be combined: a dimension is one of float, int or categorical");
      kind = &e;
    }
    if (!kind)
      fail(n.loc, path,
           "missing the dimension's type: one of the keys 'float', 'int' or 'categorical'");
    return *kind;
  }

  void load_dimension(const Entry& dim) {
    const std::string path = join_path("search_space", dim.key);
    const std::string& algo = config_.algorithm.use;
    const ParamSpec* spec = &searchable_parameter(dim, path);
    const Node& n = dim.value;
    require_map(n, path);
    explain_optuna_spelling(n, path);
    check_keys(n, path, {"float", "int", "categorical", "log", "step"});
    const Entry* kind = &dimension_type(n, path);
    const std::string kind_path = join_path(path, kind->key);
    const Entry* log_entry = n.find("log");
    const Entry* step_entry = n.find("step");

    if (kind->key == "categorical") {
      for (const Entry* e : {log_entry, step_entry})
        if (e)
          fail(e->key_loc, join_path(path, e->key),
               "'" + e->key + "' applies only to float and int dimensions");
      load_categorical(dim.key, kind->value, *spec, kind_path);
      return;
    }

    const bool is_float = kind->key == "float";
    const std::string type_text = dptune::to_string(spec->type);
    if (is_float ? spec->type != ParamType::Float
                 : spec->type != ParamType::Int && spec->type != ParamType::Float)
      fail(kind->key_loc, kind_path,
           "'" + dim.key + "' is " + (spec->type == ParamType::Int ? "an " : "a ") + type_text +
               " parameter of " + algo + ": use " +
               (spec->type == ParamType::Int ? "int: [low, high]" : "categorical: [a, b, ...]"));

    const Node& bounds = kind->value;
    if (bounds.type != Node::Type::Sequence || bounds.items.size() != 2)
      fail(bounds.loc, kind_path,
           "expected a list [low, high] of 2 numbers, got " +
               (bounds.type == Node::Type::Sequence
                    ? "a list of " + std::to_string(bounds.items.size()) + " element" +
                          (bounds.items.size() == 1 ? "" : "s")
                    : describe(bounds)));
    const Node& low_node = bounds.items[0];
    const Node& high_node = bounds.items[1];
    const Value low = to_value(low_node, host_spec(is_float ? "float" : "int"), kind_path);
    const Value high = to_value(high_node, host_spec(is_float ? "float" : "int"), kind_path);
    const double low_d =
        is_float ? std::get<double>(low) : static_cast<double>(std::get<std::int64_t>(low));
    const double high_d =
        is_float ? std::get<double>(high) : static_cast<double>(std::get<std::int64_t>(high));
    if (!(low_d < high_d))
      fail(bounds.loc, kind_path,
           "low bound " + low_node.scalar + " must be less than high bound " + high_node.scalar);

    const bool log = log_entry && bool_value(log_entry->value, join_path(path, "log"));
    if (log && low_d <= 0)
      fail(log_entry->value.loc, join_path(path, "log"),
           "log scale needs a low bound > 0, got " + low_node.scalar);
    double float_step = 0;
    std::int64_t int_step = 1;
    if (step_entry) {
      const std::string step_path = join_path(path, "step");
      if (is_float)
        float_step = float_value(step_entry->value, "float_step", step_path);
      else
        int_step = int_value(step_entry->value, "int_step", step_path);
      if (log) fail(step_entry->key_loc, step_path, "'step' cannot be combined with 'log: true'");
    }
    // Both bounds must be valid values of the parameter.
    to_value(low_node, *spec, kind_path);
    to_value(high_node, *spec, kind_path);

    try {
      if (is_float)
        config_.space.add_float(dim.key, low_d, high_d, log, float_step);
      else
        config_.space.add_int(dim.key, std::get<std::int64_t>(low), std::get<std::int64_t>(high),
                              log, int_step);
    } catch (const dptune::InvalidArgument& e) {
      fail(n.loc, path, e.what());
    }
  }

  void load_categorical(const std::string& name, const Node& list, const ParamSpec& spec,
                        const std::string& path) {
    if (list.type != Node::Type::Sequence)
      fail(list.loc, path, "expected a list of choices, got " + describe(list));
    if (list.items.empty()) fail(list.loc, path, "expected at least one choice, got an empty list");
    std::vector<Value> choices;
    for (const auto& item : list.items) {
      Value v = to_value(item, spec, path);
      for (std::size_t j = 0; j < choices.size(); ++j)
        if (choices[j] == v)
          fail(item.loc, path,
               "duplicate choice '" + item.scalar + "' (same as choice " + std::to_string(j + 1) +
                   ")");
      choices.push_back(std::move(v));
    }
    try {
      config_.space.add_categorical(name, std::move(choices));
    } catch (const dptune::InvalidArgument& e) {
      fail(list.loc, path, e.what());
    }
  }

  void load_execution() {
    const Entry* e = root_.find("execution");
    if (!e || e->value.type == Node::Type::Null) return;
    require_map(e->value, "execution");
    check_keys(e->value, "execution", {"executor", "threads", "seed"});
    if (const Entry* x = e->value.find("executor"))
      config_.execution.executor =
          std::get<std::string>(to_value(x->value, host_spec("executor"), "execution.executor"));
    if (const Entry* t = e->value.find("threads"))
      config_.execution.threads =
          static_cast<std::size_t>(int_value(t->value, "threads", "execution.threads"));
    if (const Entry* s = e->value.find("seed"))
      config_.execution.seed =
          static_cast<std::uint64_t>(int_value(s->value, "seed", "execution.seed"));
  }

  void load_output() {
    config_.output.dir = resolve(base_, "results/" + config_.name);
    const Entry* e = root_.find("output");
    if (!e || e->value.type == Node::Type::Null) return;
    require_map(e->value, "output");
    check_keys(e->value, "output", {"dir", "plot", "sensitive_trials", "test_score"});
    if (const Entry* d = e->value.find("dir"))
      config_.output.dir = resolve(base_, nonempty_string(d->value, "output.dir"));
    if (const Entry* p = e->value.find("plot"))
      config_.output.plot = bool_value(p->value, "output.plot");
    if (const Entry* s = e->value.find("sensitive_trials"))
      config_.output.sensitive_trials = bool_value(s->value, "output.sensitive_trials");
    if (const Entry* t = e->value.find("test_score"); t && t->value.type != Node::Type::Null)
      load_test_score(t->value);
  }

  /// `output.test_score`: {epsilon: E[, mechanism: laplace]} or {public: FILE}, one of the two.
  void load_test_score(const Node& node) {
    const std::string path = "output.test_score";
    require_map(node, path);
    check_keys(node, path, {"epsilon", "mechanism", "public"});
    const Entry* eps = node.find("epsilon");
    const Entry* pub = node.find("public");
    if (eps && pub)
      fail(pub->key_loc, path + ".public",
           "give either epsilon (a private score of the test split, its cost composed into the "
           "guarantee) or public (a test file declared public, scored without noise), not both");
    if (!eps && !pub)
      fail(node.loc, path,
           "needs epsilon (a private score of the test split) or public (a test file declared "
           "public)");
    if (const Entry* m = node.find("mechanism"); m && !eps)
      fail(m->key_loc, path + ".mechanism", "a public test score draws no noise; remove mechanism");
    else if (m)
      (void)to_value(m->value, host_spec("test_mechanism"), path + ".mechanism");
    if (config_.algorithm.kind != ComponentKind::Trainer)
      fail(node.loc, path,
           "the algorithm '" + config_.algorithm.use +
               "' is a mechanism, which releases no model to score on a test set");
    check_tuner_releases_model(node, path);
    TestScoreConfig t;
    t.where = node.loc;
    if (pub) {
      const std::string given = nonempty_string(pub->value, path + ".public");
      t.public_file = resolve(base_, given);
      t.value_where = pub->value.loc;
      if (!fs::is_regular_file(t.public_file))
        fail(pub->value.loc, path + ".public",
             "no such file: " + given + " (relative to the pipeline's folder)");
      if (config_.data.use != "csv" && config_.data.use != "libsvm")
        fail(pub->value.loc, path + ".public",
             "a public test file is read like the data section's file, which needs data "
             "'csv' or 'libsvm' (data is '" +
                 config_.data.use + "')");
    } else {
      check_private_test_score(eps->value, path);
      t.epsilon = float_value(eps->value, "test_epsilon", path + ".epsilon");
      t.value_where = eps->value.loc;
    }
    config_.output.test_score = std::move(t);
  }

  /// A schema's defaults (a parameter without one is left out).
  static dptune::Params defaults_of(const ParamSchema& schema) {
    dptune::Params out;
    for (const auto& spec : schema.specs())
      if (spec.default_value) out.set(spec.name, *spec.default_value);
    return out;
  }

  /// A test score scores the model the tuner releases, with its ε composed into the tuner's
  /// per-record guarantee: the tuner must declare that it releases a model (releases_model), be
  /// private (a map has no guarantee to compose into) and protect records (a client-level
  /// guarantee is not one a per-record score composes with).
  void check_tuner_releases_model(const Node& node, const std::string& path) {
    const dptune::TunerTraits& t = config_.tuner_traits;
    const bool map = t.outputs == dptune::TunerOutputs::Map;
    if (t.releases_model && !map && t.unit == dptune::GuaranteeUnit::Record) return;
    std::vector<std::string> releasing;
    for (const auto& name : sorted_names(catalog_, ComponentKind::Tuner)) {
      const ParamSchema* schema = catalog_.schema(ComponentKind::Tuner, name);
      if (!schema) continue;
      std::optional<dptune::TunerTraits> other;
      try {
        other = catalog_.traits(ComponentKind::Tuner, name, defaults_of(*schema)).tuner;
      } catch (const dptune::Error&) {
        continue;  // its traits need parameters it has no default for: not offered
      }
      if (other && other->releases_model && other->outputs == dptune::TunerOutputs::Private &&
          other->unit == dptune::GuaranteeUnit::Record)
        releasing.push_back(name);
    }
    std::string list;
    for (const auto& name : releasing) list += (list.empty() ? "" : ", ") + name;
    fail(node.loc, path,
         "tuner '" + config_.tuner.use + "' releases no model to score" +
             (map ? " (a privacy-utility map for trusted analysts, with no guarantee to compose a "
                    "private score into)"
                  : " (the selected candidate only)") +
             (releasing.empty() ? std::string("; no loaded tuner declares that it releases one")
                                : "; use a tuner that releases one (" + list + ")"));
  }

  /// A private test score needs a test split to score on.
  void check_private_test_score(const Node& eps, const std::string& path) {
    const double e = float_value(eps, "test_epsilon", path + ".epsilon");
    if (!std::isfinite(e))
      fail(eps.loc, path + ".epsilon", "expected a finite float > 0, got " + eps.scalar);
    if (config_.data.params.contains("test_fraction") &&
        config_.data.params.get_double("test_fraction") == 0)
      fail(eps.loc, path + ".epsilon",
           "a private test score needs a test split, but data.params.test_fraction is 0");
  }

  /// `ledger: {path, dataset, budget: {epsilon, delta}}`: the privacy filter's file
  /// (relative to the pipeline), the dataset the charges compose on, and the total budget.
  void load_ledger() {
    const Entry* e = root_.find("ledger");
    if (!e || e->value.type == Node::Type::Null) return;
    require_map(e->value, "ledger");
    check_keys(e->value, "ledger", {"path", "dataset", "budget"});
    require_keys(e->value, e->value.loc, "ledger", {"path", "dataset", "budget"});
    LedgerConfig ledger;
    ledger.where = e->value.loc;
    ledger.path = resolve(base_, nonempty_string(e->value.find("path")->value, "ledger.path"));
    ledger.dataset = nonempty_string(e->value.find("dataset")->value, "ledger.dataset");
    const Node& budget = e->value.find("budget")->value;
    require_map(budget, "ledger.budget");
    check_keys(budget, "ledger.budget", {"epsilon", "delta"});
    require_keys(budget, budget.loc, "ledger.budget", {"epsilon", "delta"});
    const Node& eps = budget.find("epsilon")->value;
    ledger.epsilon = float_value(eps, "float", "ledger.budget.epsilon");
    if (!(ledger.epsilon > 0) || !std::isfinite(ledger.epsilon))
      fail(eps.loc, "ledger.budget.epsilon", "expected a finite float > 0, got " + eps.scalar);
    ledger.delta = float_value(budget.find("delta")->value, "delta", "ledger.budget.delta");
    config_.ledger = std::move(ledger);
  }
};

}  // namespace

// ---- public entry points ------------------------------------------------------------------------

std::vector<fs::path> read_plugin_paths(const fs::path& file,
                                        const std::vector<Override>& overrides) {
  const Node root = load_tree(file, overrides);
  const Entry* first = nullptr;
  for (const auto& e : root.entries) {
    if (e.key != "plugin_paths") continue;
    if (first)
      fail(e.key_loc, "plugin_paths",
           "duplicate key 'plugin_paths' (first " +
               (first->key_loc.line > 0 ? "at line " + std::to_string(first->key_loc.line)
                                        : std::string("given with --set")) +
               ")");
    first = &e;
  }
  if (first) check_duplicates(first->value, "plugin_paths");
  return plugin_paths_of(root, folder_of(file));
}

std::vector<fs::path> read_plugin_paths(const fs::path& file) {
  return read_plugin_paths(file, {});
}

PipelineConfig load_pipeline(const fs::path& file, const std::vector<Override>& overrides,
                             const Catalog& catalog) {
  return Loader(file, catalog, load_tree(file, overrides)).load();
}

}  // namespace dptune::host
