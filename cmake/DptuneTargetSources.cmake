# Walking the build's targets and their C++ sources, for the modules that set compile options on a
# class of sources after every target exists (cmake/DptuneSanitize.cmake, cmake/DptuneTests.cmake).
include_guard(GLOBAL)

# dptune_targets_below(<dir> <out>): the targets defined in <dir> and in every directory below it.
function(dptune_targets_below dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    dptune_targets_below("${subdir}" below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# dptune_target_cxx_sources(<target> <out>): the C++ sources <target> compiles, as absolute
# normalised paths (generator expressions left out); empty for a target that compiles nothing.
function(dptune_target_cxx_sources target out)
  set(paths "")
  get_target_property(type ${target} TYPE)
  if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<" OR NOT source MATCHES "\\.(cpp|cc|cxx)$")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${source_dir}" NORMALIZE OUTPUT_VARIABLE path)
      list(APPEND paths "${path}")
    endforeach()
  endif()
  set(${out} ${paths} PARENT_SCOPE)
endfunction()

# dptune_is_suite_source(<path> <out>): whether <path> is the suite's own code: a source under
# tests/ that does not compile a product source by including it (a test of a product source's
# internals does, and its product code is then compiled, instrumented and optimised as the
# product's is), or a source generated for a test target in the build tree's tests/ (its build
# paths, cmake/DptuneBuildPaths.cmake).
function(dptune_is_suite_source path out)
  set(suite OFF)
  string(FIND "${path}" "${PROJECT_SOURCE_DIR}/tests/" test_prefix)
  string(FIND "${path}" "${PROJECT_BINARY_DIR}/tests/" generated_prefix)
  if(generated_prefix EQUAL 0)
    set(suite ON)
  elseif(test_prefix EQUAL 0)
    file(STRINGS "${path}" included_sources REGEX "^#include \"[^\"]*[.](cpp|cc|cxx)\"")
    if(NOT included_sources)
      set(suite ON)
    endif()
  endif()
  set(${out} ${suite} PARENT_SCOPE)
endfunction()

# dptune_add_source_options_once(<target> <path> <marker> <option>...): appends the options to the
# compile options of source <path> as <target>'s directory sees it, unless a target of that
# directory already did under <marker> (a source compiled by two targets of one directory shares
# its properties, and would otherwise get the options twice).
function(dptune_add_source_options_once target path marker)
  get_property(done SOURCE "${path}" TARGET_DIRECTORY ${target} PROPERTY ${marker})
  if(NOT done)
    set_property(SOURCE "${path}" TARGET_DIRECTORY ${target} APPEND PROPERTY COMPILE_OPTIONS
      ${ARGN})
    set_property(SOURCE "${path}" TARGET_DIRECTORY ${target} PROPERTY ${marker} ON)
  endif()
endfunction()
