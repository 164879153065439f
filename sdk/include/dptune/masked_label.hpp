// dptune SDK: the label of a masked record (docs/data.md, "A public schema").  A record whose label
// is not in the pipeline's declared label set keeps its slot in Dataset::labels, and so the public
// row count, but contributes nothing: no gradient, no vote, never a correct prediction.  Masking
// one record is a function of that record alone, so the guarantee of a replace-one or add/remove
// relation covers it, where counting the classes from the rows would not.  Only class labels
// (Dataset::num_classes > 0) are ever masked.
#pragma once

namespace dptune {

inline constexpr double kMaskedLabel = -1.0;

/// True for kMaskedLabel (meaningful for class labels only: a regression target may be -1).
inline bool is_masked_label(double label) { return label == kMaskedLabel; }

}  // namespace dptune
