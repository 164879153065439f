// The `best` accountant's members, their parameters and their answer cache: see
// best/accountant.hpp.
#include <utility>

#include "best/accountant.hpp"
#include "dptune/helpers/answer_cache.hpp"
#include "pld/calculator.hpp"
#include "pld/plugin_params.hpp"
#include "rdp/calculator.hpp"
#include "rdp/plugin_params.hpp"

namespace dptune::best {

namespace {

/// An accountant whose answers are kept (dptune/helpers/answer_cache.hpp).
class CachedAccountant final : public dptune::Accountant {
 public:
  explicit CachedAccountant(std::shared_ptr<const dptune::Accountant> inner)
      : inner_(std::move(inner)) {}
  std::string unsupported_reason(const DpEvent& event) const override {
    return inner_->unsupported_reason(event);
  }
  PrivacyGuarantee epsilon(const DpEvent& event, double delta) const override {
    return cache_.get('e', event, delta, [&] { return inner_->epsilon(event, delta); });
  }
  PrivacyGuarantee delta(const DpEvent& event, double epsilon) const override {
    return cache_.get('d', event, epsilon, [&] { return inner_->delta(event, epsilon); });
  }

 private:
  std::shared_ptr<const dptune::Accountant> inner_;
  mutable dptune::AnswerCache cache_;
};

/// The share of `params` that `schema` declares, completed with its defaults.
dptune::Params share(const dptune::ParamSchema& schema, const dptune::Params& params) {
  dptune::Params own;
  for (const auto& spec : schema.specs())
    if (params.contains(spec.name)) own.set(spec.name, params.at(spec.name));
  return schema.complete(own);
}

}  // namespace

std::shared_ptr<const dptune::Accountant> cached(
    std::shared_ptr<const dptune::Accountant> accountant) {
  return std::make_shared<CachedAccountant>(std::move(accountant));
}

dptune::ParamSchema plugin_schema() {
  dptune::ParamSchema schema;
  for (const dptune::ParamSchema& member : {rdp::plugin_schema(), pld::plugin_schema()})
    for (const auto& spec : member.specs()) schema.add(spec);
  return schema;
}

std::vector<Member> default_members(const dptune::Params& params) {
  const auto rdp_options = rdp::options_from(share(rdp::plugin_schema(), params));
  const auto pld_options = pld::options_from(share(pld::plugin_schema(), params));
  return {{"rdp", cached(std::make_shared<rdp::AccountantAdapter>(rdp_options)), false},
          {"pld", cached(std::make_shared<pld::AccountantAdapter>(pld_options)), true}};
}

}  // namespace dptune::best
