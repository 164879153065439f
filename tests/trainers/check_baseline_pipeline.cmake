# cmake -DDPTUNE=<dptune> -DPIPELINE=<yaml> -DOUT=<folder> [-DMIN_UTILITY=<x>] [-DSETS=a=b|c=d]
#       -P check_baseline_pipeline.cmake
# Runs `dptune run PIPELINE --seed 1 --no-progress --out OUT` for a non-private baseline (a grid or
# random tuner with private: false) and checks what it reports: exit code 0; the terminal and
# summary.json say NON-PRIVATE BASELINE; no trial shows an epsilon (summary.json's best trial has
# none, there is no Pareto front or hypervolume, and every epsilon/delta cell of trials.csv is
# empty); and, with MIN_UTILITY, the best trial's mean utility is at least MIN_UTILITY.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS DPTUNE PIPELINE OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_baseline_pipeline.cmake: -D${var}=... is required")
  endif()
endforeach()

set(set_args "")
string(REPLACE "|" ";" sets "${SETS}")
foreach(s IN LISTS sets)
  list(APPEND set_args --set "${s}")
endforeach()
file(REMOVE_RECURSE "${OUT}")
execute_process(
  COMMAND "${DPTUNE}" run "${PIPELINE}" --seed 1 --no-progress --out "${OUT}" ${set_args}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)

set(problems "")
if(NOT "${rc}" STREQUAL "0")
  string(APPEND problems "exit code: expected 0, got ${rc}\n")
else()
  string(FIND "${out}" "NOTE: NON-PRIVATE BASELINE" at)
  if(at EQUAL -1)
    string(APPEND problems "stdout does not say NOTE: NON-PRIVATE BASELINE\n")
  endif()
  foreach(forbidden IN ITEMS "Pareto front" "hypervolume" "epsilon at delta")
    string(FIND "${out}" "${forbidden}" at)
    if(NOT at EQUAL -1)
      string(APPEND problems "stdout mentions '${forbidden}' for a non-private run\n")
    endif()
  endforeach()

  file(READ "${OUT}/summary.json" summary)
  string(JSON baseline ERROR_VARIABLE e GET "${summary}" non_private_baseline)
  if(NOT baseline STREQUAL "ON")
    string(APPEND problems "summary.json: non_private_baseline is '${baseline}' (${e}), expected true\n")
  endif()
  foreach(key IN ITEMS pareto_front hypervolume)
    string(JSON ignored ERROR_VARIABLE e GET "${summary}" ${key})
    if(e STREQUAL "NOTFOUND")
      string(APPEND problems "summary.json has '${key}' for a non-private baseline\n")
    endif()
  endforeach()
  string(JSON ignored ERROR_VARIABLE e GET "${summary}" best epsilon)
  if(e STREQUAL "NOTFOUND")
    string(APPEND problems "summary.json: the best trial has an epsilon\n")
  endif()
  string(JSON best ERROR_VARIABLE e GET "${summary}" best utility_mean)
  if(NOT e STREQUAL "NOTFOUND")
    string(APPEND problems "summary.json: no best.utility_mean (${e})\n")
  elseif(DEFINED MIN_UTILITY AND best LESS MIN_UTILITY)
    string(APPEND problems "best utility_mean ${best} < ${MIN_UTILITY}\n")
  endif()
  message(STATUS "best utility_mean: ${best}")

  if(EXISTS "${OUT}/pareto_front.csv" OR EXISTS "${OUT}/pareto.svg")
    string(APPEND problems "a Pareto front file was written for a non-private baseline\n")
  endif()
  file(STRINGS "${OUT}/trials.csv" rows)
  list(GET rows 0 header)
  string(REPLACE "," ";" columns "${header}")
  list(FIND columns epsilon eps_col)
  list(FIND columns delta delta_col)
  list(LENGTH rows nrows)
  if(eps_col EQUAL -1 OR delta_col EQUAL -1 OR nrows LESS 2)
    string(APPEND problems "trials.csv: no epsilon/delta columns or no trials\n")
  else()
    list(REMOVE_AT rows 0)
    foreach(row IN LISTS rows)
      # Empty cells: "a,,b" -> list "a;;b" keeps them (list(GET) sees "").
      string(REPLACE "," ";" cells "${row}")
      list(GET cells ${eps_col} eps)
      list(GET cells ${delta_col} delta)
      if(NOT eps STREQUAL "" OR NOT delta STREQUAL "")
        string(APPEND problems "trials.csv row '${row}': epsilon '${eps}', delta '${delta}' (expected empty)\n")
        break()
      endif()
    endforeach()
  endif()
endif()

if(NOT "${problems}" STREQUAL "")
  message(FATAL_ERROR "dptune run ${PIPELINE}\n${problems}full stdout:\n${out}\nfull stderr:\n${err}")
endif()
