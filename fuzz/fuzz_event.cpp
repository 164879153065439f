// libFuzzer target: YAML text -> DpEvent (the parser behind `dptune privacy`), or a located error.
//
// A finding is a crash, a sanitizer report, a hang (-timeout), a memory blow-up (-rss_limit_mb),
// any exception other than ConfigDiagnostic, an error located outside the text, or an event whose
// printed form does not parse back to the same event (event_yaml.hpp promises that `dptune
// privacy` reads what DpEvent::to_string prints).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dptune/host/config.hpp"
#include "dptune/host/event_yaml.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  dptune::DpEvent event;
  try {
    event = dptune::host::parse_event(text, "event.yaml");
  } catch (const dptune::host::ConfigDiagnostic& e) {
    dptune::fuzz::check_location(e, "event.yaml", text);
    return 0;
  }
  const std::string printed = event.to_string();
  dptune::DpEvent again;
  try {
    again = dptune::host::parse_event(printed, "printed");
  } catch (const dptune::host::ConfigDiagnostic& e) {
    std::fprintf(stderr, "the printed event does not parse back:\n%s\n%s\n", printed.c_str(),
                 e.what());
    std::abort();
  }
  if (!(again == event)) {
    std::fprintf(stderr, "the printed event parses to another event:\n%s\n%s\n", printed.c_str(),
                 again.to_string().c_str());
    std::abort();
  }
  return 0;
}
