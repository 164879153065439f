# Driven by CTest (see CMakeLists.txt).  Every step must succeed; any failure ends the test with
# message(FATAL_ERROR) naming the step and showing its output.
cmake_minimum_required(VERSION 3.25)
foreach(var DPTUNE_BINARY_DIR DPTUNE_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER ABI_MAJOR ABI_MINOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "third_party_plugin.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(src "${WORK_DIR}/src")
set(build "${src}/build")
set(dptune "${prefix}/bin/dptune")
# Only what this test passes decides where plugins come from.
unset(ENV{DPTUNE_PLUGIN_PATH})

# run(<step> <command>...): runs a command, fails the test unless it exits 0; output in step_output.
function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${step} failed (${result}):\n  ${ARGN}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  message(STATUS "${step}: ok")
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect step haystack needle)
  string(FIND "${haystack}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${step}: expected to find '${needle}' in:\n${haystack}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# 1. Install the current build.
run("install" "${CMAKE_COMMAND}" --install "${DPTUNE_BINARY_DIR}" --prefix "${prefix}")
foreach(file bin/dptune include/dptune/plugin.hpp include/dptune/abi.hpp lib/libdptune_sdk.so
    lib/libdptune_helpers.so include/dptune/helpers/discrete.hpp include/dptune/helpers/pareto.hpp
    lib/cmake/dptune/dptuneConfig.cmake lib/cmake/dptune/dptuneConfigVersion.cmake
    lib/cmake/dptune/dptuneTargets.cmake lib/cmake/dptune/DptunePluginHelpers.cmake)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "install: ${prefix}/${file} is missing")
  endif()
endforeach()
file(GLOB installed_plugins "${prefix}/lib/dptune/plugins/*.so")
if(NOT installed_plugins)
  message(FATAL_ERROR "install: no built-in plugin in ${prefix}/lib/dptune/plugins")
endif()

# 2. Copy the example (without any in-source build or results) and build it against the prefix.
file(COPY "${DPTUNE_SOURCE_DIR}/examples/third_party_plugin/" DESTINATION "${src}"
  PATTERN "build" EXCLUDE PATTERN "results" EXCLUDE)
set(build_type_arg)
if(BUILD_TYPE)
  set(build_type_arg "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
# Against a sanitizer build of dptune, the plugin's own test program links the instrumented SDK,
# so it is built with the same sanitizers (ASan's runtime must come first in such a program).
set(sanitize_args)
if(SANITIZE)
  set(sanitize_args "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer"
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
run("configure the plugin" "${CMAKE_COMMAND}" -S "${src}" -B "${build}" -G "${GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" ${build_type_arg}
  ${sanitize_args})
run("build the plugin" "${CMAKE_COMMAND}" --build "${build}")
set(plugin "${build}/geometric.so")
if(NOT EXISTS "${plugin}")
  message(FATAL_ERROR "build the plugin: ${plugin} was not produced")
endif()

# 2b. The plugin's own test (the SDK test kit, <dptune/testing.hpp>) passes.
run("the plugin's own test" "${CMAKE_CTEST_COMMAND}" --test-dir "${build}" --output-on-failure)
expect("the plugin's own test" "${step_output}" "100% tests passed")

# 3. Its "dptune" section exports exactly the expected alias (read without loading it).
run("readelf -SW" readelf -SW "${plugin}")
if(NOT step_output MATCHES "\\] dptune +PROGBITS")
  message(FATAL_ERROR "readelf: no section 'dptune' in ${plugin}:\n${step_output}")
endif()
run("readelf --dyn-syms" readelf --dyn-syms -W "${plugin}")
expect("readelf --dyn-syms" "${step_output}"
  "dptune_v${ABI_MAJOR}_${ABI_MINOR}_cxx")
if(NOT step_output MATCHES "dptune_v${ABI_MAJOR}_${ABI_MINOR}_cxx[0-9]+_[01]_k_mechanism_n_geometric")
  message(FATAL_ERROR "readelf: alias of mechanism 'geometric' not exported:\n${step_output}")
endif()
if(step_output MATCHES "UNIQUE")
  message(FATAL_ERROR "readelf: STB_GNU_UNIQUE symbols in ${plugin}:\n${step_output}")
endif()

# 4. The installed dptune finds its built-in plugins in the prefix, and the new plugin through the
#    plugin registry (scan of the build folder).
run("dptune plugins describe grid" "${dptune}" plugins describe grid)
expect("dptune plugins describe grid" "${step_output}" "${prefix}/lib/dptune/plugins/grid.so")
run("dptune plugins describe geometric" "${dptune}" plugins describe geometric --plugin-path "${build}")
expect("dptune plugins describe geometric" "${step_output}" "${plugin}")
expect("dptune plugins describe geometric" "${step_output}" "epsilon")

# 5. Run the example pipeline: 8 grid points over epsilon.
run("dptune run" "${dptune}" run "${src}/pipeline.yaml" --no-progress)
set(trials "${src}/results/trials.csv")
set(summary "${src}/results/summary.json")
foreach(file "${trials}" "${summary}")
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "dptune run: ${file} was not written\n${step_output}")
  endif()
endforeach()
file(STRINGS "${trials}" trial_lines)
list(LENGTH trial_lines trial_line_count)
if(NOT trial_line_count EQUAL 9)
  message(FATAL_ERROR "dptune run: ${trials} has ${trial_line_count} lines, expected 9 (header + 8 trials)")
endif()
file(READ "${summary}" summary_text)
expect("summary.json" "${summary_text}" "geometric")
message(STATUS "third-party plugin built out of tree, scanned and run: ok")
