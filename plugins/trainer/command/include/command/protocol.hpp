// The command trainer's text formats (docs/command-trainer.md): the JSON a program answers with,
// the event template a pipeline declares, and the argv a pipeline writes.  SDK only.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "dptune/dp_event.hpp"

namespace dptune::command {

/// A parsed JSON value (RFC 8259), as much of it as the protocol needs.
struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string text;  // String
  std::vector<Json> items;
  // Object members as two parallel lists (a vector of pairs would need Json complete here).
  std::vector<std::string> keys;
  std::vector<Json> values;

  const Json* find(const std::string& key) const;
};

/// Parses one JSON value filling all of `text` (whitespace around it allowed).  Throws
/// InvalidArgument "at column C: ..." (1-based) for anything else.
Json parse_json(std::string_view text);
/// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);
/// A finite double as JSON (shortest text that reads back exactly).
std::string json_number(double value);

/// Splits a `run:` string into argv: words separated by blanks, '...' and "..." group (no
/// escapes, no expansion: there is no shell).  Throws InvalidArgument for an unclosed quote or no
/// words.
std::vector<std::string> split_argv(const std::string& text);

/// The event template of a pipeline (docs/command-trainer.md, "Event templates"): the YAML flow
/// syntax of `dptune privacy` whose numeric fields are arithmetic expressions over numbers and
/// ${name} variables: + - * / and parentheses, unary minus, ceil(x), floor(x), min(x, y),
/// max(x, y), and inf.  Parsed once; instantiated per candidate.
class EventTemplate {
 public:
  struct Node;
  /// Throws InvalidArgument "event template, column C: ..." for a syntax error.
  explicit EventTemplate(std::string text);
  ~EventTemplate();
  EventTemplate(EventTemplate&&) noexcept;
  EventTemplate& operator=(EventTemplate&&) noexcept;

  const std::string& text() const { return text_; }
  /// Every ${name} the template uses.
  const std::set<std::string>& variables() const { return variables_; }
  /// Throws InvalidArgument naming the first variable not in `known`, its column and the names
  /// that are known.
  void check_variables(const std::set<std::string>& known) const;
  /// Checks event kinds, their fields and the shapes of values, without evaluating anything.
  /// Throws InvalidArgument as instantiate() does.
  void check_structure() const;
  /// The event with every variable replaced by its value.  Throws InvalidArgument naming the
  /// field (e.g. "self_composed.count") for an unknown kind or field, a missing field, a
  /// non-integer count or size, or a value the event refuses.
  DpEvent instantiate(const std::map<std::string, double>& values) const;

 private:
  std::string text_;
  std::unique_ptr<Node> root_;
  std::set<std::string> variables_;
};

/// One arithmetic expression of the template language, e.g. "${batch_size}/${n}".
double evaluate_expression(std::string_view expression,
                           const std::map<std::string, double>& values);

}  // namespace dptune::command
