// dptune host: a small streaming JSON writer.  Doubles are written so they round-trip;
// non-finite doubles become strings ("inf", "-inf", "nan") since JSON has no such numbers.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "dptune/params.hpp"

namespace dptune::host {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out, bool pretty = true) : out_(out), pretty_(pretty) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(std::size_t number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();
  JsonWriter& value(const dptune::Value& v);
  JsonWriter& value(const dptune::Params& params);

  static std::string escape(std::string_view text);

 private:
  void before_value();
  void newline();
  std::ostream& out_;
  bool pretty_;
  std::vector<bool> first_;  // per open container: no element yet
  bool after_key_ = false;
};

}  // namespace dptune::host
