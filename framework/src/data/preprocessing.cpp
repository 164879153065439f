// The data section's `preprocessing` (docs/data.md): record-local row maps, or affine maps with
// statistics the user declares public, or (explicit opt-in) standardisation fitted on the private
// training split, which no printed ε covers.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "dptune/errors.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/for_slices.hpp"

namespace dptune::host {

const char* Preprocessing::name(Kind kind) {
  switch (kind) {
    case Kind::None:
      return "none";
    case Kind::ClipRows:
      return "clip_rows";
    case Kind::NormalizeRows:
      return "normalize_rows";
    case Kind::Standardize:
      return "standardize";
    case Kind::Bounds:
      return "bounds";
    case Kind::FittedStandardize:
      return "fitted_standardize";
  }
  return "?";
}

std::string Preprocessing::assumed_public() const {
  switch (kind) {
    case Kind::Standardize:
      return "per-feature mean and scale (" + source + ")";
    case Kind::Bounds:
      return "per-feature bounds [min, max] (" + source + ")";
    default:
      return "";
  }
}

std::string Preprocessing::describe() const {
  std::ostringstream text;
  switch (kind) {
    case Kind::None:
      text << "none: rows as read (record-local, free)";
      break;
    case Kind::ClipRows:
      text << "clip_rows: every row clipped to L2 norm " << bound << " (record-local, free)";
      break;
    case Kind::NormalizeRows:
      text << "normalize_rows: every row scaled to L2 norm 1 (record-local, free)";
      break;
    case Kind::Standardize:
      text << "standardize with public statistics: x_j <- (x_j - mean_j) / scale_j; "
              "assumed public: "
           << assumed_public();
      break;
    case Kind::Bounds:
      text << "bounds: every feature clamped to its public [min, max] and mapped onto "
           << (unit_interval ? "[0, 1]" : "[-1, 1]") << "; assumed public: " << assumed_public();
      break;
    case Kind::FittedStandardize:
      text << "fitted_standardize: mean and scale FITTED ON THE PRIVATE training split; every "
              "epsilon printed does not cover the fitted scaling";
      break;
  }
  return text.str();
}

Preprocessing Preprocessing::in_feature_order(const std::vector<std::string>& features) const {
  std::vector<std::size_t> index_of;  // for each feature, its position among `names`
  for (const auto& feature : features) {
    const auto it = std::find(names.begin(), names.end(), feature);
    if (it == names.end())
      throw dptune::ConfigError(where + ": no value for the feature '" + feature + "'");
    index_of.push_back(static_cast<std::size_t>(it - names.begin()));
  }
  for (const auto& name : names)
    if (std::find(features.begin(), features.end(), name) == features.end())
      throw dptune::ConfigError(where + ": '" + name + "' is not a feature of the data");
  Preprocessing out = *this;
  out.names.clear();
  for (auto* v : {&out.mean, &out.scale, &out.lower, &out.upper}) {
    if (v->empty()) continue;
    std::vector<double> ordered;
    ordered.reserve(index_of.size());
    for (std::size_t j : index_of) ordered.push_back((*v)[j]);
    *v = std::move(ordered);
  }
  return out;
}

Preprocessing Preprocessing::prepared(const dptune::Dataset& train) const {
  if (every_feature) {
    Preprocessing each = *this;
    each.every_feature = false;
    for (auto* v : {&each.mean, &each.scale, &each.lower, &each.upper})
      if (v->size() == 1) v->assign(train.cols, v->front());
    return each.prepared(train);
  }
  if (!names.empty()) return in_feature_order(train.feature_names).prepared(train);
  Preprocessing out = *this;
  const auto check = [&](const std::vector<double>& v, const char* what) {
    if (v.size() != train.cols)
      throw dptune::ConfigError(where + ": " + what + " has " + std::to_string(v.size()) +
                                " values, the data has " + std::to_string(train.cols) +
                                " features");
  };
  if (kind == Kind::FittedStandardize) {
    const Standardizer s = Standardizer::fit(train);
    out.mean = s.mean;
    out.scale = s.scale;
  } else if (kind == Kind::Standardize) {
    check(mean, "mean");
    check(scale, "scale");
  } else if (kind == Kind::Bounds) {
    check(lower, "min");
    check(upper, "max");
    // x ↦ (x − mean) / scale maps [min, max] onto [-1, 1] (centre, half width) or [0, 1].
    out.mean.resize(lower.size());
    out.scale.resize(lower.size());
    for (std::size_t j = 0; j < lower.size(); ++j) {
      const double width = upper[j] - lower[j];
      out.mean[j] = unit_interval ? lower[j] : lower[j] + width / 2;
      out.scale[j] = unit_interval ? width : width / 2;
      if (!(out.scale[j] > 0)) out.scale[j] = 1;  // min == max: the feature is a constant
    }
  }
  return out;
}

namespace {

/// One row in place, computed in double whatever T is (a float row is rounded once, at the end).
template <class T>
void apply_to_row(const Preprocessing& p, T* row, std::size_t cols) {
  using Kind = Preprocessing::Kind;
  if (p.kind == Kind::Standardize || p.kind == Kind::FittedStandardize || p.kind == Kind::Bounds) {
    dptune::require(p.mean.size() == cols && p.scale.size() == cols,
                    "preprocessing: column count differs from the statistics");
    for (std::size_t j = 0; j < cols; ++j) {
      const double v = row[j];
      const double x = p.kind == Kind::Bounds ? std::clamp(v, p.lower[j], p.upper[j]) : v;
      row[j] = static_cast<T>((x - p.mean[j]) / p.scale[j]);
    }
    return;
  }
  if (p.kind == Kind::None) return;
  // ‖x‖₂ = m ‖x / m‖₂ with m = max |x_j|: no overflow for rows of huge (finite) values.
  double largest = 0;
  for (std::size_t j = 0; j < cols; ++j) largest = std::max(largest, std::abs(double{row[j]}));
  if (!(largest > 0) || !std::isfinite(largest)) return;  // a zero row stays zero
  double norm2 = 0;
  for (std::size_t j = 0; j < cols; ++j) norm2 += (row[j] / largest) * (row[j] / largest);
  const double root = std::sqrt(norm2);  // once: a call in the loop would be made per value
  const double norm = largest * root;
  if (p.kind == Kind::ClipRows && norm <= p.bound) return;
  const double target = p.kind == Kind::NormalizeRows ? 1.0 : p.bound;
  for (std::size_t j = 0; j < cols; ++j) row[j] = static_cast<T>(row[j] / largest / root * target);
}

}  // namespace

void Preprocessing::apply_row(double* row, std::size_t cols) const {
  apply_to_row(*this, row, cols);
}
void Preprocessing::apply_row(float* row, std::size_t cols) const {
  apply_to_row(*this, row, cols);
}

void Preprocessing::apply(dptune::Dataset& data) const {
  for (std::size_t i = 0; i < data.rows; ++i)
    apply_row(data.features.data() + i * data.cols, data.cols);
}

void Preprocessing::apply(std::vector<float>& values, std::size_t cols, std::size_t threads) const {
  if (cols == 0 || kind == Kind::None) return;
  for_slices(values.size() / cols, threads, [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) apply_row(values.data() + i * cols, cols);
  });
}

}  // namespace dptune::host
