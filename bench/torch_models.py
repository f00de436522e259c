#!/usr/bin/python3
"""torch_models.py: PyTorch, one thread, on the whole models bench/run times relayc on.

The LeNet, MobileNetV2-block and MLP fixtures (../shared/fixtures/relay-json, README
there) rebuilt as torch modules of the same shapes (weights do not change the time), and
the transformer encoder layer, LSTM, 1-D conv and transposed conv of seq_models.py, and
the torchvision models of tv_models.py (random weights, as gen.py wrote them), in eval
mode under torch.inference_mode(). Prints one JSON line per model, like
bench/harness.c: {"case", "method": "pytorch", "median_s", "min_s"}.

Usage: torch_models.py SHAPES.json [--samples N] [--min-sample S] [--case SUBSTRING]
"""
import json
import sys
import time

import torch
import torch.nn as nn

import seq_models
import tv_models

torch.set_num_threads(1)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
        self.f1, self.f2, self.f3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.c2(x)), 2)
        x = torch.flatten(x, 1)
        return self.f3(torch.relu(self.f2(torch.relu(self.f1(x)))))


class MBv2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 16, 3, stride=2, bias=False), nn.BatchNorm2d(16)
        self.c2, self.b2 = nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False), nn.BatchNorm2d(16)
        self.c3, self.b3 = nn.Conv2d(16, 24, 1, bias=False), nn.BatchNorm2d(24)
        self.c4 = nn.Conv2d(24, 24, 1)

    def forward(self, x):
        x = nn.functional.pad(x, (0, 1, 0, 1))
        x = torch.clamp(self.b1(self.c1(x)), 0, 6)
        x = torch.clamp(self.b2(self.c2(x)), 0, 6)
        x = self.b3(self.c3(x))
        x = x + self.c4(x)
        return torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.f1, self.f2 = nn.Linear(784, 128), nn.Linear(128, 10)

    def forward(self, x):
        return torch.softmax(self.f2(torch.relu(self.f1(x))), dim=1)


def measure(f, samples, min_sample):
    f()
    f()
    t = time.perf_counter()
    f()
    one = time.perf_counter() - t
    reps = 1 if samples <= 1 else max(1, int(min_sample / max(one, 1e-9)) + 1)
    v = []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        v.append((time.perf_counter() - t) / reps)
    v.sort()
    return v[len(v) // 2], v[0]


def main():
    shapes = json.load(open(sys.argv[1]))
    samples, min_sample = 21, 0.05
    if "--samples" in sys.argv:
        samples = int(sys.argv[sys.argv.index("--samples") + 1])
    if "--min-sample" in sys.argv:
        min_sample = float(sys.argv[sys.argv.index("--min-sample") + 1])
    only = sys.argv[sys.argv.index("--case") + 1] if "--case" in sys.argv else ""
    mods = {"lenet": LeNet, "mbv2_block": MBv2Block, "mlp": MLP}
    mods.update({name: m[0] for name, m in seq_models.MODELS.items()})
    mods.update({name: (lambda name=name: tv_models.make(name)) for name in tv_models.MODELS})
    for m in shapes["models"]:
        if only not in m["name"]:
            continue
        net = mods[m["name"]]().eval()
        x = torch.randn(*m["inputs"][0]["shape"])
        with torch.inference_mode():
            t, fastest = measure(lambda: net(x), samples, min_sample)
        print(json.dumps({"case": m["name"], "method": "pytorch", "label": "", "median_s": t,
                          "min_s": fastest, "err": 0}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
