// dptune host: a loop over independent items split over a few threads, for the data set-up
// (generated rows, record-local preprocessing).
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace dptune::host {

/// Calls body(begin, end) on `threads` contiguous slices of [0, n) (as even as possible), one per
/// thread, the caller's thread taking the first; returns when all are done.  For loops over
/// independent items whose results must not depend on the thread count.
template <class Body>
void for_slices(std::size_t n, std::size_t threads, const Body& body) {
  threads = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(n, 1));
  const auto slice = [&](std::size_t part) { body(n * part / threads, n * (part + 1) / threads); };
  std::vector<std::jthread> helpers;
  for (std::size_t part = 1; part < threads; ++part) helpers.emplace_back(slice, part);
  slice(0);
}

}  // namespace dptune::host
