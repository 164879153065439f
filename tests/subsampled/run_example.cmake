# cmake -DDPTUNE=<dptune> -DPIPELINE=<yaml> -DOUT=<folder> "-DEXPECT=<text>|<text>..." -P run_example.cmake
# Runs the subsampled example pipeline (seeded) and checks exit code 0, the released model
# (model.json), every EXPECT text in summary.json, and no K in the printed report.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${OUT}")
execute_process(
  COMMAND "${DPTUNE}" run "${PIPELINE}" --seed 7 --no-progress --out "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dptune run ${PIPELINE}: exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT EXISTS "${OUT}/model.json")
  message(FATAL_ERROR "no model.json in ${OUT}\nstdout:\n${out}")
endif()
file(READ "${OUT}/summary.json" summary)
string(REPLACE "|" ";" expected "${EXPECT}")
foreach(text IN LISTS expected)
  string(FIND "${summary}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "summary.json lacks '${text}':\n${summary}")
  endif()
endforeach()
foreach(text IN ITEMS "K = " "runs were" "run count")
  string(FIND "${out}" "${text}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the report prints '${text}':\n${out}")
  endif()
endforeach()
