#!/usr/bin/python3
"""DP-SGD in numpy on bench_trainers' two MLP shapes: the anchor of the secure-noise comparison.

The same work per step as dptune's trainers: a lot of m rows drawn without replacement, a ReLU
MLP (in -> hidden -> 10 classes) in float32, softmax cross-entropy, per-example gradient norms
without per-example gradients (ghost norms: for a dense layer the per-example gradient is the
outer product a_i delta_i^T, whose squared norm is |a_i|^2 |delta_i|^2), clipping to C = 1, one
product per layer on the clip-scaled deltas for the clipped sum, Gaussian noise of sigma = 1 on
every parameter (numpy's default generator, float32 normals: its ziggurat), and an SGD step. Data: Gaussian
blobs of the digits (1797 x 64) and Fashion-MNIST (70 000 x 784) shapes, as bench_trainers draws
them. Examples per second of process CPU time (one BLAS thread: run with taskset on one core),
best of `--blocks` blocks of `--seconds` after a warm-up block.

    OPENBLAS_NUM_THREADS=1 taskset -c 1 /usr/bin/python3 bench/trainers/numpy_anchor.py
"""
import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402  (after the thread settings)


def blobs(rows, dim, classes, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, size=(classes, dim))
    labels = np.arange(rows) % classes
    features = centres[labels] + rng.normal(0, 1, size=(rows, dim))
    return features.astype(np.float32), labels


class Mlp:
    def __init__(self, dim, hidden, classes, rng):
        self.w1 = (rng.normal(0, 1, (dim, hidden)) * np.sqrt(2 / dim)).astype(np.float32)
        self.b1 = np.zeros(hidden, np.float32)
        self.w2 = (rng.normal(0, 1, (hidden, classes)) * np.sqrt(2 / hidden)).astype(np.float32)
        self.b2 = np.zeros(classes, np.float32)

    def step(self, x, y, rng, lr=0.05, clip=1.0, sigma=1.0):
        m = x.shape[0]
        z1 = x @ self.w1 + self.b1
        a1 = np.maximum(z1, 0)
        z2 = a1 @ self.w2 + self.b2
        z2 -= z2.max(axis=1, keepdims=True)
        p = np.exp(z2)
        p /= p.sum(axis=1, keepdims=True)
        d2 = p
        d2[np.arange(m), y] -= 1
        d1 = (d2 @ self.w2.T) * (z1 > 0)
        # Ghost norms: |grad_i|^2 = sum over layers of (|a_i|^2 + 1) |delta_i|^2 (bias included).
        x_sq = np.einsum("ij,ij->i", x, x)
        a1_sq = np.einsum("ij,ij->i", a1, a1)
        d1_sq = np.einsum("ij,ij->i", d1, d1)
        d2_sq = np.einsum("ij,ij->i", d2, d2)
        norms = np.sqrt((x_sq + 1) * d1_sq + (a1_sq + 1) * d2_sq)
        scale = np.minimum(1.0, clip / np.maximum(norms, 1e-12)).astype(np.float32)
        d1 *= scale[:, None]
        d2 *= scale[:, None]
        for weights, grad in ((self.w1, x.T @ d1), (self.b1, d1.sum(axis=0)),
                              (self.w2, a1.T @ d2), (self.b2, d2.sum(axis=0))):
            noisy = grad + rng.standard_normal(grad.shape, dtype=np.float32) * np.float32(sigma * clip)
            weights -= np.float32(lr / m) * noisy


def rate(label, features, labels, hidden, lot, seconds, blocks):
    rng = np.random.default_rng(1)
    model = Mlp(features.shape[1], hidden, 10, rng)
    rows = features.shape[0]

    def block(duration):
        steps, start = 0, time.process_time()
        while time.process_time() - start < duration:
            for _ in range(20):
                idx = rng.choice(rows, size=lot, replace=False)
                model.step(features[idx], labels[idx], rng)
            steps += 20
        return steps * lot / (time.process_time() - start)

    block(seconds)  # warm-up
    best = max(block(seconds) for _ in range(blocks))
    print(f"numpy DP-SGD {label:<28} {best / 1e3:9.2f} k examples/s (process CPU, best of {blocks})")
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--blocks", type=int, default=3)
    args = parser.parse_args()
    digits = blobs(1797, 64, 10, 2)
    rate("MLP 64-128-10, lots 64", *digits, 128, 64, args.seconds, args.blocks)
    fashion = blobs(70000, 784, 10, 3)
    rate("MLP 784-256-10, lots 256", *fashion, 256, 256, args.seconds, args.blocks)


if __name__ == "__main__":
    main()
