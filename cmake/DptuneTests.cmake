# The test suite's CMake helpers (tests/*/CMakeLists.txt).
#
# dptune_doctest_main (tests/CMakeLists.txt): one doctest main for every test executable, linked,
# not compiled per executable.
#
# dptune_discover_tests(<target> [TEST_PREFIX <prefix>] [LABELS <label>...] [PROPERTIES <p>...]):
# doctest_discover_tests, every discovered test labelled LABELS.
#
# dptune_label_slow(<test>...): labels the named tests "slow" too: tests added with add_test in
# this directory keep their labels; a doctest case (by its full ctest name, prefix included) is
# labelled when ctest reads the tests, so call it after dptune_discover_tests of its executable.
# `ctest -LE slow` is the quick set, `ctest -L slow` the slow set;
# scripts/test.sh runs both.  A test is slow when it repeats at full length or statistical power
# what a quick test runs on the same code: the quick set keeps every product code path (the
# sanitizer pass runs the quick set only).
include_guard(GLOBAL)
include(doctest)

function(dptune_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "TEST_PREFIX" "LABELS;PROPERTIES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dptune_discover_tests(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(properties ${ARG_PROPERTIES})
  if(ARG_LABELS)
    list(APPEND properties LABELS "${ARG_LABELS}")
  endif()
  doctest_discover_tests(${target} TEST_PREFIX "${ARG_TEST_PREFIX}" PROPERTIES ${properties})
endfunction()

function(dptune_label_slow)
  set(discovered "")
  foreach(test IN LISTS ARGN)
    if(TEST "${test}")
      get_test_property("${test}" LABELS labels)
      if(NOT labels)
        set(labels "")
      endif()
      list(APPEND labels slow)
      set_tests_properties("${test}" PROPERTIES LABELS "${labels}")
    else()
      # A doctest case, added when its executable is built: labelled by a file ctest includes
      # after the discovered tests (TEST_INCLUDE_FILES run in order).
      string(APPEND discovered "set_tests_properties([==[${test}]==] PROPERTIES LABELS slow)\n")
    endif()
  endforeach()
  if(discovered)
    get_property(count DIRECTORY PROPERTY DPTUNE_SLOW_LABEL_FILES)
    if(NOT count)
      set(count 0)
    endif()
    math(EXPR count "${count} + 1")
    set_property(DIRECTORY PROPERTY DPTUNE_SLOW_LABEL_FILES ${count})
    set(file "${CMAKE_CURRENT_BINARY_DIR}/dptune_slow_labels_${count}.cmake")
    file(WRITE "${file}" "${discovered}")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
  endif()
endfunction()
