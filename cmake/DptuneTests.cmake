# The test suite's CMake helpers (tests/*/CMakeLists.txt).
#
# The quick set and the slow set.  A plain `ctest` runs the quick set: every product code path, in
# about a minute.  `ctest -C slow` runs the quick set and the slow set (tests labelled "slow": what a
# quick test runs on the same code, repeated at full length or statistical power);
# `ctest -C slow -L slow` the slow set alone.  scripts/test.sh and CI run `ctest -C slow`.
# A slow test is registered for the configuration "slow" only, so that a plain ctest does not even
# list it:
#   add_test(NAME <test> COMMAND ... CONFIGURATIONS slow)   plus "slow" among its LABELS, or
#   dptune_label_slow(<doctest case>...)                    for a case of a discovered executable.
#
# dptune_doctest_main (tests/CMakeLists.txt): one doctest main for every test executable, linked,
# not compiled per executable.
#
# dptune_discover_tests(<target> [TEST_PREFIX <prefix>] [LABELS <label>...] [PROPERTIES <p>...]):
# doctest_discover_tests, every discovered test labelled LABELS; the cases named by
# dptune_label_slow in the same directory are registered for `ctest -C slow` only, labelled "slow".
#
# dptune_label_slow(<test>...): a doctest case, by its full ctest name (prefix included), of an
# executable discovered in this directory, before or after its dptune_discover_tests.  A name
# that no discovered executable has is reported by ctest as a warning (and tests/CMakeLists.txt's
# tests.slow_set_is_complete fails).  An add_test test of that name is only labelled "slow" (the
# older way): it still runs in the quick set, with a configure warning; give it
# `CONFIGURATIONS slow` instead.
include_guard(GLOBAL)
include(doctest)
include(${CMAKE_CURRENT_LIST_DIR}/DptuneBuildPaths.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/DptuneTargetSources.cmake)

set_property(GLOBAL PROPERTY DPTUNE_SLOW_FILTER_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/DptuneSlowFilter.cmake")

function(dptune_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "TEST_PREFIX" "LABELS;PROPERTIES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dptune_discover_tests(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(properties ${ARG_PROPERTIES})
  if(ARG_LABELS)
    list(APPEND properties LABELS "${ARG_LABELS}")
  endif()
  get_property(before DIRECTORY PROPERTY TEST_INCLUDE_FILES)
  doctest_discover_tests(${target} TEST_PREFIX "${ARG_TEST_PREFIX}" PROPERTIES ${properties})
  # doctest's include file adds every case unconditionally: this directory's wrapper
  # (_dptune_write_discovery_wrapper) includes it instead, leaving out the slow cases unless
  # `ctest -C slow`.
  get_property(after DIRECTORY PROPERTY TEST_INCLUDE_FILES)
  list(POP_BACK after doctest_include)
  if(NOT "${after}" STREQUAL "${before}" OR NOT doctest_include MATCHES "_include-[0-9a-f]+[.]cmake$")
    message(FATAL_ERROR "dptune_discover_tests(${target}): doctest_discover_tests registered its "
      "tests in an unknown way; cmake/DptuneTests.cmake needs an update")
  endif()
  set_property(DIRECTORY PROPERTY TEST_INCLUDE_FILES "${after}")
  string(REGEX REPLACE "_include-([0-9a-f]+)[.]cmake$" "_tests-\\1.cmake" tests_file "${doctest_include}")
  set_property(DIRECTORY APPEND PROPERTY DPTUNE_DISCOVERED_TARGETS ${target})
  set_property(DIRECTORY PROPERTY DPTUNE_DISCOVERED_FILE_${target} "${tests_file}")
  set_property(DIRECTORY PROPERTY DPTUNE_DISCOVERED_LABELS_${target} "${ARG_LABELS}")
  _dptune_defer_discovery_wrapper()
endfunction()

function(dptune_label_slow)
  foreach(test IN LISTS ARGN)
    if(TEST "${test}")
      get_test_property("${test}" LABELS labels)
      if(NOT labels)
        set(labels "")
      endif()
      list(APPEND labels slow)
      set_tests_properties("${test}" PROPERTIES LABELS "${labels}")
      message(AUTHOR_WARNING "dptune_label_slow(${test}): an add_test test still runs in a plain "
        "ctest; register it with CONFIGURATIONS slow (cmake/DptuneTests.cmake)")
    else()
      set_property(DIRECTORY APPEND PROPERTY DPTUNE_SLOW_CASES "${test}")
      _dptune_defer_discovery_wrapper()
    endif()
  endforeach()
endfunction()

# The wrapper is written once the directory's CMakeLists.txt is read, so that dptune_label_slow
# may come before or after the discovery of its executable.
function(_dptune_defer_discovery_wrapper)
  get_property(deferred DIRECTORY PROPERTY DPTUNE_DISCOVERY_WRAPPER_DEFERRED)
  if(NOT deferred)
    set_property(DIRECTORY PROPERTY DPTUNE_DISCOVERY_WRAPPER_DEFERRED ON)
    cmake_language(DEFER CALL _dptune_write_discovery_wrapper)
  endif()
endfunction()

# Writes <binary dir>/dptune_discovered_tests.cmake, which ctest runs: it hands the doctest
# tests files of this directory and its slow case names to DptuneSlowFilter.cmake.  Each name is
# a variable of its own (a name may hold an unbalanced bracket, which would split a CMake list).
function(_dptune_write_discovery_wrapper)
  get_property(targets DIRECTORY PROPERTY DPTUNE_DISCOVERED_TARGETS)
  get_property(slow_cases DIRECTORY PROPERTY DPTUNE_SLOW_CASES)
  set(text "# Written by cmake/DptuneTests.cmake: the discovered doctest cases of this directory.\n")
  set(count 0)
  foreach(case IN LISTS slow_cases)
    math(EXPR count "${count} + 1")
    string(APPEND text "set(dptune_slow_case_${count} [==[${case}]==])\n")
  endforeach()
  string(APPEND text "set(dptune_slow_case_count ${count})\n")
  set(index 0)
  foreach(target IN LISTS targets)
    math(EXPR index "${index} + 1")
    get_property(file DIRECTORY PROPERTY DPTUNE_DISCOVERED_FILE_${target})
    get_property(labels DIRECTORY PROPERTY DPTUNE_DISCOVERED_LABELS_${target})
    string(APPEND text "set(dptune_discovered_target_${index} [==[${target}]==])\n"
      "set(dptune_discovered_file_${index} [==[${file}]==])\n"
      "set(dptune_discovered_labels_${index} [==[${labels}]==])\n")
  endforeach()
  get_property(filter GLOBAL PROPERTY DPTUNE_SLOW_FILTER_SCRIPT)
  string(APPEND text "set(dptune_discovered_count ${index})\n" "include([==[${filter}]==])\n")
  set(wrapper "${CMAKE_CURRENT_BINARY_DIR}/dptune_discovered_tests.cmake")
  file(WRITE "${wrapper}" "${text}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${wrapper}")
endfunction()

# dptune_test_build_paths(<target> <name> <value>...): this build's paths for a test executable,
# read as dptune_test::build_paths::<name> (tests/support/build_paths.hpp declares the names),
# defined in a generated source rather than on the compile line (cmake/DptuneBuildPaths.cmake).
function(dptune_test_build_paths target)
  dptune_build_paths(${target} HEADER build_paths.hpp NAMESPACE dptune_test::build_paths ${ARGN})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
endfunction()

# dptune_compile_suite_sources(): called once at the end of tests/CMakeLists.txt, when every test
# target exists.  The suite's own sources (tests/) compile at -Og: a third less compile time than
# -O2 on these doctest and fixture sources (290 s against 432 s), which spend their run time in the
# product code they call, compiled as the product is (the product sources some test targets
# compile, such as the MPI cases' host with test hooks, keep the product's flags).
# A target that compiles the suite's sources alone compiles them together (a unity build: the
# doctest and library headers they share are read once per target, not once per source), except
# its generated build paths, which name the build tree and would keep the sanitizer tree from the
# plain tree's cached objects.  So within one test target no two sources may define one name at
# file scope (the compiler refuses most such pairs; tests.unity_names finds two functions of one
# name, which the compiler may take as overloads).  Measured in CONTRIBUTING.md, "Measured times".
option(DPTUNE_SUITE_UNITY "Compile each test target's sources as one unity source" ON)
function(dptune_compile_suite_sources)
  dptune_targets_below("${PROJECT_SOURCE_DIR}/tests" targets)
  foreach(target IN LISTS targets)
    dptune_target_cxx_sources(${target} paths)
    set(all_suite ON)
    set(suite_paths "")
    foreach(path IN LISTS paths)
      dptune_is_suite_source("${path}" suite)
      if(suite)
        list(APPEND suite_paths "${path}")
      else()
        set(all_suite OFF)
      endif()
    endforeach()
    if(NOT suite_paths)
      continue()
    elseif(all_suite)
      _dptune_compile_suite_target(${target} "${paths}")
    else()
      foreach(path IN LISTS suite_paths)
        dptune_add_source_options_once(${target} "${path}" DPTUNE_SUITE_FLAGS -Og)
      endforeach()
    endif()
  endforeach()
endfunction()

# A target of suite sources alone: -Og for the target, a unity build of its sources in the source
# tree (a source with options of its own would be left out of it by CMake).
function(_dptune_compile_suite_target target paths)
  target_compile_options(${target} PRIVATE -Og)
  if(NOT DPTUNE_SUITE_UNITY)
    return()  # scripts/tidy.sh: a compile line for each source
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  foreach(path IN LISTS paths)
    string(FIND "${path}" "${PROJECT_SOURCE_DIR}/tests/" in_source_tree)
    if(NOT in_source_tree EQUAL 0)
      set_property(SOURCE "${path}" TARGET_DIRECTORY ${target} PROPERTY SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()
