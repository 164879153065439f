// dptune SDK helper: the trials.csv a study wrote, read back by a plugin.  The host writes the file
// (one row per trial: `id`, one `param.<name>` column per search-space dimension, then the results)
// and a plugin cannot include the host, so this is the one reader of it: a tuner that starts from
// an earlier study's candidates (DPareto's `initial_trials`) calls it.  Not part of the contract;
// header only, so it adds no symbol to the SDK library and a plugin that uses it loads into every
// host of its minor (docs/sdk-contract.md, "Header-only code").
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "dptune/errors.hpp"
#include "dptune/params.hpp"
#include "dptune/search_space.hpp"

namespace dptune {

/// The column of hyperparameter `name` in trials.csv: prefixed, so that a parameter named like a
/// result column (a mechanism's `epsilon`) cannot collide with it.
inline std::string trials_csv_column(std::string_view name) { return "param." + std::string(name); }

namespace trials_csv_detail {

/// The whole of `text` as a number of type T (std::stoll or std::stod); nothing otherwise.
template <typename T>
inline std::optional<T> whole_number(const std::string& text) {
  try {
    std::size_t used = 0;
    T value{};
    if constexpr (std::is_same_v<T, std::int64_t>)
      value = static_cast<std::int64_t>(std::stoll(text, &used));
    else
      value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

/// The choice written as `text` (dptune::to_string, as the host writes it), or else the numeric
/// choice equal to the number written.
inline std::optional<Value> choice_of(const Dimension& dim, const std::string& text) {
  for (const Value& choice : dim.choices)
    if (to_string(choice) == text) return choice;
  const auto number = whole_number<double>(text);
  if (!number) return std::nullopt;
  for (const Value& choice : dim.choices) {
    if (const auto* x = std::get_if<double>(&choice); x && *x == *number) return choice;
    if (const auto* n = std::get_if<std::int64_t>(&choice); n && double(*n) == *number)
      return choice;
  }
  return std::nullopt;
}

/// One cell as a value of `dim`.
inline std::optional<Value> value_of(const Dimension& dim, const std::string& text) {
  switch (dim.kind) {
    case Dimension::Kind::Int:
      if (const auto v = whole_number<std::int64_t>(text)) return Value(*v);
      return std::nullopt;
    case Dimension::Kind::Float:
      if (const auto v = whole_number<double>(text)) return Value(*v);
      return std::nullopt;
    case Dimension::Kind::Categorical:
      return choice_of(dim, text);
  }
  return std::nullopt;
}

[[noreturn]] inline void missing_column(const std::string& path, const std::string& column) {
  throw ConfigError("'" + path + "' has no column '" + column + "'");
}

[[noreturn]] inline void bad_cell(const std::string& path, std::size_t line_no,
                                  const Dimension& dim, const std::string& text) {
  const std::string expected =
      dim.kind == Dimension::Kind::Categorical ? "one of the dimension's choices" : "a number";
  throw ConfigError(path + ":" + std::to_string(line_no) + ": " + trials_csv_column(dim.name) +
                    ": expected " + expected + ", got '" + text + "'");
}

/// The index of every dimension's column in `header`.
inline std::vector<std::size_t> param_columns(const std::string& path,
                                              const std::vector<std::string>& header,
                                              const SearchSpace& space) {
  std::vector<std::size_t> column;
  for (const auto& dim : space.dimensions()) {
    const std::string want = trials_csv_column(dim.name);
    std::size_t c = header.size();
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == want) c = i;
    if (c == header.size()) missing_column(path, want);
    column.push_back(c);
  }
  return column;
}

/// The candidate on one row (line `line_no` of `path`).
inline Params candidate_of(const std::string& path, std::size_t line_no,
                           const std::vector<std::string>& cells,
                           const std::vector<std::size_t>& column, const SearchSpace& space) {
  Params p;
  for (std::size_t k = 0; k < space.size(); ++k) {
    const Dimension& dim = space.dimensions()[k];
    const std::string text = column[k] < cells.size() ? cells[column[k]] : std::string();
    const auto value = value_of(dim, text);
    if (!value) bad_cell(path, line_no, dim, text);
    p.set(dim.name, *value);
  }
  if (!space.contains(p))
    throw ConfigError(path + ":" + std::to_string(line_no) + ": " + p.to_string() +
                      " lies outside the search space");
  return p;
}

}  // namespace trials_csv_detail

/// The cells of one line of trials.csv: separated by ',', a cell in double quotes may hold ',' and
/// '""' (one quote), as the host quotes them; a '\r' outside quotes is dropped.
inline std::vector<std::string> split_trials_csv_line(std::string_view line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cell += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else if (quoted || c != '\r') {
      cell += c;
    }
  }
  cells.push_back(std::move(cell));
  return cells;
}

/// The candidates of an earlier study, in its row order: for every non-blank row of the trials.csv
/// at `path`, the cells of the `param.<name>` columns of `space`'s dimensions, read as the
/// dimension's type (an int, a float; for a categorical the choice written so, or equal to the
/// number written).  Only the hyperparameters are read: the results are the earlier study's.
/// Throws ConfigError naming the file, and the line and column of a bad cell: unreadable or empty
/// file, a missing column, a cell that is no value of its dimension, a candidate outside `space`,
/// no rows.
inline std::vector<Params> read_trial_candidates(const std::string& path,
                                                 const SearchSpace& space) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot open '" + path + "'");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError("'" + path + "' is empty");
  const std::vector<std::size_t> column =
      trials_csv_detail::param_columns(path, split_trials_csv_line(line), space);
  std::vector<Params> out;
  for (std::size_t line_no = 2; std::getline(in, line); ++line_no)
    if (!line.empty())
      out.push_back(trials_csv_detail::candidate_of(path, line_no, split_trials_csv_line(line),
                                                    column, space));
  if (out.empty()) throw ConfigError("'" + path + "' holds no trials");
  return out;
}

}  // namespace dptune
