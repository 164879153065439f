#!/usr/bin/env python3
"""Full-batch gradient descent for binary logistic regression (protocol 1 of dptune's command
trainer): the algorithm of the built-in `sgd` trainer with model logistic when batch_size >= n,
momentum 0 and lr_decay 0 — weights start at zero and every epoch takes one step
w <- w - lr * (mean gradient of the cross-entropy + l2 * w), so the result does not depend on the
shuffling randomness and tests/command can compare the two trainers' utilities exactly."""
import json
import math
import sys

request = json.load(sys.stdin)


def rows(path, labels):
    with open(path) as f:
        next(f)
        table = [[float(v) for v in line.split(",")] for line in f if line.strip()]
    if labels:
        return [r[:-1] for r in table], [r[-1] for r in table]
    return table, None


if request["action"] == "train":
    p = request["params"]
    x, y = rows(request["data"]["train_csv"], True)
    n, d = len(x), len(x[0])
    w, b = [0.0] * d, 0.0
    for _ in range(int(p["epochs"])):
        gw, gb = [0.0] * d, 0.0
        for xi, yi in zip(x, y):
            z = sum(a * c for a, c in zip(xi, w)) + b
            r = 1.0 / (1.0 + math.exp(-z)) - yi
            for j in range(d):
                gw[j] += r * xi[j]
            gb += r
        lr, l2 = float(p["learning_rate"]), float(p["l2"])
        w = [wj - lr * (g / n + l2 * wj) for wj, g in zip(w, gw)]
        b = b - lr * (gb / n + l2 * b)
    with open(request["output_dir"] + "/model.json", "w") as f:
        json.dump({"w": w, "b": b}, f)
    print(json.dumps({"model": "model.json"}))
else:
    with open(request["model"]) as f:
        m = json.load(f)
    x, _ = rows(request["data"]["rows_csv"], False)
    z = [sum(a * c for a, c in zip(xi, m["w"])) + m["b"] for xi in x]
    print(json.dumps({"predictions": [1 if v > 0 else 0 for v in z]}))
