#!/usr/bin/env python3
"""Makes the small .npy files that tests/unit/test_tensor_io.c reads.

Run from anywhere: python3 tests/unit/data/make_npy.py
The files are written beside this script. The C test hard-codes what each one
holds, so change both together. Files named bad_* must be refused.
"""
import os

import numpy as np
from numpy.lib import format as npf

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, arr, version=None):
    with open(os.path.join(HERE, name), "wb") as f:
        npf.write_array(f, arr, version=version, allow_pickle=False)


def main():
    f4 = (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3)

    # Accepted: every supported dtype, a scalar, a zero-size array, rank 8, versions 2.0 and 3.0.
    save("f4_2x3.npy", f4)
    save("f8_3.npy", np.array([0.1, -2.5, 1e300], dtype=np.float64))
    save("i1_4.npy", np.array([-128, -1, 0, 127], dtype=np.int8))
    save("u1_4.npy", np.array([0, 1, 128, 255], dtype=np.uint8))
    save("i4_2x2.npy", np.array([[-2**31, -1], [0, 2**31 - 1]], dtype=np.int32))
    save("i8_3.npy", np.array([-2**63, 0, 2**63 - 1], dtype=np.int64))
    save("b1_5.npy", np.array([True, False, True, True, False]))
    save("scalar_f4.npy", np.array(3.5, dtype=np.float32))
    save("empty_f4_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    save("rank8_f4.npy", np.arange(8, dtype=np.float32).reshape(1, 2, 1, 2, 1, 2, 1, 1))
    save("v2_f4_2x3.npy", f4, version=(2, 0))
    save("v3_f4_2x3.npy", f4, version=(3, 0))

    # Refused, each with its own message.
    save("bad_fortran_f4_3x4.npy", np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)))
    save("bad_be_f4_3.npy", np.array([1, 2, 3], dtype=">f4"))
    save("bad_f2_3.npy", np.array([1, 2, 3], dtype=np.float16))
    save("bad_u2_3.npy", np.array([1, 2, 3], dtype=np.uint16))
    save("bad_c8_2.npy", np.array([1 + 2j, 3], dtype=np.complex64))
    save("bad_rank9_f4.npy", np.zeros((1,) * 9, dtype=np.float32))
    save("bad_struct_2.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    save("bad_U3_2.npy", np.array(["abc", "de"], dtype="<U3"))


if __name__ == "__main__":
    main()
