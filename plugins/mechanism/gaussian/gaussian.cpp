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
// noise, the words the next release's sampler will read: for each piece of 1 024 values a fixed
// number (9/16 of a word a value and 64 more, against 30.1 bits read a value on average).  The
// next release with the same key samples each piece from its words; a piece whose words run out
// is sampled again, in piece order, from its words and then the generator.  A helper thread of
// this instance samples pieces in between, and the release takes those the helper has not begun:
// who samples a piece changes only when the work is done, since each piece's noise is the same
// function of its words; so seeded runs reproduce whatever the load, and every release's noise is
// the exact discrete Gaussian it was (its words are uniform and independent of everything the
// release adds them to).  A change of key discards the words taken (they are never used
// elsewhere).  Releases of fewer than 2 048 values are always drawn at release time.  `off` draws
// every release from the generator at release time, as before this option existed; `auto` (default)
// lets the helper run only while this process has at least two usable cores (its CPU affinity) for
// each instance drawing ahead, so tuners running trainings in parallel do not oversubscribe the
// machine; `on` always lets it run.  docs/noise.md.
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
    if (pending_) drain(*pending_, false);
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (helper_.joinable()) helper_.join();
    if (pending_) erase(pending_->words);
    if (counted_) instances_drawing_ahead.fetch_sub(1);
  }

  /// `count` exact discrete Gaussians of σ² = variance in grid units, for a release on `rng`.
  std::vector<std::int64_t> draw(dptune::RandomBitGenerator& rng,
                                 dptune::GridNoiseParameter variance, std::size_t count) {
    std::lock_guard serial(release_mutex_);  // concurrent releases on one instance: in turn
    const Key key{variance.numerator, variance.denominator, count, &rng};
    std::vector<std::int64_t> noise;
    if (pending_ && pending_->key == key) {
      drain(*pending_, true);
      // Pieces whose words ran out, in order, each continuing on the generator.  Should that
      // throw (the generator, or the sampler's refusal), nothing is released and the words are
      // dropped: the next release starts afresh, as after a change of key.
      try {
        for (std::size_t piece = 0; piece < pending_->pieces; ++piece)
          if (pending_->state[piece] != Job::Done) sample(*pending_, piece, &rng);
      } catch (...) {
        erase(pending_->words);
        pending_.reset();
        has_last_ = false;
        throw;
      }
      noise.swap(pending_->noise);
    } else {
      if (pending_) drain(*pending_, false);
      noise.resize(count);
      dptune::discrete_gaussian_tabled(rng, key.numerator, key.denominator, noise);
    }
    if (pending_) erase(pending_->words);
    pending_.reset();
    if (mode_ != Prefetch::Off && count >= kMinCountAhead && has_last_ && last_key_ == key)
      take_ahead(rng, key);
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

  /// The noise of one release drawn ahead, in pieces of kPiece values, each sampled from words of
  /// its own (a fixed number: words_for(its size), from offset[piece]), so that the helper and
  /// the release can share the pieces and each piece's noise is the same whoever samples it.
  struct Job {
    enum State : std::uint8_t { Todo, Done, OutOfWords };
    Key key;
    bool secure = false;
    std::size_t pieces = 0;
    std::vector<std::uint64_t> words;
    std::vector<std::size_t> offset;  // pieces + 1 entries
    std::vector<std::int64_t> noise;
    std::vector<State> state;
    std::atomic<std::size_t> next{0}, finished{0};
    std::atomic<bool> cancelled{false};
  };

  static constexpr std::size_t kPiece = 1024;
  /// Drawn ahead only from two pieces on: a wake-up of the helper costs microseconds, a piece
  /// about 20, and smaller releases are drawn at release time as with `off`.
  static constexpr std::size_t kMinCountAhead = 2 * kPiece;

  /// Words for a piece: 9/16 of a word a value and 64 more (the tabled sampler reads about 30.1
  /// bits a value at σ >= 2^22 grid units; bench/discrete/README.md), so they suffice but with
  /// negligible probability; should they not, the release continues that piece on its generator.
  static std::size_t words_for(std::size_t count) { return count / 16 * 9 + count % 16 + 64; }

  /// Samples piece `piece` of `job` from its words, then `rng` when given; without `rng`,
  /// running out (or a cancellation, or the sampler's own refusal) leaves it OutOfWords, to be
  /// sampled again in order by the release, which then throws what the sampler throws.
  static void sample(Job& job, std::size_t piece, dptune::RandomBitGenerator* rng) {
    const std::size_t first = piece * kPiece;
    const std::size_t size = std::min(kPiece, job.key.count - first);
    const std::span<const std::uint64_t> words(job.words.data() + job.offset[piece],
                                               job.offset[piece + 1] - job.offset[piece]);
    const std::span<std::int64_t> out(job.noise.data() + first, size);
    if (rng != nullptr) {
      WordsAhead source(words, job.secure, rng);
      dptune::discrete_gaussian_tabled(source, job.key.numerator, job.key.denominator, out);
      job.state[piece] = Job::Done;
      return;
    }
    try {
      WordsAhead source(words, job.secure, nullptr, &job.cancelled);
      dptune::discrete_gaussian_tabled(source, job.key.numerator, job.key.denominator, out);
      job.state[piece] = Job::Done;
    } catch (...) {
      job.state[piece] = Job::OutOfWords;
    }
  }

  /// Claims and samples the pieces left (or only claims them, when not `run`), then waits for
  /// those the helper is sampling.
  static void drain(Job& job, bool run) {
    if (!run) job.cancelled = true;
    for (std::size_t piece; (piece = job.next.fetch_add(1)) < job.pieces;) {
      if (run) sample(job, piece, nullptr);
      job.finished.fetch_add(1, std::memory_order_release);
    }
    while (job.finished.load(std::memory_order_acquire) < job.pieces) std::this_thread::yield();
  }

  void take_ahead(dptune::RandomBitGenerator& rng, const Key& key) {
    auto job = std::make_shared<Job>();
    job->key = key;
    job->secure = rng.cryptographically_secure();
    job->pieces = (key.count + kPiece - 1) / kPiece;
    job->offset.resize(job->pieces + 1, 0);
    for (std::size_t piece = 0; piece < job->pieces; ++piece)
      job->offset[piece + 1] =
          job->offset[piece] + words_for(std::min(kPiece, key.count - piece * kPiece));
    job->words.resize(job->offset.back());
    for (auto& word : job->words) word = rng.next_u64();
    job->noise.resize(key.count);
    job->state.assign(job->pieces, Job::Todo);
    pending_ = job;
    if (!counted_) {
      counted_ = true;
      instances_drawing_ahead.fetch_add(1);
    }
    if (!helper_allowed()) return;
    std::lock_guard lock(mutex_);
    if (!helper_.joinable()) {
      try {
        helper_ = std::thread([this] { run_helper(); });
      } catch (const std::system_error&) {  // no thread to be had: the release samples itself
        return;
      }
    }
    posted_ = std::move(job);
    wake_.notify_one();
  }

  bool helper_allowed() const {
    if (mode_ == Prefetch::On) return true;
    static const int cores = usable_cores();
    return cores >= 2 * instances_drawing_ahead.load();
  }

  /// The helper: samples the pieces of each job posted until the release has claimed them all.
  /// A job reaches it by a shared pointer: one it sees late finds every piece claimed.
  void run_helper() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || posted_; });
      if (stop_) return;
      const std::shared_ptr<Job> job = std::move(posted_);
      posted_.reset();
      lock.unlock();
      for (std::size_t piece; (piece = job->next.fetch_add(1)) < job->pieces;) {
        sample(*job, piece, nullptr);
        job->finished.fetch_add(1, std::memory_order_release);
      }
      lock.lock();
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
  Key last_key_{};
  bool has_last_ = false, counted_ = false;
  std::shared_ptr<Job> pending_;  // the words taken for the next release
  std::mutex mutex_;              // guards posted_ and stop_ (the helper's inbox)
  std::condition_variable wake_;
  std::shared_ptr<Job> posted_;
  bool stop_ = false;
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
    check_sensitivity(s);
    if (secure_) {
      const GridPlan plan = grid_plan(s.l2, values.size());
      if (!plan.variance) return dptune::grid_gaussian(values, s.l2, 0, plan.grid, rng);
      const std::vector<std::int64_t> noise = ahead_->draw(rng, *plan.variance, values.size());
      return dptune::add_noise_on_grid(values, plan.grid, noise);
    }
    std::vector<double> out(values.begin(), values.end());
    const double sd = sigma_ * s.l2;
    if (sd == 0) return out;
    if (rng.cryptographically_secure()) {
      // `noise: fast` is the floating-point path, insecure by design (Mironov 2012): reading its
      // normals from a cryptographically secure stream buys nothing and made an unseeded run up
      // to a third slower than a seeded one.  They come from xoshiro256** keyed by 128 bits of
      // that stream, fresh for every release; a seeded run (a non-secure generator) is unchanged.
      const std::uint64_t key = rng.next_u64();
      dptune::Xoshiro256 normals(key, rng.next_u64());
      dptune::ZigguratNormal::instance().add_to(normals, sd, out);
      return out;
    }
    dptune::ZigguratNormal::instance().add_to(rng, sd, out);
    return out;
  }

  /// What release() refuses before it looks at a value: the sensitivity, and under secure noise
  /// the grid and the sampler's range for σ and this many coordinates (σ·√count above 2^21, the
  /// grid rule of dptune/helpers/grid_noise.hpp).  Asked by the host before any privacy is spent.
  std::string release_refusal(std::size_t count, const dptune::Sensitivity& s) const override {
    try {
      check_sensitivity(s);
      if (secure_) (void)grid_plan(s.l2, count);
    } catch (const dptune::Error& e) {
      return e.what();
    }
    return {};
  }

  dptune::DpEvent event() const override {
    return secure_
               ? dptune::DpEvent::discrete_gaussian_on_grid(sigma_, dptune::kGaussianGridMinScale)
               : dptune::DpEvent::gaussian(sigma_);
  }

 private:
  static void check_sensitivity(const dptune::Sensitivity& s) {
    dptune::require(s.l2 >= 0 && std::isfinite(s.l2),
                    "gaussian: L2 sensitivity must be finite and >= 0");
  }

  /// The grid step of a secure release of `count` values and the integer noise's σ² in grid units
  /// (none when no noise is drawn).  A function of the sensitivity, σ and the count only, never of
  /// the values: release() and release_refusal() ask the same questions of it.
  struct GridPlan {
    double grid = 1;
    std::optional<dptune::GridNoiseParameter> variance;
  };
  GridPlan grid_plan(double l2, std::size_t count) const {
    const double grid = dptune::gaussian_grid(l2, sigma_, count);
    const double multiplier = multiplier_on_grid(l2, grid, count);
    if (l2 == 0 || multiplier == 0) return {grid, std::nullopt};
    return {grid, dptune::grid_gaussian_variance(l2, multiplier, grid, count)};
  }

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
