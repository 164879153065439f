#!/usr/bin/env python3
"""DP-SGD for multinomial logistic regression in numpy: an example program for dptune's `command`
trainer (protocol 1, docs/command-trainer.md).  Needs only python3 and numpy (Debian
python3-numpy).

dptune starts it twice per run, with a JSON request on standard input:
  action "train":   read the training rows from request["data"]["train_csv"] (CSV: header, the
                    features, then the label), train with the candidate in request["params"],
                    save the model in request["output_dir"], answer {"model_files": [...],
                    "event": ...}.
  action "predict": read request["model"] (the first model file) and the rows in
                    request["data"]["rows_csv"] (features only, in the training columns' order),
                    answer {"predictions": [class, ...], "probabilities": [[...], ...]}.
                    Also what `dptune predict results/model.json DATA` runs on the release.
The answer is the last line of standard output; anything else goes to standard error.

The algorithm (Abadi et al. 2016): `steps` steps; each samples every row independently with
probability q = batch_size / n (Poisson sampling; with params variant "without_replacement": a
batch of exactly batch_size rows drawn without replacement, for replace-one tuners such as
svt_doubling), clips each example's gradient to L2 norm
clip_norm, adds N(0, (noise_multiplier * clip_norm)^2) noise to the sum and divides by the expected
batch size.  Its event, which the pipeline declares and this script reports back:
  self_composed: {count: steps, event: {poisson_sampled: {rate: batch_size/n,
                  event: {gaussian: {noise_multiplier: noise_multiplier}}}}}
or, without replacement (Wang, Balle & Kasiviswanathan 2019):
  self_composed: {count: steps, event: {sampled_without_replacement: {source_size: n,
                  sample_size: batch_size, event: {gaussian: {noise_multiplier: ...}}}}}

The noise is numpy's floating-point normal, whose low-order bits can reveal the noiseless sum
(Mironov 2012): the script answers "noise": "fast", the pipeline declares `noise: fast`, and every
report labels the run INSECURE NOISE as it labels dptune's own `noise: fast` (a pipeline that
declares `noise: secure` fails the run).  Prediction is row-local: each row's class depends only
on that row and the model, which private scoring's sensitivity (1/n) needs.
"""
import json
import os
import sys

import numpy as np


def load_csv(path, with_labels):
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if with_labels:
        return data[:, :-1], data[:, -1].astype(int)
    return data, None


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def train(request):
    p = request["params"]
    x, y = load_csv(request["data"]["train_csv"], True)
    n, d = x.shape
    k = max(int(request["data"]["classes"]), 2)
    steps, batch = int(p["steps"]), int(p["batch_size"])
    lr, clip, sigma = float(p["learning_rate"]), float(p["clip_norm"]), float(p["noise_multiplier"])
    private = bool(request["private"])
    rng = np.random.default_rng(int(request["seed"]))
    w = np.zeros((d + 1, k))  # the last row is the bias
    xb = np.hstack([x, np.ones((n, 1))])
    # Label -1 marks a masked record (a label outside the pipeline's declared classes): it keeps
    # its place and contributes no gradient (docs/data.md, "A public schema").
    kept = (y >= 0).astype(float)
    onehot = np.eye(k)[np.maximum(y, 0)]
    rate = batch / n
    without_replacement = p.get("variant") == "without_replacement"
    for _ in range(steps):
        if private and not without_replacement:
            chosen = rng.random(n) < rate
        else:
            chosen = rng.choice(n, size=min(batch, n), replace=False)
        xs, ts = xb[chosen], onehot[chosen]
        # Per-example gradients of the cross-entropy: x_i (softmax(x_i w) - t_i)^T (0 if masked).
        residual = (softmax(xs @ w) - ts) * kept[chosen][:, None]
        if private:
            norms = np.linalg.norm(xs, axis=1) * np.linalg.norm(residual, axis=1)
            scale = np.minimum(1.0, clip / np.maximum(norms, 1e-12))
            g = (xs * scale[:, None]).T @ residual
            g += rng.normal(0.0, sigma * clip, size=g.shape)
            g /= batch
        else:
            g = xs.T @ residual / max(len(xs), 1)
        w -= lr * g
    np.save(os.path.join(request["output_dir"], "model.npy"), w)
    # "model_files" declares the model: if this run is the one a private tuner releases, dptune
    # copies these files (and nothing else of any run) into the results folder, and `dptune
    # predict` hands them back to this script's predict action.
    answer = {"model_files": ["model.npy"], "noise": "fast"}  # numpy's normal: insecure
    if private and without_replacement:
        answer["event"] = (
            "{self_composed: {count: %d, event: {sampled_without_replacement: {source_size: %d, "
            "sample_size: %d, event: {gaussian: {noise_multiplier: %r}}}}}}"
            % (steps, n, min(batch, n), sigma)
        )
    elif private:
        answer["event"] = (
            "{self_composed: {count: %d, event: {poisson_sampled: {rate: %r, "
            "event: {gaussian: {noise_multiplier: %r}}}}}}" % (steps, rate, sigma)
        )
    return answer


def predict(request):
    w = np.load(request["model"])
    x, _ = load_csv(request["data"]["rows_csv"], False)
    probabilities = softmax(np.hstack([x, np.ones((x.shape[0], 1))]) @ w)
    classes = int(request["data"]["classes"])
    if classes == 0:
        return {"predictions": probabilities.argmax(axis=1).tolist()}
    return {
        "predictions": probabilities.argmax(axis=1).tolist(),
        "probabilities": probabilities[:, :classes].tolist(),
    }


def main():
    request = json.load(sys.stdin)
    if request.get("protocol") != 1:
        sys.exit("dp_sgd_numpy.py speaks protocol 1, got %r" % request.get("protocol"))
    answer = train(request) if request["action"] == "train" else predict(request)
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
