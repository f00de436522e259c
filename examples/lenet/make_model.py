#!/usr/bin/env python3
"""Writes the bundled example: a LeNet-5 for 28x28 digits, as TVM 0.18 would save it
(tvm.ir.save_json, weights in a params file), with one input and the output PyTorch
computes for it. Run with Debian's python3 (numpy, torch); the files are committed."""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests"))
import relaywriter as rw  # noqa: E402

rng = np.random.default_rng(5)
def w(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)

params = {
    "conv1.weight": w(6, 1, 5, 5), "conv1.bias": w(6),
    "conv2.weight": w(16, 6, 5, 5, scale=0.1), "conv2.bias": w(16),
    "fc1.weight": w(120, 400, scale=0.05), "fc1.bias": w(120),
    "fc2.weight": w(84, 120, scale=0.1), "fc2.bias": w(84),
    "fc3.weight": w(10, 84, scale=0.1), "fc3.bias": w(10),
}
P = {k: rw.Var(k, v.shape) for k, v in params.items()}
x = rw.Var("image", (1, 1, 28, 28))
t = rw.Call("nn.conv2d", [x, P["conv1.weight"]], {"padding": [2, 2], "channels": 6, "kernel_size": [5, 5]})
t = rw.Call("nn.relu", [rw.Call("nn.bias_add", [t, P["conv1.bias"]])])
t = rw.Call("nn.max_pool2d", [t], {"pool_size": [2, 2], "strides": [2, 2]})
t = rw.Call("nn.conv2d", [t, P["conv2.weight"]], {"channels": 16, "kernel_size": [5, 5]})
t = rw.Call("nn.relu", [rw.Call("nn.bias_add", [t, P["conv2.bias"]])])
t = rw.Call("nn.max_pool2d", [t], {"pool_size": [2, 2], "strides": [2, 2]})
t = rw.Call("nn.batch_flatten", [t])
for i, n in ((1, 120), (2, 84), (3, 10)):
    t = rw.Call("nn.dense", [t, P["fc%d.weight" % i]], {"units": n})
    t = rw.Call("nn.bias_add", [t, P["fc%d.bias" % i]], {"axis": -1})
    if i < 3:
        t = rw.Call("nn.relu", [t])
t = rw.Call("nn.softmax", [t])
fn = rw.Function([x] + list(P.values()), t)
with open(os.path.join(here, "lenet.json"), "w") as f:
    f.write(rw.save_json(rw.Module({"main": fn}), version="0.18.0", typed=True))
with open(os.path.join(here, "lenet.params"), "wb") as f:
    f.write(rw.save_params(params))

img = np.zeros((1, 1, 28, 28), np.float32)  # a hand-drawn "7"
img[0, 0, 6, 6:22] = 1.0
for r in range(7, 23):
    img[0, 0, r, 21 - (r - 7) // 2] = 1.0
np.save(os.path.join(here, "image.npy"), img)
T = {k: torch.from_numpy(v).double() for k, v in params.items()}
y = torch.from_numpy(img).double()
y = F.max_pool2d(F.relu(F.conv2d(y, T["conv1.weight"], T["conv1.bias"], padding=2)), 2)
y = F.max_pool2d(F.relu(F.conv2d(y, T["conv2.weight"], T["conv2.bias"])), 2).flatten(1)
y = F.relu(F.linear(y, T["fc1.weight"], T["fc1.bias"]))
y = F.relu(F.linear(y, T["fc2.weight"], T["fc2.bias"]))
y = F.softmax(F.linear(y, T["fc3.weight"], T["fc3.bias"]), dim=1)
np.save(os.path.join(here, "expected.npy"), y.numpy().astype(np.float32))
