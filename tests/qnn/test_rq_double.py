#!/usr/bin/env python3
"""test_rq_double.py: the double-precision requantize of the x86 kernels, against TVM's integer
arithmetic, for every accumulator value.

emit/kernel_qconv.c (rq_double_exact, put_store) requantizes an int32 accumulator v with
multiplier m and shift s in [-31, -1] as

    v clipped to [-C, C], C = 2^22 - 1
    t = (double)v * m + 1.5 * 2^(52 + S)            S = 31 - s
    result = the low 32 bits of t's representation, as int32 (t's unit is 2^S: its mantissa
             holds 2^51 plus v * m / 2^S rounded to the nearest integer)

when every channel passes rq_double_exact: m > 0, tz(m) + 22 < S (no ties), and the clip
changes no output (at +-C the requantized value plus the output zero point is already at the
output's clip). TVM's (and rq_fpm_h's) result is floor((v * m + 2^(S-1) - [tonearest and
v * m < 0]) / 2^S), in exact integers here (numpy int64; |v * m| < 2^53).

For parameter sets the rule accepts (random ones and ones at each of its limits), the final
output (+ zero point, clipped) must equal TVM's for every v in [-C - 2^16, C + 2^16] and for
random int32 v beyond. For sets it rejects because of ties (power-of-two multipliers), the
double result must differ somewhere: the rule is needed, and this test can fail.

Prints TAP.
"""
import sys

import numpy as np

C = 2**22 - 1


def floor_shr(a, k):
    return a >> k  # numpy's >> on int64 rounds down for negative values too


def rq_exact(v, m, s, tonearest):
    """rq_fpm_h / TVM's fixed-point multiply, in exact int64 arithmetic (|v| <= 2^22 + 2^16
    or any int32 v: |v * m| < 2^62)."""
    p = v.astype(np.int64) * np.int64(m)
    p = p + (np.int64(1) << np.int64(30 - s)) - (np.int64(tonearest) & (p < 0).astype(np.int64))
    return floor_shr(floor_shr(p, 32), -1 - s)


def rq_double(v, m, s):
    vc = np.clip(v.astype(np.int64), -C, C).astype(np.float64)
    qk = 6755399441055744.0 * 4294967296.0 * float(1 << (-1 - s))  # 1.5 * 2^52 * 2^S
    t = vc * float(m) + qk  # two roundings here, one under FMA: the product is exact
    low = t.view(np.int64) & np.int64(0xFFFFFFFF)
    return np.where(low >= 2**31, low - 2**32, low)


def tz(m):
    n = 0
    while not (m >> n) & 1:
        n += 1
    return n


def accepted(m, s, yzp, ylo, yhi, tonearest):
    """rq_double_exact's rule for one channel (emit/kernel_qconv.c)."""
    S = 31 - s
    if m <= 0 or tz(m) + 22 >= S:
        return False
    hi = int(rq_exact(np.array([C]), m, s, tonearest)[0]) + yzp
    lo = int(rq_exact(np.array([-C]), m, s, tonearest)[0]) + yzp
    return hi >= yhi and lo <= ylo


def out(r, yzp, ylo, yhi):
    return np.clip(r + yzp, ylo, yhi)


def main():
    rng = np.random.default_rng(20261207)
    dense_v = np.arange(-C - 2**16, C + 2**16 + 1, dtype=np.int64)
    wide_v = np.concatenate([rng.integers(-2**31, 2**31, 200000, dtype=np.int64),
                             np.array([-2**31, 2**31 - 1], dtype=np.int64)])
    cases = []
    # random multipliers as TVM writes them (frexp of a positive scale: m in [2^30, 2^31))
    for _ in range(24):
        cases.append((int(rng.integers(2**30, 2**31)), int(rng.integers(-14, 0)),
                      int(rng.integers(-20, 21)), int(rng.integers(0, 2))))
    # at the rule's limits: tz(m) = S - 23 (the most factors of 2 it allows), the smallest
    # S (s = -1), multipliers below 2^30, a fused relu's clip
    for s in (-1, -3, -8):
        S = 31 - s
        odd = int(rng.integers(2**(30 - (S - 23)) // 2, 2**(31 - (S - 23)) // 2)) * 2 + 1
        cases.append((odd << (S - 23), s, 0, 0))
        cases.append((odd << (S - 23), s, 3, 1))
    cases.append((1234567, -1, 0, 0))
    cases.append((2**31 - 1, -10, -128, 1))
    n = 0
    fails = 0
    lines = []
    for m, s, yzp, tn in cases:
        for ylo, yhi in ((-128, 127), (yzp if -128 <= yzp <= 127 else -128, 127)):
            if not accepted(m, s, yzp, ylo, yhi, tn):
                continue
            n += 1
            ok = True
            for v in (dense_v, wide_v):
                want = out(rq_exact(v, m, s, tn), yzp, ylo, yhi)
                got = out(rq_double(v, m, s), yzp, ylo, yhi)
                bad = np.nonzero(want != got)[0]
                if len(bad):
                    ok = False
                    i = bad[0]
                    lines.append(f"not ok {n} - m {m} s {s} zp {yzp} clip [{ylo}, {yhi}] "
                                 f"tonearest {tn}: v {v[i]} gives {got[i]}, TVM {want[i]}")
                    break
            if ok:
                lines.append(f"ok {n} - m {m} s {s} zp {yzp} clip [{ylo}, {yhi}] tonearest {tn}: "
                             f"every v equal")
            else:
                fails += 1
    # the tie rule is needed: a power-of-two multiplier (tz = 30) has ties in range
    for m, s in ((2**30, -1), (2**30, -6), (3 << 28, -2)):
        n += 1
        v = dense_v
        differs = np.count_nonzero(rq_exact(v, m, s, 0) != rq_double(v, m, s))
        rejected = not accepted(m, s, 0, -2**31, 2**31 - 1, 0) and tz(m) + 22 >= 31 - s
        if differs and rejected:
            lines.append(f"ok {n} - m {m} s {s} (ties): rejected, and the double result differs "
                         f"for {differs} v")
        else:
            fails += 1
            lines.append(f"not ok {n} - m {m} s {s} (ties): rejected {rejected}, differs for "
                         f"{differs} v")
    print(f"1..{n}")
    print("\n".join(lines))
    print(f"# {n - fails} passed, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
