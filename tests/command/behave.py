#!/usr/bin/env python3
"""A test program for the command trainer (tests/command): behaves as argv[1] says.

ok           answers as protocol 1 asks; train copies what it received (request, DPTUNE_*
             environment, working directory) to output_dir/received.json and reports the
             declared event; predict answers class 1 iff the first feature is > 0.
crash        kills itself with SIGSEGV after writing to stderr
hang         appends its pid and a newline to argv[2] (if given) and sleeps
garbage      prints a line that is not JSON
fail         writes to stderr and exits with code 3
wrong_event  reports noise_multiplier 0.5 instead of the declared event
silent       prints nothing and exits 0
short        predict answers one prediction too few
"""
import json
import os
import signal
import sys
import time

mode = sys.argv[1]
request = json.load(sys.stdin)

if mode == "crash":
    sys.stderr.write("about to crash\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == "hang":
    if len(sys.argv) > 2:
        # One line per program, appended in one write (O_APPEND): programs that run at once
        # (a grid's candidates on two threads) never truncate or interleave each other's pid.
        with open(sys.argv[2], "a") as f:
            f.write(f"{os.getpid()}\n")
    sys.stderr.write("hanging\n")
    sys.stderr.flush()
    time.sleep(120)
if mode == "garbage":
    print("hello, this is not JSON")
    sys.exit(0)
if mode == "fail":
    sys.stderr.write("boom: the training diverged\n")
    sys.exit(3)
if mode == "silent":
    sys.exit(0)

if request["action"] == "train":
    out = request["output_dir"]
    with open(os.path.join(out, "received.json"), "w") as f:
        json.dump({"request": request, "cwd": os.getcwd(),
                   "env": {k: v for k, v in os.environ.items() if k.startswith("DPTUNE_")}}, f)
    with open(os.path.join(out, "model.txt"), "w") as f:
        f.write("threshold 0\n")
    answer = {"model": "model.txt", "utility": 0.5}
    if request["private"]:
        answer["event"] = request["event"]
        if mode == "wrong_event":
            answer["event"] = "{gaussian: {noise_multiplier: 0.5}}"
    print("training log line")
    print(json.dumps(answer))
else:
    rows = []
    with open(request["data"]["rows_csv"]) as f:
        next(f)
        for line in f:
            rows.append(1 if float(line.split(",")[0]) > 0 else 0)
    if mode == "short":
        rows = rows[:-1]
    print(json.dumps({"predictions": rows}))
