# cmake -DDPTUNE=<dptune> -DPIPELINE=<yaml> -DOUT=<folder> -P run_example.cmake
# Runs a repetition example pipeline (seeded) and checks exit code 0, a guarantee whose derivation
# states the scoring, the released model (model.json), and no K in the printed report's notes.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${OUT}")
execute_process(
  COMMAND "${DPTUNE}" run "${PIPELINE}" --seed 7 --no-progress --out "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# The console wraps long notes at 100 columns: join continuation lines before matching phrases.
string(REGEX REPLACE "\n +" " " out "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dptune run ${PIPELINE}: exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(READ "${OUT}/summary.json" summary)
if(NOT PIPELINE MATCHES "fig7")
  foreach(text IN ITEMS "scoring: " "\"guarantee\"" "\"selected\"")
    string(FIND "${summary}" "${text}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "summary.json lacks '${text}':\n${summary}")
    endif()
  endforeach()
  # The released run's model, found by the host also when the released score is noisy.
  if(NOT EXISTS "${OUT}/model.json")
    message(FATAL_ERROR "no model.json in ${OUT}\nstdout:\n${out}")
  endif()
  foreach(text IN ITEMS "K = " "accepted run " "costs no privacy")
    string(FIND "${out}" "${text}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "the report prints '${text}':\n${out}")
    endif()
  endforeach()
endif()
# With PREDICT_DATA: the released model.json predicts every row of that CSV (label column `label`).
if(DEFINED PREDICT_DATA)
  execute_process(
    COMMAND "${DPTUNE}" predict "${OUT}/model.json" "${PREDICT_DATA}" --label label
            --out "${OUT}/predictions.csv"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dptune predict: exit code ${rc}\n${out}\n${err}")
  endif()
  file(STRINGS "${OUT}/predictions.csv" rows)
  list(LENGTH rows count)
  if(NOT count EQUAL 570)
    message(FATAL_ERROR "predictions.csv has ${count} lines, expected 570 (header + 569 rows)")
  endif()
  if(NOT err MATCHES "accuracy:    0\\.[5-9]")
    message(FATAL_ERROR "predict printed no accuracy above 0.5:\n${err}")
  endif()
endif()
