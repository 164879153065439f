// What `dptune audit MECHANISM` (audit.cpp) and `dptune audit trainer` (audit_trainer.cpp) share.
#pragma once

#include <string>
#include <vector>

#include "dptune/params.hpp"
#include "dptune/schema.hpp"

namespace dptune::cli {

/// --param NAME=VALUE options, each typed by `schema` (a UsageError naming `owner` for an unknown
/// name or a value outside the parameter's type); not completed.
dptune::Params typed_params(const dptune::ParamSchema& schema, const std::string& owner,
                            const std::vector<std::string>& given);

}  // namespace dptune::cli
