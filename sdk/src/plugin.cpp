#include "dptune/plugin.hpp"

#include "dptune/gradient_canaries.hpp"
#include "dptune/model_files.hpp"

namespace dptune {

// Key functions: the vtables and type_info of every interface live in the SDK library, so
// dynamic_cast and exception matching work across plugin boundaries.
Plugin::~Plugin() = default;
Mechanism::~Mechanism() = default;
Accountant::~Accountant() = default;
Utility::~Utility() = default;
Model::~Model() = default;
TrainingContext::~TrainingContext() = default;
Trainer::~Trainer() = default;
Evaluator::~Evaluator() = default;
ProgressSink::~ProgressSink() = default;
TunerContext::~TunerContext() = default;
Tuner::~Tuner() = default;
PeerChannel::~PeerChannel() = default;
FileModel::~FileModel() = default;
ModelFileLoader::~ModelFileLoader() = default;
GradientCanaryContext::~GradientCanaryContext() = default;
GradientCanaryTrainer::~GradientCanaryTrainer() = default;

PeerChannel* TunerContext::peers() { return nullptr; }
void Tuner::serve_peer(TunerContext&) {
  throw Error("this tuner does not run on other ranks (Tuner::serve_peer is not implemented)");
}

DataSizes TunerContext::data_sizes() const {
  throw Error("TunerContext::data_sizes is not provided by this host (it predates the call)");
}
std::size_t TunerContext::scopes_changed_by_one_record(const DataScope&) const {
  throw Error(
      "TunerContext::scopes_changed_by_one_record is not provided by this host (it predates the "
      "call)");
}
UtilitySensitivity TunerContext::utility_sensitivity(std::size_t) const {
  throw Error(
      "TunerContext::utility_sensitivity is not provided by this host (it predates the call)");
}

const char* to_string(PluginKind kind) {
  switch (kind) {
    case PluginKind::Mechanism:
      return "mechanism";
    case PluginKind::Accountant:
      return "accountant";
    case PluginKind::Utility:
      return "utility";
    case PluginKind::Trainer:
      return "trainer";
    case PluginKind::Tuner:
      return "tuner";
  }
  return "?";
}

}  // namespace dptune
