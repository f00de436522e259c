#!/usr/bin/env python3
"""Makes the data for the hand-written stand-in model "tiny" into OUTDIR:

    in0.npy             the input, float32 [1, 4]
    expected.npy        relu(W x + b), float32 [1, 3]
    expected_wrong.npy  the same with one element off by 0.5 (must FAIL)
    tiny.bin            the constants blob for bin mode: W float32[3][4] at 0,
                        b float32[3] at 48, zero-padded to 64 bytes
    pair_in0.npy pair_in1.npy pair_out0.npy pair_out1.npy
                        inputs and expected outputs of the stand-in "pair"
                        (two inputs, two outputs, tanhf/expf/sqrtf/erff)

W and b are read from c/tiny_constants.c, so both modes use the same numbers;
the scale of "pair" from pair/pair_constants.c.
Usage: make_data.py OUTDIR   (needs numpy)
"""
import math
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def make_pair(out):
    with open(os.path.join(HERE, "pair", "pair_constants.c"), encoding="utf-8") as f:
        scale = read_const_array(f.read(), "pair_scale").astype(np.float64)
    a = np.array([[0.25, -1.0, 0.75], [1.5, 0.125, -0.5]], dtype=np.float32)
    b = np.array([0.3, -0.2, 0.1], dtype=np.float32)
    out0 = np.tanh(a.astype(np.float64) * scale + b.astype(np.float64)).astype(np.float32)
    out1 = np.array([math.sqrt(np.exp(a.astype(np.float64)).sum()) + math.erf(float(b[0]))],
                    dtype=np.float32)
    np.save(os.path.join(out, "pair_in0.npy"), a)
    np.save(os.path.join(out, "pair_in1.npy"), b)
    np.save(os.path.join(out, "pair_out0.npy"), out0)
    np.save(os.path.join(out, "pair_out1.npy"), out1)


def read_const_array(text, name):
    m = re.search(r"const\s+float\s+%s\s*\[\s*(\d+)\s*\]\s*=\s*\{([^}]*)\}" % name, text)
    if not m:
        sys.exit("make_data.py: %s not found in tiny_constants.c" % name)
    vals = [float(v.strip().rstrip("fF")) for v in m.group(2).split(",") if v.strip()]
    if len(vals) != int(m.group(1)):
        sys.exit("make_data.py: %s: %d values for [%s]" % (name, len(vals), m.group(1)))
    return np.array(vals, dtype=np.float32)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(HERE, "c", "tiny_constants.c"), encoding="utf-8") as f:
        text = f.read()
    w = read_const_array(text, "tiny_weight").reshape(3, 4)
    b = read_const_array(text, "tiny_bias")

    x = np.array([[1.0, -2.0, 0.5, 3.0]], dtype=np.float32)
    y = np.maximum(x @ w.T + b, np.float32(0)).astype(np.float32)
    assert (y == 0).any() and (y > 0).any(), "the input should exercise both sides of relu"

    wrong = y.copy()
    wrong[0, 1] += np.float32(0.5)

    blob = bytearray(64)
    blob[0:48] = w.astype("<f4").tobytes()
    blob[48:60] = b.astype("<f4").tobytes()

    np.save(os.path.join(out, "in0.npy"), x)
    np.save(os.path.join(out, "expected.npy"), y)
    np.save(os.path.join(out, "expected_wrong.npy"), wrong)
    with open(os.path.join(out, "tiny.bin"), "wb") as f:
        f.write(bytes(blob))
    make_pair(out)


if __name__ == "__main__":
    main()
