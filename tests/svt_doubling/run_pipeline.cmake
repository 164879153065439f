# cmake -DDPTUNE=<dptune> -DPIPELINE=<yaml> -DOUT=<folder> -P run_pipeline.cmake
# Runs `dptune run PIPELINE --seed 7 --no-progress --out OUT` and checks exit code 0 and what an svt
# doubling run must write: a guarantee and a selection, never the per-candidate utilities unless
# opted in.
cmake_minimum_required(VERSION 3.25)
foreach(var IN ITEMS DPTUNE PIPELINE OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_pipeline.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${OUT}")
execute_process(
  COMMAND "${DPTUNE}" run "${PIPELINE}" --seed 7 --no-progress --out "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# The console wraps long notes at 100 columns: join continuation lines before matching phrases.
string(REGEX REPLACE "\n +" " " out "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dptune run ${PIPELINE}: exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT EXISTS "${OUT}/summary.json")
  message(FATAL_ERROR "no summary.json in ${OUT}\nstdout:\n${out}")
endif()
file(READ "${OUT}/summary.json" summary)
string(FIND "${summary}" "\"tuner\": \"svt_doubling\"" at)
if(at EQUAL -1)
  string(FIND "${summary}" "\"tuner\":\"svt_doubling\"" at)
endif()
if(at EQUAL -1)
  message(FATAL_ERROR "summary.json does not name the svt_doubling tuner:\n${summary}")
endif()
foreach(needle IN ITEMS "guarantee of the whole tuning run" "selected:" "composes T_max"
                        "threat model" "NOMINAL, NOT A GUARANTEE")
  string(FIND "${out}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "dptune run ${PIPELINE}: '${needle}' missing from stdout:\n${out}")
  endif()
endforeach()
if(EXISTS "${OUT}/trials.csv" OR EXISTS "${OUT}/trials.SENSITIVE.csv")
  message(FATAL_ERROR "per-candidate utilities were written without opt-in")
endif()
