// dptune SDK: DpEvent, *what* a private computation did, as an immutable tree (after Google's
// dp_accounting).  Accountants turn events into costs; events never carry ε themselves unless the
// mechanism is pure or approximate DP by definition.
#pragma once

#include <boost/config.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace dptune {

class BOOST_SYMBOL_VISIBLE DpEvent {
 public:
  enum class Kind {
    NoOp,            // touches no private data
    NonPrivate,      // touches private data without any guarantee: accountants must refuse
    Gaussian,        // noise_multiplier σ = noise stddev / L2 sensitivity
    Laplace,         // noise_multiplier b = scale / L1 sensitivity
    PureDp,          // epsilon
    ApproxDp,        // epsilon, delta
    Zcdp,            // rho
    PoissonSampled,  // sampling_probability q, inner event
    SampledWithoutReplacement,  // source_size n, sample_size m, inner event
    SelfComposed,               // inner event, count
    Composed,                   // events
    RepeatAndSelect,  // inner event, mean, shape (η of truncated neg. binomial; +inf: Poisson)
    // Added in ABI 2.1:
    OneOf,  // events: exactly one of them runs, chosen without looking at the private data
    RepeatUntilAccepted,  // inner event, stop_probability p: rerun until the output is accepted
  };

  /// A NoOp event.
  DpEvent() = default;
  // Constructors validate their arguments and throw InvalidArgument naming the bad one.
  static DpEvent no_op();
  static DpEvent non_private();
  static DpEvent gaussian(double noise_multiplier);
  static DpEvent laplace(double noise_multiplier);
  static DpEvent pure_dp(double epsilon);
  static DpEvent approx_dp(double epsilon, double delta);
  static DpEvent zcdp(double rho);
  static DpEvent poisson_sampled(double sampling_probability, DpEvent event);
  static DpEvent sampled_without_replacement(std::int64_t source_size, std::int64_t sample_size,
                                             DpEvent event);
  static DpEvent self_composed(DpEvent event, std::int64_t count);
  static DpEvent composed(std::vector<DpEvent> events);
  static DpEvent repeat_and_select(DpEvent event, double mean, double shape);
  /// One of `events` runs, picked by a data-independent rule (e.g. a uniformly drawn candidate of a
  /// grid), and the pick may be published: costed as the worst of them (pointwise maximum of the
  /// RDP curves).  Needs at least one event.
  static DpEvent one_of(std::vector<DpEvent> events);
  /// Paper 004, Appendix C (Liu & Talwar's threshold variant): run `event` until its output falls
  /// in a data-independent accepted set; before each run, stop with the data-independent output ⊥
  /// with probability p ∈ [0, 1) (footnote 11), which bounds the run time and the acceptance
  /// probability below by p.  Costed by Corollary 16.
  static DpEvent repeat_until_accepted(DpEvent event, double stop_probability);

  Kind kind() const { return kind_; }
  // Accessors throw InvalidArgument when the event is of another kind.
  double noise_multiplier() const;
  double epsilon() const;
  double delta() const;
  double rho() const;
  double sampling_probability() const;
  std::int64_t source_size() const;
  std::int64_t sample_size() const;
  std::int64_t count() const;
  double mean() const;
  double shape() const;
  double stop_probability() const;
  const DpEvent& inner() const;
  const std::vector<DpEvent>& events() const;

  /// The YAML flow syntax `dptune privacy` reads, e.g.
  /// "{self_composed: {count: 10, event: {gaussian: {noise_multiplier: 1.1}}}}".
  std::string to_string() const;
  static const char* kind_name(Kind kind);
  bool operator==(const DpEvent& other) const;

 private:
  DpEvent(Kind kind, double x, double y, std::int64_t n, std::int64_t m,
          std::vector<DpEvent> children);
  Kind kind_ = Kind::NoOp;
  double x_ = 0, y_ = 0;
  std::int64_t n_ = 0, m_ = 0;
  std::vector<DpEvent> children_;
};

}  // namespace dptune
