// The host's number formatting (dptune/host/format.hpp): each function against texts written out
// by hand and against an independent formatter (std::ostream, std::strtod).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "dptune/host/format.hpp"

using namespace dptune::host;

namespace {

std::string streamed(double x, int digits) {
  std::ostringstream s;
  s << std::setprecision(digits) << x;
  return s.str();
}

/// The significant digits of a decimal text such as -0.00125, 2.5e-10 or 300 (3, 2 and 1).
int significant_digits(const std::string& text) {
  std::string digits;
  for (char c : text.substr(0, text.find('e')))
    if (c >= '0' && c <= '9') digits += c;
  const auto first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 1;
  const auto last = digits.find_last_not_of('0');  // 30 has one: 3e+01
  return static_cast<int>(last - first + 1);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("significant: printf's %g, texts by hand, 5 digits unless told") {
  CHECK(significant(0.1) == "0.1");
  CHECK(significant(0.1 + 0.2) == "0.3");
  CHECK(significant(0.1 + 0.2, 17) == "0.30000000000000004");
  CHECK(significant(1e-5) == "1e-05");
  CHECK(significant(123456789.0) == "1.2346e+08");
  CHECK(significant(123456789.0, 6) == "1.23457e+08");
  CHECK(significant(2.0 / 3.0) == "0.66667");
  CHECK(significant(2.0 / 3.0, 4) == "0.6667");
  CHECK(significant(1234.5, 3) == "1.23e+03");
  CHECK(significant(-0.5, 2) == "-0.5");
  CHECK(significant(0.0) == "0");
  CHECK(significant(kInf) == "inf");
  CHECK(significant(-kInf) == "-inf");
  CHECK(significant(std::nan("")) == "nan");
}

TEST_CASE("significant agrees with std::ostream at every precision (the formatters it replaced)") {
  std::mt19937_64 gen(20);
  std::uniform_real_distribution<double> mantissa(-10, 10);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int i = 0; i < 2000; ++i) {
    const double x = mantissa(gen) * std::pow(10.0, exponent(gen));
    for (int digits : {1, 2, 3, 4, 5, 6, 17})
      REQUIRE(significant(x, digits) == streamed(x, digits));
  }
  for (double x : {kInf, -kInf, 0.0, -0.0, 1.0, 1e300, 5e-324})
    CHECK(significant(x) == streamed(x, 5));
}

TEST_CASE("full_precision: the SDK's float text, read back as the same float") {
  CHECK(full_precision(3.0) == "3.0");
  CHECK(full_precision(0.1) == "0.1");
  CHECK(full_precision(1e-7) == "1e-07");
  CHECK(full_precision(kInf) == ".inf");
  CHECK(full_precision(-kInf) == "-.inf");
  CHECK(full_precision(std::nan("")) == ".nan");
}

TEST_CASE("shortest: the shortest text that reads back as the same double") {
  CHECK(shortest(3.0) == "3");
  CHECK(shortest(0.1) == "0.1");
  CHECK(shortest(0.1 + 0.2) == "0.30000000000000004");
  CHECK(shortest(-2.5e-10) == "-2.5e-10");
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 2000; ++i) {
    // Below 1e15: above 2^53 a fixed-notation integer prints every digit of its exact value.
    const double x = unit(gen) * std::pow(10.0, static_cast<int>(unit(gen) * 35) - 20);
    const std::string text = shortest(x);
    REQUIRE(std::strtod(text.c_str(), nullptr) == x);
    // Shortest: with n significant digits in the text, n - 1 digits (%.{n-1}g) do not read back.
    const int n = significant_digits(text);
    if (n > 1) REQUIRE(std::strtod(significant(x, n - 1).c_str(), nullptr) != x);
  }
}

TEST_CASE("plot labels: short exponents, one scientific figure, fixed decimals") {
  CHECK(significant_short_exponent(1e-5, 6) == "1e-5");
  CHECK(significant_short_exponent(1e6, 6) == "1e6");
  CHECK(significant_short_exponent(2.5e10, 6) == "2.5e10");
  CHECK(significant_short_exponent(0.001, 6) == "0.001");
  CHECK(scientific_one_figure(2e-5) == "2e-5");
  CHECK(scientific_one_figure(1e6) == "1e6");
  CHECK(fixed_decimals(0.05, 2) == "0.05");
  CHECK(fixed_decimals(20, 0) == "20");
  CHECK(fixed_decimals(0.1 + 0.2, 1) == "0.3");
}

TEST_CASE("duration: the progress line's seconds, minutes and hours") {
  CHECK(duration(0) == "0s");
  CHECK(duration(42.4) == "42s");
  CHECK(duration(59.4) == "59s");
  CHECK(duration(187) == "3m07s");
  CHECK(duration(3599) == "59m59s");
  CHECK(duration(7500) == "2h05m");
}
