// The resolved pipeline as YAML (resolved_config.yaml): every default filled in, numbers at full
// precision, read back by the loader to the same PipelineConfig.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/config_tree.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/format.hpp"

namespace dptune::host {

namespace {

using config_tree::natural_value;
using config_tree::Node;

/// Quoted when the loader would read the text as another type (a number, a boolean) or as null.
void emit_string(YAML::Emitter& out, const std::string& s) {
  Node probe;
  probe.type = Node::Type::Scalar;
  probe.scalar = s;
  const bool looks_other = !std::holds_alternative<std::string>(natural_value(probe));
  const bool looks_null = s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
  if (looks_other || looks_null)
    out << YAML::DoubleQuoted << s;
  else
    out << s;
}

void emit_value(YAML::Emitter& out, const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v))
    emit_string(out, *s);
  else
    out << dptune::to_string(v);  // numbers and booleans, plain; doubles round-trip exactly
}

void emit_params(YAML::Emitter& out, const Params& params) {
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& [name, value] : params) {
    out << YAML::Key << name << YAML::Value;
    emit_value(out, value);
  }
  out << YAML::EndMap;
}

void begin_component(YAML::Emitter& out, const char* key, const ComponentConfig& c) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "use" << YAML::Value;
  emit_string(out, c.use);
  out << YAML::Key << "params" << YAML::Value;
  emit_params(out, c.params);
}

void emit_dimension(YAML::Emitter& out, const Dimension& d) {
  out << YAML::Key << d.name << YAML::Value << YAML::Flow << YAML::BeginMap;
  switch (d.kind) {
    case Dimension::Kind::Float:
      out << YAML::Key << "float" << YAML::Value << YAML::Flow << YAML::BeginSeq
          << full_precision(d.low) << full_precision(d.high) << YAML::EndSeq;
      if (d.log) out << YAML::Key << "log" << YAML::Value << "true";
      if (d.float_step > 0)
        out << YAML::Key << "step" << YAML::Value << full_precision(d.float_step);
      break;
    case Dimension::Kind::Int:
      out << YAML::Key << "int" << YAML::Value << YAML::Flow << YAML::BeginSeq
          << std::to_string(static_cast<std::int64_t>(d.low))
          << std::to_string(static_cast<std::int64_t>(d.high)) << YAML::EndSeq;
      if (d.log) out << YAML::Key << "log" << YAML::Value << "true";
      if (d.step != 1) out << YAML::Key << "step" << YAML::Value << std::to_string(d.step);
      break;
    case Dimension::Kind::Categorical:
      out << YAML::Key << "categorical" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const auto& choice : d.choices) emit_value(out, choice);
      out << YAML::EndSeq;
      break;
  }
  out << YAML::EndMap;
}

}  // namespace

/// `preprocessing:` as the loader reads it; public statistics inline (a file's are copied).
void emit_preprocessing(YAML::Emitter& out, const Preprocessing& p) {
  using Kind = Preprocessing::Kind;
  out << YAML::Key << "preprocessing" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "use" << YAML::Value << p.name();
  auto numbers = [&](const char* key, const std::vector<double>& v) {
    if (p.every_feature) {  // one number for every feature, as given
      out << YAML::Key << key << YAML::Value << full_precision(v.front());
      return;
    }
    if (!p.names.empty()) {  // by column name, as given
      out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (std::size_t j = 0; j < v.size(); ++j)
        out << YAML::Key << p.names[j] << YAML::Value << full_precision(v[j]);
      out << YAML::EndMap;
      return;
    }
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double x : v) out << full_precision(x);
    out << YAML::EndSeq;
  };
  if (p.kind == Kind::ClipRows)
    out << YAML::Key << "bound" << YAML::Value << full_precision(p.bound);
  if (p.kind == Kind::Standardize) {
    numbers("mean", p.mean);
    numbers("scale", p.scale);
  }
  if (p.kind == Kind::Bounds) {
    numbers("min", p.lower);
    numbers("max", p.upper);
    out << YAML::Key << "to" << YAML::Value
        << (p.unit_interval ? "zero_to_one" : "minus_one_to_one");
  }
  out << YAML::EndMap;
}

std::string to_yaml(const PipelineConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value;
  emit_string(out, config.name);
  out << YAML::Key << "plugin_paths" << YAML::Value;
  if (config.plugin_paths.empty()) out << YAML::Flow;
  out << YAML::BeginSeq;
  for (const auto& p : config.plugin_paths) emit_string(out, p.string());
  out << YAML::EndSeq;

  begin_component(out, "data", config.data);
  emit_preprocessing(out, config.preprocessing);
  out << YAML::EndMap;
  begin_component(out, "algorithm", config.algorithm);
  out << YAML::EndMap;
  if (config.mechanism) {
    begin_component(out, "mechanism", *config.mechanism);
    out << YAML::EndMap;
  }
  begin_component(out, "accountant", config.accountant);
  out << YAML::Key << "delta" << YAML::Value << full_precision(config.delta);
  out << YAML::EndMap;
  begin_component(out, "utility", config.utility);
  out << YAML::Key << "repetitions" << YAML::Value << std::to_string(config.repetitions);
  out << YAML::Key << "split" << YAML::Value << to_string(config.score_split);
  out << YAML::EndMap;

  out << YAML::Key << "search_space" << YAML::Value << YAML::BeginMap;
  for (const auto& d : config.space.dimensions()) emit_dimension(out, d);
  out << YAML::EndMap;

  begin_component(out, "tuner", config.tuner);
  out << YAML::EndMap;

  out << YAML::Key << "execution" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "executor" << YAML::Value;
  emit_string(out, config.execution.executor);
  out << YAML::Key << "threads" << YAML::Value << std::to_string(config.execution.threads);
  if (config.execution.seed)
    out << YAML::Key << "seed" << YAML::Value << std::to_string(*config.execution.seed);
  out << YAML::EndMap;

  out << YAML::Key << "output" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dir" << YAML::Value;
  emit_string(out, config.output.dir.string());
  out << YAML::Key << "plot" << YAML::Value << (config.output.plot ? "true" : "false");
  out << YAML::Key << "sensitive_trials" << YAML::Value
      << (config.output.sensitive_trials ? "true" : "false");
  if (const auto& t = config.output.test_score) {
    out << YAML::Key << "test_score" << YAML::Value << YAML::BeginMap;
    if (t->epsilon) {
      out << YAML::Key << "epsilon" << YAML::Value << full_precision(*t->epsilon);
      out << YAML::Key << "mechanism" << YAML::Value << kTestScoreNoise;
    } else {
      out << YAML::Key << "public" << YAML::Value;
      emit_string(out, t->public_file.string());
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (config.ledger) {
    out << YAML::Key << "ledger" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "path" << YAML::Value;
    emit_string(out, config.ledger->path.string());
    out << YAML::Key << "dataset" << YAML::Value;
    emit_string(out, config.ledger->dataset);
    out << YAML::Key << "budget" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "epsilon" << YAML::Value << full_precision(config.ledger->epsilon);
    out << YAML::Key << "delta" << YAML::Value << full_precision(config.ledger->delta);
    out << YAML::EndMap << YAML::EndMap;
  }

  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace dptune::host
