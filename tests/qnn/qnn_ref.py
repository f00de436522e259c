"""qnn_ref: a numpy reference of TVM's QNN integer arithmetic (TVM 0.7 to 0.19), written
from the rules of TVM's QNN canonicalization (src/relay/qnn), independently of relayc's C.

Everything integer is computed with Python integers (exact), then wrapped to the width
TVM's lowering computes in, so overflow behaves as TVM's int32 / int64 arithmetic:

  multiplier(d)        GetFixedPointMultiplierShift: d = m * 2^(s-31), m from
                       round-half-away(frexp(d).significand * 2^31); 2^31 -> 2^30, s+1.
  requantize           int32(x - izp); int64: << max(s,0), * m, + 2^(t-1) (TONEAREST:
                       2^(t-1)-1 below zero), >> t (floor), t = 31 + max(-s,0); low 32
                       bits; + ozp in int32; clip to int8/uint8 (int32: no clip). Scalar
                       input scale equal to the output scale: no multiply.
                       compute float32/float64: t = T(x) - T(izp); * T(in/out) unless
                       equal; + T(ozp); UPWARD floor(t + 0.5), TONEAREST
                       sign(t) * trunc(|t| + 0.5) (the additions in T).
  quantize             round-half-away(float32(x / scale)) + zp, clipped, cast.
  dequantize           float32(int32(x - zp)) * scale in float32.
  conv2d / dense       int32 sum of (x - zx) * (w - zw), padding = zx (contributes 0).
  add / subtract       requantize-or-upcast both to (os, oz) int32, +/-, -/+ oz, clip.
  mul                  (x - zx) * (y - zy) int32, requantize from float32(sx * sy).
  concatenate          requantize each input whose (scale, zp) differs from the output's.
  pools                max: max of the taps in the input; avg (int32): int32 sum of the
                       taps in the input, C division (toward zero) by the count.
"""

import math
from fractions import Fraction

import numpy as np

QRANGE = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2**31, 2**31 - 1)}


def wrap(v, bits):
    """Two's complement wrap of Python int(s) (numpy object arrays too)."""
    m = 1 << bits
    h = 1 << (bits - 1)
    return ((v + h) % m) - h


def round_half_away(fr):
    """std::round of an exact rational."""
    if fr >= 0:
        return int(math.floor(fr + Fraction(1, 2)))
    return -int(math.floor(-fr + Fraction(1, 2)))


def multiplier(d):
    """GetFixedPointMultiplierShift(d) -> (m, s)."""
    if d == 0.0:
        return 0, 0
    sig, e = math.frexp(d)
    q = round_half_away(Fraction(sig) * (1 << 31))
    if q == 1 << 31:
        q //= 2
        e += 1
    return q, e


def fpm(x, m, s, tonearest):
    """Fixed-point multiply of int array x (any shape) by scalar (m, s): int32 result."""
    x = np.asarray(x, dtype=object)
    t = 31 + max(-s, 0)
    if t > 62 or s > 62:
        return np.zeros(x.shape, dtype=np.int64)
    v = x
    if s > 0:
        v = wrap(v * (1 << s), 64)
    v = wrap(v * m, 64)
    r = 1 << (t - 1)
    if tonearest:
        v = wrap(v + np.where(v < 0, r - 1, r).astype(object), 64)
    else:
        v = wrap(v + r, 64)
    v = v >> t     # Python: floor, the arithmetic shift
    return wrap(v, 32).astype(np.int64)


def _along(vec, shape, axis):
    """A per-channel vector shaped to broadcast along axis (or a scalar)."""
    vec = np.asarray(vec).reshape(-1)
    if vec.size == 1 or len(shape) == 0:
        return vec.reshape(())
    sh = [1] * len(shape)
    sh[axis] = vec.size
    return vec.reshape(sh)


def _axis(axis, rank):
    if rank == 0:
        return 0
    return axis + rank if axis < 0 else axis


def clip_cast(v, dtype):
    """Clip int64 values to dtype and cast (int32: no clip, as TVM's requantize)."""
    v = np.asarray(v, dtype=np.int64)
    if dtype == "int32":
        return v.astype(np.int32)
    lo, hi = QRANGE[dtype]
    return np.clip(v, lo, hi).astype(dtype)


def requantize(x, iscale, izp, oscale, ozp, axis=-1, rounding="UPWARD", compute="int64",
               out_dtype="int8"):
    """qnn.requantize. iscale/izp: scalars (0-d) or per-channel vectors along axis."""
    x = np.asarray(x)
    iscale = np.asarray(iscale, dtype=np.float32)
    izp = np.asarray(izp, dtype=np.int64)
    ax = _axis(axis, x.ndim)
    scalar_scale = iscale.ndim == 0
    iscale = iscale.reshape(-1)
    izp = izp.reshape(-1)
    os_ = np.float32(oscale)
    nc = max(iscale.size, izp.size)
    tonearest = rounding == "TONEAREST"
    xi = x.astype(np.int64)
    if compute == "int64":
        d = wrap(xi.astype(object) - _along(izp, x.shape, ax).astype(object), 32)
        out = np.empty(x.shape, dtype=np.int64)
        if nc == 1:
            chans = [(Ellipsis, 0)]
        else:
            chans = [((slice(None),) * ax + (c,), c) for c in range(nc)]
        for sl, c in chans:
            si = iscale[c if iscale.size > 1 else 0]
            if scalar_scale and si == os_:
                m, s = 1 << 30, 1
            else:
                m, s = multiplier(float(si) / float(os_))
            part = d[sl] if nc > 1 else d
            r = fpm(part, m, s, tonearest)
            if nc > 1:
                out[sl] = r
            else:
                out = r
        out = wrap(out.astype(object) + int(ozp), 32).astype(np.int64)
        return clip_cast(out, out_dtype)
    T = np.float32 if compute == "float32" else np.float64
    t = xi.astype(T) - _along(izp.astype(T), x.shape, ax)
    mult = np.array([1.0 if (scalar_scale and iscale[0] == os_) else float(s) / float(os_)
                     for s in iscale], dtype=T)
    t = (t * _along(mult, x.shape, ax)).astype(T)
    t = (t + T(ozp)).astype(T)
    if tonearest:
        sg = np.where(t < 0, T(-1), T(1)).astype(T)
        b = ((t + T(0.5) * sg).astype(T) * sg).astype(T)
        q = np.trunc(b.astype(np.float64)) * sg.astype(np.float64)
    else:
        q = np.floor((t + T(0.5)).astype(T).astype(np.float64))
    q = np.clip(q, -2.0**31, 2.0**31 - 1)
    return clip_cast(q.astype(np.int64), out_dtype)


def quantize(x, scale, zp, axis=-1, out_dtype="int8"):
    x = np.asarray(x, dtype=np.float32)
    ax = _axis(axis, x.ndim)
    s = _along(np.asarray(scale, dtype=np.float32), x.shape, ax)
    z = _along(np.asarray(zp, dtype=np.int64), x.shape, ax)
    t = (x / s).astype(np.float32)
    td = t.astype(np.float64)
    r = np.sign(td) * np.floor(np.abs(td) + 0.5)          # exact for float32 values
    r = (r.astype(np.float32) + z.astype(np.float32)).astype(np.float32)
    lo, hi = QRANGE[out_dtype]
    r = np.where(r < np.float32(hi), r, np.float32(hi))   # TVM clip: min then max
    r = np.where(r > np.float32(lo), r, np.float32(lo))
    if out_dtype == "int32":
        r = np.where(r >= 2.0**31, 2**31 - 1, r)
    return r.astype(np.int64).astype(out_dtype)


def dequantize(x, scale, zp, axis=-1):
    x = np.asarray(x)
    ax = _axis(axis, x.ndim)
    s = _along(np.asarray(scale, dtype=np.float32), x.shape, ax)
    z = _along(np.asarray(zp, dtype=np.int64), x.shape, ax)
    d = wrap(x.astype(np.int64).astype(object) - z.astype(object), 32).astype(np.int64)
    return (d.astype(np.float32) * s).astype(np.float32)


def conv2d(x, w, zx, zw, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """qnn.conv2d, NCHW x OIHW -> int32 NCHW."""
    x = x.astype(np.int64) - int(zx)
    w = w.astype(np.int64) - int(zw)
    pt, pl, pb, pr = padding
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))     # the zero point: 0 after shift
    n, ci, h, wd = x.shape
    co, cig, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilation
    ho = (h - (dh * (kh - 1) + 1)) // sh + 1
    wo = (wd - (dw * (kw - 1) + 1)) // sw + 1
    cog = co // groups
    y = np.zeros((n, co, ho, wo), dtype=np.int64)
    for g in range(groups):
        xg = x[:, g * cig:(g + 1) * cig]
        wg = w[g * cog:(g + 1) * cog]
        for ky in range(kh):
            for kx in range(kw):
                patch = xg[:, :, ky * dh: ky * dh + sh * (ho - 1) + 1: sh,
                           kx * dw: kx * dw + sw * (wo - 1) + 1: sw]
                y[:, g * cog:(g + 1) * cog] += np.einsum("nchw,oc->nohw", patch,
                                                         wg[:, :, ky, kx])
    return wrap(y.astype(object), 32).astype(np.int32)


def dense(x, w, zx, zw):
    y = (x.astype(np.int64) - int(zx)) @ (w.astype(np.int64) - int(zw)).T
    return wrap(y.astype(object), 32).astype(np.int32)


def bias_add(acc, bias, axis=1):
    b = _along(np.asarray(bias, dtype=np.int64), acc.shape, _axis(axis, acc.ndim))
    return wrap(acc.astype(np.int64).astype(object) + b.astype(object), 32).astype(np.int32)


def requantize_or_upcast(x, s, z, os_, oz):
    if np.float32(s) == np.float32(os_) and int(z) == int(oz):
        return x.astype(np.int64)
    return requantize(x, np.float32(s), z, os_, oz, out_dtype="int32").astype(np.int64)


def add(x, y, sx, zx, sy, zy, so, zo, subtract=False):
    a = requantize_or_upcast(x, sx, zx, so, zo)
    b = requantize_or_upcast(y, sy, zy, so, zo)
    r = (a - b + int(zo)) if subtract else (a + b - int(zo))
    r = wrap(r.astype(object), 32).astype(np.int64)
    lo, hi = QRANGE[str(x.dtype)]
    return np.clip(r, lo, hi).astype(x.dtype)


def mul(x, y, sx, zx, sy, zy, so, zo):
    a = x.astype(np.int64) - int(zx)
    b = y.astype(np.int64) - int(zy)
    p = wrap((a * b).astype(object), 32).astype(np.int64)
    ps = np.float32(np.float32(sx) * np.float32(sy))
    return requantize(p, ps, 0, so, zo, out_dtype=str(x.dtype))


def concatenate(xs, scales, zps, so, zo, axis=0):
    parts = []
    for x, s, z in zip(xs, scales, zps):
        if np.float32(s) == np.float32(so) and int(z) == int(zo):
            parts.append(x)
        else:
            parts.append(requantize(x, np.float32(s), z, so, zo, out_dtype=str(x.dtype)))
    return np.concatenate(parts, axis=axis)


def _windows(h, k, s, d, p0, p1, ceil_mode=False):
    eff = d * (k - 1) + 1
    span = h + p0 + p1 - eff
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= h + p0:
        out -= 1
    return out


def pool2d(x, kind, pool, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
           ceil_mode=False, count_include_pad=False):
    """Integer max / avg pooling, NCHW, as TVM's topi computes it."""
    n, c, h, w = x.shape
    pt, pl, pb, pr = padding
    kh, kw = pool
    sh, sw = strides
    dh, dw = dilation
    ho = _windows(h, kh, sh, dh, pt, pb, ceil_mode)
    wo = _windows(w, kw, sw, dw, pl, pr, ceil_mode)
    xi = x.astype(np.int64)
    y = np.zeros((n, c, ho, wo), dtype=np.int64)
    tmin = np.iinfo(x.dtype).min
    for oy in range(ho):
        for ox in range(wo):
            rows = [oy * sh - pt + ky * dh for ky in range(kh)]
            cols = [ox * sw - pl + kx * dw for kx in range(kw)]
            ins = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
            if kind == "max":
                y[:, :, oy, ox] = (np.max(np.stack([xi[:, :, r, q] for r, q in ins]), 0)
                                   if ins else np.full((n, c), tmin))
            else:
                if count_include_pad:
                    cnt = (len([r for r in rows if r < h + pb]) *
                           len([q for q in cols if q < w + pr]))
                else:
                    cnt = len(ins)
                s = sum(xi[:, :, r, q] for r, q in ins) if ins else np.zeros((n, c), np.int64)
                s = wrap(np.asarray(s).astype(object), 32).astype(np.int64)
                if cnt > 0:   # C division: toward zero
                    y[:, :, oy, ox] = np.sign(s) * (np.abs(s) // cnt)
                else:
                    y[:, :, oy, ox] = 0
    return y.astype(x.dtype)


def clip(x, lo, hi):
    """clip of an integer tensor: bounds truncated to the type, max(min(x, hi), lo)."""
    info = np.iinfo(x.dtype)
    lo = int(max(min(math.trunc(lo), info.max), info.min))
    hi = int(max(min(math.trunc(hi), info.max), info.min))
    return np.maximum(np.minimum(x.astype(np.int64), hi), lo).astype(x.dtype)
