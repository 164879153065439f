# cmake -DDPTUNE=<dptune> -DPIPELINE=<yaml> -DEXPECTED=<file> -DOUT=<folder>
#       -P check_warning_pipeline.cmake
# A pipeline that is valid but useless as configured (an ε so small that the output is noise,
# vote noise that swamps the votes): `dptune validate` exits 0 and prints a line starting with the
# first line of EXPECTED; `dptune run` prints the same warning before anything else it prints
# (before the ledger is charged and the data trained on) and then runs.
cmake_minimum_required(VERSION 3.25)
foreach(var IN ITEMS DPTUNE PIPELINE EXPECTED OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_warning_pipeline.cmake: -D${var}=... is required")
  endif()
endforeach()
file(STRINGS "${EXPECTED}" expected LIMIT_COUNT 1)
string(STRIP "${expected}" expected)
file(REMOVE_RECURSE "${OUT}")

execute_process(COMMAND "${DPTUNE}" validate "${PIPELINE}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
string(FIND "${out}" "\n${expected}" at)
if(NOT rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "dptune validate ${PIPELINE}: exit ${rc}, expected 0 and a line starting "
    "'${expected}'\nstdout:\n${out}\nstderr:\n${err}")
endif()

execute_process(COMMAND "${DPTUNE}" run "${PIPELINE}" --no-progress --seed 1 --out "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
string(FIND "${out}" "${expected}" at)
if(NOT rc EQUAL 0 OR NOT at EQUAL 0)
  message(FATAL_ERROR "dptune run ${PIPELINE}: exit ${rc}, expected 0 and the first line "
    "starting '${expected}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
