#!/usr/bin/env python3
"""A test program for the command trainer (tests/command): behaves as argv[1] says.

ok           answers as protocol 1 asks; train copies what it received (request, DPTUNE_*
             environment, working directory) to output_dir/received.json and reports the
             declared event and noise; predict answers class 1 iff the first feature is > 0.
             Both first search every file of the run folder (but received.json, its own) for
             the seed's digits and exit with code 4 if they are there.
batch_mean   predict answers class 1 iff the first feature is above the mean of the rows it
             was given: not row-local
wrong_noise  reports noise "secure" whatever the pipeline declares
crash        kills itself with SIGSEGV after writing to stderr
hang         appends its pid and a newline to argv[2] (if given) and sleeps
garbage      prints a line that is not JSON
fail         writes to stderr and exits with code 3
wrong_event  reports noise_multiplier 0.5 instead of the declared event
silent       prints nothing and exits 0
short        predict answers one prediction too few
no_files     as ok, but train's answer names no model_files
stray_model  as ok, but train's answer names a "model" that is not among its model_files
no_predict   train as ok; predict has no such mode: exits with code 2 and says so
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
if mode == "no_predict" and request["action"] == "predict":
    sys.stderr.write("behave.py: no predict mode\n")
    sys.exit(2)



def seed_on_disk(folder):
    """The files under `folder` (but received.json) whose bytes contain the seed's digits."""
    digits = str(request["seed"]).encode()
    found = []
    for root, _, files in os.walk(folder):
        for name in files:
            if name == "received.json":
                continue
            with open(os.path.join(root, name), "rb") as f:
                if digits in f.read():
                    found.append(os.path.join(root, name))
    return found


run_folder = request["output_dir"]
if request["action"] == "predict":
    run_folder = os.path.dirname(run_folder)
found = seed_on_disk(run_folder)
if found:
    sys.stderr.write("the seed is on disk in %s\n" % ", ".join(found))
    sys.exit(4)

if request["action"] == "train":
    out = request["output_dir"]
    with open(os.path.join(out, "received.json"), "w") as f:
        json.dump({"request": request, "cwd": os.getcwd(),
                   "env": {k: v for k, v in os.environ.items() if k.startswith("DPTUNE_")}}, f)
    with open(os.path.join(out, "model.txt"), "w") as f:
        f.write("threshold 0\n")
    answer = {"model": "model.txt", "model_files": ["model.txt"], "utility": 0.5}
    if mode == "no_files":
        del answer["model_files"]
    if mode == "stray_model":
        answer["model"] = "received.json"
    if request["private"]:
        answer["event"] = request["event"]
        if mode == "wrong_event":
            answer["event"] = "{gaussian: {noise_multiplier: 0.5}}"
    answer["noise"] = "secure" if mode == "wrong_noise" else request["noise"]
    print("training log line")
    print(json.dumps(answer))
else:
    with open(request["data"]["rows_csv"]) as f:
        next(f)
        first = [float(line.split(",")[0]) for line in f]
    threshold = sum(first) / len(first) if mode == "batch_mean" else 0
    rows = [1 if v > threshold else 0 for v in first]
    if mode == "short":
        rows = rows[:-1]
    print(json.dumps({"predictions": rows}))
