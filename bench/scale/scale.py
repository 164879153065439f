#!/usr/bin/env python3
"""How dptune's time and peak memory grow with the work.

Sweeps, each a list of runs of the real programs of a build:
  rows     a DP-SGD study (MLP 784-128-10, one epoch, two learning rates) on n rows of 784 features:
           Gaussian blobs and, when Debian's dataset-fashion-mnist is installed, the first n
           Fashion-MNIST training images (Xiao, Rasul & Vollgraf 2017); plus `dptune validate`
           (reads and splits the data, trains nothing) for the set-up alone;
  trials   random search with n trials of a cheap DP-SGD logistic regression (the host's cost per
           trial: study.db, events, report);
  gp       DPareto's CPU time per proposal after n observed trials (bench_scale_gp; Avent et al.
           2020's exact GPs are O(n^3));
  clients  DP-Hype's secure aggregation of n clients x 100 votes (dptune_bench_secagg; SecAgg+ of
           Bell et al. 2020 on a Harary graph of degree O(log n));
  ranks    the blobs study of `threads` under `mpirun -np N ... --executor mpi`;
  threads  a study of 8 DP-SGD runs with `--executor threads --threads 1` and `--threads 2`, on
           blobs and (when installed) Fashion-MNIST; also the busiest thread's CPU time.

Every `dptune` run goes through /usr/bin/time (wall, user + system CPU, maximum resident set size,
as `/usr/bin/time -v` reports them).  Output: a CSV in long form, `sweep,series,x,metric,value`,
with `#` lines naming the machine, date, load and command; plot_scale.py draws it.

  bench/scale/scale.py [--build build] [--out scale.csv] [--smoke | --full] [--sweeps a,b,...]
"""
import argparse
import csv
import datetime
import gzip
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

FASHION = "/usr/share/datasets/fashion-mnist"

# Sizes per sweep: --smoke (the test, seconds), default (under 5 minutes), --full (longer).
SIZES = {
    "smoke": {"rows": [1000, 3000], "trials": [10], "gp": [10, 30], "clients": [50],
              "ranks": [1, 2], "threads": [1, 2], "study_rows": 2000},
    "default": {"rows": [1000, 3000, 10000, 30000, 70000], "trials": [10, 30, 100, 300],
                "gp": [10, 30, 100, 300, 1000], "clients": [50, 250, 1000],
                "ranks": [1, 2, 3, 4], "threads": [1, 2], "study_rows": 20000},
    "full": {"rows": [1000, 3000, 10000, 30000, 70000], "trials": [10, 30, 100, 300, 1000],
             "gp": [10, 30, 100, 200, 300, 500, 700, 1000, 1500], "clients": [50, 100, 250, 500, 1000, 2000],
             "ranks": [1, 2, 3, 4], "threads": [1, 2], "study_rows": 20000},
}

MLP_STUDY = """name: scale_{name}
data:
  use: {source}
  params: {params}
  preprocessing: {preprocessing}
algorithm:
  use: dp_sgd
  params: {{model: mlp, hidden1: 128, epochs: 1, lot_size: 256, sampling: poisson,
           noise_multiplier: 1.1, clipping_norm: 1.0}}
mechanism: {{use: gaussian, params: {{noise: {noise}}}}}
accountant: {{use: rdp, delta: 1.0e-5}}
utility: {{use: accuracy, repetitions: {repetitions}}}
search_space:
  learning_rate: {{float: [0.1, 0.5], log: true}}
tuner: {{use: grid, params: {{points_per_dimension: {points}}}}}
output: {{plot: false}}
"""

TRIALS_STUDY = """name: scale_trials_{trials}
data: {{use: "builtin:breast_cancer"}}
algorithm:
  use: dp_sgd
  params: {{model: logistic, epochs: 1, lot_size: 64, clipping_norm: 1.0}}
mechanism: {{use: gaussian, params: {{noise: {noise}}}}}
accountant: {{use: rdp, delta: 1.0e-5}}
utility: {{use: accuracy}}
search_space:
  learning_rate: {{float: [0.01, 1.0], log: true}}
  noise_multiplier: {{float: [0.8, 4.0], log: true}}
tuner: {{use: random, params: {{trials: {trials}}}}}
output: {{plot: false}}
"""


class Bench:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.build = os.path.abspath(args.build)
        self.dptune = os.path.join(self.build, "bin", "dptune")
        self.sizes = SIZES["smoke" if args.smoke else "full" if args.full else "default"]
        self.rows = []  # (sweep, series, x, metric, value)

    def record(self, sweep, series, x, **metrics):
        for metric, value in metrics.items():
            self.rows.append((sweep, series, x, metric, value))
        shown = " ".join(f"{k}={v:.4g}" for k, v in metrics.items())
        print(f"  {sweep:8s} {series:22s} {x:>6}  {shown}", file=sys.stderr, flush=True)

    def timed(self, cmd, thread_cpu=None):
        """Runs cmd under /usr/bin/time; returns wall s, CPU s (user + system), max RSS in MiB.
        With a list `thread_cpu`, also samples the CPU seconds of each thread of the timed
        process (every 50 ms, so the last 50 ms of a thread may be missed) into it."""
        out = os.path.join(self.work, "time.txt")
        full = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", out] + cmd
        err_path = os.path.join(self.work, "stderr.txt")  # a file: a full pipe would block it
        with open(err_path, "w") as err:
            proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=err)
            if thread_cpu is not None:
                thread_cpu += sample_threads(proc)
            proc.wait()
        if proc.returncode != 0:
            with open(err_path) as f:
                tail = f.read()[-2000:]
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{tail}")
        with open(out) as f:
            wall, user, system, rss_kb = f.read().split()[-4:]
        return float(wall), float(user) + float(system), float(rss_kb) / 1024

    def pipeline(self, name, text):
        path = os.path.join(self.work, name + ".yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_args(self, pipe, threads=1, executor="threads"):
        out = os.path.join(self.work, "out", os.path.basename(pipe)[:-5])
        return [self.dptune, "run", pipe, "--seed", "1", "--no-progress", "--overwrite",
                "--out", out, "--executor", executor, "--threads", str(threads)]

    def mlp_study(self, name, source, params, preprocessing, points=2, repetitions=1):
        return self.pipeline(name, MLP_STUDY.format(
            name=name, source=source, params=params, preprocessing=preprocessing,
            noise=self.args.noise, points=points, repetitions=repetitions))

    def blobs(self, name, n, **kw):
        params = f"{{samples: {n}, features: 784, classes: 10, separation: 30, spread: 1}}"
        return self.mlp_study(name, "blobs", params, "normalize_rows", **kw)

    def fashion_subset(self, n, **kw):
        """The first n Fashion-MNIST training images and labels as IDX files of their own."""
        folder = os.path.join(self.work, f"fashion_{n}")
        os.makedirs(folder, exist_ok=True)
        for kind, header, item in (("images", 16, 784), ("labels", 8, 1)):
            src = os.path.join(FASHION, f"train-{kind}-idx{3 if kind == 'images' else 1}-ubyte.gz")
            with gzip.open(src, "rb") as f:
                head = bytearray(f.read(header))
                body = f.read(n * item)
            head[4:8] = n.to_bytes(4, "big")  # the count, big-endian after the magic
            with open(os.path.join(folder, kind + ".idx"), "wb") as f:
                f.write(bytes(head) + body)
        params = (f"{{images: {folder}/images.idx, labels: {folder}/labels.idx}}")
        name = f"fashion_{n}" + ("_study" if kw else "")
        return self.mlp_study(name, "idx", params,
                              "{use: bounds, min: 0, max: 255, to: zero_to_one}", **kw)

    def sweep_rows(self):
        sources = [("blobs", lambda n: self.blobs(f"blobs_{n}", n))]
        if self.args.smoke:
            pass  # blobs only: the smoke test's time
        elif os.path.exists(os.path.join(FASHION, "train-images-idx3-ubyte.gz")):
            sources.append(("fashion-mnist", self.fashion_subset))
        else:
            print(f"  rows: {FASHION} not installed, Fashion-MNIST skipped", file=sys.stderr)
        for series, make in sources:
            for n in self.sizes["rows"]:
                if series == "fashion-mnist":
                    n = min(n, 60000)  # the training file holds 60 000 images
                pipe = make(n)
                wall, cpu, rss = self.timed([self.dptune, "validate", pipe])
                self.record("rows", series + " load", n, wall_s=wall, cpu_s=cpu, rss_mib=rss)
                wall, cpu, rss = self.timed(self.run_args(pipe))
                self.record("rows", series + " study", n, wall_s=wall, cpu_s=cpu, rss_mib=rss)

    def sweep_trials(self):
        for n in self.sizes["trials"]:
            pipe = self.pipeline(f"trials_{n}", TRIALS_STUDY.format(trials=n, noise=self.args.noise))
            wall, cpu, rss = self.timed(self.run_args(pipe))
            self.record("trials", "random search", n, wall_s=wall, cpu_s=cpu, rss_mib=rss,
                        ms_per_trial=1000 * wall / n)

    def sweep_gp(self):
        cmd = [os.path.join(self.build, "bin", "bench_scale_gp"), "--stop-above",
               str(self.args.gp_stop)] + [str(n) for n in self.sizes["gp"]]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        for line in proc.stdout.splitlines()[1:]:
            n, mode, cpu, wall = line.split(",")
            label = "full: 5 starts, refit" if mode == "full" else "fast: refit every 5th"
            self.record("gp", label, int(n), cpu_s=float(cpu), wall_s=float(wall))

    def sweep_clients(self):
        cmd = [os.path.join(self.build, "bin", "dptune_bench_secagg"), "--complete-up-to", "0"]
        cmd += [str(n) for n in self.sizes["clients"]]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        row = re.compile(r"^\s*(\d+)\s+(SecAgg\+.*?)\s+(\d+)\s+(\d+)%\s+([\d.]+)\s+([\d.]+)\s+(\d+)"
                         r"\s+([\d.]+)\s+\S+\s+(yes|NO)$")
        for line in proc.stdout.splitlines():
            m = row.match(line)
            if not m:
                continue
            if m.group(9) != "yes":
                raise RuntimeError("secure aggregation gave a wrong sum: " + line)
            series = f"{m.group(4)}% dropouts"
            self.record("clients", series, int(m.group(1)), wall_s=float(m.group(5)),
                        cpu_s=2 * float(m.group(6)), mb_sent=float(m.group(8)),
                        x25519=float(m.group(7)))

    def study(self):
        """The study of the ranks and threads sweeps: 2 learning rates x 4 runs of one epoch."""
        return self.blobs("study", self.sizes["study_rows"], points=2, repetitions=4)

    def sweep_threads(self):
        """The study on blobs and, when installed, 2 x 4 one-epoch runs on the first 30 000
        Fashion-MNIST images (whose set-up is cheap, so training dominates)."""
        self.threads_of(self.study(), "")
        if not self.args.smoke and os.path.exists(os.path.join(FASHION, "train-images-idx3-ubyte.gz")):
            fashion = self.fashion_subset(30000, points=2, repetitions=4)
            self.threads_of(fashion, " (Fashion-MNIST)")

    def threads_of(self, pipe, suffix):
        """Rounds of 1, 2, ... threads in turn; the fastest of each (the least disturbed by other
        processes on a shared machine) gives the ratio, the median is kept beside it.  The busiest
        thread's CPU time over the single thread's is the ratio two idle cores would give if the
        threads did not slow each other (the critical path), whatever the load."""
        walls = {t: [] for t in self.sizes["threads"]}
        best, busiest = {}, {}
        for _ in range(self.args.repeat):
            for t in walls:
                per_thread = []
                wall, cpu, rss = self.timed(self.run_args(pipe, threads=t), per_thread)
                walls[t].append(wall)
                if wall == min(walls[t]):
                    best[t] = (wall, cpu, rss)
                    busiest[t] = max(per_thread, default=0.0)
        for t, (wall, cpu, rss) in best.items():
            self.record("threads", "threads executor" + suffix, t, wall_s=wall, cpu_s=cpu,
                        rss_mib=rss, wall_median_s=median(walls[t]),
                        busiest_thread_cpu_s=busiest[t])
        if 1 in best and 2 in best:
            self.record("threads", "ratio 2 threads / 1" + suffix, 2,
                        ratio=best[2][0] / best[1][0],
                        median_ratio=median(walls[2]) / median(walls[1]),
                        critical_path_ratio=busiest[2] / best[1][1])

    def sweep_ranks(self):
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            print("  ranks: no mpirun, skipped", file=sys.stderr)
            return
        pipe = self.study()
        runs = {n: [] for n in self.sizes["ranks"]}
        for _ in range(self.args.repeat):
            for n in runs:
                runs[n].append(self.mpi_run(mpirun, pipe, n))
        for n, results in runs.items():
            wall, cpu, peaks = min(results)
            self.record("ranks", "mpi executor", n, wall_s=wall, cpu_s=cpu, rss_mib=sum(peaks),
                        rank0_rss_mib=peaks[0], wall_median_s=median([r[0] for r in results]))

    def mpi_run(self, mpirun, pipe, n):
        """One study over n ranks: wall, CPU and every rank's peak memory (each rank under its own
        /usr/bin/time; mpirun's own peak is not any rank's)."""
        prefix = os.path.join(self.work, f"rss_{n}")
        wrap = ["sh", "-c", '/usr/bin/time -f %M -o "$0.$OMPI_COMM_WORLD_RANK" "$@"', prefix]
        cmd = [mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(n)] + wrap
        wall, cpu, _ = self.timed(cmd + self.run_args(pipe, executor="mpi"))
        peaks = []
        for r in range(n):
            with open(f"{prefix}.{r}") as f:
                peaks.append(float(f.read().split()[-1]) / 1024)
        return wall, cpu, peaks


def sample_threads(proc):
    """CPU seconds of each thread of /usr/bin/time's child (the timed program), sampled until it
    exits: the last sample of every thread seen."""
    tick = os.sysconf("SC_CLK_TCK")
    seen = {}
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                children = f.read().split()
            for child in children:
                for stat in os.listdir(f"/proc/{child}/task"):
                    with open(f"/proc/{child}/task/{stat}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    seen[stat] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
        except OSError:
            pass  # a thread or the process ended between listing and reading
        time.sleep(0.05)
    return list(seen.values())


def median(values):
    s = sorted(values)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


def header(args):
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    return [f"# machine: {model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
            f"# date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"# load before: {load}",
            f"# dptune commit: {commit or 'unknown'}; noise: {args.noise}",
            f"# command: {' '.join(sys.argv)}"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build", help="build folder holding bin/dptune (build)")
    p.add_argument("--out", default="scale.csv", help="CSV to write (scale.csv)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--smoke", action="store_true", help="smallest sizes (seconds; the test)")
    size.add_argument("--full", action="store_true",
                      help="the issue's whole ranges: trials to 1000, clients to 2000 (longer)")
    p.add_argument("--sweeps", default="rows,trials,gp,clients,threads,ranks")
    p.add_argument("--noise", default="fast", choices=["fast", "secure"],
                   help="the gaussian mechanism's noise (fast: the trainer's compute is measured, "
                        "not the exact sampler; docs/noise.md)")
    p.add_argument("--gp-stop", type=float, default=60,
                   help="stop the gp sweep after a full-mode proposal longer than this (s)")
    p.add_argument("--repeat", type=int,
                   help="rounds of the threads and ranks sweeps, the fastest run of each kept "
                        "(3; --smoke: 1)")
    p.add_argument("--work", help="keep pipelines and results here (default: a temporary folder)")
    args = p.parse_args()
    if args.repeat is None:
        args.repeat = 1 if args.smoke else 3
    known = ["rows", "trials", "gp", "clients", "threads", "ranks"]
    sweeps = args.sweeps.split(",")
    for s in sweeps:
        if s not in known:
            p.error(f"unknown sweep '{s}'; known: {', '.join(known)}")
    lines = header(args)
    work = args.work or tempfile.mkdtemp(prefix="dptune_scale_")
    os.makedirs(work, exist_ok=True)
    bench = Bench(args, work)
    try:
        for s in sweeps:
            print(f"{s}:", file=sys.stderr, flush=True)
            getattr(bench, "sweep_" + s)()
    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
        print(f"scale.py: {e}", file=sys.stderr)
        return 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    with open("/proc/loadavg") as f:
        lines.append(f"# load after: {' '.join(f.read().split()[:3])}")
    with open(args.out, "w", newline="") as f:
        f.write("\n".join(lines) + "\n")
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["sweep", "series", "x", "metric", "value"])
        out.writerows([s, series, x, m, f"{v:.6g}"] for s, series, x, m, v in bench.rows)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
