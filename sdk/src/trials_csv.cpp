#include "dptune/trials_csv.hpp"

#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "dptune/errors.hpp"

namespace dptune {

namespace {

/// The whole of `text` as a number of type T (std::stoll or std::stod); nothing otherwise.
template <typename T>
std::optional<T> whole_number(const std::string& text) {
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
std::optional<Value> choice_of(const Dimension& dim, const std::string& text) {
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
std::optional<Value> value_of(const Dimension& dim, const std::string& text) {
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

/// The index of every dimension's column in `header`.
std::vector<std::size_t> param_columns(const std::string& path,
                                       const std::vector<std::string>& header,
                                       const SearchSpace& space) {
  std::vector<std::size_t> column;
  for (const auto& dim : space.dimensions()) {
    const std::string want = trials_csv_column(dim.name);
    std::size_t c = header.size();
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == want) c = i;
    if (c == header.size()) throw ConfigError("'" + path + "' has no column '" + want + "'");
    column.push_back(c);
  }
  return column;
}

/// The candidate on one row (line `line_no` of `path`).
Params candidate_of(const std::string& path, std::size_t line_no,
                    const std::vector<std::string>& cells, const std::vector<std::size_t>& column,
                    const SearchSpace& space) {
  Params p;
  for (std::size_t k = 0; k < space.size(); ++k) {
    const Dimension& dim = space.dimensions()[k];
    const std::string text = column[k] < cells.size() ? cells[column[k]] : std::string();
    const auto value = value_of(dim, text);
    if (!value) {
      const std::string expected =
          dim.kind == Dimension::Kind::Categorical ? "one of the dimension's choices" : "a number";
      throw ConfigError(path + ":" + std::to_string(line_no) + ": " + trials_csv_column(dim.name) +
                        ": expected " + expected + ", got '" + text + "'");
    }
    p.set(dim.name, *value);
  }
  if (!space.contains(p))
    throw ConfigError(path + ":" + std::to_string(line_no) + ": " + p.to_string() +
                      " lies outside the search space");
  return p;
}

}  // namespace

std::string trials_csv_column(std::string_view name) { return "param." + std::string(name); }

std::vector<std::string> split_trials_csv_line(std::string_view line) {
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

std::vector<Params> read_trial_candidates(const std::string& path, const SearchSpace& space) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot open '" + path + "'");
  std::string line;
  if (!std::getline(in, line)) throw ConfigError("'" + path + "' is empty");
  const std::vector<std::size_t> column = param_columns(path, split_trials_csv_line(line), space);
  std::vector<Params> out;
  for (std::size_t line_no = 2; std::getline(in, line); ++line_no)
    if (!line.empty())
      out.push_back(candidate_of(path, line_no, split_trials_csv_line(line), column, space));
  if (out.empty()) throw ConfigError("'" + path + "' holds no trials");
  return out;
}

}  // namespace dptune
