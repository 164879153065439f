// The "did you mean" suggestion every unknown name gets (a component, a key, a data source).
#include "dptune/host/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace dptune::host {

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
