# dptune_sanitize_product_sources(): the sanitizer build (DPTUNE_SANITIZE, scripts/test.sh's last
# pass).  Called once at the end of the top CMakeLists.txt, when every target exists.
#
# What is instrumented: every product source (the SDK, the host, the plugins, the tools, the
# examples), wherever a target compiles it: the suite's own builds of product code (the MPI cases'
# dptune and dp_hype with test hooks, a test that includes a product source) included.  Those
# sources get AddressSanitizer and UndefinedBehaviorSanitizer, -Og and their assertions (NDEBUG
# undefined: Eigen's index checks among them).  -Og rather than the sanitizers' usual -O1: it
# compiles the product in two thirds of the CPU time (720 s to 474 s) for a sanitizer pass 10 %
# longer (CONTRIBUTING.md, "Measured times"), and its frames read as the source does.
#
# What is not: the suite's own sources (tests/, cmake/DptuneTargetSources.cmake).  They compile
# exactly as in the plain build (same build type, same flags), so that a test run compiles them
# once: the compiler cache (cmake/DptuneCcache.cmake) gives the sanitizer tree the plain tree's
# objects.  They are linked with the sanitizer runtimes, and every product function they call runs
# instrumented; what goes unchecked is the harness itself.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/DptuneTargetSources.cmake)

set(DPTUNE_SANITIZE_COMPILE_OPTIONS -Og -UNDEBUG -fsanitize=address,undefined
  -fno-omit-frame-pointer -fno-sanitize-recover=undefined)

function(dptune_sanitize_product_sources)
  dptune_targets_below("${PROJECT_SOURCE_DIR}" targets)
  foreach(target IN LISTS targets)
    # Every linked target takes the runtimes: a test executable links instrumented libraries.
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(SHARED_LIBRARY|MODULE_LIBRARY|EXECUTABLE)$")
      target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
    # Executables not position independent: the sanitizers' per-check data (23 MB in the host) then
    # needs no relocation at each start, which cut a third of the instrumented host's start-up time
    # (the suite starts it thousands of times) and a tenth of the sanitizer pass's system time.
    if(type STREQUAL "EXECUTABLE")
      target_link_options(${target} PRIVATE -no-pie)
    endif()
    dptune_target_cxx_sources(${target} paths)
    foreach(path IN LISTS paths)
      dptune_is_suite_source("${path}" suite)
      if(NOT suite)
        dptune_add_source_options_once(${target} "${path}" DPTUNE_SANITIZED
          ${DPTUNE_SANITIZE_COMPILE_OPTIONS})
      endif()
    endforeach()
  endforeach()
endfunction()
