// dptune SDK helper: the trials.csv a study wrote, read back by a plugin.  The host writes the file
// (one row per trial: `id`, one `param.<name>` column per search-space dimension, then the results)
// and a plugin cannot include the host, so this is the one reader of it: a tuner that starts from
// an earlier study's candidates (DPareto's `initial_trials`) calls it.  Not part of the contract.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dptune/params.hpp"
#include "dptune/search_space.hpp"

namespace dptune {

/// The column of hyperparameter `name` in trials.csv: prefixed, so that a parameter named like a
/// result column (a mechanism's `epsilon`) cannot collide with it.
std::string trials_csv_column(std::string_view name);

/// The cells of one line of trials.csv: separated by ',', a cell in double quotes may hold ',' and
/// '""' (one quote), as the host quotes them; a '\r' outside quotes is dropped.
std::vector<std::string> split_trials_csv_line(std::string_view line);

/// The candidates of an earlier study, in its row order: for every non-blank row of the trials.csv
/// at `path`, the cells of the `param.<name>` columns of `space`'s dimensions, read as the
/// dimension's type (an int, a float; for a categorical the choice written so, or equal to the
/// number written).  Only the hyperparameters are read: the results are the earlier study's.
/// Throws ConfigError naming the file, and the line and column of a bad cell: unreadable or empty
/// file, a missing column, a cell that is no value of its dimension, a candidate outside `space`,
/// no rows.
std::vector<Params> read_trial_candidates(const std::string& path, const SearchSpace& space);

}  // namespace dptune
