// dptune host: the one home of "did you mean" suggestions for misspelt names.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dptune::host {

/// Edit distance suggestion: the closest of `candidates` to `word`, if close enough to be a typo.
std::optional<std::string> did_you_mean(const std::string& word,
                                        const std::vector<std::string>& candidates);

}  // namespace dptune::host
