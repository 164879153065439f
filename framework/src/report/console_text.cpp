#include "dptune/host/console_text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

#include "dptune/host/format.hpp"

namespace dptune::host {

namespace {

constexpr int kConsoleDigits = 5;

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// The end of the number starting at `at` (digits, optional fraction, optional exponent), and
/// whether it has a fraction or an exponent.
std::pair<std::size_t, bool> scan_number(const std::string& text, std::size_t at) {
  std::size_t end = at;
  bool decimal = false;
  while (end < text.size() && is_digit(text[end])) ++end;
  if (end + 1 < text.size() && text[end] == '.' && is_digit(text[end + 1])) {
    decimal = true;
    ++end;
    while (end < text.size() && is_digit(text[end])) ++end;
  }
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    std::size_t exp = end + 1;
    if (exp < text.size() && (text[exp] == '+' || text[exp] == '-')) ++exp;
    if (exp < text.size() && is_digit(text[exp])) {
      decimal = true;
      end = exp;
      while (end < text.size() && is_digit(text[end])) ++end;
    }
  }
  return {end, decimal};
}

/// Significant digits of a number token's mantissa: leading zeros, the point and a fraction's
/// trailing zeros do not count ("4.0" has 1, "0.00710" has 3).
int significant_digits(const std::string& token) {
  std::string mantissa = token.substr(0, token.find_first_of("eE"));
  if (mantissa.find('.') != std::string::npos)
    while (!mantissa.empty() && (mantissa.back() == '0' || mantissa.back() == '.'))
      mantissa.pop_back();
  int digits = 0;
  bool leading = true;
  for (char c : mantissa) {
    if (!is_digit(c)) continue;
    if (leading && c == '0') continue;
    leading = false;
    ++digits;
  }
  return digits;
}

/// `x` at 5 significant digits, except that a whole number keeps all its digits (4194304, not
/// 4.1943e+06).
std::string at_console_digits(double x) {
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  return significant(x, kConsoleDigits);
}

/// The index of the bracket closing the one at `open`, or npos.
std::size_t closing(const std::string& text, std::size_t open, char opener, char closer) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == opener) ++depth;
    if (text[i] == closer && --depth == 0) return i;
  }
  return std::string::npos;
}

}  // namespace

std::string short_numbers(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const bool starts =
        is_digit(text[i]) && (i == 0 || (!is_word(text[i - 1]) && text[i - 1] != '.'));
    if (!starts) {
      out += text[i++];
      continue;
    }
    const auto [end, decimal] = scan_number(text, i);
    const std::string token = text.substr(i, end - i);
    // "1.2.3" (a version) or "10.5281/zenodo" continue after the number: left alone.
    const bool continues = end < text.size() &&
                           (is_word(text[end]) ||
                            (text[end] == '.' && end + 1 < text.size() && is_digit(text[end + 1])));
    if (decimal && !continues && significant_digits(token) > kConsoleDigits)
      out += at_console_digits(std::strtod(token.c_str(), nullptr));
    else
      out += token;
    i = end;
  }
  return out;
}

std::string elide_event_dumps(const std::string& text, bool* elided) {
  constexpr std::size_t kLongest = 60;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{') {
      const std::size_t end = closing(text, i, '{', '}');
      const bool nested =
          end != std::string::npos && text.find('{', i + 1) < end;  // a map holding a map: an event
      if (nested && end - i + 1 > kLongest) {
        out += "{...}";
        if (elided) *elided = true;
        i = end + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

std::string summarise_long_vectors(const std::string& text, bool* summarised) {
  constexpr std::size_t kLongest = 10, kShown = 3;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end = text[i] == '[' ? closing(text, i, '[', ']') : std::string::npos;
    std::vector<double> values;
    bool numbers = end != std::string::npos;
    for (std::size_t at = i + 1; numbers && at < end;) {
      while (at < end && (text[at] == ' ' || text[at] == ',')) ++at;
      if (at >= end) break;
      char* stop = nullptr;
      const double v = std::strtod(text.c_str() + at, &stop);
      const std::size_t next = static_cast<std::size_t>(stop - text.c_str());
      if (next == at || next > end) {
        numbers = false;
        break;
      }
      values.push_back(v);
      at = next;
    }
    if (!numbers || values.size() <= kLongest) {
      out += text[i++];
      continue;
    }
    std::vector<std::size_t> order(values.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return values[a] > values[b]; });
    out += "[" + std::to_string(values.size()) + " values; largest:";
    for (std::size_t k = 0; k < kShown; ++k)
      out += std::string(k ? "," : "") + " #" + std::to_string(order[k]) + " " +
             significant(values[order[k]], kConsoleDigits);
    out += "]";
    if (summarised) *summarised = true;
    i = end + 1;
  }
  return out;
}

std::string console_note(const std::string& note) {
  bool shortened = false;
  std::string text = elide_event_dumps(note, &shortened);
  text = summarise_long_vectors(text, &shortened);
  text = short_numbers(text);
  return shortened ? text + " (in full: summary.json)" : text;
}

std::vector<std::string> without_repeated_passages(const std::vector<std::string>& notes) {
  constexpr std::size_t kLongest = 80, kLabel = 30;
  std::vector<std::string> out;
  std::vector<std::string> bodies;  // earlier notes without their labels
  for (std::string note : notes) {
    for (const auto& body : bodies)
      if (const std::size_t at = note.find(body); at != std::string::npos)
        note.replace(at, body.size(), "as above");
    std::string body = note;
    for (int labels = 0; labels < 2; ++labels)
      if (const std::size_t colon = body.find(": "); colon < kLabel)  // npos is never below
        body = body.substr(colon + 2);
    if (body.size() > kLongest) bodies.push_back(body);
    out.push_back(std::move(note));
  }
  return out;
}

std::string note_headline(const std::string& note, std::size_t width) {
  std::string text = console_note(note);
  if (text.size() <= width) return text;
  // A clause ends at "; " or at ". " before a capital (not "et al. 2017").
  std::size_t clause = text.find("; ");
  for (std::size_t at = text.find(". "); clause == std::string::npos && at != std::string::npos;
       at = text.find(". ", at + 1))
    if (at + 2 < text.size() && std::isupper(static_cast<unsigned char>(text[at + 2]))) clause = at;
  if (clause != std::string::npos && clause >= width / 3 && clause + 4 <= width)
    return text.substr(0, clause) + " ...";
  std::size_t cut = text.rfind(' ', width - 4);
  if (cut == std::string::npos || cut == 0) cut = width - 4;
  return text.substr(0, cut) + " ...";
}

/// The (ε, δ) statement for a reader who does not think in ε: whatever an observer sees of the
/// released outputs, one record (or one client's records) changes the probability of it by at
/// most the factor e^ε, except on events of total probability δ (Dwork & Roth 2014, Def. 2.4).
std::string guarantee_in_words(const dptune::PrivacyGuarantee& g, dptune::GuaranteeUnit unit) {
  const std::string who = unit == dptune::GuaranteeUnit::Client
                              ? "all the records of any one client"
                              : "any one record of the data";
  return "whatever is released, changing " + who +
         " changes the probability of any outcome by at most a factor e^epsilon = " +
         significant(std::exp(g.epsilon), 3) +
         ", except with probability at most delta = " + significant(g.delta, 3) + ".";
}

bool is_warning_note(const std::string& note) {
  for (const char* prefix : {"WARNING", "INSECURE NOISE", "NOMINAL"})
    if (note.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string wrapped(const std::string& text, const std::string& first, const std::string& indent,
                    std::size_t width) {
  std::string out, line;
  const std::string* prefix = &first;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!line.empty() && prefix->size() + line.size() + 1 + word.size() > width) {
      out += *prefix + line + "\n";
      line.clear();
      prefix = &indent;
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += *prefix + line + "\n";
  return out;
}

std::string console_notes(const std::vector<std::string>& notes, bool verbose) {
  constexpr std::size_t kWidth = 100;
  std::string out;
  if (verbose) {
    for (const auto& n : notes) out += wrapped(n, "note: ", "      ");
    return out;
  }
  std::size_t lines = 0, left_out = 0;
  for (const auto& n : notes)
    if (is_warning_note(n)) {
      const std::string block = wrapped(console_note(n), "note: ", "      ");
      lines += static_cast<std::size_t>(std::count(block.begin(), block.end(), '\n'));
      out += block;
    }
  for (const auto& n : notes) {
    if (is_warning_note(n)) continue;
    // The last line of the budget is the one that says where the notes are in full.
    if (lines + 1 < kConsoleNoteLines) {
      out += "note: " + note_headline(n, kWidth - 6) + "\n";
      ++lines;
    } else {
      ++left_out;
    }
  }
  if (!notes.empty())
    out += "  (" +
           (left_out ? std::to_string(left_out) + (left_out == 1 ? " more note; " : " more notes; ")
                     : std::string()) +
           "every note in full: report.html, summary.json, or dptune run --verbose)\n";
  return out;
}

}  // namespace dptune::host
