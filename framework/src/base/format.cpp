#include "dptune/host/format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "dptune/params.hpp"

namespace dptune::host {

namespace {

/// printf into a string (every format here fits 64 characters: a double's %g or %e is at most
/// 24; %f of |x| < 1e40 with a handful of decimals, which tick labels are, fits too).
template <class... Args>
std::string printf_text(const char* format, Args... args) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, format, args...);
  if (n < static_cast<int>(sizeof buf)) return buf;
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(big.data(), big.size(), format, args...);
  big.resize(static_cast<std::size_t>(n));
  return big;
}

/// 1e-05 -> 1e-5, 1e+06 -> 1e6, 2.5e+10 -> 2.5e10.
std::string short_exponent(std::string s) {
  if (const auto e = s.find('e'); e != std::string::npos) {
    std::string exp = s.substr(e + 1);
    const bool negative = exp[0] == '-';
    exp = exp.substr(exp[0] == '-' || exp[0] == '+' ? 1 : 0);
    exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
    s = s.substr(0, e) + "e" + (negative ? "-" : "") + exp;
  }
  return s;
}

}  // namespace

std::string significant(double x, int digits) { return printf_text("%.*g", digits, x); }

std::string full_precision(double x) { return dptune::to_string(dptune::Value{x}); }

std::string shortest(double x) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return {buf, end};
}

std::string significant_short_exponent(double x, int digits) {
  return short_exponent(significant(x, digits));
}

std::string scientific_one_figure(double x) { return short_exponent(printf_text("%.0e", x)); }

std::string fixed_decimals(double x, int decimals) { return printf_text("%.*f", decimals, x); }

std::string duration(double seconds) {
  const int whole = static_cast<int>(seconds);
  if (seconds < 60) return printf_text("%.0fs", seconds);
  if (seconds < 3600) return printf_text("%dm%02ds", whole / 60, whole % 60);
  return printf_text("%dh%02dm", whole / 3600, (whole / 60) % 60);
}

}  // namespace dptune::host
