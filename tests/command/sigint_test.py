#!/usr/bin/env python3
"""Ctrl-C during a run: `dptune run` with a command program that hangs gets SIGINT;
dptune ends, and its program (in its own process group) is killed with it (PR_SET_PDEATHSIG).
Usage: sigint_test.py DPTUNE SOURCE_DIR"""
import os
import signal
import subprocess
import sys
import tempfile
import time

dptune, source = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    pid_file = os.path.join(tmp, "program.pid")
    pipeline = os.path.join(tmp, "hang.yaml")
    with open(pipeline, "w") as f:
        f.write(f"""name: command_sigint
data: {{use: builtin:breast_cancer}}
algorithm:
  use: command
  params:
    run: /usr/bin/python3 {source}/tests/command/behave.py hang {pid_file}
    noise: fast
    event: "{{gaussian: {{noise_multiplier: 3}}}}"
    timeout: 100
accountant: {{use: rdp, delta: 1.0e-5}}
utility: {{use: accuracy, repetitions: 1}}
search_space:
  learning_rate: {{float: [0.01, 1.0]}}
tuner: {{use: grid, params: {{points_per_dimension: 2}}}}
output: {{dir: {tmp}/out}}
""")
    run = subprocess.Popen([dptune, "run", pipeline], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    def programs():
        """The pids of the programs started so far (complete lines: the grid's two candidates
        may run at once, each appending its own)."""
        if not os.path.exists(pid_file):
            return []
        with open(pid_file) as f:
            return [int(line) for line in f.read().split("\n")[:-1]]

    for _ in range(500):
        if programs():
            break
        time.sleep(0.02)
    else:
        sys.exit("the program never started:\n" + run.communicate()[0].decode())
    # The first Ctrl-C lets in-flight runs finish (this program would hang until its timeout); the
    # second exits at once (docs/studies.md), and the program dies with dptune (PR_SET_PDEATHSIG).
    run.send_signal(signal.SIGINT)
    try:
        run.wait(timeout=2)
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGINT)
        run.wait(timeout=20)
    print("dptune ended with", run.returncode)

    def running(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split(")")[-1].split()[0] not in ("Z", "X")
        except FileNotFoundError:
            return False

    started = programs()
    for _ in range(250):
        if not any(running(p) for p in started):
            break
        time.sleep(0.02)
    alive = [p for p in started if running(p)]
    for p in alive:
        os.kill(p, signal.SIGKILL)
    if alive:
        sys.exit(f"programs {alive} of {started} still run after dptune got SIGINT")
    if run.returncode not in (130, -signal.SIGINT):
        sys.exit(f"dptune ended with {run.returncode}, expected 130 (interrupted)")
    print(f"ok: the programs {started} died with dptune")
