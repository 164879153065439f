#include "dptune/search_space.hpp"

#include <algorithm>
#include <cmath>

#include "dptune/errors.hpp"
#include "dptune/rng.hpp"

namespace dptune {

namespace {

std::size_t int_count(const Dimension& d) {
  return static_cast<std::size_t>(
             (static_cast<std::int64_t>(d.high) - static_cast<std::int64_t>(d.low)) / d.step) +
         1;
}

// Maps a unit coordinate to a float value of a continuous or stepped float dimension.
double float_from_unit(const Dimension& d, double u) {
  u = std::clamp(u, 0.0, 1.0);
  double v = d.log ? std::exp(std::log(d.low) + u * (std::log(d.high) - std::log(d.low)))
                   : d.low + u * (d.high - d.low);
  if (d.float_step > 0) v = d.low + std::round((v - d.low) / d.float_step) * d.float_step;
  return std::clamp(v, d.low, d.high);
}

// Ints: continuous relaxation in (log) space, then rounded to the nearest admissible value.
std::int64_t int_from_unit(const Dimension& d, double u) {
  u = std::clamp(u, 0.0, 1.0);
  double v;
  if (d.log) {
    // Widen by half a unit so the end values get their fair share of the cube.
    // Int log dimensions have low >= 1, so low - 0.5 > 0.
    double lo = std::log(d.low - 0.5), hi = std::log(d.high + 0.5);
    v = std::exp(lo + u * (hi - lo));
  } else {
    v = d.low - 0.5 + u * (d.high - d.low + 1.0);
  }
  auto low = static_cast<std::int64_t>(d.low);
  auto k = static_cast<std::int64_t>(std::floor((v - static_cast<double>(low)) / d.step + 0.5));
  k = std::clamp<std::int64_t>(k, 0, static_cast<std::int64_t>(int_count(d)) - 1);
  return low + k * d.step;
}

double int_to_unit(const Dimension& d, double value) {
  if (d.log) {
    // Int log dimensions have low >= 1, so low - 0.5 > 0.
    double lo = std::log(d.low - 0.5), hi = std::log(d.high + 0.5);
    return std::clamp((std::log(value) - lo) / (hi - lo), 0.0, 1.0);
  }
  return std::clamp((value - (d.low - 0.5)) / (d.high - d.low + 1.0), 0.0, 1.0);
}

}  // namespace

std::size_t Dimension::cardinality() const {
  switch (kind) {
    case Kind::Float:
      return float_step > 0
                 ? static_cast<std::size_t>(std::floor((high - low) / float_step + 1e-9)) + 1
                 : 0;
    case Kind::Int:
      return int_count(*this);
    case Kind::Categorical:
      return choices.size();
  }
  return 0;
}

void SearchSpace::check_new_name(const std::string& name) const {
  require(!name.empty(), "search space: empty dimension name");
  require(find(name) == nullptr, "search space: duplicate dimension '" + name + "'");
}

SearchSpace& SearchSpace::add_float(std::string name, double low, double high, bool log,
                                    double step) {
  check_new_name(name);
  require(std::isfinite(low) && std::isfinite(high),
          "search space '" + name + "': bounds must be finite");
  require(low < high, "search space '" + name + "': low (" + to_string(Value{low}) +
                          ") must be < high (" + to_string(Value{high}) + ")");
  require(!log || low > 0,
          "search space '" + name + "': log scale needs low > 0, got " + to_string(Value{low}));
  require(step >= 0 && std::isfinite(step), "search space '" + name + "': step must be >= 0");
  require(!(log && step > 0), "search space '" + name + "': step and log cannot be combined");
  Dimension d;
  d.name = std::move(name);
  d.kind = Dimension::Kind::Float;
  d.low = low;
  d.high = high;
  d.log = log;
  d.float_step = step;
  dims_.push_back(std::move(d));
  return *this;
}

SearchSpace& SearchSpace::add_int(std::string name, std::int64_t low, std::int64_t high, bool log,
                                  std::int64_t step) {
  check_new_name(name);
  require(low < high, "search space '" + name + "': low (" + std::to_string(low) +
                          ") must be < high (" + std::to_string(high) + ")");
  require(!log || low > 0,
          "search space '" + name + "': log scale needs low > 0, got " + std::to_string(low));
  require(step >= 1, "search space '" + name + "': step must be >= 1, got " + std::to_string(step));
  require(!(log && step != 1), "search space '" + name + "': step and log cannot be combined");
  Dimension d;
  d.name = std::move(name);
  d.kind = Dimension::Kind::Int;
  d.low = static_cast<double>(low);
  d.high = static_cast<double>(high);
  d.log = log;
  d.step = step;
  dims_.push_back(std::move(d));
  return *this;
}

SearchSpace& SearchSpace::add_categorical(std::string name, std::vector<Value> choices) {
  check_new_name(name);
  require(!choices.empty(), "search space '" + name + "': categorical needs at least one choice");
  for (std::size_t i = 0; i < choices.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      require(!(choices[i] == choices[j]),
              "search space '" + name + "': duplicate choice '" + to_string(choices[i]) + "'");
  Dimension d;
  d.name = std::move(name);
  d.kind = Dimension::Kind::Categorical;
  d.choices = std::move(choices);
  dims_.push_back(std::move(d));
  return *this;
}

const Dimension* SearchSpace::find(const std::string& name) const {
  for (const auto& d : dims_)
    if (d.name == name) return &d;
  return nullptr;
}

Params SearchSpace::sample(RandomBitGenerator& rng) const {
  Params p;
  for (const auto& d : dims_) {
    switch (d.kind) {
      case Dimension::Kind::Float:
        p.set(d.name, float_from_unit(d, uniform01(rng)));
        break;
      case Dimension::Kind::Int:
        if (d.log) {
          p.set(d.name, int_from_unit(d, uniform01(rng)));
        } else {
          auto k = static_cast<std::int64_t>(uniform_index(rng, int_count(d)));
          p.set(d.name, static_cast<std::int64_t>(d.low) + k * d.step);
        }
        break;
      case Dimension::Kind::Categorical:
        p.set(d.name, d.choices[uniform_index(rng, d.choices.size())]);
        break;
    }
  }
  return p;
}

std::vector<Value> SearchSpace::grid_values(const Dimension& d, std::size_t n) {
  require(n >= 1, "grid: points per dimension must be >= 1");
  std::vector<Value> values;
  switch (d.kind) {
    case Dimension::Kind::Categorical:
      return d.choices;
    case Dimension::Kind::Int: {
      std::size_t count = int_count(d);
      auto low = static_cast<std::int64_t>(d.low);
      if (count <= n) {
        for (std::size_t k = 0; k < count; ++k)
          values.emplace_back(low + static_cast<std::int64_t>(k) * d.step);
        return values;
      }
      for (std::size_t i = 0; i < n; ++i) {
        double u = n == 1 ? 0.5 : static_cast<double>(i) / static_cast<double>(n - 1);
        std::int64_t v;
        if (d.log) {
          double x = std::exp(std::log(d.low) + u * (std::log(d.high) - std::log(d.low)));
          auto k =
              static_cast<std::int64_t>(std::llround((x - d.low) / static_cast<double>(d.step)));
          v = low + std::clamp<std::int64_t>(k, 0, static_cast<std::int64_t>(count) - 1) * d.step;
        } else {
          auto k = static_cast<std::int64_t>(std::llround(u * static_cast<double>(count - 1)));
          v = low + k * d.step;
        }
        if (values.empty() || std::get<std::int64_t>(values.back()) != v) values.emplace_back(v);
      }
      return values;
    }
    case Dimension::Kind::Float: {
      if (d.float_step > 0 && d.cardinality() <= n) {
        for (std::size_t k = 0; k < d.cardinality(); ++k)
          values.emplace_back(d.low + static_cast<double>(k) * d.float_step);
        return values;
      }
      for (std::size_t i = 0; i < n; ++i) {
        double u = n == 1 ? 0.5 : static_cast<double>(i) / static_cast<double>(n - 1);
        double v = float_from_unit(d, u);
        if (i == 0) v = d.low;  // exact endpoints despite exp(log(x)) rounding
        if (i + 1 == n && n > 1 && d.float_step == 0) v = d.high;
        if (values.empty() || std::get<double>(values.back()) != v) values.emplace_back(v);
      }
      return values;
    }
  }
  return values;
}

std::vector<Params> SearchSpace::grid(std::size_t n) const {
  std::vector<std::vector<Value>> axes;
  std::size_t total = 1;
  for (const auto& d : dims_) {
    axes.push_back(grid_values(d, n));
    require(total <= (std::size_t{1} << 40) / axes.back().size(), "grid: more than 2^40 points");
    total *= axes.back().size();
  }
  std::vector<Params> out;
  if (dims_.empty()) return {Params{}};
  out.reserve(total);
  std::vector<std::size_t> index(dims_.size(), 0);
  for (std::size_t t = 0; t < total; ++t) {
    Params p;
    for (std::size_t k = 0; k < dims_.size(); ++k) p.set(dims_[k].name, axes[k][index[k]]);
    out.push_back(std::move(p));
    for (std::size_t k = dims_.size(); k-- > 0;) {
      if (++index[k] < axes[k].size()) break;
      index[k] = 0;
    }
  }
  return out;
}

std::vector<double> SearchSpace::to_unit(const Params& params) const {
  std::vector<double> u;
  u.reserve(dims_.size());
  for (const auto& d : dims_) {
    const Value& v = params.at(d.name);
    switch (d.kind) {
      case Dimension::Kind::Float: {
        double x = params.get_double(d.name);
        u.push_back(d.log ? (std::log(x) - std::log(d.low)) / (std::log(d.high) - std::log(d.low))
                          : (x - d.low) / (d.high - d.low));
        break;
      }
      case Dimension::Kind::Int:
        u.push_back(int_to_unit(d, static_cast<double>(params.get_int(d.name))));
        break;
      case Dimension::Kind::Categorical: {
        auto it = std::find(d.choices.begin(), d.choices.end(), v);
        require(it != d.choices.end(),
                "to_unit: '" + to_string(v) + "' is not a choice of '" + d.name + "'");
        u.push_back((static_cast<double>(it - d.choices.begin()) + 0.5) /
                    static_cast<double>(d.choices.size()));
        break;
      }
    }
  }
  return u;
}

Params SearchSpace::from_unit(const std::vector<double>& unit) const {
  require(unit.size() == dims_.size(), "from_unit: expected " + std::to_string(dims_.size()) +
                                           " coordinates, got " + std::to_string(unit.size()));
  Params p;
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    const auto& d = dims_[k];
    switch (d.kind) {
      case Dimension::Kind::Float:
        p.set(d.name, float_from_unit(d, unit[k]));
        break;
      case Dimension::Kind::Int:
        p.set(d.name, int_from_unit(d, unit[k]));
        break;
      case Dimension::Kind::Categorical: {
        auto n = d.choices.size();
        auto i = static_cast<std::size_t>(std::clamp(unit[k], 0.0, 1.0) * static_cast<double>(n));
        p.set(d.name, d.choices[std::min(i, n - 1)]);
        break;
      }
    }
  }
  return p;
}

bool SearchSpace::contains(const Params& params) const {
  for (const auto& d : dims_) {
    if (!params.contains(d.name)) return false;
    const Value& v = params.at(d.name);
    switch (d.kind) {
      case Dimension::Kind::Float: {
        const auto* x = std::get_if<double>(&v);
        if (!x || !(*x >= d.low && *x <= d.high)) return false;
        break;
      }
      case Dimension::Kind::Int: {
        const auto* x = std::get_if<std::int64_t>(&v);
        if (!x || static_cast<double>(*x) < d.low || static_cast<double>(*x) > d.high) return false;
        if ((*x - static_cast<std::int64_t>(d.low)) % d.step != 0) return false;
        break;
      }
      case Dimension::Kind::Categorical:
        if (std::find(d.choices.begin(), d.choices.end(), v) == d.choices.end()) return false;
        break;
    }
  }
  return true;
}

}  // namespace dptune
