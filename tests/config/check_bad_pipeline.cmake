# cmake -DDPTUNE=<dptune> -DPIPELINE=<relative yaml> -DEXPECTED=<file> -P check_bad_pipeline.cmake
# Runs `dptune validate PIPELINE` in the current folder and asserts exit code 2 and that the first line
# of stderr equals the first line of EXPECTED exactly.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS DPTUNE PIPELINE EXPECTED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_bad_pipeline.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${EXPECTED}")
  message(FATAL_ERROR "missing ${EXPECTED}: every bad pipeline needs the expected first line of stderr")
endif()

execute_process(
  COMMAND "${DPTUNE}" validate "${PIPELINE}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)

file(READ "${EXPECTED}" expected)
string(FIND "${expected}" "\n" eol)
if(NOT eol EQUAL -1)
  string(SUBSTRING "${expected}" 0 ${eol} expected)
endif()
string(FIND "${err}" "\n" eol)
set(first_line "${err}")
if(NOT eol EQUAL -1)
  string(SUBSTRING "${err}" 0 ${eol} first_line)
endif()

set(problems "")
if(NOT "${rc}" STREQUAL "2")
  string(APPEND problems "exit code: expected 2, got ${rc}\n")
endif()
if(NOT "${first_line}" STREQUAL "${expected}")
  string(APPEND problems "first line of stderr:\n  expected: ${expected}\n  actual:   ${first_line}\n")
endif()
if(NOT "${problems}" STREQUAL "")
  message(FATAL_ERROR "dptune validate ${PIPELINE}\n${problems}full stdout:\n${out}\nfull stderr:\n${err}")
endif()
