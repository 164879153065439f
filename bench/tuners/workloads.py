"""The benchmark's workloads: data files, trainer, search space and the untuned default of each.

Every workload's data is cut once, by a fixed public seed, into a tuning file (the pipeline's
training and validation splits) and a held-out test file that no pipeline ever reads: the released
model's test accuracy is measured on it with `dptune predict` after the run.  The search space is the
same for every method of a workload; the privacy knob (the trainer's noise multiplier) is set by the
calibration (methods.py), never by the search.
"""
import csv
import gzip
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent.parent
SPLIT_SEED = 20261129  # public: the test file is chosen before any tuning, the same for every row
TEST_FRACTION = 0.2
FASHION = Path("/usr/share/datasets/fashion-mnist")
FASHION_TRAIN_ROWS, FASHION_TEST_ROWS = 10000, 2000

LR = {"float": [0.01, 3.0], "log": True}
CLIP = {"float": [0.1, 4.0], "log": True}

WORKLOADS = {
    "breast_cancer_logreg": {
        "title": "DP-SGD logistic regression, breast cancer (456 tuning rows, 113 test rows)",
        "source": "breast_cancer",
        "classes": [0, 1],
        "algorithm": {"use": "dp_sgd", "params": {"model": "logistic", "lot_size": 32}},
        "search_space": {"learning_rate": LR, "clipping_norm": CLIP,
                         "epochs": {"categorical": [2, 4, 8]}},
        "default": {"learning_rate": 0.1, "clipping_norm": 1.0, "epochs": 4},
        "expost_target": 0.95,
        "hype_clients": 10,
        "knob": ("algorithm", "noise_multiplier"),
    },
    "digits_mlp": {
        "title": "DP-SGD MLP (64-128-10), optical digits (1438 tuning rows, 359 test rows)",
        "source": "digits",
        "classes": list(range(10)),
        "algorithm": {"use": "dp_sgd", "params": {"model": "mlp", "hidden1": 128, "lot_size": 64,
                                                  "epochs": 10}},
        "search_space": {"learning_rate": LR, "clipping_norm": CLIP},
        "default": {"learning_rate": 0.1, "clipping_norm": 1.0},
        "expost_target": 0.8,
        "hype_clients": 30,
        "knob": ("algorithm", "noise_multiplier"),
    },
    "command_numpy_logreg": {
        "title": "`command` trainer: examples/command/dp_sgd_numpy.py (numpy DP-SGD, softmax "
                 "regression), breast cancer (456 tuning rows, 113 test rows)",
        "source": "breast_cancer",
        "classes": [0, 1],
        # Fixed-size batches without replacement: replace-one neighbours, which every tuner accepts.
        "algorithm": {"use": "command", "params": {
            "run": "/usr/bin/python3 " + str(REPO / "examples" / "command" / "dp_sgd_numpy.py"),
            "noise": "fast", "timeout": 300, "steps": 60, "batch_size": 32,
            "variant": "without_replacement",
            "event": "self_composed: {count: ${steps}, event: {sampled_without_replacement: "
                     "{source_size: ${n}, sample_size: ${batch_size}, event: {gaussian: "
                     "{noise_multiplier: ${noise_multiplier}}}}}}"}},
        "search_space": {"learning_rate": LR, "clip_norm": CLIP},
        "default": {"learning_rate": 0.1, "clip_norm": 1.0},
        "expost_target": 0.95,
        "hype_clients": 10,
        "knob": ("algorithm", "noise_multiplier"),
        "no_mechanism": True,
    },
    "fashion_mnist_mlp": {
        "title": "DP-SGD MLP (784-64-10), Fashion-MNIST (10000 tuning rows of the training set, "
                 "2000 test rows of t10k)",
        "source": "fashion_mnist",
        "classes": list(range(10)),
        "algorithm": {"use": "dp_sgd", "params": {"model": "mlp", "hidden1": 64, "lot_size": 256,
                                                  "epochs": 4}},
        "search_space": {"learning_rate": {"float": [0.05, 3.0], "log": True}, "clipping_norm": CLIP},
        "default": {"learning_rate": 0.1, "clipping_norm": 1.0},
        "expost_target": 0.75,
        "hype_clients": 100,
        "knob": ("algorithm", "noise_multiplier"),
    },
}


def prepare_data(workload, folder):
    """The tuning and test files of the workload's data source (written once, then reused)."""
    source = WORKLOADS[workload]["source"]
    folder = Path(folder) / source
    files = {"tune": folder / "tune.csv", "test": folder / "test.csv"}
    if not (files["tune"].exists() and files["test"].exists()):
        folder.mkdir(parents=True, exist_ok=True)
        if source == "fashion_mnist":
            write_fashion(files)
        else:
            split_csv(REPO / "data" / f"{source}.csv", files)
    return files


def split_csv(path, files):
    """Stratified split by SPLIT_SEED: TEST_FRACTION of each class to the test file."""
    with open(path) as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if r]
    rng = np.random.default_rng(SPLIT_SEED)
    labels = np.array([r[-1] for r in body])
    test = np.zeros(len(body), dtype=bool)
    for label in sorted(set(labels)):
        members = np.flatnonzero(labels == label)
        test[rng.choice(members, size=round(TEST_FRACTION * len(members)), replace=False)] = True
    for name, keep in (("tune", ~test), ("test", test)):
        with open(files[name], "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(r for r, k in zip(body, keep) if k)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def write_fashion(files):
    """The first rows of Debian's Fashion-MNIST training and test sets as CSV (pixels 0..255)."""
    for name, prefix, rows in (("tune", "train", FASHION_TRAIN_ROWS), ("test", "t10k", FASHION_TEST_ROWS)):
        images = read_idx(FASHION / f"{prefix}-images-idx3-ubyte.gz")[:rows].reshape(rows, -1)
        labels = read_idx(FASHION / f"{prefix}-labels-idx1-ubyte.gz")[:rows]
        table = np.hstack([images.astype(np.int64), labels[:, None].astype(np.int64)])
        header = ",".join([f"p{i}" for i in range(images.shape[1])] + ["label"])
        np.savetxt(files[name], table, fmt="%d", delimiter=",", header=header, comments="")


def data_section(workload, files):
    source = WORKLOADS[workload]["source"]
    # The label set is the data's public description (a public schema, docs/data.md).
    section = {"use": "csv", "params": {"path": str(files["tune"]), "label_column": "label",
                                        "classes": WORKLOADS[workload]["classes"],
                                        "validation_fraction": 0.25, "test_fraction": 0.0}}
    if source == "fashion_mnist":
        section["preprocessing"] = {"use": "bounds", "min": 0, "max": 255, "to": "zero_to_one"}
    else:
        # The bundled file's frozen public statistics, as builtin:NAME uses them (docs/data.md).
        section["preprocessing"] = {"use": "standardize",
                                    "file": str(REPO / "data" / "public_stats" / f"{source}.yaml")}
    return section


def pipeline(workload, files, mode, out_dir):
    """The workload's pipeline without its tuner (methods.apply adds it and the knobs)."""
    spec = WORKLOADS[workload]
    algorithm = {"use": spec["algorithm"]["use"], "params": dict(spec["algorithm"]["params"])}
    scale_training(algorithm["params"], mode["epochs_scale"])
    space = {k: dict(v) for k, v in spec["search_space"].items()}
    if "epochs" in space and mode["epochs_scale"] < 1:
        space["epochs"]["categorical"] = sorted({max(1, round(e * mode["epochs_scale"]))
                                                 for e in space["epochs"]["categorical"]})
    p = {"name": f"bench_{workload}", "data": data_section(workload, files), "algorithm": algorithm,
         "accountant": accountant(mode), "utility": {"use": "accuracy", "repetitions": 1},
         "search_space": space, "output": {"dir": out_dir, "sensitive_trials": True}}
    if not spec.get("no_mechanism"):
        p["mechanism"] = {"use": "gaussian"}
    return p


def accountant(mode):
    """`best` (the smaller of rdp's and pld's sound answers) at delta 1e-5.  Its pld grid step is the
    mode's: pld's pessimistic discretisation keeps every answer an upper bound at any step
    (Doroshenko et al. 2022), a coarser step is only less tight and much faster on repeat-and-select."""
    return {"use": "best", "delta": 1e-5,
            "params": {"value_discretization_interval": mode["pld_interval"]}}


def scale_training(params, factor):
    """Smaller modes train fewer epochs (steps) with the same code path."""
    for key in ("epochs", "steps"):
        if key in params and factor < 1:
            params[key] = max(1, round(params[key] * factor))


def default_candidate(workload, mode):
    spec = WORKLOADS[workload]
    candidate = dict(spec["default"])
    if "epochs" in candidate and mode["epochs_scale"] < 1:
        candidate["epochs"] = max(1, round(candidate["epochs"] * mode["epochs_scale"]))
    return candidate


def accuracy(predictions, test_file):
    """Share of test rows whose predicted class is the label (classes are the labels 0..K-1)."""
    with open(test_file) as f:
        labels = [int(float(r["label"])) for r in csv.DictReader(f)]
    with open(predictions) as f:
        predicted = [int(float(r["predicted_class"])) for r in csv.DictReader(f)]
    if len(labels) != len(predicted):
        raise RuntimeError(f"{predictions}: {len(predicted)} predictions for {len(labels)} test rows")
    return sum(a == b for a, b in zip(labels, predicted)) / len(labels)
