// dptune SDK: models kept in files by an external program (the `command` trainer's), released by
// copying those files.  Additive: two interfaces a Model and a Trainer may implement besides
// their own (the host asks with dynamic_cast), so no interface of plugin.hpp changes layout; a
// host that does not know them releases no files, as for a model that cannot be exported.
//
// A private tuner releases the model of its selected run only (Papernot & Steinke 2022, Theorem
// 6: the best of K runs, K secret).  A model that is files in a run folder is released by the
// host copying exactly the files the model names, of the released run only; every other run's
// folder is removed with its model.  `dptune predict` gives the copies back to a trainer made
// with the same parameters (ModelFileLoader), which predicts with them.
#pragma once

#include <boost/config.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dptune/params.hpp"

namespace dptune {

class Model;

/// What a model kept in files is, for the release and for loading it back.
struct BOOST_SYMBOL_VISIBLE ModelFiles {
  /// The folder the files are in (absolute): the run folder, or the release's copy.
  std::string folder;
  /// The model's files, relative to `folder` (no "..", regular files): the first is the one a
  /// program reads as "the model".
  std::vector<std::string> files;
  std::string description;  // as Model::describe()
  std::size_t features = 0;
  std::size_t num_classes = 0;
  /// The trainer's complete parameters: `dptune predict` makes the trainer again from them.
  Params trainer_params;
  /// Not empty: the host also copies the released run's whole folder to
  /// `keep_folder`/released-run (the user's opt-in; SENSITIVE: it holds that run's private rows).
  std::string keep_folder;
};

/// Implemented by a Model whose model is files (besides Model).
class BOOST_SYMBOL_VISIBLE FileModel {
 public:
  virtual ~FileModel();
  /// The files, or empty `files` when the program declared none (nothing can be released).
  virtual ModelFiles model_files() const = 0;
};

/// Implemented by a Trainer whose models are files (besides Trainer).
class BOOST_SYMBOL_VISIBLE ModelFileLoader {
 public:
  virtual ~ModelFileLoader();
  /// A released model back from its files (`released.folder` is where the copies are), made by a
  /// trainer created with `released.trainer_params`.  Throws InvalidArgument when it cannot.
  virtual std::shared_ptr<const Model> load_model(const ModelFiles& released) const = 0;
};

}  // namespace dptune
