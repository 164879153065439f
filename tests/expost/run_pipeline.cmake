# cmake -DDPTUNE=<dptune> -DPIPELINE=<yaml> -DOUT=<folder> -DSEED=<n> [-DEXPECT_STOP=<text>]
#       -P run_pipeline.cmake
# Runs `dptune run PIPELINE --seed SEED --no-progress --out OUT` with a ledger beside it and checks what
# an expost run must say: the ex-ante guarantee, the cap, the realised (or ex-post) epsilon as a
# declared DP output in the console and summary.json, and a ledger charged the ex-ante guarantee
# (the cap's price), never the realised epsilon.
cmake_minimum_required(VERSION 3.25)
foreach(var IN ITEMS DPTUNE PIPELINE OUT SEED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_pipeline.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
# The example with a ledger (its data are built in: the copy runs from any folder).
file(READ "${PIPELINE}" yaml)
file(WRITE "${OUT}/pipeline.yaml" "${yaml}\nledger: {path: ${OUT}/ledger.db, dataset: d, budget: {epsilon: 100, delta: 1.0e-3}}\n")
execute_process(
  COMMAND "${DPTUNE}" run "${OUT}/pipeline.yaml" --seed ${SEED} --no-progress --out "${OUT}/run"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# The console wraps long notes at 100 columns: join continuation lines before matching phrases.
string(REGEX REPLACE "\n +" " " out "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dptune run ${PIPELINE}: exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(READ "${OUT}/run/summary.json" summary)
foreach(needle IN ITEMS "ex-ante cap epsilon = " "expost ladder (public, fixed before any data is read)"
                        "what the ledger is charged for it" "stopped after step ")
  string(FIND "${out}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "dptune run ${PIPELINE}: '${needle}' missing from stdout:\n${out}")
  endif()
  string(FIND "${summary}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "'${needle}' missing from summary.json:\n${summary}")
  endif()
endforeach()
# Pure steps (pure_dp accountant): an ex-post guarantee; approximate steps: a realised figure that
# says it is not one.
string(FIND "${PIPELINE}" "svt" pure)
if(pure EQUAL -1)
  set(needle "realised epsilon = ")
  set(absent "ex-post guarantee: epsilon = ")
else()
  set(needle "ex-post guarantee: epsilon = ")
  set(absent "NOT a guarantee")
endif()
string(FIND "${out}" "${needle}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "'${needle}' missing from stdout:\n${out}")
endif()
# report.html states the same, beside the cap.
file(READ "${OUT}/run/report.html" report)
foreach(text IN ITEMS "${needle}" "ex-ante cap epsilon = ")
  string(FIND "${report}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "'${text}' missing from report.html")
  endif()
endforeach()
string(FIND "${out}" "${absent}" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "'${absent}' in stdout:\n${out}")
endif()
if(EXPECT_STOP)
  string(FIND "${out}" "${EXPECT_STOP}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "'${EXPECT_STOP}' missing from stdout:\n${out}")
  endif()
endif()
if(EXISTS "${OUT}/run/trials.csv" OR EXISTS "${OUT}/run/trials.SENSITIVE.csv")
  message(FATAL_ERROR "per-step scores were written without opt-in")
endif()
# The ledger: one row, charged write-ahead exactly the ex-ante guarantee (summary.json's), nothing
# settled or supplemented after the run: the realised epsilon is never what is charged.
execute_process(COMMAND "${DPTUNE}" ledger show "${OUT}/ledger.db" --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE ledger ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dptune ledger show: exit code ${rc}\n${err}")
endif()
string(JSON entries LENGTH "${ledger}" datasets 0 entries)
string(JSON kind GET "${ledger}" datasets 0 entries 0 kind)
string(JSON charged GET "${ledger}" datasets 0 entries 0 epsilon)
string(JSON ex_ante GET "${summary}" guarantee epsilon)
if(NOT entries EQUAL 1 OR NOT kind STREQUAL "charge" OR NOT charged STREQUAL ex_ante)
  message(FATAL_ERROR "the ledger must hold one charge of the ex-ante epsilon ${ex_ante}:\n${ledger}")
endif()
