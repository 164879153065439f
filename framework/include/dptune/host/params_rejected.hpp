// dptune host: the error of a plugin constructor that refused its parameters.
#pragma once

#include <string>
#include <utility>

#include "dptune/errors.hpp"

namespace dptune::host {

/// A plugin's constructor refused its parameters (it threw dptune::InvalidArgument): a
/// configuration problem (exit code 2).  what() names plugin, library and call like every
/// attributed plugin error; plugin() and reason() let the caller place it in the pipeline.
class ParamsRejected : public dptune::ConfigError {
 public:
  ParamsRejected(const std::string& attributed, std::string plugin, std::string reason)
      : dptune::ConfigError(attributed), plugin_(std::move(plugin)), reason_(std::move(reason)) {}
  const std::string& plugin() const { return plugin_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string plugin_, reason_;
};

}  // namespace dptune::host
