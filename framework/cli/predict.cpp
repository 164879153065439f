// `dptune predict MODEL DATA`: applies a released model.json to the rows of a CSV file, with the
// plugin-free predictor of model_file.hpp (the model's own preprocessing, public statistics only).
// Predicting is post-processing of the release: it costs no privacy.  Scoring the predictions
// against labels of private data would be a new query on that data, so --label is meant for
// public (or already spent) test sets, and the output says so.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>

#include "cli_common.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/format.hpp"
#include "dptune/host/model_file.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/model_files.hpp"

namespace po = boost::program_options;

namespace dptune::cli {

namespace {

/// "a, b, c" (the first eight names).
std::string first_names(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t j = 0; j < names.size() && j < 8; ++j) text += (j ? ", " : "") + names[j];
  return names.size() > 8 ? text + ", ..." : text;
}

/// DATA's feature columns put in the model's order by name.  A column the model needs and DATA
/// lacks, or a column of DATA the model does not know (renamed, or the label without --label), is
/// refused by name: matching by position would silently score the wrong features.
dptune::Dataset in_model_order(const dptune::Dataset& data, const std::vector<std::string>& names,
                               const std::string& data_file, const std::string& model_file) {
  std::map<std::string, std::size_t> column;
  for (std::size_t c = 0; c < data.feature_names.size(); ++c)
    if (!column.emplace(data.feature_names[c], c).second)
      throw UsageError(data_file + ": column '" + data.feature_names[c] + "' appears twice");
  std::vector<std::size_t> source(names.size());
  for (std::size_t j = 0; j < names.size(); ++j) {
    const auto found = column.find(names[j]);
    if (found == column.end()) {
      std::string message = data_file + ": no column '" + names[j] + "', which ";
      message += model_file + " takes as feature " + std::to_string(j);
      message += " (its features: " + first_names(names) + ")";
      throw UsageError(message);
    }
    source[j] = found->second;
    column.erase(found);
  }
  if (!column.empty())
    throw UsageError(data_file + ": column '" + column.begin()->first + "' is not a feature of " +
                     model_file + " (its features: " + first_names(names) +
                     "); if it is the label, name it with --label");
  dptune::Dataset out = data;
  out.cols = names.size();
  out.feature_names = names;
  out.features.assign(data.rows * names.size(), 0.0);
  for (std::size_t i = 0; i < data.rows; ++i)
    for (std::size_t j = 0; j < names.size(); ++j)
      out.features[i * names.size() + j] = data.features[i * data.cols + source[j]];
  return out;
}

/// Significant figures that read back as the same double (max_digits10).
constexpr int kRoundTrip = std::numeric_limits<double>::max_digits10;

void write_predictions(std::ostream& out, const dptune::Predictions& p, std::size_t rows) {
  // An external program's model may answer classes without probabilities.
  const std::size_t classes = p.probabilities.size() == rows * p.num_classes ? p.num_classes : 0;
  out << "row,predicted_class";
  for (std::size_t c = 0; c < classes; ++c) out << ",p_class_" << c;
  out << "\n";
  for (std::size_t i = 0; i < rows; ++i) {
    out << i << "," << static_cast<std::int64_t>(p.values[i]);
    for (std::size_t c = 0; c < classes; ++c)
      out << "," << significant(p.probabilities[i * p.num_classes + c], kRoundTrip);
    out << "\n";
  }
}

/// The predictions of a model kept in files (an external program's: the `command` trainer's
/// release): the trainer named in model.json, made again with its recorded parameters, predicts
/// with the copied files on the rows after the model's own preprocessing, as at training.  Any
/// failure (the program missing, changed, or without a predict mode) is a UsageError naming the
/// model file: nothing was predicted.
dptune::Predictions predict_with_files(const dptune::host::ExportedModel& model,
                                       const dptune::Dataset& data, const std::string& model_file,
                                       const std::vector<std::string>& plugin_paths) {
  dptune::host::PluginRegistry registry;
  scan_plugins(registry, plugin_paths, {});
  const dptune::ModelFiles files = dptune::host::files_of(model, model_file);
  dptune::Dataset rows = data;
  if (model.preprocessing.fitted())
    throw UsageError(model_file +
                     ": the model was trained on rows standardised with statistics "
                     "fitted on the private training data, which are not released: it cannot "
                     "score raw rows");
  for (std::size_t i = 0; i < rows.rows; ++i)
    model.preprocessing.apply_row(rows.features.data() + i * rows.cols, rows.cols);
  try {
    const auto trainer = registry.create_trainer(model.algorithm, model.trainer_params);
    const auto* loader = dynamic_cast<const dptune::ModelFileLoader*>(trainer.get());
    if (loader == nullptr)
      throw dptune::InvalidArgument("algorithm '" + model.algorithm + "' loads no model files");
    const auto loaded = loader->load_model(files);
    // The description names the program's files with their SHA-256 (the trust statement): a
    // different one now means another program predicts than the one the release was made with.
    if (loaded->describe() != model.model.description)
      std::cerr << "note: " << model_file << " was released by another version of its program "
                << "(its description, with the program's SHA-256, differs from what the program "
                   "is now): the predictions are the current program's\n";
    return loaded->predict(rows);
  } catch (const dptune::Error& e) {
    throw UsageError(model_file +
                     ": its model's program could not predict (dptune predict "
                     "starts it with action \"predict\", docs/command-trainer.md): " +
                     e.what());
  }
}

/// Accuracy against labels that are the model's class indices 0..C-1 (the training file's
/// classes in ascending order, as the CSV reader numbers them).  UsageError for other labels.
double accuracy(const dptune::Predictions& p, const dptune::Dataset& data,
                const std::string& file) {
  std::size_t correct = 0;
  for (std::size_t i = 0; i < data.rows; ++i) {
    const double y = data.labels[i];
    if (!(y >= 0 && y < static_cast<double>(p.num_classes) && y == std::floor(y)))
      throw UsageError(file + ": row " + std::to_string(i) + ": label " + std::to_string(y) +
                       " is not a class index 0.." + std::to_string(p.num_classes - 1) +
                       " (--label needs the model's class numbers: the training labels in "
                       "ascending order)");
    if (p.values[i] == y) ++correct;
  }
  return static_cast<double>(correct) / static_cast<double>(data.rows);
}

}  // namespace

int cmd_predict(const std::vector<std::string>& args) {
  po::options_description opts(
      "dptune predict MODEL DATA [options]\n\n"
      "Applies a released model (model.json of `dptune run`) to the rows of DATA, a CSV file of\n"
      "raw features in the training file's column order; the model's own preprocessing is\n"
      "applied.  Writes row, predicted_class and the class probabilities as CSV (standard output\n"
      "unless --out).  A model kept in files (the command trainer's) is predicted by its own\n"
      "program's predict mode.  Predicting is post-processing: it costs no privacy.\n\n"
      "options");
  std::string out_file, label, delimiter = ",", unknown_categories = "refuse";
  std::vector<std::string> plugin_paths;
  opts.add_options()("help,h", "this help")("out,o", po::value(&out_file),
                                            "write the predictions to this file")(
      "label", po::value(&label),
      "DATA has this label column (name or 0-based index): it is left out of the features and "
      "the accuracy is printed; use only on public or held-out test data")(
      "no-header", "DATA's first line is data, not column names")(
      "delimiter", po::value(&delimiter), "field delimiter (default ,)")(
      "unknown-categories", po::value(&unknown_categories),
      "a value outside a categorical column's categories: refuse (default: an error naming it) "
      "or zero (all its one-hot features 0, as in training)")(
      "plugin-path", po::value(&plugin_paths)->composing(),
      "also load plugins from this folder or library (a model kept in files is predicted by its "
      "training algorithm's plugin)");
  std::string model_file, data_file;
  const auto parsed = parse_command(
      opts, args, {{"model", po::value(&model_file)}, {"data", po::value(&data_file)}});
  if (!parsed) return kOk;
  const po::variables_map& vm = *parsed;
  if (model_file.empty() || data_file.empty())
    throw UsageError("predict needs MODEL and DATA (see dptune predict --help)");
  if (delimiter.size() != 1) throw UsageError("--delimiter must be one character");
  if (unknown_categories != "refuse" && unknown_categories != "zero")
    throw UsageError("--unknown-categories must be refuse or zero, got '" + unknown_categories +
                     "'");

  dptune::host::ExportedModel model;
  try {
    model = dptune::host::read_model_file(model_file);
  } catch (const dptune::ConfigError&) {
    throw;
  } catch (const dptune::Error& e) {
    throw UsageError(e.what());
  }
  dptune::host::CsvOptions csv;
  csv.header = vm.count("no-header") == 0;
  csv.delimiter = delimiter[0];
  csv.has_label = !label.empty();
  csv.label_column = label;
  csv.classification = false;           // labels are read as the class numbers they must be
  csv.categorical = model.categorical;  // encoded as at training: sex -> sex=F, sex=M
  csv.refuse_unknown_categories = unknown_categories == "refuse";
  dptune::Dataset data = dptune::host::read_csv(data_file, csv);
  if (csv.header && !model.feature_names.empty())
    data = in_model_order(data, model.feature_names, data_file, model_file);
  else if (!model.feature_names.empty())
    std::cerr << "note: --no-header: DATA's columns are taken as the model's features in its "
                 "order ("
              << first_names(model.feature_names) << "), unchecked\n";
  const std::size_t features = model.model.features;
  if (data.cols != features)
    throw UsageError(data_file + ": " + std::to_string(data.cols) + " feature columns, but " +
                     model_file + " takes " + std::to_string(features) +
                     (data.cols == features + 1 && label.empty()
                          ? "; if one column is the label, name it with --label"
                          : std::string()));
  dptune::Predictions p;
  if (model.kept_in_files()) {
    p = predict_with_files(model, data, model_file, plugin_paths);
  } else {
    try {
      p = dptune::host::predict_exported(model, data);
    } catch (const dptune::Error& e) {
      throw UsageError(model_file + ": " + e.what());
    }
  }

  if (out_file.empty()) {
    write_predictions(std::cout, p, data.rows);
  } else {
    std::ofstream out(out_file);
    if (!out) throw UsageError(out_file + ": cannot write");
    write_predictions(out, p, data.rows);
    if (!out.flush()) throw UsageError(out_file + ": write failed");
    std::cerr << "predictions: " << data.rows << " rows -> " << out_file << "\n";
  }
  if (!label.empty())
    std::cerr << "accuracy:    " << accuracy(p, data, data_file) << " on " << data.rows
              << " labelled rows (a new query on DATA: not covered by the model's guarantee if "
                 "DATA is private)\n";
  return kOk;
}

}  // namespace dptune::cli
