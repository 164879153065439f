# The layout checker must refuse what it is for (a check that cannot fail checks nothing).  In a
# scratch plugins/ tree under SCRATCH: a folder that follows the pattern passes; then each file
# below, added alone, makes the checker fail and is named in its message with the rule it breaks.
if(NOT CHECK OR NOT SCRATCH)
  message(FATAL_ERROR
    "usage: cmake -DCHECK=check_plugin_layout.cmake -DSCRATCH=DIR -P checker_refuses.cmake")
endif()
set(root "${SCRATCH}/plugins")
file(REMOVE_RECURSE "${SCRATCH}")
foreach(file CMakeLists.txt tuner/demo/CMakeLists.txt tuner/demo/demo.cpp tuner/demo/README.md
             tuner/demo/include/demo/core.hpp tuner/demo/include/demo/detail/bits.hpp
             tuner/demo/src/core.cpp tuner/demo/src/detail/private.hpp
             trainer/shared/CMakeLists.txt trainer/shared/include/shared/model.hpp
             trainer/shared/src/model.cpp)
  file(WRITE "${root}/${file}" "")
endforeach()

function(run_check out_result out_output)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DPLUGINS=${root} -P "${CHECK}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${out_result} "${result}" PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

run_check(result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the checker refused a folder that follows the pattern:\n${output}")
endif()

# Each case: the stray file, then a fragment of the rule the message must give for it.
set(cases
  "tuner/demo/notes.txt|not part of the pattern"
  "tuner/demo/demo_tuner.cpp|the plugin's one source here is demo.cpp"
  "tuner/demo/core/gp.hpp|not part of the pattern"
  "tuner/demo/gp.hpp|headers go in include/demo/"
  "tuner/demo/include/other/gp.hpp|headers go in include/demo/"
  "tuner/demo/include/gp.hpp|headers go in include/demo/"
  "tuner/demo/include/demo/gp.h|headers go in include/demo/ as .hpp"
  "tuner/demo/src/data.csv|src/ holds the core library's .cpp and .hpp files only"
  "tuner/stray.cpp|a file outside plugins/<kind>/<name>/"
  "accountant/headless/include/headless/x.hpp|plugins/accountant/headless/: no CMakeLists.txt")
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 file)
  list(GET parts 1 rule)
  file(WRITE "${root}/${file}" "")
  run_check(result output)
  file(REMOVE "${root}/${file}")
  if(result EQUAL 0)
    message(FATAL_ERROR "the checker accepted plugins/${file}:\n${output}")
  endif()
  string(FIND "${output}" "plugins/${file}" named)
  string(FIND "${output}" "${rule}" ruled)
  if(named EQUAL -1 AND NOT file MATCHES "^accountant/headless/")
    message(FATAL_ERROR "the checker refused plugins/${file} without naming it:\n${output}")
  endif()
  if(ruled EQUAL -1)
    message(FATAL_ERROR
      "the checker refused plugins/${file} without the rule \"${rule}\":\n${output}")
  endif()
  message(STATUS "refused plugins/${file}: ${rule}")
endforeach()
file(REMOVE_RECURSE "${SCRATCH}")
