# dptune_add_plugin(<name> SOURCES <src>... [LIBRARIES <lib>...] [OUTPUT_DIRECTORY <dir>] [NO_INSTALL])
#
# Builds a dptune plugin: a MODULE library linked to the SDK only, with hidden visibility (so that no
# STB_GNU_UNIQUE symbol pins it in memory and nothing but its "dptune" section is exported), C++20,
# and BOOST_DLL_USE_STD_FS.  Works in dptune's own tree and, after find_package(dptune), out of tree.
function(dptune_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_INSTALL" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "dptune_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(TARGET dptune::sdk)
    target_link_libraries(${name} PRIVATE dptune::sdk ${ARG_LIBRARIES})
  else()
    message(FATAL_ERROR "dptune_add_plugin(${name}): target dptune::sdk not found; call find_package(dptune CONFIG REQUIRED) first")
  endif()
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_definitions(${name} PRIVATE BOOST_DLL_USE_STD_FS)
  # Hidden visibility is not enough: libstdc++ declares namespace std with default visibility, so
  # variable templates such as std::in_place_index<N> (from std::variant) become STB_GNU_UNIQUE and
  # would stop glibc from ever unloading the plugin.  -fno-gnu-unique makes them plain weak symbols.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${name} PRIVATE -fno-gnu-unique)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED DPTUNE_PLUGIN_SUBDIR AND PROJECT_NAME STREQUAL "dptune")
    set_target_properties(${name} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/${DPTUNE_PLUGIN_SUBDIR}"
      INSTALL_RPATH "$ORIGIN/../..")
    if(NOT ARG_NO_INSTALL)
      install(TARGETS ${name} LIBRARY DESTINATION ${DPTUNE_PLUGIN_SUBDIR})
    endif()
  endif()
endfunction()
