// The Gaussian mechanism: adds N(0, (σ · Δ₂)²) to every coordinate, Δ₂ the query's L2 sensitivity
// and σ the noise multiplier.  Used by DP-SGD, DP-Adam, output perturbation and DP-Hype for their
// noise, so a third-party mechanism with the same event can replace it from YAML.
//
// `noise: secure` (default) releases on a power-of-two grid with exact discrete Gaussian noise
// whose σ is scaled to the rounded query's sensitivity Δ₂/g + √d in grid units
// (dptune/helpers/grid_noise.hpp), and states what it draws: discrete_gaussian_on_grid(σ, 2^22),
// the discrete Gaussian with its scale in grid units at least 2^22, which the accountants price by
// the discrete Gaussian's own theorems (Canonne, Kamath & Steinke 2020, Proposition 5; rdp) and,
// knowing the scale, as a post-processing of a continuous Gaussian up to an explicit additive δ
// (pld; docs/accounting.md, "The discrete Gaussian").  The release enforces the stated scale.
// `noise: fast` keeps a floating-point sampler (the ziggurat below), states gaussian(σ), and is
// insecure (Mironov 2012), labelled so in every report.
//
// Speed: DP-SGD calls release once per step on the whole gradient (one normal per parameter), so
// `noise: fast` draws by the ziggurat method (dptune/helpers/fast_normal.hpp; Marsaglia & Tsang
// 2000): one 64-bit word, a multiplication and a comparison for about 99% of the normals, against
// two uniforms, a logarithm and a square root per pair for the polar method it replaced.
//
// Drawing ahead (`prefetch`, secure noise only).  The integer noise of a grid release depends only
// on its parameter (σ² in grid units) and the number of values, never on the data, so a DP-SGD
// run, which releases with the same parameter every step, can have the next step's noise drawn
// while the trainer computes the next gradient.  From the second release with the same
// (parameter, count, generator) on, the release takes from the generator, right after its own
// noise, the words the next release's sampler will read (a fixed number, about 9/16 of a word a
// value against 30.1 bits read on average); the next release with the same key samples its
// noise from those words, continuing on its generator should they not suffice.  A helper thread
// of this instance may run that sampling in between; whether it does changes only when the work
// is done: the noise is the same function of the generator's words, so seeded runs reproduce
// whatever the load, and every release's noise is the exact discrete Gaussian it was (its words
// are uniform and independent of everything the release adds them to).  A change of key
// discards the words taken (they are never used elsewhere).  `off` draws every release from the
// generator at release time, as before this option existed; `auto` (default) lets the helper
// run only while this process has at least two usable cores (its CPU affinity) for each
// instance drawing ahead, so tuners running trainings in parallel do not oversubscribe the
// machine; `on` always lets it run.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "dptune/dptune.hpp"
#include "dptune/helpers/discrete.hpp"
#include "dptune/helpers/fast_normal.hpp"
#include "dptune/helpers/grid_noise.hpp"

namespace {

enum class Prefetch { Off, Auto, On };

/// Instances holding words drawn ahead, process-wide (the `auto` rule counts them).
std::atomic<int> instances_drawing_ahead{0};

int usable_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

/// Words taken from a generator ahead of time, then (when `then` is set) that generator itself.
/// Without `then`, running out throws OutOfWords: the helper thread may not touch the caller's
/// generator, and the release redoes the sampling with `then` set, reading the same words first.
class WordsAhead final : public dptune::RandomBitGenerator {
 public:
  struct OutOfWords {};
  WordsAhead(std::span<const std::uint64_t> words, bool secure,
             dptune::RandomBitGenerator* then = nullptr,
             const std::atomic<bool>* cancelled = nullptr)
      : words_(words), secure_(secure), then_(then), cancelled_(cancelled) {}
  std::uint64_t next_u64() override {
    if (next_ < words_.size()) [[likely]] {
      if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) throw OutOfWords{};
      return words_[next_++];
    }
    if (then_ == nullptr) throw OutOfWords{};
    return then_->next_u64();
  }
  bool cryptographically_secure() const override { return secure_; }
  std::string description() const override { return "words drawn ahead"; }

 private:
  std::span<const std::uint64_t> words_;
  std::size_t next_ = 0;
  bool secure_;
  dptune::RandomBitGenerator* then_;
  const std::atomic<bool>* cancelled_;
};

/// The integer noise of successive grid releases of one instance, drawn at release time or ahead.
class NoiseAhead {
 public:
  explicit NoiseAhead(Prefetch mode) : mode_(mode) {}
  NoiseAhead(const NoiseAhead&) = delete;
  NoiseAhead& operator=(const NoiseAhead&) = delete;
  ~NoiseAhead() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      cancelled_ = true;
    }
    wake_.notify_all();
    if (helper_.joinable()) helper_.join();
    erase(pending_words_);
    if (counted_) instances_drawing_ahead.fetch_sub(1);
  }

  /// `count` exact discrete Gaussians of σ² = variance in grid units, for a release on `rng`.
  std::vector<std::int64_t> draw(dptune::RandomBitGenerator& rng,
                                 dptune::GridNoiseParameter variance, std::size_t count) {
    std::lock_guard serial(release_mutex_);  // concurrent releases on one instance: in turn
    const Key key{variance.numerator, variance.denominator, count, &rng};
    std::vector<std::int64_t> noise(count);
    if (has_pending_ && pending_key_ == key) {
      finish_helper(false);
      if (helper_done_) {
        noise.swap(helper_noise_);
      } else {  // not run or ran out of words: the same sampling, here, on the same words
        WordsAhead words(pending_words_, rng.cryptographically_secure(), &rng);
        dptune::discrete_gaussian_tabled(words, key.numerator, key.denominator, noise);
      }
    } else {
      if (has_pending_) finish_helper(true);
      dptune::discrete_gaussian_tabled(rng, key.numerator, key.denominator, noise);
    }
    erase(pending_words_);
    has_pending_ = false;
    if (mode_ != Prefetch::Off && has_last_ && last_key_ == key) take_ahead(rng, key);
    last_key_ = key;
    has_last_ = true;
    return noise;
  }

 private:
  struct Key {
    std::uint64_t numerator, denominator;
    std::size_t count;
    const dptune::RandomBitGenerator* rng;
    bool operator==(const Key&) const = default;
  };

  /// Words for the next release: 9/16 of a word a value and 64 more (it reads about 30.1 bits a
  /// value at σ >= 2^22 grid units; bench/discrete/README.md), so they suffice but with
  /// negligible probability; should they not, the release continues on its generator.
  static std::size_t words_for(std::size_t count) { return count / 16 * 9 + count % 16 + 64; }

  void take_ahead(dptune::RandomBitGenerator& rng, const Key& key) {
    pending_words_.resize(words_for(key.count));
    for (auto& word : pending_words_) word = rng.next_u64();
    pending_key_ = key;
    pending_secure_ = rng.cryptographically_secure();
    has_pending_ = true;
    if (!counted_) {
      counted_ = true;
      instances_drawing_ahead.fetch_add(1);
    }
    std::lock_guard lock(mutex_);  // the helper is idle here (finish_helper ran)
    helper_done_ = false;
    if (!helper_allowed()) return;
    if (!helper_.joinable()) {
      try {
        helper_ = std::thread([this] { run_helper(); });
      } catch (const std::system_error&) {  // no thread to be had: the release samples itself
        return;
      }
    }
    cancelled_ = false;
    job_ = true;
    wake_.notify_one();
  }

  bool helper_allowed() const {
    if (mode_ == Prefetch::On) return true;
    static const int cores = usable_cores();
    return cores >= 2 * instances_drawing_ahead.load();
  }

  /// Waits until the helper is idle (cancelling its job first when `cancel`).
  void finish_helper(bool cancel) {
    std::unique_lock lock(mutex_);
    if (cancel) cancelled_ = true;
    idle_.wait(lock, [this] { return !job_ && !running_; });
  }

  void run_helper() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || job_; });
      if (stop_) return;
      job_ = false;
      running_ = true;
      const Key key = pending_key_;
      lock.unlock();
      bool done = false;
      std::vector<std::int64_t> noise(key.count);
      try {
        WordsAhead words(pending_words_, pending_secure_, nullptr, &cancelled_);
        dptune::discrete_gaussian_tabled(words, key.numerator, key.denominator, noise);
        done = true;
      } catch (...) {  // out of words, cancelled, or the sampler's own refusal: the release redoes
      }                // it on the same words and its generator, and throws what it throws
      lock.lock();
      running_ = false;
      helper_done_ = done;
      if (done) helper_noise_.swap(noise);
      idle_.notify_all();
    }
  }

  static void erase(std::vector<std::uint64_t>& words) {
    // The words decide noise already released or discarded; wiped before the memory is reused.
    volatile std::uint64_t* p = words.data();
    for (std::size_t i = 0; i < words.size(); ++i) p[i] = 0;
    words.clear();
  }

  const Prefetch mode_;
  std::mutex release_mutex_;
  Key last_key_{}, pending_key_{};
  bool has_last_ = false, has_pending_ = false, pending_secure_ = false, counted_ = false;
  std::vector<std::uint64_t> pending_words_;
  // The helper's state, under mutex_ (pending_words_ and pending_key_ are read by the helper
  // only while a job runs, and written by the release only while none does).
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  bool job_ = false, running_ = false, helper_done_ = false, stop_ = false;
  std::atomic<bool> cancelled_{false};
  std::vector<std::int64_t> helper_noise_;
  std::thread helper_;
};

Prefetch prefetch_mode(const dptune::Params& p) {
  if (!p.contains("prefetch")) return Prefetch::Auto;
  const std::string mode = p.get_string("prefetch");
  return mode == "off" ? Prefetch::Off : mode == "on" ? Prefetch::On : Prefetch::Auto;
}

class Gaussian final : public dptune::Mechanism {
 public:
  explicit Gaussian(const dptune::Params& p)
      : sigma_(p.get_double("noise_multiplier")),
        secure_(!p.contains("noise") || p.get_string("noise") == "secure"),
        ahead_(std::make_unique<NoiseAhead>(prefetch_mode(p))) {}

  static dptune::ParamSchema schema() {
    // One parameter per group of lines, with its bounds, choices and default.
    // clang-format off
    return dptune::ParamSchema{}
        .add_float("noise_multiplier", "σ: noise stddev / L2 sensitivity").min(0).default_to(1.0)
        .add_string("noise",
                    "secure: exact discrete Gaussian on a power-of-two grid; fast: floating-point "
                    "ziggurat (insecure, Mironov 2012; labelled in every report)")
            .one_of({"secure", "fast"}).default_to(std::string("secure"))
        .add_string("prefetch",
                    "secure noise of repeated releases (DP-SGD steps) drawn ahead: auto: on a "
                    "helper thread while the process has two cores per run drawing ahead; on: "
                    "always on the helper; off: at release time (same law in all three)")
            .one_of({"auto", "on", "off"}).default_to(std::string("auto"));
    // clang-format on
  }

  std::vector<double> release(std::span<const double> values, const dptune::Sensitivity& s,
                              dptune::RandomBitGenerator& rng) const override {
    dptune::require(s.l2 >= 0 && std::isfinite(s.l2),
                    "gaussian: L2 sensitivity must be finite and >= 0");
    if (secure_) {
      const double grid = dptune::gaussian_grid(s.l2, sigma_, values.size());
      const double multiplier = multiplier_on_grid(s.l2, grid, values.size());
      if (s.l2 == 0 || multiplier == 0) return dptune::grid_gaussian(values, s.l2, 0, grid, rng);
      const auto variance = dptune::grid_gaussian_variance(s.l2, multiplier, grid, values.size());
      const std::vector<std::int64_t> noise = ahead_->draw(rng, variance, values.size());
      return dptune::add_noise_on_grid(values, grid, noise);
    }
    std::vector<double> out(values.begin(), values.end());
    const double sd = sigma_ * s.l2;
    if (sd == 0) return out;
    dptune::ZigguratNormal::instance().add_to(rng, sd, out);
    return out;
  }

  dptune::DpEvent event() const override {
    return secure_
               ? dptune::DpEvent::discrete_gaussian_on_grid(sigma_, dptune::kGaussianGridMinScale)
               : dptune::DpEvent::gaussian(sigma_);
  }

 private:
  /// σ, or more where needed so that the noise in grid units is at least the stated min_scale
  /// 2^22: the grid rule gives that unless the step is clamped at 2^-1000 (an L2 sensitivity
  /// below about 2^-977), where the noise is raised (more noise only lowers every divergence).
  /// Checked on the rational σ² the sampler is given, exactly.
  double multiplier_on_grid(double l2, double grid, std::size_t count) const {
    if (l2 == 0 || sigma_ == 0) return sigma_;
    __extension__ using u128 = unsigned __int128;
    constexpr u128 kMinVariance = u128{1} << 44;  // (2^22)²
    double multiplier = sigma_;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const auto variance = dptune::grid_gaussian_variance(l2, multiplier, grid, count);
      if (u128{variance.numerator} >= kMinVariance * variance.denominator) return multiplier;
      const double scale = std::sqrt(static_cast<double>(variance.numerator) /
                                     static_cast<double>(variance.denominator));
      multiplier *= dptune::kGaussianGridMinScale / scale * (1 + 1e-9);
    }
    throw dptune::Error("gaussian: the noise could not be raised to 2^22 grid units");
  }

  double sigma_;
  bool secure_;
  std::unique_ptr<NoiseAhead> ahead_;  // mutable state of a const release: see "Drawing ahead"
};

}  // namespace

DPTUNE_PLUGIN(mechanism, gaussian, Gaussian, "1.0.0",
              "Gaussian mechanism: N(0, (σ · L2 sensitivity)²) per coordinate")
