# cmake -DDPTUNE=<dptune> -DCHECK=<check_bad_pipeline.cmake> -DCHECK_WARNING=<check_warning_
#       pipeline.cmake> -DCORPUS=<list file> -DOUT=<folder> -P check_bad_pipeline_corpus.cmake
# The first-hour corpus: the mistakes a new user makes (misspelt names, wrong types, a missing CSV
# or script, a ledger below the run's cost, a tiny ε target, bad YAML, duplicate keys, a bad event
# template), one bad pipeline each, listed in CORPUS.  Every one is checked as the per-pipeline
# tests check it (check_bad_pipeline.cmake: `validate` and `run` both exit 2 with the same first
# line, naming file:line:col and key; no output folder, no NAME.* file such as its ledger); a
# `warns NAME` entry, valid but useless, as check_warning_pipeline.cmake checks it (validate and run
# print the same warning, run before anything else).  All failures are reported together.  Run from tests/ like the per-pipeline tests.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS DPTUNE CHECK CHECK_WARNING CORPUS OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_bad_pipeline_corpus.cmake: -D${var}=... is required")
  endif()
endforeach()

file(STRINGS "${CORPUS}" lines)
set(names "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "#.*" "" line "${line}")
  string(STRIP "${line}" line)
  if(NOT line STREQUAL "")
    list(APPEND names "${line}")
  endif()
endforeach()
list(LENGTH names count)
if(NOT count EQUAL 13)
  message(FATAL_ERROR "${CORPUS}: expected the 13 mistakes of the first hour, found ${count}")
endif()

set(failures "")
set(failed 0)
foreach(name IN LISTS names)
  if(name MATCHES "^warns +(.+)$")
    set(name "${CMAKE_MATCH_1}")
    set(dir "${CMAKE_CURRENT_LIST_DIR}/warning_pipelines")
    execute_process(
      COMMAND "${CMAKE_COMMAND}" -DDPTUNE=${DPTUNE} -DPIPELINE=${dir}/${name}.yaml
        -DEXPECTED=${dir}/${name}.expected -DOUT=${OUT}/${name} -P "${CHECK_WARNING}"
      RESULT_VARIABLE rc
      OUTPUT_VARIABLE out
      ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(APPEND failures "\n== ${name} (warns)\n${out}${err}")
      math(EXPR failed "${failed} + 1")
    endif()
    continue()
  endif()
  if(NOT EXISTS "${CMAKE_CURRENT_LIST_DIR}/../bad_pipelines/${name}.yaml")
    string(APPEND failures "\n== ${name}: no bad_pipelines/${name}.yaml\n")
    math(EXPR failed "${failed} + 1")
    continue()
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -DDPTUNE=${DPTUNE} -DPIPELINE=bad_pipelines/${name}.yaml
      -DEXPECTED=${CMAKE_CURRENT_LIST_DIR}/../bad_pipelines/${name}.expected
      -DOUT=${OUT}/${name} -P "${CHECK}"
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND failures "\n== ${name}\n${out}${err}")
    math(EXPR failed "${failed} + 1")
  endif()
endforeach()
if(failed GREATER 0)
  message(FATAL_ERROR "${failed} of ${count} pipelines of the corpus failed:${failures}")
endif()
message(STATUS "all ${count} pipelines: validate and run give the same verdict")
