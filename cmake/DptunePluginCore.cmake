# dptune_add_plugin_core(<target> SOURCES <src>... [INCLUDE_DIR <dir>] [PUBLIC_LIBRARIES <lib>...]
#                        [PRIVATE_LIBRARIES <lib>...] [OPTIMISE] [NATIVE])
#
# In dptune's own tree: the static library that holds a plugin's mathematics, linked into the thin
# plugin (dptune_add_plugin) and by its tests and benchmarks.  Position-independent (it ends up in a
# MODULE library) with hidden visibility (nothing of it is exported from the plugin), and, with g++,
# -fno-gnu-unique (an STB_GNU_UNIQUE symbol would pin the plugin in memory).  It links the SDK.
#
# Its public include directory is the plugin folder's include/ (the folder pattern of
# docs/architecture.md: headers in include/<name>/, included as "<name>/x.hpp"; sources in src/);
# INCLUDE_DIR overrides it.
#
# OPTIMISE: numerical code compiled with -O3 outside Debug builds (the sanitizer build compiles
# every product source at -Og after these flags: cmake/DptuneSanitize.cmake).  NATIVE: also
# -march=native there when DPTUNE_NATIVE is ON.  OFF by default, so that a plain CMake build gives
# plugins that run on any x86-64 machine (SSE2 Eigen kernels); scripts/build.sh, which builds for
# the machine it runs on, turns it ON (2.6-3.4x the DP-SGD throughput on the MLPs:
# bench/trainers/README.md).  The plugin then runs only on CPUs with the build machine's instruction
# set, and not under valgrind, which does not know every instruction it may emit.  The training
# library's proofs hold on both kernel sets: the suite runs its model tests on a portable build of
# it as well (tests/trainers, dptune_trainer_portable_tests).  FMA changes rounding, so a core whose
# results must be bit-reproducible across machines, such as the pld accountant's, uses OPTIMISE
# alone.
include_guard(GLOBAL)

option(DPTUNE_NATIVE "Compile the numerical plugin cores with -march=native (faster, not portable)"
  OFF)

function(dptune_add_plugin_core target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "OPTIMISE;NATIVE" "INCLUDE_DIR"
    "SOURCES;PUBLIC_LIBRARIES;PRIVATE_LIBRARIES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "dptune_add_plugin_core(${target}): SOURCES is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dptune_add_plugin_core(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_INCLUDE_DIR)
    set(ARG_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endif()
  add_library(${target} STATIC ${ARG_SOURCES})
  target_include_directories(${target} PUBLIC ${ARG_INCLUDE_DIR})
  target_link_libraries(${target} PUBLIC dptune::sdk ${ARG_PUBLIC_LIBRARIES}
    PRIVATE ${ARG_PRIVATE_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    if(ARG_OPTIMISE OR ARG_NATIVE)
      target_compile_options(${target} PRIVATE -O3)
    endif()
    if(ARG_NATIVE AND DPTUNE_NATIVE)
      # GCC 12 warns falsely (-W[maybe-]uninitialized) inside its own AVX-512 intrinsics used by
      # Eigen; -march=native is PUBLIC so that inline Eigen code in the plugin and tests matches.
      target_compile_options(${target} PUBLIC -march=native -Wno-maybe-uninitialized
        -Wno-uninitialized)
    endif()
  endif()
endfunction()
