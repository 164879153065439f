// Private tuners return the event they released (TuningResult::event): the dry run of each
// bundled private tuner's example pipeline carries an event, and the pipeline's accountant prices
// that event to exactly the guarantee the tuner states (the host composes the event with a private
// test score, so an event that said less than the guarantee would understate the release).  At the
// light size the repetition tuner's second example, which takes seconds to price, is left out: the
// walkthrough's pipeline runs the same tuner.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "built_plugins.hpp"
#include "dptune/host/config.hpp"
#include "dptune/host/dry_run.hpp"
#include "dptune/host/plugin_registry.hpp"
#include "dptune/host/runner.hpp"
#include "test_size.hpp"

namespace host = dptune::host;

TEST_CASE("tuner events: a private tuner's dry run returns the event its guarantee prices") {
  const std::filesystem::path examples =
      std::filesystem::path(dptune_test::build_paths::source_dir) / "examples";
  std::vector<std::string> files = {"walkthrough/tune_my_csv.yaml",
                                    "pipelines/svt_doubling_dp_sgd_logreg_breast_cancer.yaml",
                                    "pipelines/dp_hype_digits_iid.yaml"};
  if (!dptune_test::light_sizes())
    files.push_back("pipelines/repetition_dp_sgd_logreg_breast_cancer.yaml");
  for (const std::string& file : files) {
    CAPTURE(file);
    const host::HostCatalog catalog(dptune_test::built_plugins());
    const host::PipelineConfig config = host::load_pipeline(examples / file, {}, catalog);
    const host::TunerDryRun run = host::dry_run_tuner(config, dptune_test::built_plugins());
    REQUIRE(run.guarantee.has_value());
    REQUIRE(run.event.has_value());
    const auto accountant = dptune_test::built_plugins().create_accountant(
        config.accountant.use, config.accountant.params);
    const dptune::PrivacyGuarantee priced = accountant->epsilon(*run.event, config.delta);
    CHECK(priced.epsilon == doctest::Approx(run.guarantee->epsilon).epsilon(1e-12));
    CHECK(priced.delta == run.guarantee->delta);
  }
}
