// The host finds the repetition tuner's released model under private scoring: the released score
// is noisy, so it matches no kept evaluation's exact score; the tuner's per-run trials list the
// kept evaluations in order with the scores they released, and the host takes the kept model at
// the selected trial's position.  Without this, model.json appeared only when the selected
// candidate ran once: whether the file exists would depend on K.
#include <doctest/doctest.h>

#include "dptune/host/model_file.hpp"

using dptune::Params;

namespace {

class TaggedModel final : public dptune::Model {
 public:
  explicit TaggedModel(int model_tag) : tag(model_tag) {}
  dptune::Predictions predict(const dptune::Dataset&) const override { return {}; }
  std::string describe() const override { return "model " + std::to_string(tag); }
  int tag;
};

struct Kept {
  Params candidate;
  double utility_mean = 0;
  std::shared_ptr<const dptune::Model> model;
};

Params lr(double v) {
  Params p;
  p.set("lr", v);
  return p;
}

dptune::Trial trial(const Params& p, double score) {
  dptune::Trial t;
  t.params = p;
  t.utility_mean = t.utility_min = t.utility_max = score;
  return t;
}

int tag_of(const std::shared_ptr<const dptune::Model>& m) {
  REQUIRE(m != nullptr);
  return dynamic_cast<const TaggedModel&>(*m).tag;
}

}  // namespace

TEST_CASE("released model: a noisy selected score is found by its position in the per-run trials") {
  // Four runs, candidate 0.1 twice (runs 1 and 3): exact scores 0.8, 0.9, 0.7, 0.85; released
  // (noisy) scores 0.81, 0.88, 0.72, 0.93: run 3 is selected.
  std::vector<Kept> kept;
  const std::vector<double> lrs{0.01, 0.1, 1.0, 0.1}, exact{0.8, 0.9, 0.7, 0.85},
      noisy{0.81, 0.88, 0.72, 0.93};
  dptune::TuningResult result;
  for (int i = 0; i < 4; ++i) {
    kept.push_back({lr(lrs[i]), exact[i], std::make_shared<TaggedModel>(i)});
    result.trials.push_back(trial(lr(lrs[i]), noisy[i]));
  }
  result.trials_sensitive = true;
  result.selected = trial(lr(0.1), 0.93);
  CHECK(tag_of(dptune::host::released_model(result, kept)) == 3);
  // Kept evaluations after the trials (the threshold variant's discarded batch rest): a prefix.
  kept.push_back({lr(0.1), 0.95, std::make_shared<TaggedModel>(4)});
  CHECK(tag_of(dptune::host::released_model(result, kept)) == 3);
  // Trials that do not list the kept evaluations in order are not used: ambiguous, no model.
  std::swap(result.trials[0], result.trials[2]);
  CHECK(dptune::host::released_model(result, kept) == nullptr);
  // An exact score (public validation) still matches the kept evaluation directly.
  result.selected = trial(lr(0.1), 0.85);
  CHECK(tag_of(dptune::host::released_model(result, kept)) == 3);
}
