// dptune host: what `dptune study show` reads from a study store (study.db in a run's output
// folder), without opening it for writing.  The store itself (writing, resuming) is internal to the
// host: framework/src/study/study.hpp.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

namespace dptune::host {

/// A study's metadata (study_id, status, tuner, randomness, times, progress, ledger, pipeline)
/// and how much it stores.
struct StudyStatus {
  std::map<std::string, std::string> meta;
  std::size_t evaluations = 0;
  std::size_t random_words = 0;
  std::size_t failures = 0;  // failed evaluations stored (a private tuner's: replayed on resume)
};

/// Reads the study in `dir` without locking the writer.  Throws dptune::ConfigError when `dir`
/// holds no study.
StudyStatus read_study(const std::filesystem::path& dir);

}  // namespace dptune::host
