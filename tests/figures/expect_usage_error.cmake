# cmake -DFIGURES=<dptune-figures> -DARGS=a^b^c -DEXPECT=<text> -P expect_usage_error.cmake
# A bad command line: exit code 2, EXPECT on stderr, nothing written.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "^" ";" args "${ARGS}")
list(INSERT args 1 --out "${CMAKE_CURRENT_BINARY_DIR}/never_written")
execute_process(COMMAND "${FIGURES}" ${args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "dptune-figures ${args}: exit code ${rc} (expected 2)\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(FIND "${err}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "dptune-figures ${args}: stderr lacks '${EXPECT}':\n${err}")
endif()
if(EXISTS "${CMAKE_CURRENT_BINARY_DIR}/never_written")
  message(FATAL_ERROR "dptune-figures ${args} wrote its output folder")
endif()
