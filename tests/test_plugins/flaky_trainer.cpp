// A trainer that fails mid-study at a deterministic point, for the fail-and-resume neighbour of
// the neighbouring-release test (tests/neighbouring/run_fail_resume.cpp).  A test seam, so it
// lives here and never in a release binary.
//
// Its `interrupt_on_call`-th train() (when set) raises SIGINT in the process, as an operator's
// Ctrl-C would, at a deterministic point (the interrupt neighbour); the host stops cleanly at its
// next cancellation point.  That call is counted over the lines of `calls_file`, across processes,
// so that the resumed study is not interrupted again.  Its `fail_on_call`-th train() of the process
// throws (counted over every trainer object, before anything else happens in the call); every call
// first appends a line to `calls_file` (when set), so that a test sees how many runs a process
// trained and that a resumed study never trains again what the study store replays.  With one
// thread the count is the order in which the tuner's evaluations run, which a seeded run fixes: the
// same point on D and on D', and on resume.
//
// The model predicts class 0 with uniform probabilities: nothing it outputs depends on the data
// (only the utility's score of it does), and train() states a Gaussian event with the configured
// noise multiplier, which the tuners price like any private run.
#include <atomic>
#include <csignal>
#include <fstream>

#include "test_support.hpp"

namespace {

std::atomic<std::int64_t> train_calls{0};

class ClassZeroModel final : public dptune::Model {
 public:
  dptune::Predictions predict(const dptune::Dataset& data) const override {
    dptune::Predictions out;
    const std::size_t classes = std::max<std::size_t>(2, data.num_classes);
    out.values.assign(data.rows, 0.0);
    out.probabilities.assign(data.rows * classes, 1.0 / static_cast<double>(classes));
    out.num_classes = classes;
    return out;
  }
  std::string describe() const override { return "class 0"; }
};

class FlakyTrainer final : public dptune::Trainer {
 public:
  explicit FlakyTrainer(const dptune::Params& p)
      : fail_on_call_(p.get_int("fail_on_call")),
        interrupt_on_call_(p.get_int("interrupt_on_call")),
        calls_file_(p.get_string("calls_file")),
        noise_multiplier_(p.get_double("noise_multiplier")) {}
  static dptune::ParamSchema schema() {
    dptune::ParamSchema schema;
    schema.add_int("fail_on_call", "the train() call of this process that throws (1: the first)")
        .min(1)
        .default_to(std::int64_t{2});
    schema
        .add_int(
            "interrupt_on_call",
            "the train() call, counted over calls_file's lines (across processes), that raises "
            "SIGINT first (0: none)")
        .min(0)
        .default_to(std::int64_t{0});
    schema.add_string("calls_file", "file that gets one line per train() call (\"\": none)")
        .default_to(std::string());
    schema.add_float("noise_multiplier", "the Gaussian event each run states")
        .min_exclusive(0)
        .default_to(2.0);
    schema.add_float("x", "the search space's one dimension (ignored)").default_to(0.5);
    return schema;
  }

  dptune::TrainedModel train(const dptune::Dataset& data,
                             dptune::TrainingContext& context) const override {
    const std::int64_t call = ++train_calls;
    if (!calls_file_.empty()) std::ofstream(calls_file_, std::ios::app) << "train " << call << "\n";
    if (interrupt_on_call_ > 0 && lines_of_calls_file() == interrupt_on_call_) std::raise(SIGINT);
    if (call == fail_on_call_)
      throw dptune::Error("flaky trainer: call " + std::to_string(call) + " fails, as configured");
    dptune::TrainedModel trained;
    trained.model = std::make_shared<ClassZeroModel>();
    // What the host predicts: the stated event for a private run, none for a non-private one
    // (DP-Hype's local votes).
    trained.event = context.private_run() ? event(data.rows) : dptune::DpEvent::non_private();
    return trained;
  }
  std::int64_t lines_of_calls_file() const {
    std::ifstream in(calls_file_);
    std::int64_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
  dptune::DpEvent event(std::size_t) const override {
    return dptune::DpEvent::gaussian(noise_multiplier_);
  }

 private:
  std::int64_t fail_on_call_;
  std::int64_t interrupt_on_call_;
  std::string calls_file_;
  double noise_multiplier_;
};

}  // namespace

DPTUNE_PLUGIN(trainer, flaky_trainer, FlakyTrainer, "1.0.0",
              "test: fails its n-th train() of the process (the fail-and-resume neighbour)")
