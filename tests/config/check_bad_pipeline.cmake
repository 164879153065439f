# cmake -DDPTUNE=<dptune> -DPIPELINE=<relative yaml> -DEXPECTED=<file> [-DOUT=<folder>]
#       -P check_bad_pipeline.cmake
# Runs `dptune validate PIPELINE` in the current folder and asserts exit code 2 and that the first line
# of stderr equals the first line of EXPECTED exactly, and that it names the place (file:line:col
# and key, check_names_the_place).  With OUT, also `dptune run PIPELINE --out OUT`:
# the same exit code and first line (run makes every check validate makes, before anything else),
# and OUT never created (nothing is written or trained).  Neither command may create a file named
# like the pipeline (NAME.ledger.db, the ledger such a pipeline names): nothing is charged.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS DPTUNE PIPELINE EXPECTED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_bad_pipeline.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${EXPECTED}")
  message(FATAL_ERROR "missing ${EXPECTED}: every bad pipeline needs the expected first line of stderr")
endif()

# Exit code, first line of stderr and full output of `dptune ARGS...`, into <prefix>_rc, ...
function(run_dptune prefix)
  execute_process(
    COMMAND "${DPTUNE}" ${ARGN}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err
    TIMEOUT 120)
  string(FIND "${err}" "\n" eol)
  set(first_line "${err}")
  if(NOT eol EQUAL -1)
    string(SUBSTRING "${err}" 0 ${eol} first_line)
  endif()
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_first "${first_line}" PARENT_SCOPE)
  set(${prefix}_all "full stdout:\n${out}\nfull stderr:\n${err}" PARENT_SCOPE)
endfunction()

# Every refusal names where the mistake is: file:line:col, then the key path ("data.params.path",
# "tuner"), then the message.  Only what has no key cannot name one: a YAML syntax error, a document
# that is not one map of sections (the position is the document's), and an empty file (no line).
function(check_names_the_place first_line out_problems)
  string(REGEX MATCH "^[^:]+\\.yaml:[0-9]+:[0-9]+: [A-Za-z_][^ :]*: " place "${first_line}")
  string(REGEX MATCH
    "^[^:]+\\.yaml(:[0-9]+:[0-9]+: (YAML syntax error|expected one YAML document|expected a map of pipeline sections|missing required key '[a-z_]+')|: the pipeline is empty)"
    keyless "${first_line}")
  if(NOT place AND NOT keyless)
    set(${out_problems} "the error does not start with FILE:LINE:COL: KEY: (${first_line})\n"
      PARENT_SCOPE)
  else()
    set(${out_problems} "" PARENT_SCOPE)
  endif()
endfunction()

file(READ "${EXPECTED}" expected)
string(FIND "${expected}" "\n" eol)
if(NOT eol EQUAL -1)
  string(SUBSTRING "${expected}" 0 ${eol} expected)
endif()

set(commands validate)
if(DEFINED OUT)
  file(REMOVE_RECURSE "${OUT}")
  list(APPEND commands run)
endif()
foreach(command IN LISTS commands)
  if(command STREQUAL "run")
    run_dptune(result run "${PIPELINE}" --no-progress --out "${OUT}")
  else()
    run_dptune(result validate "${PIPELINE}")
  endif()
  set(problems "")
  if(NOT "${result_rc}" STREQUAL "2")
    string(APPEND problems "exit code: expected 2, got ${result_rc}\n")
  endif()
  if(NOT "${result_first}" STREQUAL "${expected}")
    string(APPEND problems
      "first line of stderr:\n  expected: ${expected}\n  actual:   ${result_first}\n")
  endif()
  check_names_the_place("${result_first}" unplaced)
  string(APPEND problems "${unplaced}")
  if(command STREQUAL "run" AND EXISTS "${OUT}")
    string(APPEND problems "the refused run created its output folder ${OUT}\n")
  endif()
  # A pipeline with a ledger names it NAME.ledger.db beside itself: a refused pipeline must not
  # have created (let alone charged) it, nor any other NAME.* file.
  get_filename_component(pipeline_dir "${PIPELINE}" DIRECTORY)
  get_filename_component(pipeline_name "${PIPELINE}" NAME_WE)
  file(GLOB created "${pipeline_dir}/${pipeline_name}.*")
  list(FILTER created EXCLUDE REGEX "\\.(yaml|expected)$")
  if(created)
    string(APPEND problems "the refused ${command} created ${created} (a ledger charged?)\n")
    file(REMOVE ${created})
  endif()
  if(NOT "${problems}" STREQUAL "")
    message(FATAL_ERROR "dptune ${command} ${PIPELINE}\n${problems}${result_all}")
  endif()
endforeach()
