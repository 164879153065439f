// dptune helpers: the data scope of a uniform subsample of the training split, of public size.
//
// A tuner that tunes on a subsample (Koskela & Kulkarni 2023) asks the host for m training rows
// drawn uniformly without replacement from the layout's own seed, never from the data.  The
// DataScope of ABI 3.3 has no kind of its own for it, so it is stated as a partition of count 0
// (which no host accepted as anything else: a partition needs index < count): index holds m.  The
// host's DataScopes gives it the first m rows of one fixed shuffle of the n training rows, so the
// subsamples of different sizes are nested and each is uniform.
#pragma once

#include <cstddef>

#include "dptune/data.hpp"

namespace dptune {

/// m = `rows` training rows, a uniform sample without replacement drawn by the data layout.
inline DataScope subsample_scope(std::size_t rows) {
  DataScope s;
  s.kind = DataScope::Kind::Partition;
  s.index = rows;
  s.count = 0;
  return s;
}

/// True when `scope` is a subsample_scope (its row count is scope.index).
inline bool is_subsample(const DataScope& scope) {
  return scope.kind == DataScope::Kind::Partition && scope.count == 0;
}

}  // namespace dptune
