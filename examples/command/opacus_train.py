#!/usr/bin/env python3
"""An Opacus (PyTorch) program for dptune's `command` trainer, protocol 1 (docs/command-trainer.md).
OPTIONAL: not run by dptune's CI.  Needs PyTorch and Opacus (e.g. `pip install torch opacus`, or
Debian's python3-torch with Opacus 1.4.0 on PYTHONPATH).

A small MLP trained with Opacus's DP-SGD on the rows dptune hands over.  Opacus's DPDataLoader
samples each row with probability 1 / len(data_loader) = 1 / ceil(n / batch_size) (Poisson) and
takes epochs * ceil(n / batch_size) steps, so the pipeline declares exactly that:

  algorithm:
    use: command
    params:
      run: python3 opacus_train.py
      noise: fast          # PyTorch's normal_: floating-point noise, labelled INSECURE NOISE
      event: "self_composed: {count: ${epochs} * ceil(${n} / ${batch_size}),
              event: {poisson_sampled: {rate: 1 / ceil(${n} / ${batch_size}),
              event: {gaussian: {noise_multiplier: ${noise_multiplier}}}}}}"

and this script reports the event it ran, computed from Opacus's own sample rate; dptune fails the
run if the two differ.  It also answers "noise": "fast": Opacus draws floating-point Gaussian
noise, whose low-order bits can reveal the noiseless gradient (Mironov 2012), so dptune labels the
run INSECURE NOISE as it labels its own `noise: fast`; a pipeline declaring `noise: secure` fails.
Predictions are row-local (an MLP without batch statistics, in eval mode), as private scoring
requires.
"""
import json
import math
import os
import sys

import numpy as np
import torch
from opacus import PrivacyEngine


def load(path, labels):
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if labels:
        return torch.tensor(data[:, :-1], dtype=torch.float32), torch.tensor(data[:, -1]).long()
    return torch.tensor(data, dtype=torch.float32), None


def network(features, classes, hidden):
    return torch.nn.Sequential(torch.nn.Linear(features, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, classes))


def train(request):
    p, data = request["params"], request["data"]
    torch.manual_seed(int(request["seed"]) % (2**63))
    x, y = load(data["train_csv"], True)
    n, classes = x.shape[0], max(int(data["classes"]), 2)
    hidden = int(p["hidden"]) or 64
    model = network(x.shape[1], classes, hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=float(p["learning_rate"]))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                         batch_size=int(p["batch_size"]))
    epochs = int(p["epochs"])
    answer = {"noise": "fast"}  # torch's floating-point normal: see the docstring
    if request["private"]:
        engine = PrivacyEngine(accountant="rdp")
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=float(p["noise_multiplier"]), max_grad_norm=float(p["clip_norm"]),
            poisson_sampling=True)
        rate = 1 / len(loader)
        answer["event"] = (
            "{self_composed: {count: %d, event: {poisson_sampled: {rate: %r, event: "
            "{gaussian: {noise_multiplier: %r}}}}}}"
            % (epochs * len(loader), rate, float(p["noise_multiplier"])))
    # Label -1 marks a masked record (a label outside the pipeline's declared classes): it keeps
    # its place in the batch and contributes no loss and no gradient (docs/data.md).
    loss = torch.nn.CrossEntropyLoss(reduction="none")
    for _ in range(epochs):
        for xb, yb in loader:
            if len(xb) == 0:
                continue
            optimizer.zero_grad()
            (loss(model(xb), yb.clamp(min=0)) * (yb >= 0)).mean().backward()
            optimizer.step()
    path = os.path.join(request["output_dir"], "model.pt")
    state = {k.replace("_module.", ""): v for k, v in model.state_dict().items()}
    torch.save({"state": state, "features": x.shape[1], "classes": classes, "hidden": hidden}, path)
    answer["model_files"] = ["model.pt"]  # released (copied out) only for the released run
    return answer


def predict(request):
    saved = torch.load(request["model"])
    model = network(saved["features"], saved["classes"], saved["hidden"])
    model.load_state_dict(saved["state"])
    x, _ = load(request["data"]["rows_csv"], False)
    with torch.no_grad():
        probabilities = torch.softmax(model(x), dim=1)
    classes = int(request["data"]["classes"])
    answer = {"predictions": probabilities.argmax(dim=1).tolist()}
    if classes == saved["classes"]:
        answer["probabilities"] = probabilities.tolist()
    return answer


if __name__ == "__main__":
    request = json.load(sys.stdin)
    if request.get("protocol") != 1:
        sys.exit("opacus_train.py speaks protocol 1")
    print(json.dumps(train(request) if request["action"] == "train" else predict(request)))
