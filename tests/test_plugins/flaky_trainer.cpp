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
// The model (`kept_model: class_zero`, the default) predicts class 0 with uniform probabilities:
// nothing it outputs depends on the data (only the utility's score of it does).  The other kinds
// predict from the first feature against a threshold set by the candidate x alone (so the runs
// score differently and any run can be the selected one), and differ in how the study store can
// keep them (the interrupt neighbour's class of kept models): `plain` exports nothing and is not
// files (not storable), `numbers` exports the same softmax layer the host predicts with, `files`
// is a model kept in a file under `files_dir` that the trainer loads back.  train() states a
// Gaussian event with the configured noise multiplier, which the tuners price like any private run.
#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include "dptune/model_files.hpp"
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

/// Predicts the largest class when the first feature exceeds `threshold`, else class 0, by the one
/// softmax layer it exports (z_k = -k t + k x0), computed in the host's order of operations
/// (predict_exported) so that a model recalled as numbers predicts bit for bit as this one.
class ThresholdModel : public dptune::Model {
 public:
  ThresholdModel(double threshold, std::size_t features, std::size_t classes, bool exported)
      : threshold_(threshold), features_(features), classes_(classes), exported_(exported) {}
  dptune::Predictions predict(const dptune::Dataset& data) const override {
    const dptune::ModelExport::Layer layer = this->layer();
    dptune::Predictions out;
    out.num_classes = classes_;
    out.values.assign(data.rows, 0.0);
    out.probabilities.assign(data.rows * classes_, 0.0);
    std::vector<double> a, z;
    for (std::size_t i = 0; i < data.rows; ++i) {
      if (data.float_rows.empty())
        a.assign(data.row(i), data.row(i) + data.cols);
      else
        a.assign(data.float_rows.row(i), data.float_rows.row(i) + data.cols);
      z = layer.bias;
      for (std::size_t r = 0; r < layer.inputs; ++r)
        for (std::size_t c = 0; c < layer.outputs; ++c)
          z[c] += a[r] * layer.weights[r * layer.outputs + c];
      const std::size_t best =
          static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin());
      double* p = out.probabilities.data() + i * classes_;
      double total = 0;
      for (std::size_t k = 0; k < classes_; ++k) total += p[k] = std::exp(z[k] - z[best]);
      for (std::size_t k = 0; k < classes_; ++k) p[k] /= total;
      out.values[i] = static_cast<double>(best);
    }
    return out;
  }
  std::string describe() const override { return "threshold " + std::to_string(threshold_); }
  std::optional<dptune::ModelExport> export_model() const override {
    if (!exported_) return std::nullopt;
    dptune::ModelExport m;
    m.kind = "flaky_threshold";
    m.description = describe();
    m.features = features_;
    m.num_classes = classes_;
    m.output = "softmax";
    m.layers.push_back(layer());
    return m;
  }
  double threshold() const { return threshold_; }

 private:
  dptune::ModelExport::Layer layer() const {
    dptune::ModelExport::Layer layer;
    layer.inputs = features_;
    layer.outputs = classes_;
    layer.weights.assign(features_ * classes_, 0.0);
    layer.bias.assign(classes_, 0.0);
    for (std::size_t k = 0; k < classes_; ++k) {
      layer.weights[k] = static_cast<double>(k);
      layer.bias[k] = -static_cast<double>(k) * threshold_;
    }
    layer.activation = "identity";
    return layer;
  }
  double threshold_;
  std::size_t features_, classes_;
  bool exported_;
};

/// The threshold model kept in a file (model.txt: threshold, features, classes).
class ThresholdFileModel final : public ThresholdModel, public dptune::FileModel {
 public:
  ThresholdFileModel(double threshold, std::size_t features, std::size_t classes,
                     std::string folder, dptune::Params trainer_params)
      : ThresholdModel(threshold, features, classes, false),
        folder_(std::move(folder)),
        trainer_params_(std::move(trainer_params)),
        features_(features),
        classes_(classes) {}
  dptune::ModelFiles model_files() const override {
    dptune::ModelFiles files;
    files.folder = folder_;
    files.files = {"model.txt"};
    files.description = describe();
    files.features = features_;
    files.num_classes = classes_;
    files.trainer_params = trainer_params_;
    return files;
  }

 private:
  std::string folder_;
  dptune::Params trainer_params_;
  std::size_t features_, classes_;
};

class FlakyTrainer final : public dptune::Trainer, public dptune::ModelFileLoader {
 public:
  explicit FlakyTrainer(const dptune::Params& p)
      : params_(p),
        kept_model_(p.get_string("kept_model")),
        files_dir_(p.get_string("files_dir")),
        x_(p.get_double("x")),
        fail_on_call_(p.get_int("fail_on_call")),
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
    schema.add_float("x", "the search space's one dimension (sets the threshold models' threshold)")
        .default_to(0.5);
    schema
        .add_string("kept_model",
                    "class_zero, plain (not storable), numbers (exported) or files (loads back)")
        .one_of({"class_zero", "plain", "numbers", "files"})
        .default_to(std::string("class_zero"));
    schema.add_string("files_dir", "where the `files` models are written (one folder a run)")
        .default_to(std::string("flaky-models"));
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
    trained.model = kept(call, data);
    // What the host predicts: the stated event for a private run, none for a non-private one
    // (DP-Hype's local votes).
    trained.event = context.private_run() ? event(data.rows) : dptune::DpEvent::non_private();
    return trained;
  }
  std::shared_ptr<const dptune::Model> load_model(
      const dptune::ModelFiles& released) const override {
    std::ifstream in(std::filesystem::path(released.folder) / released.files.at(0));
    double threshold = 0;
    std::size_t features = 0, classes = 0;
    if (!(in >> threshold >> features >> classes))
      throw dptune::InvalidArgument("flaky trainer: " + released.folder + ": no model.txt");
    return std::make_shared<ThresholdFileModel>(threshold, features, classes, released.folder,
                                                released.trainer_params);
  }
  /// The threshold of the threshold models: best near x = 0.1 on the runners' data (class means
  /// of x0 at 0 and 1.5), worse the farther log10 x is from -1.
  double threshold() const { return 0.75 + 2.0 * (std::log10(x_) + 1.0); }
  std::shared_ptr<const dptune::Model> kept(std::int64_t call, const dptune::Dataset& data) const {
    if (kept_model_ == "class_zero") return std::make_shared<ClassZeroModel>();
    const std::size_t classes = std::max<std::size_t>(2, data.num_classes);
    if (kept_model_ != "files")
      return std::make_shared<ThresholdModel>(threshold(), data.cols, classes,
                                              kept_model_ == "numbers");
    const auto folder = std::filesystem::absolute(files_dir_) / ("run-" + std::to_string(call));
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "model.txt")
        << std::setprecision(17) << threshold() << " " << data.cols << " " << classes << "\n";
    return std::make_shared<ThresholdFileModel>(threshold(), data.cols, classes, folder.string(),
                                                params_);
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
  dptune::Params params_;
  std::string kept_model_;
  std::string files_dir_;
  double x_;
  std::int64_t fail_on_call_;
  std::int64_t interrupt_on_call_;
  std::string calls_file_;
  double noise_multiplier_;
};

}  // namespace

DPTUNE_PLUGIN(trainer, flaky_trainer, FlakyTrainer, "1.0.0",
              "test: fails its n-th train() of the process (the fail-and-resume neighbour)")
