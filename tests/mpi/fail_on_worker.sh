#!/bin/sh
# A command trainer program (docs/command-trainer.md) that fails on every MPI worker rank and trains
# on rank 0 (slowly, so that the workers get runs): tests/mpi/mpi_test.sh, case task_error.
if [ "${OMPI_COMM_WORLD_RANK:-0}" != 0 ]; then
  echo "boom on rank $OMPI_COMM_WORLD_RANK" >&2
  exit 3
fi
sleep 0.3
exec /usr/bin/python3 "$(dirname "$0")/../command/full_batch_gd.py" "$@"
