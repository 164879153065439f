// dptune host: the released model as a file (model.json), read back, and a predictor
// for it that needs no plugin.
//
// A private tuner releases the model of its selected run only (e.g. the repetition tuner's best of
// K runs, Papernot & Steinke 2022; svt_doubling's final training).  The model comes from the
// trainer plugin as a dptune::ModelExport (Model::export_model, ABI 2.2) and is written with the
// data section's preprocessing and its public statistics, so the file applies to raw rows on its
// own; never with statistics of the private data.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_readers.hpp"
#include "dptune/host/json.hpp"
#include "dptune/model_files.hpp"
#include "dptune/plugin.hpp"

namespace dptune::host {

/// The format tag written as "format" (bump it when the layout of model.json changes).  Format 3
/// adds the feature names; format 2 files (no names) are still read.
inline constexpr const char* kModelFileFormat = "dptune-model-3";
inline constexpr const char* kModelFileFormatWithoutNames = "dptune-model-2";
/// The kind of a model kept in files by an external program (dptune/model_files.hpp): model.json
/// then names those files (copied beside it, under kReleasedFilesFolder) and the trainer's
/// parameters instead of layers, and `dptune predict` asks the trainer to predict with them.
inline constexpr const char* kFilesModelKind = "files";
inline constexpr const char* kReleasedFilesFolder = "model";

struct ExportedModel {
  dptune::ModelExport model;
  /// Applied to raw rows first.  Written with its public statistics only: for fitted_standardize
  /// the file says the scaling was fitted on private data and holds no mean or scale, so such a
  /// model cannot score raw rows (exported_scores throws).
  Preprocessing preprocessing{Preprocessing::Kind::None};
  /// The training data's feature columns, in the model's input order (from the CSV header, or the
  /// reader's names: x0..., pixel_r_c, libsvm indices).  `dptune predict` matches a data file's
  /// columns by these names.  Empty in format-2 files, which predict reads positionally.
  std::vector<std::string> feature_names{};
  /// The raw columns one-hot encoded into several features (`sex` into sex=F, sex=M), with their
  /// public categories: `dptune predict` encodes a data file's columns the same way.
  std::vector<CategoricalColumn> categorical{};
  /// Kind kFilesModelKind: the algorithm (trainer plugin) and its complete parameters, and the
  /// model's files relative to model.json's folder (kReleasedFilesFolder/...).
  std::string algorithm{};
  dptune::Params trainer_params{};
  std::vector<std::string> files{};

  bool kept_in_files() const { return model.kind == kFilesModelKind; }
};

/// Which kept model the tuner released: the earliest kept evaluation of the selected trial's
/// candidate with the selected trial's mean utility (a tuner's tie rule is the earliest run); or,
/// when the selected trial reports a score no kept evaluation has (a noisy score: the repetition
/// tuner's scoring: private), the kept evaluation at the position of the selected trial in the
/// tuner's per-run trials, when those list the kept evaluations in order (their candidates agree
/// position by position) and record the released scores; or the only kept evaluation of that
/// candidate.  Null when the result selects nothing or no kept model matches unambiguously.
template <class Kept>
std::shared_ptr<const dptune::Model> released_model(const dptune::TuningResult& result,
                                                    const std::vector<Kept>& kept) {
  if (!result.selected) return nullptr;
  const auto& selected = *result.selected;
  for (const auto& k : kept)
    if (k.candidate == selected.params && k.utility_mean == selected.utility_mean) return k.model;
  const auto& trials = result.trials;
  bool aligned = !trials.empty() && trials.size() <= kept.size();
  for (std::size_t i = 0; aligned && i < trials.size(); ++i)
    aligned = trials[i].params == kept[i].candidate;
  if (aligned) {
    std::shared_ptr<const dptune::Model> at;
    for (std::size_t i = 0; i < trials.size(); ++i)
      if (trials[i].params == selected.params && trials[i].utility_mean == selected.utility_mean) {
        if (at) return nullptr;  // two runs released the same score: ambiguous
        at = kept[i].model;
      }
    if (at) return at;
  }
  std::shared_ptr<const dptune::Model> only;
  for (const auto& k : kept) {
    if (!(k.candidate == selected.params)) continue;
    if (only) return nullptr;  // several runs of that candidate, none with the selected score
    only = k.model;
  }
  return only;
}

/// Checks that `model` is consistent (layer sizes chain, weights and bias sizes, known names).
/// Throws dptune::Error naming what is wrong.
void check_model_export(const dptune::ModelExport& model);

/// Writes the fields of model.json describing the model (kind, layers, standardisation, ...) into
/// the open object of `w`.
void write_model_fields(JsonWriter& w, const ExportedModel& exported);

/// Reads a model.json back.  Throws dptune::Error naming the file and the key.
ExportedModel read_model_file(const std::filesystem::path& file);

/// Copies the released model's files (`released.files` in `released.folder`) into
/// `results`/kReleasedFilesFolder, keeping their relative names, and returns those names relative
/// to `results` (as model.json lists them).  Refuses (dptune::Error) a name that leaves its
/// folder or a file that is not a regular file: only what the released run declared leaves it.
std::vector<std::string> copy_released_files(const dptune::ModelFiles& released,
                                             const std::filesystem::path& results);
/// A model kept in files as `model_file` (a model.json naming its copies under
/// kReleasedFilesFolder beside it) describes it, for the trainer that loads it back
/// (dptune::ModelFileLoader): `dptune predict` and a resumed study.
dptune::ModelFiles files_of(const ExportedModel& model, const std::filesystem::path& model_file);

/// When `released.keep_folder` is set: copies the released run's folder to
/// keep_folder/released-run (replacing an earlier copy; the folders it creates are owner-only) and
/// returns that path; otherwise empty.  Always that one name, whatever the number of runs.
std::filesystem::path keep_released_run(const dptune::ModelFiles& released);

/// Output scores before the output function (rows × outputs, row-major) of raw rows.
std::vector<double> exported_scores(const ExportedModel& exported, const dptune::Dataset& raw);
/// Class predictions and probabilities of raw rows, as the trainer's Model::predict gives them.
dptune::Predictions predict_exported(const ExportedModel& exported, const dptune::Dataset& raw);

}  // namespace dptune::host
