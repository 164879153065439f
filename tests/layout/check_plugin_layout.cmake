# Checks that every folder plugins/<kind>/<name>/ under PLUGINS follows the one plugin folder
# pattern (docs/architecture.md):
#   CMakeLists.txt              required
#   <name>.cpp                  the plugin: its exported class(es) and DPTUNE_PLUGIN; thin
#   include/<name>/**.hpp       the core library's headers, included as "<name>/x.hpp"
#   src/**.cpp, src/**.hpp      the core library's sources (and its private headers)
#   README.md                   optional
# and that nothing but plugins/CMakeLists.txt sits outside such a folder.  Fails naming every file
# that breaks the pattern and the rule it breaks.
if(NOT IS_DIRECTORY "${PLUGINS}")
  message(FATAL_ERROR "usage: cmake -DPLUGINS=DIR -P check_plugin_layout.cmake")
endif()
string(CONCAT pattern "plugins/<kind>/<name>/ holds CMakeLists.txt, <name>.cpp, README.md, "
       "include/<name>/**.hpp and src/**.cpp|hpp only")

# The rule `relative` (a path inside plugins/<kind>/<name>/) breaks, or "" when it fits.
function(plugin_file_rule name relative out)
  set(rule "")
  if(relative MATCHES "^(CMakeLists\\.txt|README\\.md)$" OR relative STREQUAL "${name}.cpp")
  elseif(relative MATCHES "^include/")
    if(NOT relative MATCHES "^include/${name}/.+\\.hpp$")
      set(rule "headers go in include/${name}/ as .hpp (included as \"${name}/x.hpp\")")
    endif()
  elseif(relative MATCHES "^src/")
    if(NOT relative MATCHES "^src/.+\\.(cpp|hpp)$")
      set(rule "src/ holds the core library's .cpp and .hpp files only")
    endif()
  elseif(relative MATCHES "^[^/]+\\.cpp$")
    set(rule "the plugin's one source here is ${name}.cpp; the core library's go in src/")
  elseif(relative MATCHES "^[^/]+\\.hpp$")
    set(rule "headers go in include/${name}/ (or, private to the core library, in src/)")
  else()
    set(rule "not part of the pattern (${pattern})")
  endif()
  set(${out} "${rule}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${PLUGINS}" "${PLUGINS}/*")
list(SORT files)
set(offences "")
set(folders "")
foreach(file IN LISTS files)
  if(file STREQUAL "CMakeLists.txt")
    continue()
  endif()
  if(NOT file MATCHES "^([^/]+)/([^/]+)/(.+)$")
    string(APPEND offences
      "\n  plugins/${file}: a file outside plugins/<kind>/<name>/ (${pattern})")
    continue()
  endif()
  set(name "${CMAKE_MATCH_2}")
  set(relative "${CMAKE_MATCH_3}")
  list(APPEND folders "${CMAKE_MATCH_1}/${name}")
  plugin_file_rule("${name}" "${relative}" rule)
  if(rule)
    string(APPEND offences "\n  plugins/${file}: ${rule}")
  endif()
endforeach()
list(REMOVE_DUPLICATES folders)
foreach(folder IN LISTS folders)
  if(NOT EXISTS "${PLUGINS}/${folder}/CMakeLists.txt")
    string(APPEND offences
      "\n  plugins/${folder}/: no CMakeLists.txt (every plugin folder builds itself)")
  endif()
endforeach()
if(offences)
  message(FATAL_ERROR
    "files that break the plugin folder pattern (docs/architecture.md):${offences}")
endif()
list(LENGTH folders folder_count)
list(LENGTH files file_count)
if(folder_count EQUAL 0)
  message(FATAL_ERROR "${PLUGINS}: no plugin folder to check")
endif()
message(STATUS "${folder_count} plugin folders, ${file_count} files: all follow the pattern")
