#include "command/protocol.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "dptune/errors.hpp"
#include "dptune/event_kinds.hpp"
#include "dptune/params.hpp"

namespace dptune::command {

// ---- JSON ----------------------------------------------------------------------------------

const Json* Json::find(const std::string& key) const {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &values[i];
  return nullptr;
}

namespace {

[[noreturn]] void fail_at(std::size_t offset, const std::string& what) {
  throw InvalidArgument("at column " + std::to_string(offset + 1) + ": " + what);
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  Json document() {
    Json v = value(0);
    skip();
    if (i_ != s_.size()) fail_at(i_, "unexpected text after the JSON value");
    return v;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;

  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
      ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail_at(i_, std::string("expected '") + c + "'");
  }

  Json value(int depth) {
    if (depth > 64) fail_at(i_, "nested too deeply");
    skip();
    if (i_ >= s_.size()) fail_at(i_, "expected a JSON value, got the end of the text");
    Json v;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::Type::Object;
      if (eat('}')) return v;
      do {
        skip();
        if (i_ >= s_.size() || s_[i_] != '"') fail_at(i_, "expected a quoted key");
        std::string key = string();
        expect(':');
        v.keys.push_back(std::move(key));
        v.values.push_back(value(depth + 1));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++i_;
      v.type = Json::Type::Array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Json::Type::String;
      v.text = string();
    } else if (s_.substr(i_, 4) == "true" || s_.substr(i_, 5) == "false") {
      v.type = Json::Type::Bool;
      v.boolean = c == 't';
      i_ += v.boolean ? 4 : 5;
    } else if (s_.substr(i_, 4) == "null") {
      i_ += 4;
    } else {
      v.type = Json::Type::Number;
      v.number = number();
    }
    return v;
  }

  double number() {
    const std::size_t start = i_;
    while (i_ < s_.size() &&
           std::string_view("+-0123456789.eE").find(s_[i_]) != std::string_view::npos)
      ++i_;
    double x = 0;
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + i_, x);
    if (start == i_ || ec != std::errc() || end != s_.data() + i_)
      fail_at(start, "expected a JSON value, got '" + std::string(s_.substr(start, 12)) + "'");
    return x;
  }

  std::string string() {
    const std::size_t start = i_++;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      c = s_[i_++];
      switch (c) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          unsigned code = 0;
          if (i_ + 4 > s_.size() ||
              std::from_chars(s_.data() + i_, s_.data() + i_ + 4, code, 16).ptr !=
                  s_.data() + i_ + 4)
            fail_at(i_, "bad \\u escape");
          i_ += 4;
          // UTF-8 of a BMP code point (surrogate pairs are not needed by the protocol).
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default:
          out += c;  // \" \\ \/
      }
    }
    if (i_ >= s_.size()) fail_at(start, "unterminated string");
    ++i_;
    return out;
  }
};

}  // namespace

Json parse_json(std::string_view text) { return JsonParser(text).document(); }

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xF];
      out += hex[c & 0xF];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  require(std::isfinite(value), "json: a non-finite number has no JSON form");
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::vector<std::string> split_argv(const std::string& text) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) break;
    std::string word;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') {
      if (text[i] == '\'' || text[i] == '"') {
        const char quote = text[i];
        const std::size_t close = text.find(quote, i + 1);
        require(close != std::string::npos, "run: unclosed " + std::string(1, quote) +
                                                " quote at column " + std::to_string(i + 1));
        word += text.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        word += text[i++];
      }
    }
    words.push_back(std::move(word));
  }
  require(!words.empty(), "run: expected a program and its arguments, got an empty string");
  return words;
}

// ---- expressions -------------------------------------------------------------------------

namespace {

struct Expr {
  char op = 'n';  // n number, v variable, + - * / binary, u unary minus, f function
  double value = 0;
  std::string name;  // variable or function
  std::size_t column = 0;
  std::vector<Expr> args;
};

/// Recursive descent over one scalar of the template; `base` is its offset in the template.
class ExprParser {
 public:
  ExprParser(std::string_view s, std::size_t base) : s_(s), base_(base) {}

  Expr parse() {
    Expr e = sum();
    skip();
    if (i_ != s_.size()) fail("unexpected '" + std::string(s_.substr(i_, 1)) + "'");
    return e;
  }

 private:
  std::string_view s_;
  std::size_t base_, i_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument("event template, column " + std::to_string(base_ + i_ + 1) + ": " + what);
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  Expr binary(char op, Expr a, Expr b) {
    Expr e;
    e.op = op;
    e.column = a.column;
    e.args = {std::move(a), std::move(b)};
    return e;
  }
  Expr sum() {
    Expr e = product();
    for (;;) {
      if (eat('+'))
        e = binary('+', std::move(e), product());
      else if (eat('-'))
        e = binary('-', std::move(e), product());
      else
        return e;
    }
  }
  Expr product() {
    Expr e = factor();
    for (;;) {
      if (eat('*'))
        e = binary('*', std::move(e), factor());
      else if (eat('/'))
        e = binary('/', std::move(e), factor());
      else
        return e;
    }
  }
  Expr factor() {
    skip();
    Expr e;
    e.column = base_ + i_;
    if (i_ >= s_.size()) fail("expected a number, a ${variable} or '(', got nothing");
    if (eat('-')) {
      e.op = 'u';
      e.args.push_back(factor());
      return e;
    }
    if (eat('(')) {
      e = sum();
      if (!eat(')')) fail("expected ')'");
      return e;
    }
    if (s_.substr(i_, 2) == "${") {
      const std::size_t close = s_.find('}', i_);
      if (close == std::string_view::npos) fail("unclosed ${");
      e.op = 'v';
      e.name = std::string(s_.substr(i_ + 2, close - i_ - 2));
      if (e.name.empty()) fail("empty variable name ${}");
      i_ = close + 1;
      return e;
    }
    if (s_.substr(i_, 4) == ".inf") {  // as DpEvent::to_string prints it
      i_ += 4;
      e.value = std::numeric_limits<double>::infinity();
      return e;
    }
    if (std::isalpha(static_cast<unsigned char>(s_[i_]))) {
      const std::size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        ++i_;
      e.name = std::string(s_.substr(start, i_ - start));
      if (e.name == "inf") {
        e.value = std::numeric_limits<double>::infinity();
        return e;
      }
      const bool two = e.name == "min" || e.name == "max";
      if (!two && e.name != "ceil" && e.name != "floor") {
        i_ = start;
        fail("unknown name '" + e.name +
             "' (variables are written ${name}; functions: ceil, floor, min, max)");
      }
      e.op = 'f';
      if (!eat('(')) fail("expected '(' after " + e.name);
      e.args.push_back(sum());
      if (two) {
        if (!eat(',')) fail(e.name + " takes two arguments: expected ','");
        e.args.push_back(sum());
      }
      if (!eat(')')) fail("expected ')'");
      return e;
    }
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                              s_[i_] == 'e' || s_[i_] == 'E' ||
                              ((s_[i_] == '-' || s_[i_] == '+') && i_ > start &&
                               (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
      ++i_;
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + i_, e.value);
    if (start == i_ || ec != std::errc() || end != s_.data() + i_) {
      i_ = start;
      fail("expected a number, a ${variable} or '(', got '" + std::string(s_.substr(start, 10)) +
           "'");
    }
    return e;
  }
};

void collect(const Expr& e, std::vector<std::pair<std::string, std::size_t>>& out) {
  if (e.op == 'v') out.emplace_back(e.name, e.column);
  for (const auto& a : e.args) collect(a, out);
}

double evaluate(const Expr& e, const std::map<std::string, double>& values) {
  switch (e.op) {
    case 'n':
      return e.value;
    case 'v': {
      const auto found = values.find(e.name);
      if (found == values.end())
        throw InvalidArgument("event template, column " + std::to_string(e.column + 1) +
                              ": no value for ${" + e.name + "}");
      return found->second;
    }
    case 'u':
      return -evaluate(e.args[0], values);
    case '+':
      return evaluate(e.args[0], values) + evaluate(e.args[1], values);
    case '-':
      return evaluate(e.args[0], values) - evaluate(e.args[1], values);
    case '*':
      return evaluate(e.args[0], values) * evaluate(e.args[1], values);
    case '/': {
      const double d = evaluate(e.args[1], values);
      if (d == 0)
        throw InvalidArgument("event template, column " + std::to_string(e.args[1].column + 1) +
                              ": division by zero");
      return evaluate(e.args[0], values) / d;
    }
    default:
      break;
  }
  const double a = evaluate(e.args[0], values);
  if (e.name == "ceil") return std::ceil(a);
  if (e.name == "floor") return std::floor(a);
  const double b = evaluate(e.args[1], values);
  return e.name == "min" ? std::min(a, b) : std::max(a, b);
}

}  // namespace

double evaluate_expression(std::string_view expression,
                           const std::map<std::string, double>& values) {
  return evaluate(ExprParser(expression, 0).parse(), values);
}

// ---- templates ---------------------------------------------------------------------------

struct EventTemplate::Node {
  enum class Type { Map, List, Scalar } type = Type::Scalar;
  std::size_t column = 0;
  std::vector<std::string> keys;  // Map: keys and values in parallel
  std::vector<Node> values;
  std::vector<Node> items;  // List
  Expr expr;                // Scalar
};

namespace {

using Node = EventTemplate::Node;

class TemplateParser {
 public:
  explicit TemplateParser(std::string_view s) : s_(s) {}

  Node document() {
    skip();
    Node root;
    if (i_ < s_.size() && s_[i_] == '{') {
      root = value(0);
    } else {  // "self_composed: {...}": the outer braces may be left out
      root.type = Node::Type::Map;
      root.column = i_;
      members(root, '\0', 0);
    }
    skip();
    if (i_ != s_.size()) fail("unexpected '" + std::string(s_.substr(i_, 1)) + "'");
    return root;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument("event template, column " + std::to_string(i_ + 1) + ": " + what);
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }

  void members(Node& map, char close, int depth) {
    skip();
    if (close && i_ < s_.size() && s_[i_] == close) return;
    do {
      skip();
      const std::size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        ++i_;
      if (start == i_) fail("expected a key such as gaussian or noise_multiplier");
      std::string key(s_.substr(start, i_ - start));
      if (!eat(':')) fail("expected ':' after '" + key + "'");
      for (const auto& k : map.keys)
        if (k == key) {
          i_ = start;
          fail("duplicate key '" + key + "'");
        }
      map.keys.push_back(std::move(key));
      map.values.push_back(value(depth + 1));
    } while (eat(','));
  }

  Node value(int depth) {
    if (depth > 64) fail("nested too deeply");
    skip();
    Node n;
    n.column = i_;
    if (eat('{')) {
      n.type = Node::Type::Map;
      members(n, '}', depth);
      if (!eat('}')) fail("expected ',' or '}'");
    } else if (eat('[')) {
      n.type = Node::Type::List;
      skip();
      if (!eat(']')) {
        do n.items.push_back(value(depth + 1));
        while (eat(','));
        if (!eat(']')) fail("expected ',' or ']'");
      }
    } else {  // a scalar: up to ',', '}' or ']' outside parentheses and ${...}
      const std::size_t start = i_;
      int parens = 0;
      bool in_var = false;
      for (; i_ < s_.size(); ++i_) {
        const char c = s_[i_];
        if (in_var) {
          in_var = c != '}';
        } else if (c == '$' && i_ + 1 < s_.size() && s_[i_ + 1] == '{') {
          in_var = true;
          ++i_;
        } else if (c == '(') {
          ++parens;
        } else if (c == ')') {
          --parens;
        } else if (parens == 0 && (c == ',' || c == '}' || c == ']')) {
          break;
        }
      }
      n.expr = ExprParser(s_.substr(start, i_ - start), start).parse();
    }
    return n;
  }
};

/// Builds the DpEvent of one {kind: {fields}} node (the kinds and fields of `dptune privacy`).
class Builder {
 public:
  /// `dry`: check kinds, fields and shapes only (no arithmetic, no DpEvent argument checks), so
  /// that a configuration is checked without guessing the sizes a run will have.
  explicit Builder(const std::map<std::string, double>& values, bool dry = false)
      : values_(values), dry_(dry) {}

  DpEvent event(const Node& n, const std::string& path) const {
    if (n.type != Node::Type::Map || n.keys.size() != 1)
      fail(n, path, "expected an event such as {gaussian: {noise_multiplier: 1.0}}");
    const std::string& kind = n.keys.front();
    const Node& body = n.values.front();
    const std::string here = path.empty() ? kind : path + "." + kind;
    if (body.type != Node::Type::Map) fail(body, here, "expected a map of the event's fields");
    // The kinds and their fields are the SDK's one definition (dptune/event_kinds.hpp).
    const EventKindSpec* spec = find_event_kind(std::string_view(kind));
    if (!spec) fail(n, here, "unknown event kind '" + kind + "'");
    const auto allowed = [&](const std::string& key) {
      return std::any_of(spec->fields.begin(), spec->fields.end(),
                         [&](const EventFieldSpec& f) { return f.name == key; });
    };
    for (std::size_t i = 0; i < body.keys.size(); ++i)
      if (!allowed(body.keys[i]))
        fail(body.values[i], here + "." + body.keys[i],
             "unknown field '" + body.keys[i] + "' of " + kind);
    const auto field = [&](const std::string& name) -> const Node& {
      for (std::size_t i = 0; i < body.keys.size(); ++i)
        if (body.keys[i] == name) return body.values[i];
      fail(body, here, "missing field '" + name + "'");
    };
    if (dry_) return check_shapes(*spec, body, here, field);
    try {
      std::vector<EventFieldValue> values(spec->fields.size());
      for (std::size_t i = 0; i < spec->fields.size(); ++i) {
        const EventFieldSpec& f = spec->fields[i];
        const std::string name(f.name);
        std::string at = here;
        at += '.';
        at += name;
        const Node& value = field(name);
        switch (f.type) {
          case EventFieldType::Number:
            values[i].number = number(value, at);
            break;
          case EventFieldType::Integer:
            values[i].integer = whole(value, at);
            break;
          case EventFieldType::Event:
            values[i].events.push_back(event(value, at));
            break;
          case EventFieldType::Events:
            if (value.type != Node::Type::List) fail(value, at, "expected a list of events");
            for (std::size_t j = 0; j < value.items.size(); ++j)
              values[i].events.push_back(event(value.items[j], at + "[" + std::to_string(j) + "]"));
            break;
        }
      }
      return spec->make(values);
    } catch (const InvalidArgument& e) {
      if (std::string_view(e.what()).rfind("event template", 0) == 0) throw;
      fail(n, here, e.what());
    }
  }

 private:
  const std::map<std::string, double>& values_;
  bool dry_ = false;

  /// The dry check: nested events and lists checked, other fields scalars, every field present.
  template <typename Field>
  DpEvent check_shapes(const EventKindSpec& spec, const Node& body, const std::string& here,
                       const Field& field) const {
    for (std::size_t i = 0; i < body.keys.size(); ++i) {
      const std::string at = here + "." + body.keys[i];
      if (body.keys[i] == "event") {
        event(body.values[i], at);
      } else if (body.keys[i] == "events") {
        if (body.values[i].type != Node::Type::List) fail(body.values[i], at, "expected a list");
        for (std::size_t j = 0; j < body.values[i].items.size(); ++j)
          event(body.values[i].items[j], at + "[" + std::to_string(j) + "]");
      } else if (body.values[i].type != Node::Type::Scalar) {
        fail(body.values[i], at, "expected a number");
      }
    }
    for (const auto& f : spec.fields) field(std::string(f.name));  // every field is required
    return DpEvent::no_op();
  }

  [[noreturn]] static void fail(const Node& n, const std::string& path, const std::string& what) {
    throw InvalidArgument("event template, column " + std::to_string(n.column + 1) + ": " + path +
                          ": " + what);
  }
  double number(const Node& n, const std::string& path) const {
    if (n.type != Node::Type::Scalar) fail(n, path, "expected a number");
    return evaluate(n.expr, values_);
  }
  /// Counts and sizes must come out whole: a template that needs rounding says which way, with
  /// ceil() (more steps: never under-counts) or floor().
  std::int64_t whole(const Node& n, const std::string& path) const {
    const double x = number(n, path);
    const double r = std::round(x);
    if (!(std::abs(x - r) <= 1e-9 * std::max(1.0, std::abs(x))) || std::abs(r) > 9.0e15)
      fail(n, path,
           "evaluates to " + to_string(Value{x}) +
               ", not an integer; round it explicitly, e.g. ceil(...) (rounding a count up is "
               "the conservative choice)");
    return static_cast<std::int64_t>(r);
  }
};

void variables_of(const Node& n, std::vector<std::pair<std::string, std::size_t>>& out) {
  if (n.type == Node::Type::Scalar) collect(n.expr, out);
  for (const auto& v : n.values) variables_of(v, out);
  for (const auto& item : n.items) variables_of(item, out);
}

}  // namespace

EventTemplate::EventTemplate(std::string text)
    : text_(std::move(text)), root_(std::make_unique<Node>(TemplateParser(text_).document())) {
  std::vector<std::pair<std::string, std::size_t>> uses;
  variables_of(*root_, uses);
  for (const auto& [name, column] : uses) variables_.insert(name);
}

EventTemplate::~EventTemplate() = default;
EventTemplate::EventTemplate(EventTemplate&&) noexcept = default;
EventTemplate& EventTemplate::operator=(EventTemplate&&) noexcept = default;

namespace {

/// Levenshtein distance, for "did you mean" (names are short).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

void EventTemplate::check_variables(const std::set<std::string>& known) const {
  std::vector<std::pair<std::string, std::size_t>> uses;
  variables_of(*root_, uses);
  for (const auto& [name, column] : uses) {
    if (known.count(name)) continue;
    std::string list, hint;
    std::size_t best = 3;  // suggest names at most 2 edits away
    for (const auto& k : known) {
      list += (list.empty() ? "${" : ", ${") + k + "}";
      if (const std::size_t d = edit_distance(name, k); d < best) {
        best = d;
        hint = " (did you mean ${" + k + "}?)";
      }
    }
    std::string message = "event template, column " + std::to_string(column + 1);
    message += ": unknown variable ${" + name + "}";
    message += hint;
    message += "; known: " + list;
    throw InvalidArgument(message);
  }
}

DpEvent EventTemplate::instantiate(const std::map<std::string, double>& values) const {
  return Builder(values).event(*root_, "");
}

void EventTemplate::check_structure() const {
  const std::map<std::string, double> none;
  Builder(none, true).event(*root_, "");
}

}  // namespace dptune::command
