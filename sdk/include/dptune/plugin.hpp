// dptune SDK: the five plugin interfaces, the services the host hands them, and the export macro.
//
// Contract (read this before writing a plugin):
//  * A plugin is a class deriving from one of Mechanism, Accountant, Utility, Trainer, Tuner,
//    with a constructor taking `const dptune::Params&` and a static `dptune::ParamSchema
//    schema()`.  The host validates the user's `params:` against the schema and constructs the
//    plugin with complete, typed Params (defaults filled in); one instance per configuration, so
//    hyperparameters arrive there too.
//  * A tuner, trainer or utility may also declare what the host must know of it (traits.hpp):
//    a static `traits()`; a tuner that declares nothing is held to every rule of a private one.
//  * Methods may be called concurrently from several threads on *different* instances; a const
//    method may also be called concurrently on the same instance.  Keep const methods free of
//    mutable state, except a cache of a pure function behind a mutex (Trainer::exact_event's
//    calibration).
//  * Throw dptune::InvalidArgument / dptune::Error with a message naming the bad argument.  The
//    host turns any exception into a PluginError naming the plugin, its library and the call.
//  * Randomness comes only from the RandomBitGenerator passed in (see rng.hpp samplers).
//  * Every object a plugin returns keeps the plugin's library loaded until it is destroyed; the
//    host guarantees this, not the plugin.
#pragma once

#include <boost/config.hpp>
#include <boost/dll/alias.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dptune/abi.hpp"
#include "dptune/data.hpp"
#include "dptune/dp_event.hpp"
#include "dptune/errors.hpp"
#include "dptune/params.hpp"
#include "dptune/privacy.hpp"
#include "dptune/schema.hpp"
#include "dptune/search_space.hpp"
#include "dptune/traits.hpp"

namespace dptune {

class RandomBitGenerator;

enum class PluginKind { Mechanism, Accountant, Utility, Trainer, Tuner };
const char* to_string(PluginKind kind);

class BOOST_SYMBOL_VISIBLE Plugin {
 public:
  virtual ~Plugin();
};

// ---- mechanism ----------------------------------------------------------------------------------
/// A noise primitive.  `release` returns a private version of `values` (a noisy vector, an
/// indicator, a one-hot selection…) given the query's sensitivity; `event` states what one release
/// costs.
class BOOST_SYMBOL_VISIBLE Mechanism : public Plugin {
 public:
  ~Mechanism() override;
  virtual std::vector<double> release(std::span<const double> values,
                                      const Sensitivity& sensitivity,
                                      RandomBitGenerator& rng) const = 0;
  /// The privacy of one call of `release` as configured (independent of the data).
  virtual DpEvent event() const = 0;
  /// Why `release` would refuse any `count` values of this `sensitivity`, whatever they are (a
  /// noise scale beyond its sampler's range, too many coordinates for its grid); empty when it
  /// would not.  Data-independent: the host asks before any privacy is spent, for every release
  /// a trainer declares (Trainer::mechanism_releases), so that such a refusal never comes after
  /// the ledger was charged.  Default: empty (ABI 3.2).
  virtual std::string release_refusal(std::size_t count, const Sensitivity& sensitivity) const {
    (void)count;
    (void)sensitivity;
    return {};
  }
};

// ---- accountant (privacy oracle) ----------------------------------------------------------------
class BOOST_SYMBOL_VISIBLE Accountant : public Plugin {
 public:
  ~Accountant() override;
  /// Empty when `event` can be accounted; otherwise why not (e.g. "RepeatAndSelect needs an RDP
  /// accountant").  Callers that only ask whether use supports().
  virtual std::string unsupported_reason(const DpEvent& event) const = 0;
  /// Whether this accountant can price `event` (no reason to refuse it).  Inline and not virtual:
  /// no slot, so it works with an accountant of any minor.
  bool supports(const DpEvent& event) const { return unsupported_reason(event).empty(); }
  /// Smallest ε this accountant can prove for `event` at `delta`.  Throws PrivacyError when it
  /// cannot.
  virtual PrivacyGuarantee epsilon(const DpEvent& event, double delta) const = 0;
  /// Smallest δ this accountant can prove for `event` at `epsilon`.
  virtual PrivacyGuarantee delta(const DpEvent& event, double epsilon) const = 0;
};

// ---- utility (utility oracle) -------------------------------------------------------------------
class BOOST_SYMBOL_VISIBLE Utility : public Plugin {
 public:
  ~Utility() override;
  /// Score in [0, 1], higher is better, of `predicted` against the true labels or answers.
  virtual double score(std::span<const double> truth, const Predictions& predicted) const = 0;
};

// ---- trainer ------------------------------------------------------------------------------------
/// A trained model as plain numbers (Model::export_model): what the host writes as the
/// released model (model.json), so it can be used without the plugin.  The model reads rows of
/// `features` values as the trainer saw them (the host's standardised columns), then:
///   1. `input_map`: "none", or "unit_ball_intercept":
///      x̃ = [x / max(1, ‖x‖), 1] / √2 (d + 1 values);
///   2. each layer in order: z = a W + b (W row-major inputs × outputs), then its activation
///      ("relu" or "identity");
///   3. `output` turns the last z into a class: "sigmoid" or "hinge" (one output: class 1 iff
///      z > 0), "softmax", "multiclass_hinge" or "one_vs_rest" (the class of the largest z).
struct BOOST_SYMBOL_VISIBLE ModelExport {
  struct Layer {
    std::size_t inputs = 0, outputs = 0;
    std::vector<double> weights;  // inputs × outputs, row-major
    std::vector<double> bias;     // outputs
    std::string activation;       // "relu" or "identity"
  };
  std::string kind;         // family, e.g. "network" or "output_perturbation_logistic"
  std::string description;  // as Model::describe()
  std::size_t features = 0;
  std::size_t num_classes = 0;
  std::string input_map = "none";
  std::vector<Layer> layers;
  std::string output;
};

class BOOST_SYMBOL_VISIBLE Model {
 public:
  virtual ~Model();
  virtual Predictions predict(const Dataset& data) const = 0;
  /// Short human-readable description (architecture, sizes).
  virtual std::string describe() const = 0;
  /// The model as plain numbers; empty when it cannot be exported.
  virtual std::optional<ModelExport> export_model() const { return std::nullopt; }
};

/// What the host offers a trainer while it trains.
class BOOST_SYMBOL_VISIBLE TrainingContext {
 public:
  virtual ~TrainingContext();
  virtual RandomBitGenerator& rng() = 0;
  /// The pipeline's mechanism, configured with its params overridden by `overrides` (e.g.
  /// {noise_multiplier: σ}).  Throws ConfigError when the pipeline names no mechanism.
  virtual std::shared_ptr<const Mechanism> mechanism(const Params& overrides) = 0;
  virtual const Accountant& accountant() const = 0;
  /// The pipeline's δ.
  virtual double delta() const = 0;
  /// False for a non-private baseline run (Ding et al.; Liebenow et al. 2025): train without noise
  /// and report DpEvent::non_private().
  virtual bool private_run() const = 0;
};

struct BOOST_SYMBOL_VISIBLE TrainedModel {
  std::shared_ptr<const Model> model;
  /// Exactly what training did to the training data.
  DpEvent event;
};

/// What a trainer's train() asks of the pipeline's mechanism (Trainer::mechanism_request).
struct BOOST_SYMBOL_VISIBLE MechanismRequest {
  /// What train() passes to TrainingContext::mechanism, e.g. {noise_multiplier: σ}; in target-ε
  /// mode σ is calibrated per run, so a representative value stands for it.
  Params overrides;
  /// The event train() requires the mechanism so configured to state, e.g. Gaussian(σ): a
  /// mechanism stating anything else is refused at run time.
  DpEvent expected;
};

/// The public shape of a training set: what Trainer::mechanism_releases may know of the data
/// (the host's row count of the scope, its feature columns and declared classes), no value.
struct BOOST_SYMBOL_VISIBLE DataShape {
  std::size_t rows = 0;
  std::size_t features = 0;
  std::size_t num_classes = 0;  // 0: not a classification problem
};

/// One call of Mechanism::release that train() makes: how many values, with which sensitivity.
struct BOOST_SYMBOL_VISIBLE MechanismRelease {
  std::size_t count = 0;
  Sensitivity sensitivity;
};

class BOOST_SYMBOL_VISIBLE Trainer : public Plugin {
 public:
  ~Trainer() override;
  virtual TrainedModel train(const Dataset& train, TrainingContext& context) const = 0;
  /// The event `train` produces on `train_rows` examples, without training (privacy oracle).  A
  /// trainer whose event depends on the accountant (target-ε mode calibrates σ through it) returns
  /// here a sound summary, e.g. ApproxDp(target), and the exact event from exact_event().
  virtual DpEvent event(std::size_t train_rows) const = 0;
  /// Exactly the event `train` reports on `train_rows` examples when its TrainingContext has this
  /// `accountant` and `delta`: the host prices this event and refuses a train() that reports
  /// anything else.  Called for every candidate of a search and before every evaluation, so a
  /// trainer that calibrates here should cache the result (const and thread-safe).  Default:
  /// event(train_rows).
  /// A trainer whose mechanism_request() expects gaussian(σ) predicts with gaussian(σ) leaves; the
  /// host states each such leaf as the pipeline's mechanism does for that σ (discrete_gaussian(σ)
  /// under secure noise) before it prices and compares, and hands this call an accountant that
  /// prices them so (docs/noise.md).
  virtual DpEvent exact_event(std::size_t train_rows, const Accountant& accountant,
                              double delta) const {
    (void)accountant;
    (void)delta;
    return event(train_rows);
  }
  /// What train() asks of the pipeline's mechanism for these params, so that the host can refuse
  /// a missing or unfit mechanism before any data is touched; empty when train() never asks for
  /// one.  Default: empty.
  virtual std::optional<MechanismRequest> mechanism_request() const { return std::nullopt; }
  /// The releases train() makes through the pipeline's mechanism on data of this shape (one entry
  /// per distinct (count, sensitivity)), so that the host can ask the mechanism, configured as
  /// train() will configure it, whether it refuses any of them (Mechanism::release_refusal)
  /// before any privacy is spent.  Default: none declared (ABI 3.2).
  virtual std::vector<MechanismRelease> mechanism_releases(const DataShape& shape) const {
    (void)shape;
    return {};
  }
};

// ---- tuner --------------------------------------------------------------------------------------
/// One evaluation a tuner asks for: run the pipeline's algorithm with `candidate` on `scope`,
/// `repetitions` times (0: the pipeline's default R), privately or not, and score every run.
struct BOOST_SYMBOL_VISIBLE EvaluationRequest {
  Params candidate;
  DataScope scope = DataScope::whole();
  bool private_run = true;
  std::size_t repetitions = 0;
  /// Keep the model of the last run (what a private selection tuner releases).
  bool keep_output = false;
};

struct BOOST_SYMBOL_VISIBLE Evaluation {
  EvaluationRequest request;
  std::vector<double> utilities;  // one per run
  double utility_mean = 0, utility_min = 0, utility_max = 0;
  /// What ONE run did to the private data (NoOp for a non-private run).
  DpEvent event;
  /// The pipeline accountant's cost of `event` at the pipeline's δ (one run).
  PrivacyGuarantee privacy;
  std::shared_ptr<const Model> model;  // when keep_output and the algorithm is a trainer
  Predictions output;                  // when keep_output and the algorithm is a mechanism
  double seconds = 0;
};

/// The host's evaluation service.  Thread-safe.
class BOOST_SYMBOL_VISIBLE Evaluator {
 public:
  virtual ~Evaluator();
  /// Runs all requests, in parallel on the pipeline's executor; results in request order.
  virtual std::vector<Evaluation> evaluate(const std::vector<EvaluationRequest>& requests) = 0;
  /// What one private run of `candidate` on `scope` does, without running it.
  virtual DpEvent event_of(const Params& candidate, const DataScope& scope) const = 0;
  /// The pipeline's R.
  virtual std::size_t default_repetitions() const = 0;
};

class BOOST_SYMBOL_VISIBLE ProgressSink {
 public:
  virtual ~ProgressSink();
  virtual void start(std::string_view phase, std::size_t total) = 0;
  /// `done` of `total` finished; `best` is the best objective so far when it may be shown.
  virtual void advance(std::size_t done, std::optional<double> best) = 0;
  virtual void message(std::string_view text) = 0;
};

/// Row counts of the pipeline's data, as the host split it (TunerContext::data_sizes).
struct BOOST_SYMBOL_VISIBLE DataSizes {
  std::size_t train = 0, validation = 0, test = 0;
  /// Rows every evaluation is scored on: the validation split, or the test split with
  /// `utility: {split: test}`.
  std::size_t scored = 0;
  /// True for a synthetic workload drawn afresh per run (the sizes are those of every draw).
  bool varies_per_run = false;
};

/// How far the pipeline's utility can move when one scored record changes
/// (TunerContext::utility_sensitivity).
struct BOOST_SYMBOL_VISIBLE UtilitySensitivity {
  std::string utility;  // the configured utility plugin
  /// An upper bound on |U(D) - U(D')| over scored sets D, D' of about `scored_rows` rows that
  /// differ in one record (replaced, added or removed); empty when the host does not know one for
  /// this utility.
  std::optional<double> per_record;
  /// How the bound was derived, or why there is none.
  std::string derivation;
};

/// One message between the processes of a distributed run.
struct BOOST_SYMBOL_VISIBLE PeerMessage {
  int from = 0;  // the sender's rank
  std::string payload;
};

/// Byte messages between the processes (ranks) of a distributed run, implemented by the
/// host (over MPI point-to-point messages for the MPI executor).  Rank 0 runs Tuner::tune; the
/// first message a tuner sends to another rank starts Tuner::serve_peer there, which receives it
/// and what follows.  Messages between two ranks arrive in the order they were sent.  Not
/// encrypted: a tuner that must hide a payload from a rank encrypts it itself.  Thread-safe.
class BOOST_SYMBOL_VISIBLE PeerChannel {
 public:
  virtual ~PeerChannel();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Queues `payload` to rank `to` (never blocks).
  virtual void send(int to, std::string payload) = 0;
  /// The next message for this rank, waiting at most `seconds`; empty when none came in time.
  /// Throws dptune::Error when the run is failing (e.g. the host declared a rank lost).
  virtual std::optional<PeerMessage> receive(double seconds) = 0;
};

class BOOST_SYMBOL_VISIBLE TunerContext {
 public:
  virtual ~TunerContext();
  virtual const SearchSpace& space() const = 0;
  virtual Evaluator& evaluator() = 0;
  virtual const Accountant& accountant() const = 0;
  virtual double delta() const = 0;
  virtual std::shared_ptr<const Mechanism> mechanism(const Params& overrides) = 0;
  virtual ProgressSink& progress() = 0;
  /// The tuner's own randomness (candidate sampling, private selection noise).
  virtual RandomBitGenerator& rng() = 0;
  /// Runs body(0..n-1) on the executor and waits; exceptions are rethrown (the first one).
  virtual void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) = 0;

  // Not pure: the defaults throw dptune::Error("... not provided by this host"), so a context that
  // does not offer them (a test fake) fails clearly if a tuner asks.
  /// Row counts of the pipeline's splits (the split is fixed before any tuner runs).
  virtual DataSizes data_sizes() const;
  /// The configured utility's sensitivity to one scored record when `scored_rows` records are
  /// scored (e.g. 1/n for accuracy); `per_record` empty when the host does not know it.
  virtual UtilitySensitivity utility_sensitivity(std::size_t scored_rows) const;
  /// The other processes of a distributed run (the MPI executor's ranks; this one is rank 0), or
  /// null when the run has only this process.  Default: null.
  virtual PeerChannel* peers();
  /// How many of the `layout.count` scopes of `layout.kind` (index ignored) the replacement of one
  /// training record can change, in their train or scored rows: 1 for the whole data, the
  /// partitions and iid client shards (their rows are placed without looking at any record), 2
  /// for Dirichlet client shards by label (the record may leave one client for another; every
  /// other record keeps its client and part).  A guarantee about one scope's data, such as
  /// DP-Hype's client-level one, covers one record only when it holds for this many scopes
  /// (group privacy).  Default: throws dptune::Error ("not provided by this host").
  virtual std::size_t scopes_changed_by_one_record(const DataScope& layout) const;
};

/// One evaluated candidate as a tuner reports it.
struct BOOST_SYMBOL_VISIBLE Trial {
  std::size_t id = 0;
  Params params;
  PrivacyGuarantee privacy;  // of one run of the candidate
  double utility_mean = 0, utility_min = 0, utility_max = 0;
  std::size_t repetitions = 0;
  double seconds = 0;
};

/// A named numeric series a tuner reports beside its trials (e.g. DPareto's hypervolume after each
/// iteration); the host writes it as <name>.csv and <name>.svg (a line plot) and lists it in
/// summary.json.  `name` is a file stem: letters, digits, '_', '-' and '.'; x and y of equal
/// length.  Series named GROUP.MEMBER are also drawn together on one plot, GROUP.svg, with the
/// MEMBER names as the legend (axis labels of the group's first series).
struct BOOST_SYMBOL_VISIBLE Series {
  std::string name;
  std::string x_label, y_label;
  std::vector<double> x, y;
};

/// The prefix of a TuningResult note that declares a DP output (see TuningResult::notes).
inline constexpr const char* kDpOutputNote = "DP output: ";

struct BOOST_SYMBOL_VISIBLE TuningResult {
  /// Every evaluated candidate.  For a private tuner these are per-trial results of private runs:
  /// set `trials_sensitive` and the host writes them only if the user opted in.
  std::vector<Trial> trials;
  bool trials_sensitive = false;
  /// A privacy–utility map (grid, random, DPareto) whose output is for trusted analysts only.
  bool trusted_analyst_only = false;
  /// The released choice of a private tuner.
  std::optional<Trial> selected;
  /// The guarantee of the whole tuning procedure (private tuners).
  std::optional<PrivacyGuarantee> guarantee;
  /// The composed event of everything the tuner released (private tuners): `guarantee` is the
  /// pipeline accountant's price of it at the pipeline's δ (an event that prices below it is
  /// refused).  The host composes it with what it releases on top (a private test score) and has
  /// the accountant price the composed events.  A tuner that sets `guarantee` but no event is
  /// priced from its guarantee alone (docs/sdk-contract.md, "What a private tuner returns").
  std::optional<DpEvent> event;
  /// Public remarks on the run (console and summary.json).  A private tuner's notes must not
  /// depend on the private data or on its secret randomness (K, run counts, attempt indices, run
  /// times), EXCEPT notes that start with kDpOutputNote: those declare a value the guarantee
  /// covers (a function of the mechanism's DP output, e.g. the SVT loop's stopping iteration),
  /// and the host reports them with the release.
  std::vector<std::string> notes;
  /// Series to plot (trace of the search, not privacy claims).
  std::vector<Series> series;
};

class BOOST_SYMBOL_VISIBLE Tuner : public Plugin {
 public:
  ~Tuner() override;
  virtual TuningResult tune(TunerContext& context) = 0;
  /// This tuner's part on a rank other than 0 of a distributed run, started by the first
  /// message rank 0's tune() sends it through TunerContext::peers() (which the context here also
  /// offers, to the same job).  Returns when its part is done; the next message starts it again.
  /// The context's evaluator runs on this rank; progress goes nowhere.  Default: throws (a tuner
  /// that never sends to other ranks is never asked).
  virtual void serve_peer(TunerContext& context);
  /// The data scopes this tuner evaluates on rank `rank` of a distributed run of
  /// `ranks` >= 2 processes: on rank 0 those of tune(), on another rank those of serve_peer().
  /// Asked before the rank builds its data; the host then keeps only these scopes' rows on that
  /// rank (the others are dropped once the data are read and split, before any run), refuses an
  /// evaluation of any other scope there, and sends that rank no run of another scope.  An empty
  /// list: the rank evaluates nothing and holds no rows.  Default: nullopt, the rank may evaluate
  /// any scope and holds the whole data.
  virtual std::optional<std::vector<DataScope>> rank_scopes(int rank, int ranks) const {
    (void)rank;
    (void)ranks;
    return std::nullopt;
  }
  /// The worst case of this run's final guarantee, stated before any evaluation,
  /// for a tuner whose final guarantee can exceed what its dry run returns: one that depends on
  /// a fact of the real run the dry run cannot see (DP-Hype over MPI ranks counts the clients
  /// that survived the real round timeouts).  `distributed`: the run will place this tuner's
  /// work on other processes (the MPI executor), where such facts arise.  The host prices the
  /// event with the pipeline's accountant and reserves it in the ledger write-ahead beside the
  /// dry run's charge: a run whose worst case does not fit the budget is refused before any
  /// evaluation, and after the run the reservation is settled to what the run needed.  The
  /// context is the dry run's (nothing trains, no peers): the answer may depend on the
  /// configuration and the public row counts only, never on the data or on secret draws.
  /// Default: nullopt, no final guarantee above the dry run's is possible; a tuner that then
  /// needs more anyway is charged the supplement and releases nothing.
  virtual std::optional<DpEvent> worst_case_event(TunerContext& context, bool distributed) const {
    (void)context;
    (void)distributed;
    return std::nullopt;
  }
};

// ---- export -------------------------------------------------------------------------------------
/// What a plugin library exports, once per plugin, through DPTUNE_PLUGIN.
struct BOOST_SYMBOL_VISIBLE PluginDescriptor {
  int abi_major = 0;
  int abi_minor = 0;
  PluginKind kind = PluginKind::Mechanism;
  const char* name = "";
  const char* version = "";
  const char* description = "";
  ParamSchema (*schema)() = nullptr;
  std::unique_ptr<Plugin> (*create)(const Params&) = nullptr;
  /// What the plugin declares for complete params (traits.hpp); null when it declares nothing.
  PluginTraits (*traits)(const Params&) = nullptr;
};

namespace kinds {
struct mechanism {
  using interface = Mechanism;
  using traits = void;
  static constexpr PluginKind value = PluginKind::Mechanism;
};
struct accountant {
  using interface = Accountant;
  using traits = void;
  static constexpr PluginKind value = PluginKind::Accountant;
};
struct utility {
  using interface = Utility;
  using traits = UtilityTraits;
  static constexpr PluginKind value = PluginKind::Utility;
};
struct trainer {
  using interface = Trainer;
  using traits = TrainerTraits;
  static constexpr PluginKind value = PluginKind::Trainer;
};
struct tuner {
  using interface = Tuner;
  using traits = TunerTraits;
  static constexpr PluginKind value = PluginKind::Tuner;
};
}  // namespace kinds

}  // namespace dptune

#define DPTUNE_PP_CAT_(a, b) a##b
#define DPTUNE_PP_CAT(a, b) DPTUNE_PP_CAT_(a, b)
// dptune_v<major>_<minor>_cxx<gxx abi>_<cxx11 abi>_k_<kind>_n_<name>
#define DPTUNE_ALIAS_NAME(KIND, NAME)                                                      \
  DPTUNE_PP_CAT(                                                                           \
      DPTUNE_PP_CAT(                                                                       \
          DPTUNE_PP_CAT(                                                                   \
              DPTUNE_PP_CAT(                                                               \
                  DPTUNE_PP_CAT(                                                           \
                      DPTUNE_PP_CAT(                                                       \
                          DPTUNE_PP_CAT(                                                   \
                              DPTUNE_PP_CAT(DPTUNE_PP_CAT(dptune_v, DPTUNE_ABI_MAJOR), _), \
                              DPTUNE_ABI_MINOR),                                           \
                          _cxx),                                                           \
                      __GXX_ABI_VERSION),                                                  \
                  _),                                                                      \
              DPTUNE_CXX11_ABI),                                                           \
          DPTUNE_PP_CAT(_k_, KIND)),                                                       \
      DPTUNE_PP_CAT(_n_, NAME))

#define DPTUNE_PLUGIN_TRAITS_(KIND, CLASS) \
  descriptor.traits = ::dptune::detail::traits_entry<CLASS, ::dptune::kinds::KIND::traits>();

/// Exports plugin CLASS of kind KIND (mechanism, accountant, utility, trainer, tuner) under NAME
/// (lower-case letters, digits, underscores), e.g.
///   DPTUNE_PLUGIN(mechanism, geometric, GeometricMechanism, "1.0.0", "two-sided geometric noise")
/// Use it once per plugin, at global scope, in exactly one source file.
#define DPTUNE_PLUGIN(KIND, NAME, CLASS, VERSION, DESCRIPTION)                                     \
  static_assert(std::is_base_of_v<::dptune::kinds::KIND::interface, CLASS>,                        \
                #CLASS " must derive from the interface of kind " #KIND);                          \
  static_assert(std::is_constructible_v<CLASS, const ::dptune::Params&>,                           \
                #CLASS " needs a constructor taking const dptune::Params&");                       \
  namespace {                                                                                      \
  ::dptune::PluginDescriptor DPTUNE_PP_CAT(dptune_descriptor_, NAME)() {                           \
    ::dptune::PluginDescriptor descriptor;                                                         \
    descriptor.abi_major = DPTUNE_ABI_MAJOR;                                                       \
    descriptor.abi_minor = DPTUNE_ABI_MINOR;                                                       \
    descriptor.kind = ::dptune::kinds::KIND::value;                                                \
    descriptor.name = #NAME;                                                                       \
    descriptor.version = VERSION;                                                                  \
    descriptor.description = DESCRIPTION;                                                          \
    descriptor.schema = +[]() -> ::dptune::ParamSchema { return CLASS::schema(); };                \
    descriptor.create = +[](const ::dptune::Params& params) -> std::unique_ptr<::dptune::Plugin> { \
      return std::make_unique<CLASS>(params);                                                      \
    };                                                                                             \
    DPTUNE_PLUGIN_TRAITS_(KIND, CLASS)                                                             \
    return descriptor;                                                                             \
  }                                                                                                \
  }                                                                                                \
  BOOST_DLL_ALIAS_SECTIONED(DPTUNE_PP_CAT(dptune_descriptor_, NAME),                               \
                            DPTUNE_ALIAS_NAME(KIND, NAME), dptune)
