// `dptune privacy --calibrate PARAM`: the value of one parameter of an event at which the
// accountant's ε meets a target (calibrate_parameter: Brent's method, integers exact).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "dptune/dp_event.hpp"
#include "dptune/helpers/calibration.hpp"

namespace dptune::host {
class JsonWriter;
}

namespace dptune::cli {

/// How one event field may be calibrated: its values and whether it is an integer.
struct CalibratedField {
  std::string name;
  ParameterRange range;
};

/// The event field `name` names (noise_multiplier, count, rate, sample_size, mean,
/// stop_probability, epsilon, rho) with the range it may take; UsageError for other names.
CalibratedField calibrated_field(const std::string& name);

/// `event` with every field `field` set to `value`; `hits` receives how many were set.  Integer
/// fields take std::llround(value).  Throws InvalidArgument where the value is out of the field's
/// domain (e.g. a sample larger than its source).
DpEvent with_field(const DpEvent& event, const std::string& field, double value, int& hits);

/// One calibration as printed: the parameter's name and value, any values derived from it
/// (e.g. epochs from steps), the event at that value and its guarantee.
struct CalibrationReport {
  std::string parameter;
  bool integer = false;
  /// The answer is the end of the search range (the whole range meets the target).
  bool at_range_end = false;
  ParameterCalibration result;
  std::vector<std::pair<std::string, double>> derived;
  DpEvent event;
};

/// The guarantee of `event` as `dptune privacy` prints it (privacy.cpp), in JSON fields or text.
void write_guarantee_json(dptune::host::JsonWriter& w, const DpEvent& event,
                          const PrivacyGuarantee& g);
void print_guarantee(std::ostream& out, const DpEvent& event, const PrivacyGuarantee& g);

/// Prints a calibration's answer (text, or JSON with `json`).
void print_calibration(const CalibrationReport& report, double target, double delta, bool json);

}  // namespace dptune::cli
