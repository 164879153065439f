#!/usr/bin/env python3
"""Predict with a dptune model.json using numpy alone.

    python3 dptune_model.py MODEL.json DATA.csv [--label COLUMN]   # writes CSV to standard output

or, from Python:  m = load("model.json"); classes, probabilities = predict(m, rows)

The file format is `dptune-model-3` (docs/walkthrough.md, "Use the model elsewhere"): the rows are
preprocessed as the model says, optionally mapped into the unit ball with an intercept, passed through
the layers (z = a W + b, W inputs x outputs row-major), and the last z gives the class.  The output
matches `dptune predict` (row, predicted_class, p_class_0, ...).
"""
import csv
import json
import sys

import numpy as np


def load(path):
    with open(path) as f:
        model = json.load(f)
    if model.get("format") != "dptune-model-3":
        raise ValueError(f"{path}: not a dptune-model-3 file")
    if model.get("kind") == "files":
        raise ValueError(f"{path}: the model is the files {', '.join(model['files'])} of an "
                         "external program (the command trainer): use `dptune predict`, which "
                         "runs that program's predict mode")
    return model


def preprocess(p, x):
    kind = p["kind"]
    if kind == "fitted_standardize":
        raise ValueError(p["note"])
    if kind in ("standardize", "bounds"):
        if kind == "bounds":
            x = np.clip(x, p["min"], p["max"])
        return (x - np.asarray(p["mean"])) / np.asarray(p["scale"])
    if kind in ("normalize_rows", "clip_rows"):
        norm = np.linalg.norm(x, axis=1, keepdims=True)
        target = 1.0 if kind == "normalize_rows" else p["bound"]
        factor = np.divide(target, norm, out=np.ones_like(norm), where=norm > 0)
        return x * (np.minimum(factor, 1.0) if kind == "clip_rows" else factor)
    return x  # "none"


def predict(model, rows):
    """Classes (n,) and class probabilities (n, num_classes) of the raw feature rows (n, features)."""
    a = preprocess(model["preprocessing"], np.asarray(rows, dtype=float))
    if model["input_map"] == "unit_ball_intercept":
        norm = np.maximum(1.0, np.linalg.norm(a, axis=1, keepdims=True))
        a = np.hstack([a / norm, np.ones((len(a), 1))]) / np.sqrt(2.0)
    for layer in model["layers"]:
        w = np.asarray(layer["weights"]).reshape(layer["inputs"], layer["outputs"])
        a = a @ w + np.asarray(layer["bias"])
        if layer["activation"] == "relu":
            a = np.maximum(a, 0.0)
    if a.shape[1] == 1:  # sigmoid or hinge: class 1 iff z > 0
        p1 = 1.0 / (1.0 + np.exp(-a[:, 0]))
        return (a[:, 0] > 0).astype(int), np.column_stack([1.0 - p1, p1])
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return a.argmax(axis=1), e / e.sum(axis=1, keepdims=True)


def read_rows(path, model, label=None):
    """The CSV's columns matched to the model's features by name (any order); `label` left out.
    A categorical column (model["categorical"]) is one-hot encoded: column=category features."""
    with open(path, newline="") as f:
        header, *body = list(csv.reader(f))
    categorical = model.get("categorical", {})
    encoded = {f"{c}={v}": (c, v) for c, values in categorical.items() for v in values}
    names = model["feature_names"]
    columns = {encoded[n][0] if n in encoded else n for n in names}
    extra = set(header) - columns - {label}
    missing = sorted(columns - set(header))
    if missing or extra:
        raise ValueError(f"{path}: columns missing {missing}, unknown {sorted(extra)}")
    for row in body:
        for c, values in categorical.items():
            if row[header.index(c)] not in values:
                raise ValueError(f"{path}: column {c}: unknown category {row[header.index(c)]!r}")

    def value(row, n):
        if n in encoded:
            c, v = encoded[n]
            return 1.0 if row[header.index(c)] == v else 0.0
        return float(row[header.index(n)])
    return np.array([[value(r, n) for n in names] for r in body])


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--label"):
        sys.exit(__doc__.split("\n\n")[1])
    model = load(argv[1])
    rows = read_rows(argv[2], model, argv[4] if len(argv) == 5 else None)
    classes, probabilities = predict(model, rows)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["row", "predicted_class"] + [f"p_class_{c}" for c in range(model["num_classes"])])
    for i, (c, p) in enumerate(zip(classes, probabilities)):
        out.writerow([i, int(c)] + [repr(float(v)) for v in p])


if __name__ == "__main__":
    main(sys.argv)
