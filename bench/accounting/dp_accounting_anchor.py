#!/usr/bin/env python3
"""dptune's pld accountant against Google's dp_accounting PLD, both measured in the same run.

For Poisson-sampled Gaussian DP-SGD settings it prints ε at δ from
`dptune privacy --accountant pld`, dp_accounting's PLD ε (its pessimistic estimate, an upper bound,
and its optimistic estimate, a lower reference: Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022),
the relative difference, and the time per query of each.  Both use value_discretization_interval
1e-4 (the default of each) and add/remove neighbours; dptune's tail_mass_truncation default (1e-15)
is also the one dp_accounting's self_compose uses.

  DPTUNE_DP_ACCOUNTING=/path/to/differential-privacy/python/dp_accounting \\
      /usr/bin/python3 bench/accounting/dp_accounting_anchor.py [--dptune build/bin/dptune] \\
      [--quick] [--check]

dp_accounting needs numpy, scipy, absl, attrs and mpmath (Debian: python3-numpy python3-scipy
python3-absl python3-attr python3-mpmath).  Without DPTUNE_DP_ACCOUNTING, or when it does not
import, the script says so and exits 0: nothing in the test suite depends on it.  --check exits 1
when a target of the comparison is missed (within 1e-3 relative, never below the optimistic
estimate, >= 10x faster).
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

INTERVAL = 1e-4  # value_discretization_interval: dptune's pld default and dp_accounting's.

# (name, {n, batch, epochs} or {q, steps}, sigma, delta): bench_pld.cpp's cases, in its order.
# Steps follow dptune's DP-SGD shortcut and bench_pld: ceil(epochs * n / batch).
CASES = [
    ("MNIST q=256/60000 s=1.1 60 ep", dict(n=60000, batch=256, epochs=60), 1.1, 1e-5),
    ("q=0.1 s=0.8 1000 steps", dict(q=0.1, steps=1000), 0.8, 1e-5),
    ("CIFAR-10 q=256/50000 s=1.1 100 ep", dict(n=50000, batch=256, epochs=100), 1.1, 1e-5),
    ("q=0.01 s=1.0 10000 steps", dict(q=0.01, steps=10000), 1.0, 1e-5),
]


def rate_and_steps(spec):
    if "q" in spec:
        return spec["q"], spec["steps"]
    return spec["batch"] / spec["n"], math.ceil(spec["epochs"] * spec["n"] / spec["batch"])


def timed(repeats, body):
    """(value, min wall s, min CPU s of this process) over repeats calls of body."""
    best_wall = best_cpu = math.inf
    value = None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        value = body()
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return value, best_wall, best_cpu


def import_dp_accounting():
    path = os.environ.get("DPTUNE_DP_ACCOUNTING")
    if not path:
        return None, "DPTUNE_DP_ACCOUNTING is not set"
    sys.path.insert(0, path)
    try:
        # pylint: disable=import-outside-toplevel
        import dp_accounting
        from dp_accounting.pld import privacy_loss_distribution
    except ImportError as error:
        return None, f"dp_accounting does not import from {path}: {error}"
    return (dp_accounting, privacy_loss_distribution), None


def dp_accounting_epsilon(modules, q, sigma, steps, delta):
    """Pessimistic ε through dp_accounting's public PLDAccountant, the query a user makes."""
    dp_accounting, _ = modules
    accountant = dp_accounting.pld.PLDAccountant(value_discretization_interval=INTERVAL)
    accountant.compose(
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
    return accountant.get_epsilon(delta)


def dp_accounting_optimistic(modules, q, sigma, steps, delta):
    """The same construction with pessimistic_estimate=False: a lower estimate of the exact ε
    (PLDAccountant does not expose the flag, so the PLD is built as it builds it).  Connect-the-dots
    has no optimistic variant, so dp_accounting rounds losses down (privacy buckets, Meiser &
    Mohammadi 2018); the rounding adds up over the steps, so this lower reference is loose."""
    _, pld = modules
    distribution = pld.from_gaussian_mechanism(
        standard_deviation=sigma, pessimistic_estimate=False, use_connect_dots=False,
        value_discretization_interval=INTERVAL, sampling_prob=q).self_compose(steps)
    return distribution.get_epsilon_for_delta(delta)


def dptune_epsilon(binary, q, sigma, steps, delta):
    event = (f"{{self_composed: {{count: {steps}, event: {{poisson_sampled: {{rate: {q!r}, "
             f"event: {{gaussian: {{noise_multiplier: {sigma!r}}}}}}}}}}}}}")
    out = subprocess.run(
        [binary, "privacy", "--event", event, "--delta", repr(delta), "--accountant", "pld",
         "--value-discretization-interval", repr(INTERVAL), "--json"],
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["epsilon"]


def bench_pld_rows(binary, quick):
    """bench_pld's in-process figures for its cases (the same as CASES, in order): per case the
    pessimistic ε, dptune's optimistic ε and the median CPU and wall ms of one query (process
    start-up and plugin loading excluded, as Python's start-up and imports are for dp_accounting)
    """
    out = subprocess.run([binary] + (["--quick"] if quick else []), check=True,
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        words = line.split()
        if len(words) > 3 and words[0] == "pld" and words[2] == "optimistic":  # pld X, optimistic Y
            rows[-1].update(epsilon=float(words[1].rstrip(",")), optimistic=float(words[3]))
        elif words and words[-1].endswith("ms") and words[-2].endswith("ms") and words[0] != "case":
            rows.append({"cpu_ms": float(words[-2][:-2]), "wall_ms": float(words[-1][:-2])})
    return rows


def header(binary, modules, quick):
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; {platform.node()}, "
          f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}; "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# dptune: {binary} privacy --accountant pld --json for eps; the time of one query is "
          f"bench_pld's (in-process, {'one run' if quick else 'median of 5'}; 'CLI ms' adds "
          f"process start-up)")
    version = getattr(modules[0], "__version__", None)
    print(f"# dp_accounting: {modules[0].__file__}" + (f" {version}" if version else "")
          + f"; Python {platform.python_version()}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dptune",
                        default=os.path.join(here, "..", "..", "build", "bin", "dptune"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the first case only, one repeat")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    modules, why = import_dp_accounting()
    if modules is None:
        print(f"dp_accounting_anchor: skipped ({why})")
        return 0
    binary = os.path.abspath(args.dptune)
    bench_pld = os.path.join(os.path.dirname(binary), "bench_pld")
    for program in (binary, bench_pld):
        if not os.access(program, os.X_OK):
            print(f"dp_accounting_anchor: no {program} (pass --dptune build/bin/dptune of a build "
                  f"with benchmarks)", file=sys.stderr)
            return 2
    repeats = 1 if args.quick else args.repeats
    header(binary, modules, args.quick)
    print(f"# delta as given, value_discretization_interval {INTERVAL}; dp_accounting and CLI "
          f"times: min of {repeats}; speed-up = dp_acc ms / dptune ms, the 10x target judged on "
          f"CPU time (the machine may be shared)")
    print(f"{'case':33} {'steps':>5} {'eps dptune':>10} {'dp_acc pess':>11} {'rel diff':>8} "
          f"{'dp_acc opt':>10} {'dptune opt':>10} {'dptune ms':>13} {'CLI ms':>6} "
          f"{'dp_acc ms':>13} {'speed-up':>13}  targets")
    print(f"{'':33} {'':5} {'':10} {'':11} {'':8} {'':10} {'':10} {'cpu / wall':>13} {'wall':>6} "
          f"{'cpu / wall':>13} {'cpu / wall':>13}  1e-3 >=opt 10x(cpu)")
    cases = CASES[:1] if args.quick else CASES
    in_process = bench_pld_rows(bench_pld, args.quick)
    if len(in_process) < len(cases) or any("epsilon" not in row for row in in_process):
        raise SystemExit("bench_pld's output no longer parses: keep this script in step with it")
    missed = False
    for (name, spec, sigma, delta), inner in zip(cases, in_process):
        q, steps = rate_and_steps(spec)
        ours, cli_wall, _ = timed(repeats, lambda: dptune_epsilon(binary, q, sigma, steps, delta))
        if abs(inner["epsilon"] - ours) > 1e-12 * ours:
            raise SystemExit(f"bench_pld's case {name!r} no longer matches ({inner['epsilon']} "
                             f"against {ours}): keep CASES in step with bench_pld.cpp")
        theirs, their_wall, their_cpu = timed(
            repeats, lambda: dp_accounting_epsilon(modules, q, sigma, steps, delta))
        optimistic = dp_accounting_optimistic(modules, q, sigma, steps, delta)
        rel = (ours - theirs) / theirs
        speed = their_cpu * 1e3 / inner["cpu_ms"]
        ok = [abs(rel) <= 1e-3, ours >= optimistic, speed >= 10]
        missed = missed or not all(ok)
        print(f"{name:33} {steps:5d} {ours:10.6f} {theirs:11.6f} {rel:+8.1e} {optimistic:10.6f} "
              f"{inner['optimistic']:10.6f} {inner['cpu_ms']:6.1f} {inner['wall_ms']:6.1f} "
              f"{cli_wall * 1e3:6.1f} {their_cpu * 1e3:6.0f} {their_wall * 1e3:6.0f} "
              f"{speed:5.1f}x {their_wall * 1e3 / inner['wall_ms']:5.1f}x  "
              + " ".join("ok" if good else "MISS" for good in ok))
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
