# dptune_add_plugin(<name> SOURCES <src>... [LIBRARIES <lib>...] [OUTPUT_DIRECTORY <dir>]
#                   [INSTALL_DESTINATION <dir>] [NO_INSTALL])
#
# Builds a dptune plugin: a MODULE library named <name>.so linked to the SDK only, C++20, with
# BOOST_DLL_USE_STD_FS and hidden visibility, so that nothing but its "dptune" section is exported.
# With g++ it also compiles with -fno-gnu-unique: an STB_GNU_UNIQUE symbol (e.g. a static local of an
# inline function in libstdc++ such as std::make_shared's type tag) would make glibc never unload the
# library, hiding use-after-unload bugs.  On Linux a version script exports only the dptune_v* aliases.
#
# In dptune's own tree the plugin goes to <build>/lib/dptune/plugins and is installed to
# <prefix>/lib/dptune/plugins.  Out of tree, after find_package(dptune CONFIG REQUIRED), it goes to
# OUTPUT_DIRECTORY (default: the current binary folder) and is installed, unless NO_INSTALL, to
# INSTALL_DESTINATION (default: ${CMAKE_INSTALL_LIBDIR}/dptune/plugins, or lib/dptune/plugins); point
# DPTUNE_PLUGIN_PATH or a pipeline's plugin_paths at that folder.
include_guard(GLOBAL)

function(dptune_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_INSTALL" "OUTPUT_DIRECTORY;INSTALL_DESTINATION"
    "SOURCES;LIBRARIES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "dptune_add_plugin(${name}): SOURCES is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dptune_add_plugin(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET dptune::sdk)
    message(FATAL_ERROR "dptune_add_plugin(${name}): target dptune::sdk not found; call "
      "find_package(dptune CONFIG REQUIRED) first")
  endif()
  # dptune's own build has the real target dptune_sdk; an installed package only dptune::sdk.
  if(TARGET dptune_sdk AND DEFINED DPTUNE_PLUGIN_SUBDIR)
    set(in_tree TRUE)
  else()
    set(in_tree FALSE)
  endif()

  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE dptune::sdk ${ARG_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_definitions(${name} PRIVATE BOOST_DLL_USE_STD_FS)
  target_compile_options(${name} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    # Export the dptune aliases only: hidden visibility does not cover namespace std, whose template
    # instantiations would otherwise be exported (weak) and could be bound to by other libraries.
    set(version_script "${CMAKE_BINARY_DIR}/dptune_plugin_exports.map")
    file(CONFIGURE OUTPUT "${version_script}" CONTENT "{\n  global: dptune_v*;\n  local: *;\n};\n")
    target_link_options(${name} PRIVATE "LINKER:--version-script=${version_script}")
    set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${version_script}")
  endif()

  if(in_tree)
    set(default_output "${PROJECT_BINARY_DIR}/${DPTUNE_PLUGIN_SUBDIR}")
    set(default_destination "${DPTUNE_PLUGIN_SUBDIR}")
  else()
    set(default_output "${CMAKE_CURRENT_BINARY_DIR}")
    if(DEFINED CMAKE_INSTALL_LIBDIR)
      set(default_destination "${CMAKE_INSTALL_LIBDIR}/dptune/plugins")
    else()
      set(default_destination "lib/dptune/plugins")
    endif()
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY "${default_output}")
  endif()
  if(NOT ARG_INSTALL_DESTINATION)
    set(ARG_INSTALL_DESTINATION "${default_destination}")
  endif()
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")

  if(in_tree)
    # Installed plugins find libdptune_sdk.so relative to themselves (the host has loaded it anyway).
    file(RELATIVE_PATH to_libdir "/${ARG_INSTALL_DESTINATION}" "/${CMAKE_INSTALL_LIBDIR}")
    if(to_libdir STREQUAL "")
      set(to_libdir ".")
    endif()
    set_target_properties(${name} PROPERTIES INSTALL_RPATH "$ORIGIN/${to_libdir}")
  endif()
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION "${ARG_INSTALL_DESTINATION}")
  endif()
endfunction()
