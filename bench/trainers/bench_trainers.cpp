// DP-SGD throughput, examples per second on ONE core, per-example clipping (ghost norms) and
// Gaussian noise (the gaussian plugin's `noise: fast`) included, each case on the same data held
// as double features (the trainers' double path: the anchor) and as float rows (the host's
// storage since ABI 2.6: the layers run in float):
//   * MLP 64-128-10 on data shaped like digits (1797 x 64, 10 classes), lots of 64;
//   * MLP 784-256-10 on data shaped like Fashion-MNIST (70 000 x 784, 10 classes), lots of 256;
//   * logistic regression on data shaped like breast cancer (569 x 30), lots of 64 (double
//     arithmetic on both: a dot product per example).
// Two paths are timed: "loop" (the library's train_dp_sgd with noise from the gaussian plugin
// through the host's proxy) and "plugin" (the dp_sgd plugin's train() through the registry, as the
// host runs it, including model creation).  Times are this thread's CPU time (the machine is
// shared); wall-clock throughput is printed beside.  Run:
//   taskset -c 1 build/bin/bench_trainers [seconds per case] [secure]
// (secure: each workload's float rows once more with `noise: secure`, and the fast / secure
// ratios of the same run; prefetch: fast noise, secure noise drawn at release time and secure
// noise drawn ahead on a helper thread, wall-clock rates, interleaved rounds, float rows:
//   taskset -c 0,1 build/bin/bench_trainers 1 prefetch)
// (DPTUNE_BENCH_ONLY="784-256-10 float", or a part of that, runs only the matching cases;
// DPTUNE_BENCH_STREAM=secure draws from the unseeded run's ChaCha20 stream instead of a seeded
// xoshiro256**)
// and the data set-up (loading and splitting Fashion-MNIST's IDX files, drawing 70 000 x 784
// Gaussian blobs), wall and CPU seconds:
//   taskset -c 1 build/bin/bench_trainers setup
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "dptune/dptune.hpp"
#include "dptune/host/data_layout.hpp"
#include "dptune/host/data_source.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/random.hpp"
#include "training/trainer_plugin.hpp"
#include "training/training.hpp"

using namespace dptune;
using namespace dptune::trainers;

namespace {

Dataset synthetic(std::size_t n, std::size_t d, std::size_t classes, std::uint64_t seed) {
  Xoshiro256 rng(seed);
  std::vector<double> centres(classes * d);
  for (double& c : centres) c = gaussian(rng, 1.0);
  Dataset data;
  data.rows = n;
  data.cols = d;
  data.num_classes = classes;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j)
      data.features.push_back(centres[(i % classes) * d + j] + gaussian(rng, 1.0));
    data.labels.push_back(static_cast<double>(i % classes));
  }
  return data;
}

class Context final : public TrainingContext {
 public:
  Context(const host::PluginRegistry& r, std::string noise, std::string prefetch = "off")
      : registry_(r), noise_(std::move(noise)), prefetch_(std::move(prefetch)), rng_(stream()) {}
  RandomBitGenerator& rng() override { return *rng_; }
  std::shared_ptr<const Mechanism> mechanism(const Params& overrides) override {
    // The gaussian plugin's `noise` parameter: secure (grid + exact discrete Gaussian, the
    // default) or fast (floating-point polar method).
    // `prefetch` (secure only): the next step's noise drawn ahead on a helper thread or not.
    return registry_.create_mechanism(
        "gaussian", Params{{"noise", noise_}, {"prefetch", prefetch_}}.merged(overrides));
  }
  const Accountant& accountant() const override { throw Error("no accountant in the benchmark"); }
  double delta() const override { return 1e-5; }
  bool private_run() const override { return true; }

 private:
  const host::PluginRegistry& registry_;
  std::string noise_, prefetch_;
  std::unique_ptr<RandomBitGenerator> rng_;

  /// DPTUNE_BENCH_STREAM=secure: the unseeded run's generator (host::SecureRandom, ChaCha20),
  /// from which `noise: secure` reads its words and `noise: fast` keys a xoshiro256** per
  /// release, as in production; otherwise a seeded run's xoshiro256** (the default).
  static std::unique_ptr<RandomBitGenerator> stream() {
    const char* name = std::getenv("DPTUNE_BENCH_STREAM");
    if (name != nullptr && std::string(name) == "secure")
      return std::make_unique<host::SecureRandom>();
    return std::make_unique<Xoshiro256>(1);
  }
};

// CPU time of this thread: the machine is shared, and wall time would charge us for other
// processes' time slices.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// CPU time of the whole process (all threads: the helper that draws noise ahead included).
double process_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// The same data with its features as float rows (one shared storage, as the host holds it):
/// the trainers then run their layers in float.
Dataset as_float_rows_only(const Dataset& data) {
  Dataset out = data;
  out.float_rows = as_float_rows(data);
  out.features.clear();
  return out;
}

/// Training accuracy (on the first 2 000 rows) after ONE epoch from the same seeds, so that the
/// double and float paths are compared on the same training (the timed runs' epochs differ).
double one_epoch_accuracy(const Dataset& data, const std::string& model, std::size_t hidden,
                          std::size_t lot) {
  DpSgdOptions o;
  o.lot_size = lot;
  o.learning_rate = 0.05;
  o.epochs = 1;
  Xoshiro256 rng(7);
  Network network(make_architecture(model, hidden, 0, data));
  network.initialise(rng);
  // Noise of the same σ = 1 as the timed runs, from the seeded stream (as noise: fast draws it).
  train_dp_sgd(network, data, o, rng, [&rng](std::vector<double>& sum, double l2) {
    for (double& v : sum) v += gaussian(rng, l2);
  });
  const std::size_t rows = std::min<std::size_t>(data.rows, 2000);
  std::vector<std::size_t> first(rows);
  std::iota(first.begin(), first.end(), std::size_t{0});
  const Dataset head = host::subset(data, first);
  const Predictions p = network.predict(head);
  std::size_t right = 0;
  for (std::size_t i = 0; i < rows; ++i) right += p.values[i] == head.labels[i] ? 1 : 0;
  return static_cast<double>(right) / static_cast<double>(rows);
}

/// Returns the loop's throughput, examples per CPU second.
double run(const char* label, const Dataset& data, const std::string& model, std::size_t hidden,
           std::size_t lot, double flop_per_example, double budget,
           const host::PluginRegistry& registry, const std::string& noise_mode) {
  DpSgdOptions o;
  o.lot_size = lot;
  o.learning_rate = 0.05;
  o.noise_multiplier = 1.0;
  o.clipping_norm = 1.0;
  Context context(registry, noise_mode);
  auto mechanism = context.mechanism(Params{{"noise_multiplier", 1.0}});
  auto noise = mechanism_noise(mechanism, context.rng());
  Network network(make_architecture(model, hidden, 0, data));
  network.initialise(context.rng());
  // Calibrate the number of epochs to the time budget, on the second epoch: the first includes
  // one-off costs (the exact sampler builds its table for a new sigma).
  o.epochs = 1;
  train_dp_sgd(network, data, o, context.rng(), noise);
  double t0 = thread_seconds();
  train_dp_sgd(network, data, o, context.rng(), noise);
  const double one = thread_seconds() - t0;
  o.epochs = std::max<std::size_t>(1, static_cast<std::size_t>(budget / std::max(one, 1e-9)));
  const double examples =
      static_cast<double>(dp_schedule(data.rows, o).steps) * static_cast<double>(o.lot_size);
  const auto wall0 = std::chrono::steady_clock::now();
  t0 = thread_seconds();
  train_dp_sgd(network, data, o, context.rng(), noise);
  const double loop = thread_seconds() - t0;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  // The layers alone (no noise: the clipped sums are computed, nothing is drawn), to show what
  // the noise sampler costs beside the products.
  t0 = thread_seconds();
  train_dp_sgd(network, data, o, context.rng(), NoiseFunction{});
  const double quiet = thread_seconds() - t0;

  Params p{{"model", model},
           {"hidden1", static_cast<std::int64_t>(hidden ? hidden : 1)},
           {"epochs", static_cast<std::int64_t>(o.epochs)},
           {"lot_size", static_cast<std::int64_t>(lot)},
           {"noise_multiplier", 1.0},
           {"learning_rate", 0.05}};
  const auto* info = registry.find(PluginKind::Trainer, "dp_sgd");
  auto trainer = registry.create_trainer("dp_sgd", info->schema.complete(p));
  t0 = thread_seconds();
  trainer->train(data, context);
  const double plugin = thread_seconds() - t0;

  std::printf(
      "%-34s %-6s noise %-6s %6lld steps  CPU %6.3f s: %7.4f M examples/s, %6.2f GFLOP/s (wall "
      "%7.4f M/s) | plugin train(): %7.4f M examples/s | no noise: %6.2f GFLOP/s | accuracy "
      "%.4f\n",
      label, data.float_rows.empty() ? "double" : "float", noise_mode.c_str(),
      static_cast<long long>(dp_schedule(data.rows, o).steps), loop, examples / loop / 1e6,
      examples * flop_per_example / loop / 1e9, examples / wall / 1e6, examples / plugin / 1e6,
      examples * flop_per_example / quiet / 1e9, one_epoch_accuracy(data, model, hidden, lot));
  return examples / loop;
}

/// Wall-clock and process-CPU rates of the loop (examples per second) with one noise set-up.
struct Rates {
  double wall = 0, process = 0, thread = 0;
};

/// A trained network and its step count, calibrated once per configuration: `rounds` then
/// times the configurations in turn, so each round's ratios share the machine's load.
struct Timed {
  std::string noise, prefetch;
  std::unique_ptr<Context> context;
  std::shared_ptr<const Mechanism> mechanism;
  NoiseFunction noise_function;
  std::unique_ptr<Network> network;
  DpSgdOptions options;
  Rates best;
};

Rates time_once(Timed& t, const Dataset& data) {
  // A mechanism of its own per timing, as each training run gets one: `auto` counts the
  // instances drawing ahead in the process, and the other configurations' must not count.
  t.mechanism = t.context->mechanism(Params{{"noise_multiplier", 1.0}});
  t.noise_function = mechanism_noise(t.mechanism, t.context->rng());
  const double examples = static_cast<double>(dp_schedule(data.rows, t.options).steps) *
                          static_cast<double>(t.options.lot_size);
  const auto wall0 = std::chrono::steady_clock::now();
  const double p0 = process_seconds(), t0 = thread_seconds();
  train_dp_sgd(*t.network, data, t.options, t.context->rng(), t.noise_function);
  const double thread = thread_seconds() - t0, process = process_seconds() - p0;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  t.noise_function = NoiseFunction{};
  t.mechanism.reset();
  return {examples / wall, examples / process, examples / thread};
}

/// Fast noise, secure noise drawn at release time and secure noise drawn ahead (helper thread,
/// `prefetch: on`, and the default `auto`), interleaved over `rounds` rounds on float rows; best
/// wall-clock rate of each and the ratios to fast noise.
void prefetch_rounds(const char* label, const Dataset& data, const std::string& model,
                     std::size_t hidden, std::size_t lot, double budget,
                     const host::PluginRegistry& registry, int rounds) {
  std::vector<Timed> configurations;
  for (const auto& [noise, prefetch] : {std::pair{"fast", "off"}, std::pair{"secure", "off"},
                                        std::pair{"secure", "auto"}, std::pair{"secure", "on"}}) {
    Timed t;
    t.noise = noise;
    t.prefetch = prefetch;
    t.context = std::make_unique<Context>(registry, noise, prefetch);
    t.mechanism = t.context->mechanism(Params{{"noise_multiplier", 1.0}});
    t.noise_function = mechanism_noise(t.mechanism, t.context->rng());
    t.network = std::make_unique<Network>(make_architecture(model, hidden, 0, data));
    t.network->initialise(t.context->rng());
    t.options.lot_size = lot;
    t.options.learning_rate = 0.05;
    t.options.noise_multiplier = 1.0;
    t.options.clipping_norm = 1.0;
    t.options.epochs = 1;
    train_dp_sgd(*t.network, data, t.options, t.context->rng(), t.noise_function);  // warm-up
    const auto wall0 = std::chrono::steady_clock::now();
    train_dp_sgd(*t.network, data, t.options, t.context->rng(), t.noise_function);
    const double one =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    t.noise_function = NoiseFunction{};
    t.mechanism.reset();
    t.options.epochs =
        std::max<std::size_t>(1, static_cast<std::size_t>(budget / std::max(one, 1e-9)));
    configurations.push_back(std::move(t));
  }
  for (int r = 0; r < rounds; ++r)
    for (Timed& t : configurations) {
      const Rates rates = time_once(t, data);
      t.best.wall = std::max(t.best.wall, rates.wall);
      t.best.process = std::max(t.best.process, rates.process);
      t.best.thread = std::max(t.best.thread, rates.thread);
    }
  const double fast = configurations.front().best.wall;
  for (const Timed& t : configurations)
    std::printf(
        "%-34s noise %-6s prefetch %-4s  wall %8.4f M examples/s (fast / this %.2fx) | process "
        "CPU %8.4f M/s | thread CPU %8.4f M/s\n",
        label, t.noise.c_str(), t.prefetch.c_str(), t.best.wall / 1e6, fast / t.best.wall,
        t.best.process / 1e6, t.best.thread / 1e6);
}

/// Times one data source's make() (load or draw, split, preprocess), as `dptune run` does it
/// before the first trial.
void time_setup(const char* label, const std::string& source, const Params& params,
                const host::Preprocessing& preprocessing) {
  const auto* info = host::find_data_source(source);
  auto data = host::make_data_source(source, info->schema.complete(params), preprocessing);
  Xoshiro256 rng(1);
  const auto wall0 = std::chrono::steady_clock::now();
  const double t0 = thread_seconds();
  const host::DataSplits splits = data->make(rng);
  const double cpu = thread_seconds() - t0;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::printf("%-44s %6zu + %5zu + %5zu rows x %3zu: CPU %.3f s, wall %.3f s\n", label,
              splits.train.rows, splits.validation.rows, splits.test.rows, splits.train.cols, cpu,
              wall);
}

void setup() {
  host::Preprocessing bounds{host::Preprocessing::Kind::Bounds};
  bounds.lower = {0};
  bounds.upper = {255};
  bounds.every_feature = true;
  bounds.unit_interval = true;
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  time_setup("idx: Fashion-MNIST train (gzip), bounds", "idx",
             {{"images", dir + "train-images-idx3-ubyte.gz"},
              {"labels", dir + "train-labels-idx1-ubyte.gz"}},
             bounds);
  time_setup("blobs: 70 000 x 784, 10 classes, normalize_rows", "blobs",
             {{"samples", std::int64_t{70000}},
              {"features", std::int64_t{784}},
              {"classes", std::int64_t{10}}},
             host::Preprocessing{host::Preprocessing::Kind::NormalizeRows});
}

/// DPTUNE_BENCH_ONLY="784-256-10 float" (or a part of it) selects the cases to run.
bool selected(const char* only, const std::string& shape, bool single) {
  if (!only) return true;
  return (shape + (single ? " float" : " double")).find(only) != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "setup") {
    setup();
    return 0;
  }
  const double budget = argc > 1 ? std::atof(argv[1]) : 2.0;
  const char* only = std::getenv("DPTUNE_BENCH_ONLY");
  host::PluginRegistry registry;
  // The build tree's plugin folder beside bin/ (the host's own default search path), so that no
  // absolute path is compiled in.
  for (const auto& folder : host::PluginRegistry::default_search_path()) registry.scan(folder);
  // FLOP per example: forward 2·Σ in·out, δ back-propagation 2·Σ_{l≥1} in·out, weight gradients
  // 2·Σ in·out (multiply-add = 2 FLOP); the norms, clipping and noise are not counted.
  const double lr_flop = 2.0 * 30 * 2;
  const double mlp_flop = 2.0 * (64 * 128 + 128 * 10) * 2 + 2.0 * 128 * 10;
  const double big_flop = 2.0 * (784 * 256 + 256 * 10) * 2 + 2.0 * 256 * 10;
  const Dataset lr = synthetic(569, 30, 2, 1), digits = synthetic(1797, 64, 10, 2),
                fashion = synthetic(70000, 784, 10, 3);
  // Double rows (the anchor: the trainers' double path) against the same data as float rows;
  // with `secure`, each workload's float rows again with the default noise, and the ratios.
  const bool secure = argc > 2 && std::string(argv[2]) == "secure";
  const bool prefetch = argc > 2 && std::string(argv[2]) == "prefetch";
  struct Workload {
    const char* key;
    const char* label;
    const Dataset* data;
    const char* model;
    std::size_t hidden, lot;
    double flop;
  };
  const Workload workloads[] = {
      {"64-128-10", "MLP 64-128-10, n=1797, lots 64", &digits, "mlp", 128, 64, mlp_flop},
      {"784-256-10", "MLP 784-256-10, n=70000, lots 256", &fashion, "mlp", 256, 256, big_flop},
      {"logistic", "logistic regression 30-1, n=569", &lr, "logistic", 0, 64, lr_flop}};
  if (prefetch) {
    // Best of five interleaved rounds; with `taskset -c 0,1` the helper has a core of its own.
    for (const Workload& w : workloads)
      if (selected(only, w.key, true))
        prefetch_rounds(w.label, as_float_rows_only(*w.data), w.model, w.hidden, w.lot, budget,
                        registry, 5);
    return 0;
  }
  std::vector<std::string> ratios;
  for (const Workload& w : workloads) {
    double fast_float = 0;
    for (const bool single : {false, true}) {
      if (!selected(only, w.key, single)) continue;
      const Dataset d = single ? as_float_rows_only(*w.data) : *w.data;
      const double rate =
          run(w.label, d, w.model, w.hidden, w.lot, w.flop, budget, registry, "fast");
      if (single) fast_float = rate;
    }
    if (!secure || !selected(only, w.key, true)) continue;
    const double secure_float = run(w.label, as_float_rows_only(*w.data), w.model, w.hidden, w.lot,
                                    w.flop, budget, registry, "secure");
    char line[200];
    std::snprintf(line, sizeof line, "%-34s float: fast %.4g, secure %.4g M examples/s: %.2fx",
                  w.label, fast_float / 1e6, secure_float / 1e6, fast_float / secure_float);
    ratios.emplace_back(line);
  }
  if (!ratios.empty()) std::printf("secure overhead (fast / secure, same run):\n");
  for (const auto& line : ratios) std::printf("  %s\n", line.c_str());
  return 0;
}
