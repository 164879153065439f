# The quick set and the slow set as cmake/DptuneTests.cmake promises them, read from this build's
# test lists (`ctest -N`, nothing run): a plain ctest lists no test labelled "slow"; `ctest -C slow`
# lists every quick test and every slow test (its count is the sum), at least one slow test, and no
# dptune_label_slow name that matches no discovered case (a renamed case would move back into the
# quick set unseen); the quick set's doctest cases run at their light size, `ctest -C slow`'s at
# full size.  Usage: cmake -DCTEST=<ctest> -DBUILD=<build dir> -P check_slow_set.cmake
function(list_tests out_count out_text)
  execute_process(COMMAND ${CTEST} --test-dir ${BUILD} -N ${ARGN}
    OUTPUT_VARIABLE text ERROR_VARIABLE errors RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT text MATCHES "Total Tests: ([0-9]+)")
    message(FATAL_ERROR "ctest -N ${ARGN} failed (exit ${code}):\n${text}\n${errors}")
  endif()
  set(${out_count} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out_text} "${text}\n${errors}" PARENT_SCOPE)
endfunction()

list_tests(quick quick_text)
list_tests(quick_slow quick_slow_text -L slow)
list_tests(all all_text -C slow)
list_tests(slow slow_text -C slow -L slow)
message(STATUS "quick set ${quick}, slow set ${slow}, ctest -C slow ${all}")
set(failures "")
if(NOT quick_slow EQUAL 0)
  string(APPEND failures "a plain ctest lists ${quick_slow} test(s) labelled slow (register them "
    "with CONFIGURATIONS slow or dptune_label_slow):\n${quick_slow_text}\n")
endif()
if(slow EQUAL 0)
  string(APPEND failures "ctest -C slow lists no test labelled slow\n")
endif()
math(EXPR sum "${quick} + ${slow}")
if(NOT all EQUAL sum)
  string(APPEND failures "ctest -C slow lists ${all} tests, not quick ${quick} + slow ${slow}\n")
endif()
foreach(text IN ITEMS "${quick_text}" "${all_text}")
  if(text MATCHES "dptune_label_slow: no discovered doctest case is named[^\n]*")
    string(APPEND failures "${CMAKE_MATCH_0}\n")
  endif()
endforeach()
# The light sizes (tests/support/test_size.hpp): a plain ctest gives every discovered doctest case
# DPTUNE_TEST_LIGHT=1, `ctest -C slow` none (every case at its full size).
set(light_check [=[
import json, subprocess, sys
ctest, build, config = sys.argv[1], sys.argv[2], sys.argv[3]
args = [ctest, "--test-dir", build, "--show-only=json-v1"] + (["-C", config] if config else [])
tests = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)["tests"]
cases = [t for t in tests if any(a.startswith("--test-case=") for a in t.get("command", []))]
light = [t["name"] for t in cases if any(p["name"] == "ENVIRONMENT" and "DPTUNE_TEST_LIGHT=1" in p["value"]
                                          for p in t.get("properties", []))]
wrong = [t["name"] for t in cases if (t["name"] in light) != (config == "")]
print(len(cases), len(wrong), "; ".join(wrong[:5]))
]=])
foreach(config IN ITEMS "" slow)
  execute_process(COMMAND python3 -c "${light_check}" ${CTEST} ${BUILD} "${config}"
    OUTPUT_VARIABLE light_out RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT light_out MATCHES "^([0-9]+) ([0-9]+) ([^\n]*)")
    string(APPEND failures "the light-size check failed (exit ${code}): ${light_out}\n")
  elseif(CMAKE_MATCH_1 EQUAL 0 OR NOT CMAKE_MATCH_2 EQUAL 0)
    string(APPEND failures "ctest -C '${config}': ${CMAKE_MATCH_2} of ${CMAKE_MATCH_1} doctest "
      "cases have DPTUNE_TEST_LIGHT=1 wrongly set or missing, e.g. ${CMAKE_MATCH_3}\n")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
