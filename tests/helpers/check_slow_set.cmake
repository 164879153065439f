# The quick set and the slow set as cmake/DptuneTests.cmake promises them, read from this build's
# test lists (`ctest -N`, nothing run): a plain ctest lists no test labelled "slow"; `ctest -C slow`
# lists every quick test and every slow test (its count is the sum), at least one slow test, and no
# dptune_label_slow name that matches no discovered case (a renamed case would move back into the
# quick set unseen).  Usage: cmake -DCTEST=<ctest> -DBUILD=<build dir> -P check_slow_set.cmake
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
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
