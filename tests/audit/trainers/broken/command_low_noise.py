#!/usr/bin/env python3
"""DELIBERATELY BROKEN (a test fixture for `dptune audit trainer`, never for use): a `command`
trainer (protocol 1, docs/command-trainer.md) running DP-SGD for logistic regression with Poisson
lots and per-example clipping, which reports the event of noise multiplier `noise_multiplier` but
adds noise of stddev 0.5 * clip_norm to the gradient sum, whatever noise_multiplier says."""
import json
import os
import sys

import numpy as np

ACTUAL_SIGMA = 0.5  # BUG: the event reports params["noise_multiplier"]


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def train(request):
    p = request["params"]
    data = np.loadtxt(request["data"]["train_csv"], delimiter=",", skiprows=1, ndmin=2)
    x, y = data[:, :-1], data[:, -1].astype(int)
    n, d = x.shape
    k = max(int(request["data"]["classes"]), 2)
    steps, batch = int(p["steps"]), int(p["batch_size"])
    lr, clip = float(p["learning_rate"]), float(p["clip_norm"])
    rng = np.random.default_rng(int(request["seed"]))
    w = np.zeros((d + 1, k))
    xb = np.hstack([x, np.ones((n, 1))])
    onehot = np.eye(k)[y]
    rate = batch / n
    for _ in range(steps):
        chosen = rng.random(n) < rate
        xs, ts = xb[chosen], onehot[chosen]
        residual = softmax(xs @ w) - ts
        norms = np.linalg.norm(xs, axis=1) * np.linalg.norm(residual, axis=1)
        scale = np.minimum(1.0, clip / np.maximum(norms, 1e-12))
        g = (xs * scale[:, None]).T @ residual
        g += rng.normal(0.0, ACTUAL_SIGMA * clip, size=g.shape)
        w -= lr * g / batch
    np.save(os.path.join(request["output_dir"], "model.npy"), w)
    event = (
        "{self_composed: {count: %d, event: {poisson_sampled: {rate: %r, "
        "event: {gaussian: {noise_multiplier: %r}}}}}}"
        % (steps, rate, float(p["noise_multiplier"]))
    )
    return {"model_files": ["model.npy"], "noise": "fast", "event": event}


def predict(request):
    w = np.load(request["model"])
    x = np.loadtxt(request["data"]["rows_csv"], delimiter=",", skiprows=1, ndmin=2)
    probabilities = softmax(np.hstack([x, np.ones((x.shape[0], 1))]) @ w)
    classes = int(request["data"]["classes"])
    return {
        "predictions": probabilities.argmax(axis=1).tolist(),
        "probabilities": probabilities[:, :classes].tolist(),
    }


def main():
    request = json.loads(sys.stdin.read())
    answer = train(request) if request["action"] == "train" else predict(request)
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
