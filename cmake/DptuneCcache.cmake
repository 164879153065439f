# Compiles through ccache when it is installed (option DPTUNE_CCACHE, on by default), so that a
# second checkout (a clone, a worktree) compiles from the cache: no compile line carries the
# checkout's path (cmake/DptuneBuildPaths.cmake), paths below the checkout are hashed relative to
# it (CCACHE_BASEDIR), and the build folder is left out of the hash (-g1 objects name it).
# CCACHE_DEPEND: on a miss ccache reads the dependencies from the compiler's own -MD output
# (Ninja asks for it) instead of running the preprocessor first: twelve host sources compiled one
# after the other into an empty cache took 17.1-17.8 s without it, 15.8-16.8 s with it and
# 14.7-16.6 s without ccache.  Hits are the direct mode's, as before.
# Included by the top CMakeLists.txt and by fuzz/CMakeLists.txt; a launcher given on the command
# line is kept.
include_guard(GLOBAL)
option(DPTUNE_CCACHE "Compile through ccache when it is installed" ON)
if(DPTUNE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(DPTUNE_CCACHE_PROGRAM ccache)
  if(DPTUNE_CCACHE_PROGRAM)
    get_filename_component(_dptune_checkout "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND};-E;env;CCACHE_BASEDIR=${_dptune_checkout}"
                                    "CCACHE_NOHASHDIR=true;CCACHE_DEPEND=true"
                                    "${DPTUNE_CCACHE_PROGRAM}")
  endif()
endif()
