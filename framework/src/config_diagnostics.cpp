// Pipeline diagnostics (file:line:column: key: message), the names of component kinds, and the
// "did you mean" suggestion every unknown name gets.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "dptune/host/config.hpp"

namespace dptune::host {

// ---- diagnostics --------------------------------------------------------------------------------

std::string SourceLocation::to_string() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {
std::string compose(const SourceLocation& where, const std::string& key_path,
                    const std::string& message) {
  std::string text = where.to_string() + ": ";
  if (!key_path.empty()) text += key_path + ": ";
  return text + message;
}
}  // namespace

ConfigDiagnostic::ConfigDiagnostic(SourceLocation where, std::string key_path, std::string message)
    : dptune::ConfigError(compose(where, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)) {}

const char* to_string(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::Data:
      return "data";
    case ComponentKind::Mechanism:
      return "mechanism";
    case ComponentKind::Accountant:
      return "accountant";
    case ComponentKind::Utility:
      return "utility";
    case ComponentKind::Trainer:
      return "trainer";
    case ComponentKind::Tuner:
      return "tuner";
  }
  return "?";
}

const char* to_string(ScoreSplit split) {
  return split == ScoreSplit::Test ? "test" : "validation";
}

// ---- did you mean -------------------------------------------------------------------------------

namespace {
// Optimal string alignment distance: Levenshtein (insert, delete, substitute) plus the
// transposition of two adjacent characters, the most common typo (gird for grid).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}
}  // namespace

std::optional<std::string> did_you_mean(const std::string& word,
                                        const std::vector<std::string>& candidates) {
  // A candidate that differs only in case ("c" for "C") is the best suggestion.
  auto lower = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  if (std::find(candidates.begin(), candidates.end(), word) != candidates.end()) return word;
  for (const auto& candidate : candidates)
    if (lower(candidate) == lower(word)) return candidate;
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {  // strict: ties go to the earlier candidate
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace dptune::host
