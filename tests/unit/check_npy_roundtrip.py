#!/usr/bin/env python3
"""Checks that numpy reads a .npy file written by relayc's npy_encode.

usage: check_npy_roundtrip.py PATH [--dtype DTYPE] [--shape D0,D1,...] [--no-pattern]

Checks: format version 1.0, data offset a multiple of 64, header ending in
'\\n', numpy.load succeeds, dtype and shape (when given) match, and the values
follow the pattern that tests/unit/test_tensor_io.c writes (element i of the
flattened array; see fill_pattern() there). Exit status 0 when all hold.
"""
import argparse
import struct
import sys

import numpy as np


def pattern(dtype, n):
    i = np.arange(n, dtype=np.int64)
    if dtype == np.float32 or dtype == np.float64:
        return (i * 0.25 - 1.5).astype(dtype)
    if dtype == np.int8:
        return ((i * 37 + 11) % 256 - 128).astype(dtype)
    if dtype == np.uint8:
        return ((i * 37 + 11) % 256).astype(dtype)
    if dtype == np.int32:
        return (i * 65537 - 1000).astype(dtype)
    if dtype == np.int64:
        return i * 1099511627777 - 7
    if dtype == np.bool_:
        return i % 3 == 0
    raise ValueError("no pattern for dtype %s" % dtype)


def check(path, want_dtype, want_shape, check_values):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY":
        return "no .npy magic"
    if raw[6:8] != b"\x01\x00":
        return "version %d.%d, expected 1.0" % (raw[6], raw[7])
    (hlen,) = struct.unpack("<H", raw[8:10])
    if (10 + hlen) % 64 != 0:
        return "data starts at byte %d, not a multiple of 64" % (10 + hlen)
    if raw[10 + hlen - 1:10 + hlen] != b"\n":
        return "header does not end in a newline"
    arr = np.load(path, allow_pickle=False)
    if want_dtype is not None and arr.dtype != np.dtype(want_dtype):
        return "dtype %s, expected %s" % (arr.dtype, np.dtype(want_dtype))
    if want_shape is not None and arr.shape != want_shape:
        return "shape %s, expected %s" % (arr.shape, want_shape)
    if check_values:
        want = pattern(arr.dtype.type, arr.size)
        got = arr.ravel()
        if not np.array_equal(got, want):
            bad = int(np.flatnonzero(got != want)[0])
            return "element %d is %r, expected %r" % (bad, got[bad], want[bad])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="+")
    ap.add_argument("--dtype")
    ap.add_argument("--shape", help="comma-separated dims; empty for a scalar")
    ap.add_argument("--no-pattern", action="store_true")
    a = ap.parse_args()
    shape = None
    if a.shape is not None:
        shape = tuple(int(d) for d in a.shape.split(",") if d.strip())
    status = 0
    for p in a.path:
        why = check(p, a.dtype, shape, not a.no_pattern)
        if why:
            print("%s: %s" % (p, why))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
