# dptune_sanitize_product_sources(): the sanitizer build (DPTUNE_SANITIZE, scripts/test.sh's last
# pass).  Called once at the end of the top CMakeLists.txt, when every target exists.
#
# What is instrumented: every product source (the SDK, the host, the plugins, the tools, the
# examples), wherever a target compiles it: the suite's own builds of product code (the MPI cases'
# dptune and dp_hype with test hooks) included.  Those sources get AddressSanitizer and
# UndefinedBehaviorSanitizer, -O1 (the sanitizers' own advice for speed with readable frames) and
# their assertions (NDEBUG undefined: Eigen's index checks among them).
#
# What is not: the suite's own sources (tests/).  They compile exactly as in the plain build (same
# build type, same flags), so that a test run compiles them once: the compiler cache
# (cmake/DptuneCcache.cmake) gives the sanitizer tree the plain tree's objects.  They are linked
# with the sanitizer runtimes, and every product function they call runs instrumented; what goes
# unchecked is the harness itself.
include_guard(GLOBAL)

set(DPTUNE_SANITIZE_COMPILE_OPTIONS -O1 -UNDEBUG -fsanitize=address,undefined
  -fno-omit-frame-pointer -fno-sanitize-recover=undefined)

# The targets defined in <dir> and in every directory below it, in <out>.
function(_dptune_targets_below dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _dptune_targets_below("${subdir}" below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(dptune_sanitize_product_sources)
  _dptune_targets_below("${PROJECT_SOURCE_DIR}" targets)
  set(compiled_types STATIC_LIBRARY SHARED_LIBRARY MODULE_LIBRARY OBJECT_LIBRARY EXECUTABLE)
  set(linked_types SHARED_LIBRARY MODULE_LIBRARY EXECUTABLE)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type IN_LIST compiled_types)
      continue()
    endif()
    # Every linked target takes the runtimes: a test executable links instrumented libraries.
    if(type IN_LIST linked_types)
      target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<" OR NOT source MATCHES "\\.(cpp|cc|cxx)$")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}" NORMALIZE OUTPUT_VARIABLE path)
      string(FIND "${path}" "${PROJECT_SOURCE_DIR}/tests/" test_prefix)
      get_property(done SOURCE "${path}" TARGET_DIRECTORY ${target} PROPERTY DPTUNE_SANITIZED)
      if(test_prefix EQUAL 0 OR done)
        continue()
      endif()
      set_property(SOURCE "${path}" TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
        ${DPTUNE_SANITIZE_COMPILE_OPTIONS})
      set_property(SOURCE "${path}" TARGET_DIRECTORY ${target} PROPERTY DPTUNE_SANITIZED ON)
    endforeach()
  endforeach()
endfunction()
