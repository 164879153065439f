# Run by ctest (not by cmake), included from a directory's dptune_discovered_tests.cmake, which
# cmake/DptuneTests.cmake writes.  It registers the doctest cases that the executables' POST_BUILD
# discovery wrote (<target>_tests-<hash>.cmake: one add_test line and one set_tests_properties line
# per case), except the slow cases unless ctest runs with -C slow; with -C slow, the slow cases are
# registered and labelled "slow".  A slow case that no executable of the directory has is reported,
# so that a renamed case cannot silently move back into the quick set.
#
# Input variables: dptune_slow_case_<i> (1..dptune_slow_case_count), and per executable
# dptune_discovered_target_<j>, dptune_discovered_file_<j>, dptune_discovered_labels_<j>
# (1..dptune_discovered_count).

if(CTEST_CONFIGURATION_TYPE MATCHES "^([Ss][Ll][Oo][Ww])$")
  set(dptune_with_slow ON)
else()
  set(dptune_with_slow OFF)
endif()

# doctest's discovery writes a name in brackets unless it is made of these characters only.
function(dptune_discovered_token name out)
  if(name MATCHES "[^-./:a-zA-Z0-9_]")
    set(${out} "[==[${name}]==]" PARENT_SCOPE)
  else()
    set(${out} "${name}" PARENT_SCOPE)
  endif()
endfunction()

# Removes the two lines of case `name` from `script` (starting with a newline); sets `found`.
function(dptune_drop_discovered_case script_var name found_var)
  dptune_discovered_token("${name}" token)
  set(script "${${script_var}}")
  string(FIND "${script}" "\nadd_test( ${token} " start)
  if(start EQUAL -1)
    set(${found_var} OFF PARENT_SCOPE)
    return()
  endif()
  string(SUBSTRING "${script}" 0 ${start} head)
  math(EXPR start "${start} + 1")
  string(SUBSTRING "${script}" ${start} -1 rest)
  string(FIND "${rest}" "\n" end_of_add)
  math(EXPR end_of_add "${end_of_add} + 1")
  string(SUBSTRING "${rest}" ${end_of_add} -1 rest)
  string(FIND "${rest}" "set_tests_properties( ${token} " properties_at)
  if(NOT properties_at EQUAL 0)
    message(FATAL_ERROR "cmake/DptuneSlowFilter.cmake: the discovered tests file has an unknown "
      "layout after the add_test of '${name}'")
  endif()
  string(FIND "${rest}" "\n" end_of_properties)
  string(SUBSTRING "${rest}" ${end_of_properties} -1 rest)
  set(${script_var} "${head}${rest}" PARENT_SCOPE)
  set(${found_var} ON PARENT_SCOPE)
endfunction()

foreach(dptune_case_index RANGE 1 ${dptune_slow_case_count})
  if(dptune_slow_case_count EQUAL 0)
    break()
  endif()
  set(dptune_slow_case_found_${dptune_case_index} OFF)
endforeach()

foreach(dptune_target_index RANGE 1 ${dptune_discovered_count})
  if(dptune_discovered_count EQUAL 0)
    break()
  endif()
  set(dptune_file "${dptune_discovered_file_${dptune_target_index}}")
  set(dptune_target "${dptune_discovered_target_${dptune_target_index}}")
  if(NOT EXISTS "${dptune_file}")
    # As doctest's own include file does: a test that fails and says why.
    add_test(${dptune_target}_NOT_BUILT ${dptune_target}_NOT_BUILT)
    continue()
  endif()
  file(READ "${dptune_file}" dptune_script)
  set(dptune_script "\n${dptune_script}")
  set(dptune_slow_labels "slow;${dptune_discovered_labels_${dptune_target_index}}")
  foreach(dptune_case_index RANGE 1 ${dptune_slow_case_count})
    if(dptune_slow_case_count EQUAL 0)
      break()
    endif()
    set(dptune_case "${dptune_slow_case_${dptune_case_index}}")
    if(dptune_with_slow)
      dptune_discovered_token("${dptune_case}" dptune_token)
      string(FIND "${dptune_script}" "\nadd_test( ${dptune_token} " dptune_at)
      if(NOT dptune_at EQUAL -1)
        set(dptune_slow_case_found_${dptune_case_index} ON)
        string(APPEND dptune_script
          "set_tests_properties( ${dptune_token} PROPERTIES LABELS [==[${dptune_slow_labels}]==])\n")
      endif()
    else()
      dptune_drop_discovered_case(dptune_script "${dptune_case}" dptune_found)
      if(dptune_found)
        set(dptune_slow_case_found_${dptune_case_index} ON)
      endif()
    endif()
  endforeach()
  if(NOT dptune_with_slow)
    # The quick set runs each case at its light size (tests/support/test_size.hpp): the same code
    # paths on a smaller instance; `ctest -C slow` runs every case at its full size.
    string(REGEX REPLACE "(\nset_tests_properties\\( [^\n]*) PROPERTIES "
      "\\1 PROPERTIES ENVIRONMENT DPTUNE_TEST_LIGHT=1 " dptune_script "${dptune_script}")
  endif()
  cmake_language(EVAL CODE "${dptune_script}")
endforeach()

foreach(dptune_case_index RANGE 1 ${dptune_slow_case_count})
  if(dptune_slow_case_count EQUAL 0)
    break()
  endif()
  if(NOT dptune_slow_case_found_${dptune_case_index})
    message(WARNING "dptune_label_slow: no discovered doctest case is named "
      "'${dptune_slow_case_${dptune_case_index}}' in this directory")
  endif()
endforeach()
