// dptune SDK: what a plugin declares about itself so that the host can enforce the
// rules of its kind before anything is evaluated — without knowing any plugin by name.
//
// A plugin declares by giving its class, beside `static ParamSchema schema()`, a static
// `traits()` (or `traits(const Params&)` when the answer depends on the plugin's parameters)
// returning the traits type of its kind: TunerTraits, TrainerTraits or UtilityTraits.
// DPTUNE_PLUGIN exports it with the plugin's descriptor.  Declaring is optional, and the absence
// of a declaration is the safe default: a tuner that declares nothing is held to every rule of a
// private tuner (docs/sdk-contract.md, "Declared properties").
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/config.hpp>

#include "dptune/data.hpp"
#include "dptune/params.hpp"

namespace dptune {

/// What a tuner's outputs are.
enum class TunerOutputs {
  /// Differentially private: everything the tuner returns is covered by the guarantee it returns.
  /// Every private rule applies (no preprocessing fitted on the private data, no stratified
  /// split, a public schema, failures of evaluations kept secret, a ledger charge).
  Private,
  /// A privacy-utility map for trusted analysts (grid search over ε and the like): its trials and
  /// choice are computed from the private data without any guarantee.
  Map,
};

/// The unit of privacy a tuner's guarantee protects.
enum class GuaranteeUnit {
  Record,  // one training record (the pipeline's neighbouring relation)
  Client,  // all records of one client's shard (client-level DP, e.g. federated tuning)
};

struct BOOST_SYMBOL_VISIBLE TunerTraits {
  TunerOutputs outputs = TunerOutputs::Private;
  /// It returns a selected trial whose run it kept (EvaluationRequest::keep_output), and its
  /// guarantee covers releasing that run's model: the host writes model.json and may compose a
  /// test score of it.  False: the host releases no model and refuses `output.test_score`.
  bool releases_model = false;
  /// The data scopes it evaluates on (DataScope::Kind); the host refuses an evaluation of any
  /// other kind.
  std::vector<DataScope::Kind> scopes{DataScope::Kind::Whole};
  GuaranteeUnit unit = GuaranteeUnit::Record;
};

/// The parameters through which a trainer's privacy is set, named so that the host can explain
/// a privacy problem (e.g. a target ε no noise reaches) without guessing parameter names.  An
/// empty name: the trainer has no such parameter.
struct BOOST_SYMBOL_VISIBLE TrainerTraits {
  /// A float parameter asking for noise calibrated to this ε (0: off).
  std::string target_epsilon;
  /// A float parameter with that target's δ (0: the pipeline's δ).
  std::string target_delta;
  /// The float noise parameter that calibration searches (σ, the noise multiplier).
  std::string noise_multiplier;
  /// A string parameter choosing the batch sampling (each of its choices may be suggested).
  std::string sampling;
};

/// How far a utility's score can move when one scored record changes (replaced, added or
/// removed), when `scored` records are scored.
struct BOOST_SYMBOL_VISIBLE UtilityTraits {
  enum class Sensitivity {
    Unknown,        // no bound is declared: a tuner that needs one refuses the utility
    MeanOfRecords,  // a 1-Lipschitz function of the mean of per-record terms in [0, scale]:
                    // min(1, scale / scored)
    Constant,       // at most `scale` whatever the number of records
  };
  Sensitivity sensitivity = Sensitivity::Unknown;
  double scale = 1;
  /// Why the bound holds (one sentence, for reports), without the numbers the host adds.
  std::string derivation;
};

/// What one plugin declared; at most one member is set, the one of its kind.  All empty: the
/// plugin declares nothing (the safe defaults of docs/sdk-contract.md apply).
struct BOOST_SYMBOL_VISIBLE PluginTraits {
  std::optional<TunerTraits> tuner;
  std::optional<TrainerTraits> trainer;
  std::optional<UtilityTraits> utility;
};

namespace detail {

inline void declare(PluginTraits& out, TunerTraits traits) { out.tuner = std::move(traits); }
inline void declare(PluginTraits& out, TrainerTraits traits) { out.trainer = std::move(traits); }
inline void declare(PluginTraits& out, UtilityTraits traits) { out.utility = std::move(traits); }

template <class Class>
inline constexpr bool kTraitsTakeParams = requires(const Params& p) {
  Class::traits(p);
};
template <class Class>
inline constexpr bool kDeclaresTraits = kTraitsTakeParams<Class> || requires {
  Class::traits();
};

template <class Class>
auto call_traits(const Params& params) {
  if constexpr (kTraitsTakeParams<Class>)
    return Class::traits(params);
  else
    return Class::traits();
}

template <class Class>
PluginTraits traits_of(const Params& params) {
  PluginTraits out;
  declare(out, call_traits<Class>(params));
  return out;
}

/// The descriptor's `traits` entry: null when the class declares nothing.  `Expected` is the
/// traits type of the plugin's kind (void for a kind that declares nothing).
template <class Class, class Expected>
constexpr PluginTraits (*traits_entry())(const Params&) {
  if constexpr (kDeclaresTraits<Class>) {
    static_assert(
        std::is_same_v<decltype(call_traits<Class>(std::declval<const Params&>())), Expected>,
        "traits() must return the traits type of the plugin's kind (TunerTraits, "
        "TrainerTraits or UtilityTraits; mechanisms and accountants declare none)");
    return &traits_of<Class>;
  } else {
    return nullptr;
  }
}

}  // namespace detail

}  // namespace dptune
