#include "dptune/host/json.hpp"

#include <cmath>
#include <cstdio>

#include "dptune/host/format.hpp"

namespace dptune::host {

std::string JsonWriter::escape(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void JsonWriter::newline() {
  if (!pretty_) return;
  out_ << '\n' << std::string(2 * first_.size(), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ << ',';
    first_.back() = false;
    newline();
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_ << '}';
  if (first_.empty() && pretty_) out_ << '\n';
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_ << ']';
  return *this;
}
JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  out_ << escape(name) << (pretty_ ? ": " : ":");
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ << escape(text);
  return *this;
}
JsonWriter& JsonWriter::value(double number) {
  before_value();
  if (std::isnan(number)) {
    out_ << "\"nan\"";
  } else if (std::isinf(number)) {
    out_ << (number > 0 ? "\"inf\"" : "\"-inf\"");
  } else {
    out_ << shortest(number);
  }
  return *this;
}
JsonWriter& JsonWriter::value(std::int64_t number) {
  before_value();
  out_ << number;
  return *this;
}
JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ << (flag ? "true" : "false");
  return *this;
}
JsonWriter& JsonWriter::null() {
  before_value();
  out_ << "null";
  return *this;
}
JsonWriter& JsonWriter::value(const dptune::Value& v) {
  struct Visitor {
    JsonWriter& w;
    void operator()(double x) const { w.value(x); }
    void operator()(std::int64_t x) const { w.value(x); }
    void operator()(bool x) const { w.value(x); }
    void operator()(const std::string& x) const { w.value(x); }
  };
  std::visit(Visitor{*this}, v);
  return *this;
}
JsonWriter& JsonWriter::value(const dptune::Params& params) {
  begin_object();
  for (const auto& [name, v] : params) key(name).value(v);
  return end_object();
}

}  // namespace dptune::host
