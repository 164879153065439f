# cmake -DDPTUNE=<dptune> -DPIPELINE=<yaml> -DOUT=<folder> -DPLUGIN=<file> -DEXPECT=<text> -P ...
# Runs `dptune run PIPELINE` and checks exit code 2 (ConfigError), EXPECT in stderr, no output.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${OUT}")
execute_process(
  COMMAND "${DPTUNE}" run "${PIPELINE}" --seed 7 --no-progress --out "${OUT}" --plugin-path "${PLUGIN}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "dptune run ${PIPELINE}: exit code ${rc}, expected 2\nstdout:\n${out}\nstderr:\n${err}")
endif()
string(FIND "${err}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "stderr lacks '${EXPECT}':\n${err}")
endif()
if(EXISTS "${OUT}/summary.json")
  message(FATAL_ERROR "a refused run wrote ${OUT}/summary.json")
endif()
