#!/usr/bin/env python3
"""The Opacus anchor for bench_trainers: DP-SGD throughput of Opacus on dptune's benchmark shapes.

Trains, on ONE thread, the shapes that bench_trainers times (bench_trainers.cpp):

  * MLP 64-128-10 on 1797 x 64 rows, 10 classes (digits' shape), lots of 64;
  * MLP 784-256-10 on 70 000 x 784 rows, 10 classes (Fashion-MNIST's shape), lots of 256;

with ReLU between the layers, softmax cross-entropy, per-example clipping to C = 1, Gaussian noise
of standard deviation sigma * C with sigma = 1 on the sum of clipped gradients, plain SGD at
learning rate 0.05 (Abadi et al. 2016, Algorithm 1), through Opacus's PrivacyEngine (per-example
gradients by Opacus's hooks). Two ways of drawing lots:

  * "fixed": lots of exactly m rows drawn without replacement, as bench_trainers draws them, the
    lot taken from a tensor by index (no DataLoader: dptune has none either);
  * "poisson": Opacus's own DPDataLoader (Poisson sampling with rate 1 / ceil(n / m)), as
    Opacus is usually run; its per-batch Python overhead is part of the number.

Throughput is examples processed (steps x m, or the Poisson lots' actual sizes) per second of the
process's CPU time (time.process_time: the machine is shared; with one thread this is the
thread's CPU time, as bench_trainers measures), the best of several timed blocks after a warm-up;
wall time is printed beside. By default the script restarts itself with glibc malloc thresholds that
keep Opacus's large per-step buffers in the heap (MALLOC_KEEP below; --malloc default: as is).

Run with the Opacus source tree (pure Python) in OPACUS_SRC and its dependencies importable
(torch, numpy, scipy, opt_einsum; e.g. Debian's python3-torch and opt_einsum's source on
PYTHONPATH):

  PYTHONPATH=/path/to/opt_einsum OPACUS_SRC=/path/to/opacus taskset -c 1 /usr/bin/python3 bench/trainers/opacus_anchor.py \
      --dptune build/bin/bench_trainers

OPACUS_SRC unset, or torch / Opacus not importable: prints why it skipped and exits 0 (the suite
never depends on torch). --dptune runs bench_trainers in the same run and prints the ratios.
"""

import argparse
import os
import re
import subprocess
import sys
import time
import warnings

# One thread for every pool that could start one (OpenMP, OpenBLAS, MKL), before torch loads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

# glibc malloc returns every block above its mmap threshold (at most 32 MB when it adapts by
# itself) to the kernel when freed, so the per-example gradients Opacus allocates each step (208 MB
# on 784-256-10) come back as fresh pages, faulted in and zeroed again every step. Measured here:
# raising the mmap threshold alone makes 784-256-10 3x faster; raising the top pad alone makes
# digits (2 MB buffers, in the heap) up to 2x faster, presumably because the heap's top is no
# longer given back and grown again each step; the trim threshold alone does neither. The anchor
# is Opacus at its best, so this is the default (--malloc default: as is).
MALLOC_KEEP = {
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
    "MALLOC_TOP_PAD_": str(1 << 28),
}

SHAPES = (
    # label, rows, features, hidden, classes, lot, seed
    ("MLP 64-128-10, n=1797, lots 64", 1797, 64, 128, 10, 64, 2),
    ("MLP 784-256-10, n=70000, lots 256", 70000, 784, 256, 10, 256, 3),
)
LEARNING_RATE = 0.05
NOISE_MULTIPLIER = 1.0
CLIPPING_NORM = 1.0


def skip(reason):
    print(f"opacus_anchor: skipped: {reason}")
    sys.exit(0)


def import_opacus():
    """Returns (torch, opacus) or exits 0 naming what is missing."""
    src = os.environ.get("OPACUS_SRC")
    if not src:
        skip("OPACUS_SRC is not set (path of an Opacus source tree)")
    sys.path.insert(0, src)
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        skip(f"torch is not importable ({error})")
    try:
        import opacus  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        skip(f"Opacus from {src} is not importable ({error})")
    return torch, opacus


def blobs(torch, rows, features, classes, seed):
    """Gaussian blobs shaped like bench_trainers' synthetic data: row i in class i mod classes,
    its features the class centre plus N(0, 1) noise, centres N(0, 1)."""
    gen = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, features, generator=gen)
    labels = torch.arange(rows) % classes
    x = centres[labels] + torch.randn(rows, features, generator=gen)
    return x.float(), labels


def make_private(torch, opacus, shape, sampling, data):
    _, rows, features, hidden, classes, lot, seed = shape
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(features, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, classes)
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    dataset = torch.utils.data.TensorDataset(*data)
    loader = torch.utils.data.DataLoader(dataset, batch_size=lot, shuffle=True)
    engine = opacus.PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        noise_multiplier=NOISE_MULTIPLIER,
        max_grad_norm=CLIPPING_NORM,
        poisson_sampling=(sampling == "poisson"),
    )
    assert rows == len(dataset)
    return model, optimizer, loader


def step(torch, model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


def lots(torch, sampling, loader, data, lot, gen):
    """Yields lots forever: Opacus's DPDataLoader epochs ("poisson"), or fixed lots of `lot` rows
    drawn without replacement ("fixed")."""
    x, y = data
    while True:
        if sampling == "poisson":
            yield from loader
        else:
            index = torch.randperm(x.shape[0], generator=gen)[:lot]
            yield x[index], y[index]


def timed_block(torch, model, optimizer, stream, seconds, min_steps):
    """Steps until `seconds` of CPU time (and at least `min_steps`); (examples, CPU s, wall s)."""
    examples = steps = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    while time.process_time() - cpu0 < seconds or steps < min_steps:
        x, y = next(stream)
        step(torch, model, optimizer, x, y)
        examples += x.shape[0]
        steps += 1
    return examples, time.process_time() - cpu0, time.perf_counter() - wall0


def measure(torch, opacus, shape, sampling, seconds, blocks):
    """Examples per CPU second of Opacus DP-SGD on `shape`: the best of `blocks` timed blocks of
    seconds / blocks each, after a warm-up of about one block. One block's rate varies by up to
    1.7x on the shared 2-core machine (the same steps took 1.3 to 2.3 ms), so the best block is
    the Opacus figure: the most favourable to Opacus, which can only shrink dptune's ratio."""
    label, rows, features, _, classes, lot, seed = shape
    data = blobs(torch, rows, features, classes, seed)
    model, optimizer, loader = make_private(torch, opacus, shape, sampling, data)
    stream = lots(torch, sampling, loader, data, lot, torch.Generator().manual_seed(seed))
    block = seconds / blocks
    timed_block(torch, model, optimizer, stream, block, 3)  # warm-up: allocator, hooks, dispatch
    runs = [timed_block(torch, model, optimizer, stream, block, 3) for _ in range(blocks)]
    examples, cpu, wall = max(runs, key=lambda run: run[0] / run[1])
    total = sum(run[0] for run in runs) / sum(run[1] for run in runs)
    print(
        f"opacus  {label:<34} lots {sampling:<7} best of {blocks} blocks: CPU {cpu:6.3f} s: "
        f"{examples / cpu / 1e3:8.3f} k examples/s (wall {examples / wall / 1e3:8.3f} k/s) | "
        f"all blocks {total / 1e3:8.3f} k/s",
        flush=True,
    )
    return examples / cpu


DPTUNE_LINE = re.compile(
    r"^(?P<label>(?:MLP|logistic)[^|]*?)\s+(?P<rows>double|float)\s+noise\s+(?P<noise>\w+)"
    r".*?:\s*(?P<loop>[\d.]+) M examples/s.*plugin train\(\):\s*(?P<plugin>[\d.]+) M examples/s"
)


def run_dptune(binary, seconds):
    """Runs bench_trainers (with glibc's default malloc settings, as it is normally run) and
    returns {(label, rows): (loop, plugin)} in examples/s."""
    env = {key: value for key, value in os.environ.items() if key not in MALLOC_KEEP}
    try:
        out = subprocess.run(
            [binary, str(seconds)], check=True, capture_output=True, text=True, env=env
        )
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"opacus_anchor: error: --dptune {binary}: {error}", file=sys.stderr)
        sys.exit(2)
    found = {}
    for line in out.stdout.splitlines():
        print(f"dptune  {line}")
        match = DPTUNE_LINE.match(line)
        if match and match["noise"] == "fast":
            key = (match["label"].strip(), match["rows"])
            found[key] = (float(match["loop"]) * 1e6, float(match["plugin"]) * 1e6)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per Opacus case")
    parser.add_argument("--blocks", type=int, default=5, help="timed blocks per case (best kept)")
    parser.add_argument("--sampling", choices=("fixed", "poisson", "both"), default="both")
    parser.add_argument("--dptune", help="bench_trainers binary to run in the same run")
    parser.add_argument("--dptune-seconds", type=float, default=2.0)
    parser.add_argument(
        "--malloc",
        choices=("keep", "default"),
        default="keep",
        help="keep: rerun with glibc thresholds that keep large blocks (MALLOC_KEEP); default: as is",
    )
    args = parser.parse_args()
    if args.blocks < 1 or args.seconds <= 0 or args.dptune_seconds <= 0:
        parser.error("--blocks must be >= 1 and --seconds, --dptune-seconds > 0")
    if args.malloc == "keep" and any(os.environ.get(k) != v for k, v in MALLOC_KEEP.items()):
        # glibc reads these once, at start-up: start again with them set.
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **MALLOC_KEEP})

    torch, opacus = import_opacus()
    # Opacus's own notices (secure_mode off, as bench_trainers runs `noise: fast`; its backward
    # hooks) say nothing about the numbers.
    warnings.filterwarnings("ignore", message="Secure RNG turned off")
    warnings.filterwarnings("ignore", message="Using a non-full backward hook")
    torch.set_num_threads(1)
    print(
        f"torch {torch.__version__}, Opacus {opacus.__version__}, threads "
        f"{torch.get_num_threads()}, malloc {args.malloc}, load {open('/proc/loadavg', encoding='ascii').read().strip()}"
    )
    samplings = ("fixed", "poisson") if args.sampling == "both" else (args.sampling,)
    opacus_rates = {
        (shape[0], sampling): measure(torch, opacus, shape, sampling, args.seconds, args.blocks)
        for shape in SHAPES
        for sampling in samplings
    }
    if not args.dptune:
        return
    dptune_rates = run_dptune(args.dptune, args.dptune_seconds)
    print("ratios dptune / Opacus (CPU time, noise fast):")
    for (label, sampling), rate in opacus_rates.items():
        for rows in ("double", "float"):
            if (label, rows) not in dptune_rates:
                continue
            loop, plugin = dptune_rates[(label, rows)]
            print(
                f"ratio  {label:<34} Opacus lots {sampling:<7} {rate / 1e3:9.3f} k/s | dptune "
                f"{rows:<6} loop {loop / 1e3:9.1f} k/s = {loop / rate:6.1f}x, plugin "
                f"{plugin / 1e3:9.1f} k/s = {plugin / rate:6.1f}x"
            )
    print(f"load after {open('/proc/loadavg', encoding='ascii').read().strip()}")


if __name__ == "__main__":
    main()
