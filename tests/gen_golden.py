#!/usr/bin/python3
"""Generate relayc's golden test cases into tests/golden/<case>/.

Each case directory holds
  model.json          Relay JSON written by tests/relaywriter.py
  model.params        (params-file variants) weights bound by parameter name
  input_<name>.npy    one per runtime input, in the parameter's shape
  expected_<k>.npy    output k
  meta.json           tvm_version, function, inputs, outputs, ops, tolerance ...

Expected outputs are computed by the reference evaluator below, in float64
with numpy and torch.nn.functional, from the float32 inputs and weights, then
cast to the output dtype.  Nothing here uses relayc.  The evaluator is run a
second time in float32 to record how much of the tolerance a plain float32
implementation uses (tolerance.float32_error_ratio); a case whose ratio is
above 0.5 is an error.

Usage: /usr/bin/python3 tests/gen_golden.py [--out DIR] [--only SUBSTR] [--list]
                                            [--check]
The output is deterministic (fixed seeds); re-running rewrites the same bytes.
"""

import argparse
import json
import math
import os
import shutil
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import relaywriter as rw  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
DIALECTS = ["0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.12.0", "0.16.0", "0.18.0",
            "0.19.0"]


# ---------------------------------------------------------------------------
# Reference evaluator (float64 numpy / torch; independent of relayc)
# ---------------------------------------------------------------------------

def _pad4(p):
    p = list(p)
    return {1: lambda: p * 4, 2: lambda: [p[0], p[1], p[0], p[1]],
            4: lambda: p}[len(p)]()


def _to_nchw(x, layout):
    return np.transpose(x, [layout.index(c) for c in "NCHW"])


def _from_nchw(x, layout):
    return np.transpose(x, ["NCHW".index(c) for c in layout])


def ref_conv2d(x, w, a):
    xn = _to_nchw(x, a["data_layout"])
    wo = np.transpose(w, [a["kernel_layout"].index(c) for c in "OIHW"])
    pt, pl, pb, pr = _pad4(a["padding"])
    xp = np.pad(xn, [(0, 0), (0, 0), (pt, pb), (pl, pr)])
    y = F.conv2d(torch.from_numpy(np.ascontiguousarray(xp)),
                 torch.from_numpy(np.ascontiguousarray(wo)),
                 stride=tuple(a["strides"]), dilation=tuple(a["dilation"]),
                 groups=int(a["groups"])).numpy()
    return _from_nchw(y, a["out_layout"] or a["data_layout"])


def ref_pool2d(x, a, kind, v):
    lay = a["layout"]
    xn = _to_nchw(x, lay)
    n, c, h, w = xn.shape
    kh, kw = a["pool_size"]
    sh, sw = a["strides"]
    dh, dw = (a.get("dilation") or [1, 1]) if v >= (0, 8) else [1, 1]
    pt, pl, pb, pr = _pad4(a["padding"])
    ceil = bool(a["ceil_mode"])

    def osz(size, k, s, d, p0, p1):
        num = size + p0 + p1 - ((k - 1) * d + 1)
        return (-(-num // s) if ceil else num // s) + 1
    oh, ow = osz(h, kh, sh, dh, pt, pb), osz(w, kw, sw, dw, pl, pr)
    out = np.empty((n, c, oh, ow), dtype=xn.dtype)
    for i in range(oh):
        rows = [i * sh - pt + r * dh for r in range(kh)]
        vr = [r for r in rows if 0 <= r < h]
        nr = sum(1 for r in rows if -pt <= r < h + pb)
        for j in range(ow):
            cols = [j * sw - pl + q * dw for q in range(kw)]
            vc = [q for q in cols if 0 <= q < w]
            nc = sum(1 for q in cols if -pl <= q < w + pr)
            if not vr or not vc:
                raise ValueError("pooling window with no input element")
            win = xn[:, :, vr][:, :, :, vc]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                if a["count_include_pad"]:
                    if ceil and (nr != kh or nc != kw):
                        raise ValueError("avg pool count_include_pad with a "
                                         "ceil_mode window past the padding: "
                                         "TVM versions disagree")
                    cnt = nr * nc
                else:
                    cnt = len(vr) * len(vc)
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return _from_nchw(out, lay)


def _int_window_avg(win):
    """TVM's integer average: the int32 sum (wrapping), divided by the count
    rounding toward zero."""
    s = win.astype(np.int64).sum(axis=(2, 3)).astype(np.int32).astype(np.int64)
    cnt = win.shape[2] * win.shape[3]
    return (np.sign(s) * (np.abs(s) // cnt)).astype(win.dtype)


def ref_adaptive_avg(x, a, kind="avg"):
    lay = a["layout"]
    xn = _to_nchw(x, lay)
    n, c, h, w = xn.shape
    oh, ow = a["output_size"] if len(a["output_size"]) == 2 else a["output_size"] * 2
    out = np.empty((n, c, oh, ow), dtype=xn.dtype)
    for i in range(oh):
        h0, h1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            win = xn[:, :, h0:h1, w0:w1]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            elif xn.dtype.kind in "iu":
                out[:, :, i, j] = _int_window_avg(win)
            else:
                out[:, :, i, j] = win.mean(axis=(2, 3))
    return _from_nchw(out, lay)


def ref_reshape_shape(shape, newshape, reverse):
    """Independent re-statement of TVM's reshape special values."""
    src_shape = list(shape)[::-1] if reverse else list(shape)
    ns = list(newshape)[::-1] if reverse else list(newshape)
    out, k, i, infer = [], 0, 0, None
    while i < len(ns):
        s = ns[i]
        if s > 0:
            out.append(s)
            k += 1
        elif s == 0:
            out.append(src_shape[k])
            k += 1
        elif s == -1:
            infer = len(out)
            out.append(1)
            k += 1
        elif s == -2:
            out += src_shape[k:]
            k = len(src_shape)
        elif s == -3:
            out.append(src_shape[k] * src_shape[k + 1])
            k += 2
        elif s == -4:
            d = src_shape[k]
            k += 1
            p, q = ns[i + 1], ns[i + 2]
            i += 2
            p = d // q if p == -1 else p
            q = d // p if q == -1 else q
            out += [p, q]
        i += 1
    if infer is not None:
        out[infer] = int(np.prod(src_shape)) // int(np.prod(out))
    return out[::-1] if reverse else out


def ref_strided_slice(x, a):
    n = x.ndim
    axes = a.get("axes")
    begin, end = list(a["begin"]), list(a["end"])
    strides = list(a["strides"] or [1])
    if axes is None:
        axes = list(range(len(begin)))
    sl = [slice(None)] * n
    for j, ax in enumerate(axes):
        ax = ax % n
        dim = x.shape[ax]
        b = begin[j]
        e = end[j] if j < len(end) else dim
        s = strides[j] if j < len(strides) else (strides[0] if len(strides) == 1
                                                  else 1)
        if a.get("slice_mode", "end") == "size":
            b = b + dim if b < 0 else b
            e = dim if e < 0 else b + e
            s = 1
        b = b + dim if b < 0 else b
        e = e + dim if e < 0 else e
        b, e = min(max(b, 0), dim), min(max(e, 0), dim)
        assert s > 0
        sl[ax] = slice(b, e, s)
    return x[tuple(sl)]


def _f(x):
    return torch.from_numpy(np.ascontiguousarray(x))


UNARY = {
    "nn.relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "negative": np.negative, "abs": np.abs,
    "erf": lambda x: torch.erf(_f(x)).numpy(),
    "copy": lambda x: x.copy(),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "log2": np.log2, "log10": np.log10,
}
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "divide": np.divide, "power": np.power, "maximum": np.maximum,
          "minimum": np.minimum}


def _pool1d_as_2d(a):
    """Attrs of a 1-D pooling as those of the 2-D pooling over a height of 1."""
    p = list(a["padding"])
    p = p * 2 if len(p) == 1 else p
    return {"pool_size": [1, a["pool_size"][0]], "strides": [1, a["strides"][0]],
            "dilation": [1, (a.get("dilation") or [1])[0]], "padding": [0, p[0], 0, p[1]],
            "layout": "NCHW", "ceil_mode": a["ceil_mode"],
            "count_include_pad": a.get("count_include_pad", False),
            "output_size": [1] + list(a.get("output_size") or [])}


def _ncw(x, layout):
    return np.transpose(x, [layout.index(c) for c in "NCW"])


def _from_ncw(x, layout):
    return np.transpose(x, ["NCW".index(c) for c in layout])


def _norm(x, axes, eps):
    m = x.mean(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(axis=axes, keepdims=True) + eps)


def _affine(y, gamma, beta, axis, a):
    shp = [1] * y.ndim
    shp[axis] = -1
    if a["scale"]:
        y = y * gamma.reshape(shp)
    if a["center"]:
        y = y + beta.reshape(shp)
    return y


def ref_conv_transpose(op, x, w, a, v):
    """nn.conv2d_transpose / nn.conv1d_transpose by torch's conv_transpose2d without
    padding, then cropped by the (possibly asymmetric) padding and extended by
    output_padding with rows no input reaches (TVM's output size)."""
    d1 = op == "nn.conv1d_transpose"
    dl = a["data_layout"]
    kl = rw.convt_kernel_layout(op, a["kernel_layout"], v)
    if d1:
        x = _ncw(x, dl)[:, :, None, :]
        w = np.transpose(w, [kl.index(c) for c in "IOW"])[:, :, None, :]
        st, dil, op_ = [1] + list(a["strides"]), [1] + list(a["dilation"]), \
            [0] + list(a["output_padding"])
        p = list(a["padding"])
        p = p * 2 if len(p) == 1 else p
        pad = [0, p[0], 0, p[1]]
    else:
        x = _to_nchw(x, dl)
        w = np.transpose(w, [kl.index(c) for c in "IOHW"])
        st, dil, op_ = list(a["strides"]), list(a["dilation"]), list(a["output_padding"])
        pad = _pad4(a["padding"])
    t = lambda arr: torch.from_numpy(np.ascontiguousarray(arr))  # noqa: E731
    full = F.conv_transpose2d(t(x), t(w.astype(x.dtype)), stride=tuple(st),
                              dilation=tuple(dil), groups=int(a["groups"])).numpy()
    full = np.pad(full, [(0, 0), (0, 0), (0, op_[0]), (0, op_[1])])
    ho = full.shape[2] - op_[0] - pad[0] - pad[2] + op_[0]
    wo = full.shape[3] - op_[1] - pad[1] - pad[3] + op_[1]
    y = full[:, :, pad[0]:pad[0] + ho, pad[1]:pad[1] + wo]
    ol = a["out_layout"] or dl
    return _from_ncw(y[:, :, 0, :], ol) if d1 else _from_nchw(y, ol)


def _resize_matrix(n_in, n_out, a, axis):
    """The [n_out][n_in] interpolation matrix of one axis of TOPI's resize2d: the
    coordinate in float32 as TOPI computes it, the weights in float64."""
    f = np.float32
    coord, m = a["coordinate_transformation_mode"], a["method"]
    o = np.arange(n_out)
    of = o.astype(f)
    scale = f(n_in) / f(n_out)
    if coord == "half_pixel" or (coord == "pytorch_half_pixel" and n_out > 1):
        v = (of + f(0.5)) * scale - f(0.5)
    elif coord == "align_corners":   # TVM divides by zero when n_out == 1; taken as 0
        v = (f(n_in - 1) / f(max(n_out - 1, 1))) * of if n_out > 1 else np.zeros(n_out, f)
    elif coord == "asymmetric":
        v = scale * of
    elif coord == "tf_half_pixel_for_nn":
        v = (of + f(0.5)) * scale
    else:
        v = np.zeros(n_out, f)
    R = np.zeros((n_out, n_in))
    if m == "nearest_neighbor":
        if coord == "asymmetric" and n_out % n_in == 0 and \
                n_out // n_in <= 1 / (1e-5 * n_in + 1e-5):
            idx = o // (n_out // n_in)                  # TOPI's integer division
        else:
            r = a["rounding_method"] or ("round" if coord == "align_corners" else "floor")
            idx = {"round": lambda: np.sign(v) * np.floor(np.abs(v) + f(0.5)),
                   "floor": lambda: np.floor(v + f(1e-5)),
                   "ceil": lambda: np.ceil(v - f(1e-5)),
                   "round_prefer_floor": lambda: np.ceil(v - f(0.5)),
                   "round_prefer_ceil": lambda: np.floor(v + f(0.5))}[r]()
        R[o, np.clip(idx.astype(np.int64), 0, n_in - 1)] = 1
        return R
    i0 = np.floor(v).astype(np.int64)
    t = (v - np.floor(v)).astype(np.float64)
    if m == "linear":
        taps, ws = [0, 1], [1 - t, t]
    else:
        al = a["cubic_alpha"]
        taps = [-1, 0, 1, 2]
        ws = [al * (t ** 3 - 2 * t ** 2 + t), (al + 2) * t ** 3 - (al + 3) * t ** 2 + 1,
              -(al + 2) * t ** 3 + (2 * al + 3) * t ** 2 - al * t, -al * t ** 3 + al * t ** 2]
        if a["cubic_exclude"]:
            ws = [np.where((i0 + k < 0) | (i0 + k >= n_in), 0.0, wk) for k, wk in zip(taps, ws)]
            tot = sum(ws)
            ws = [wk / tot for wk in ws]
    for k, wk in zip(taps, ws):
        np.add.at(R, (o, np.clip(i0 + k, 0, n_in - 1)), wk)
    return R


def ref_resize2d(x, a):
    """image.resize2d (TOPI): separable, y = Ry x Rx^T per plane; integers truncated."""
    xn = _to_nchw(x, a["layout"])
    ry = _resize_matrix(xn.shape[2], a["size"][0], a, 0)
    rx = _resize_matrix(xn.shape[3], a["size"][1], a, 1)
    y = np.einsum("ah,nchw,bw->ncab", ry, xn.astype(np.float64), rx)
    y = _from_nchw(y, a["layout"])
    if x.dtype.kind in "iu":
        return np.trunc(y).astype(x.dtype)
    return y.astype(x.dtype) if x.dtype != np.float64 else y


def ref_tensor_op(op, vals, a, v, dt):
    """The operators of relaywriter's _TENSOR_OPS (numpy / torch)."""
    x = vals[0] if vals else None
    ew = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "sign": np.sign,
          "round": lambda t: np.sign(t) * np.floor(np.abs(t) + 0.5),  # half away from 0
          "logical_not": np.logical_not, "equal": np.equal, "not_equal": np.not_equal,
          "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
          "greater_equal": np.greater_equal, "logical_and": np.logical_and,
          "logical_or": np.logical_or, "logical_xor": np.logical_xor}
    if op in ew:
        return ew[op](*vals).astype(x.dtype if op in rw._EW_UNARY else bool)
    if op == "nn.conv1d":
        lay = a["data_layout"]
        w = np.transpose(vals[1], [a["kernel_layout"].index(c) for c in "OIW"])
        p = list(a["padding"])
        p = p * 2 if len(p) == 1 else p
        xp = np.pad(_ncw(x, lay), [(0, 0), (0, 0), (p[0], p[1])])
        y = F.conv1d(_f(xp), _f(w), stride=a["strides"][0], dilation=a["dilation"][0],
                     groups=int(a["groups"])).numpy()
        return _from_ncw(y, a.get("out_layout") or lay)
    if op in ("nn.max_pool1d", "nn.avg_pool1d", "nn.adaptive_avg_pool1d"):
        lay = a["layout"]
        xn = _ncw(x, lay)[:, :, None, :]
        a2 = _pool1d_as_2d(dict(a, padding=a.get("padding", [0]), ceil_mode=a.get(
            "ceil_mode", False), pool_size=a.get("pool_size", [1]),
            strides=a.get("strides", [1])))
        if op == "nn.adaptive_avg_pool1d":
            if len(a2["output_size"]) == 1:
                a2["output_size"] = [1, xn.shape[3]]
            y = ref_adaptive_avg(xn, a2)
        else:
            y = ref_pool2d(xn, a2, "max" if op == "nn.max_pool1d" else "avg", v)
        return _from_ncw(y[:, :, 0, :], lay)
    if op in ("full", "full_like"):
        fill = vals[-1]
        shape = x.shape if op == "full_like" else tuple(a["shape"])
        dtype = x.dtype if op == "full_like" else (a["dtype"] or fill.dtype)
        out = np.full(shape, np.asarray(fill).astype(dtype), dtype=dtype)
        return out.astype(dt) if out.dtype.kind == "f" else out
    if op in ("zeros", "ones"):
        out = (np.ones if op == "ones" else np.zeros)(tuple(a["shape"]), a["dtype"])
        return out.astype(dt) if out.dtype.kind == "f" else out
    if op in ("zeros_like", "ones_like"):
        return (np.ones_like if op == "ones_like" else np.zeros_like)(x)
    if op == "broadcast_to":
        return np.broadcast_to(x, tuple(a["shape"])).copy()
    if op == "broadcast_to_like":
        return np.broadcast_to(x, np.broadcast_shapes(x.shape, vals[1].shape)).copy()
    if op == "collapse_sum_like":
        tgt = vals[1].shape
        lead = x.ndim - len(tgt)
        y = x.sum(axis=tuple(range(lead))) if lead else x
        axes = tuple(i for i, d in enumerate(tgt) if d == 1 and y.shape[i] != 1)
        return y.sum(axis=axes, keepdims=True) if axes else y
    if op == "reshape_like":
        ys = vals[1].shape
        le = x.ndim if a["lhs_end"] is None else a["lhs_end"] + (x.ndim if a["lhs_end"] < 0 else 0)
        re = len(ys) if a["rhs_end"] is None else a["rhs_end"] + (len(ys) if a["rhs_end"] < 0 else 0)
        return x.reshape(x.shape[:a["lhs_begin"]] + ys[a["rhs_begin"]:re] + x.shape[le:])
    if op == "stack":
        return np.stack(list(x), axis=a["axis"])
    if op == "take":
        mode = {"clip": "clip", "wrap": "wrap", "fast": "raise"}[a["mode"]]
        ind = vals[1].astype(np.int64)
        bd = a.get("batch_dims") or 0
        if bd == 0 or a["axis"] is None:
            return np.take(x, ind, axis=a["axis"], mode=mode)
        bd += ind.ndim if bd < 0 else 0
        ax = a["axis"] % x.ndim
        parts = [np.take(x[i], ind[i], axis=ax - bd, mode=mode)
                 for i in np.ndindex(*x.shape[:bd])]
        return np.stack(parts).reshape(x.shape[:bd] + parts[0].shape)
    if op == "gather":
        return torch.gather(torch.from_numpy(x), a["axis"],
                            torch.from_numpy(vals[1].astype(np.int64))).numpy()
    if op == "where":
        return np.where(x != 0, vals[1], vals[2])
    if op in ("argmax", "argmin"):
        n = x.ndim
        axes = set(range(n)) if a["axis"] is None else {i % n for i in a["axis"]}
        if a["exclude"]:
            axes = set(range(n)) - axes
        kept = [d for d in range(n) if d not in axes]
        red = sorted(axes)
        t = np.transpose(x, kept + red).reshape([x.shape[d] for d in kept] + [-1])
        f = np.argmax if op == "argmax" else np.argmin
        if a.get("select_last_index"):
            r = t.shape[-1] - 1 - f(t[..., ::-1], axis=-1)
        else:
            r = f(t, axis=-1)
        if a["keepdims"]:
            r = r.reshape([1 if d in axes else x.shape[d] for d in range(n)])
        return r.astype(np.int32)
    if op == "cumsum":
        ax = a["axis"]
        out_dt = a["dtype"] or x.dtype
        if np.dtype(out_dt).kind == "f" and x.dtype.kind == "f":
            out_dt = x.dtype                         # float64 in the reference run
        t = x.reshape(-1) if ax is None else x
        ax = 0 if ax is None else ax % x.ndim
        acc = np.int64 if np.dtype(out_dt).kind in "iub" else out_dt
        y = np.cumsum(t.astype(out_dt).astype(acc), axis=ax)
        if a["exclusive"]:
            y = np.concatenate([np.zeros_like(np.take(y, [0], axis=ax)),
                                np.take(y, range(t.shape[ax] - 1), axis=ax)], axis=ax)
        return y.astype(out_dt)
    if op == "prod":
        ax = a["axis"]
        axes = set(range(x.ndim)) if ax is None else {i % x.ndim for i in ax}
        if a["exclude"]:
            axes = set(range(x.ndim)) - axes
        return np.prod(x, axis=tuple(sorted(axes)), keepdims=a["keepdims"])
    if op == "nn.adaptive_max_pool2d":
        return ref_adaptive_avg(x, dict(a, output_size=a["output_size"] or [
            x.shape[a["layout"].index("H")], x.shape[a["layout"].index("W")]]), "max")
    if op == "nn.adaptive_max_pool1d":
        xn = _ncw(x, a["layout"])[:, :, None, :]
        osz = (a["output_size"] or [xn.shape[3]])[0]
        y = ref_adaptive_avg(xn, {"layout": "NCHW", "output_size": [1, osz]}, "max")
        return _from_ncw(y[:, :, 0, :], a["layout"])
    if op == "reverse":
        return np.flip(x, axis=a["axis"]).copy()
    if op == "tile":
        return np.tile(x, a["reps"])
    if op == "repeat":
        return np.repeat(x, a["repeats"], axis=a["axis"])
    if op in ("nn.depth_to_space", "nn.space_to_depth"):
        xn = _to_nchw(x, a["layout"])
        bs = a["block_size"]
        if op == "nn.space_to_depth":
            y = F.pixel_unshuffle(_f(xn), bs).numpy()       # channel (c, bh, bw): CRD
            n, c, h, w = xn.shape                            # TVM's order (bh, bw, c)
            y = y.reshape(n, c, bs * bs, h // bs, w // bs).transpose(0, 2, 1, 3, 4)
            y = y.reshape(n, c * bs * bs, h // bs, w // bs)
        elif a["mode"] == "CRD":
            y = F.pixel_shuffle(_f(xn), bs).numpy()
        else:
            n, c, h, w = xn.shape
            t = xn.reshape(n, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 1, 2, 4, 5)
            y = F.pixel_shuffle(_f(np.ascontiguousarray(t.reshape(n, c, h, w))), bs).numpy()
        return _from_nchw(y, a["layout"])
    if op == "nn.upsampling":
        xn = _to_nchw(x, a["layout"])
        sh, sw = a["scale_h"], a["scale_w"]
        if a["method"] == "nearest_neighbor" and not a["align_corners"] \
                and sh == int(sh) and sw == int(sw):
            y = xn.repeat(int(sh), axis=2).repeat(int(sw), axis=3)
            return _from_nchw(y, a["layout"])
        # TOPI: resize2d to round(in * scale), align_corners or asymmetric, "bi" dropped
        size = [int(math.floor(xn.shape[2] * sh + 0.5)), int(math.floor(xn.shape[3] * sw + 0.5))]
        m = a["method"][2:] if a["method"].startswith("bi") else a["method"]
        return ref_resize2d(x, dict(size=size, layout=a["layout"], method=m,
                                    coordinate_transformation_mode="align_corners"
                                    if a["align_corners"] else "asymmetric",
                                    rounding_method="", cubic_alpha=-0.5, cubic_exclude=0,
                                    out_dtype=""))
    if op in ("nn.conv2d_transpose", "nn.conv1d_transpose"):
        return ref_conv_transpose(op, x, vals[1], a, v)
    if op == "image.resize2d":
        return ref_resize2d(x, a)
    if op == "nn.lrn":
        ax = a["axis"] % x.ndim
        sq = np.moveaxis(x * x, ax, 0)
        n, half = sq.shape[0], a["size"] // 2
        win = np.stack([sq[max(0, i - half):i - half + a["size"]].sum(axis=0)
                        for i in range(n)])
        den = (a["bias"] + a["alpha"] * np.moveaxis(win, 0, ax) / a["size"]) ** a["beta"]
        return x / den
    if op == "nn.l2_normalize":
        axes = tuple(i % x.ndim for i in a["axis"])
        return x / np.sqrt(np.maximum((x * x).sum(axis=axes, keepdims=True), a["eps"]))
    if op == "nn.layer_norm":
        ax = a["axis"] % x.ndim
        return _affine(_norm(x, (ax,), a["epsilon"]), vals[1], vals[2], ax, a)
    if op == "nn.instance_norm":
        ax = a["axis"] % x.ndim
        axes = tuple(d for d in range(1, x.ndim) if d != ax)
        return _affine(_norm(x, axes, a["epsilon"]), vals[1], vals[2], ax, a)
    if op == "nn.group_norm":
        ax = a["axis"] % x.ndim
        g = a["num_groups"]
        xs = x.shape[:ax] + (g, x.shape[ax] // g) + x.shape[ax + 1:]
        y = _norm(x.reshape(xs), tuple(range(ax + 1, len(xs))), a["epsilon"])
        return _affine(y.reshape(x.shape), vals[1], vals[2], ax, a)
    if op == "variance":
        ax = a["axis"]
        axes = set(range(x.ndim)) if ax is None else {i % x.ndim for i in ax}
        if a["exclude"]:
            axes = set(range(x.ndim)) - axes
        axes = tuple(sorted(axes))
        n = int(np.prod([x.shape[i] for i in axes]))
        sq = ((x - vals[1]) ** 2).sum(axis=axes, keepdims=a["keepdims"])
        return sq / (n - 1 if a["unbiased"] else n)
    raise NotImplementedError(op)


def ref_call(op, vals, a, v, dt=np.float64):
    op = rw.canonical_op(op)
    if op in rw._TENSOR_OPS:
        return ref_tensor_op(op, vals, a, v, dt)
    if op in UNARY:
        return UNARY[op](vals[0])
    if op in BINARY:
        x, y = vals
        assert x.dtype == y.dtype
        return BINARY[op](x, y).astype(x.dtype, copy=False)
    x = vals[0]
    if op == "nn.conv2d":
        return ref_conv2d(x, vals[1], a)
    if op == "nn.dense":
        return np.matmul(x, vals[1].T)
    if op == "nn.matmul":
        xa = np.swapaxes(x, -1, -2) if a["transpose_a"] else x
        wb = vals[1].T if a["transpose_b"] else vals[1]
        return np.matmul(xa, wb)
    if op == "nn.batch_matmul":
        ta = a["transpose_a"] if a else False
        tb = a["transpose_b"] if a else True
        xa = np.swapaxes(x, 1, 2) if ta else x
        yb = np.swapaxes(vals[1], 1, 2) if tb else vals[1]
        return np.matmul(xa, yb)
    if op == "nn.bias_add":
        ax = a["axis"] % x.ndim
        shp = [1] * x.ndim
        shp[ax] = -1
        return x + vals[1].reshape(shp)
    if op == "nn.batch_norm":
        gamma, beta, mean, var = vals[1:]
        ax = a["axis"] % x.ndim
        shp = [1] * x.ndim
        shp[ax] = -1
        y = (x - mean.reshape(shp)) / np.sqrt(var.reshape(shp) + a["epsilon"])
        if a["scale"]:
            y = y * gamma.reshape(shp)
        if a["center"]:
            y = y + beta.reshape(shp)
        return (y, mean, var)
    if op == "nn.leaky_relu":
        return np.where(x > 0, x, x * a["alpha"])
    if op == "nn.prelu":
        ax = a["axis"] % x.ndim
        shp = [1] * x.ndim
        shp[ax] = -1
        return np.where(x > 0, x, x * vals[1].reshape(shp))
    if op == "clip":
        if x.dtype.kind in "iu":   # TVM makes the bounds constants of x's type: truncated
            return np.clip(x, int(a["a_min"]), int(a["a_max"])).astype(x.dtype)
        return np.clip(x, a["a_min"], a["a_max"])
    if op in ("nn.softmax", "nn.log_softmax"):
        ax = a["axis"]
        m = x.max(axis=ax, keepdims=True)
        e = np.exp(x - m)
        s = e.sum(axis=ax, keepdims=True)
        return e / s if op == "nn.softmax" else x - m - np.log(s)
    if op in ("nn.max_pool2d", "nn.avg_pool2d"):
        return ref_pool2d(x, a, "max" if op == "nn.max_pool2d" else "avg", v)
    if op in ("nn.global_avg_pool2d", "nn.global_max_pool2d"):
        lay = a["layout"]
        axes = (lay.index("H"), lay.index("W"))
        f = np.mean if op == "nn.global_avg_pool2d" else np.max
        return f(x, axis=axes, keepdims=True)
    if op == "nn.adaptive_avg_pool2d":
        return ref_adaptive_avg(x, a)
    if op == "nn.batch_flatten":
        return x.reshape(x.shape[0], -1)
    if op == "nn.dropout":
        return (x, np.ones_like(x))
    if op == "nn.pad":
        pv = float(vals[1]) if len(vals) > 1 else a["pad_value"]
        return np.pad(x, [tuple(p) for p in a["pad_width"]], constant_values=pv)
    if op in ("reshape", "contrib_reverse_reshape"):
        return x.reshape(ref_reshape_shape(x.shape, a["newshape"],
                                           op == "contrib_reverse_reshape"))
    if op == "transpose":
        return np.transpose(x, a["axes"] if a["axes"] else None)
    if op == "squeeze":
        ax = a["axis"]
        return np.squeeze(x, axis=None if ax is None else tuple(ax))
    if op == "expand_dims":
        ax = a["axis"]
        if ax < 0:
            ax += x.ndim + 1
        for _ in range(a["num_newaxis"]):
            x = np.expand_dims(x, ax)
        return x
    if op == "concatenate":
        return np.concatenate(list(x), axis=a["axis"])
    if op == "split":
        ios = a["indices_or_sections"]
        return tuple(np.split(x, ios if isinstance(ios, int) else list(ios),
                              axis=a["axis"]))
    if op == "strided_slice":
        return ref_strided_slice(x, a)
    if op in ("mean", "sum", "max", "min"):
        ax = a["axis"]
        axes = set(range(x.ndim)) if ax is None else {i % x.ndim for i in ax}
        if a["exclude"]:
            axes = set(range(x.ndim)) - axes
        f = {"mean": np.mean, "sum": np.sum, "max": np.max, "min": np.min}[op]
        return f(x, axis=tuple(sorted(axes)), keepdims=a["keepdims"])
    if op == "cast":
        if dt == np.float64 and a["dtype"].startswith("float"):
            return x.astype(np.float64)          # no intermediate rounding
        return x.astype(a["dtype"])
    if op == "layout_transform":
        src, dst = a["src_layout"], a["dst_layout"]
        return np.transpose(x, [src.index(c) for c in dst])
    raise NotImplementedError(op)


def _children(e, v):
    return rw._expr_children(e, v)


def evaluate(fn, env_in, v, dt=np.float64, module=None):
    """Run Function ``fn`` on ``env_in`` (name -> array): float inputs and
    constants are converted to ``dt`` first.  ``module`` resolves calls of
    GlobalVars."""
    def conv(a):
        # float64 mode: every float becomes float64; float32 mode: a plain
        # run in the declared dtypes
        a = np.array(a)
        return a.astype(np.float64) if (dt == np.float64 and a.dtype.kind == "f") else a
    vals = {}
    for p in fn.params:
        vals[id(p)] = conv(env_in[p.name])
    order = rw._topo([fn.body], lambda e: _children(e, v) if not isinstance(
        e, (rw.Function, rw.GlobalVar)) else [])
    let_value = {id(e.var): e.value for e in order if isinstance(e, rw.Let)}
    for e in order:
        if id(e) in vals:
            continue
        if isinstance(e, (rw.GlobalVar, rw.Function)):
            continue
        if isinstance(e, rw.Var):
            vals[id(e)] = vals[id(let_value[id(e)])]
        elif isinstance(e, rw.Const):
            vals[id(e)] = conv(e.data)
        elif isinstance(e, rw.Tuple):
            vals[id(e)] = tuple(vals[id(f)] for f in e.fields)
        elif isinstance(e, rw.TupleGetItem):
            vals[id(e)] = vals[id(e.tuple_value)][e.index]
        elif isinstance(e, rw.Let):
            vals[id(e)] = vals[id(e.body)]
        elif isinstance(e, rw.Call):
            if not isinstance(e.op, str):
                callee = e.op
                if isinstance(callee, rw.GlobalVar):
                    callee = dict((id(g), f) for g, f in module.functions)[id(callee)]
                sub = {p.name: vals[id(x)] for p, x in zip(callee.params, e.args)}
                vals[id(e)] = evaluate(callee, sub, v, dt, module)
                continue
            args, attrs, atype = rw._normalized(e, v)
            attrs = as_written(attrs, atype, v)
            vals[id(e)] = ref_call(e.op, [vals[id(x)] for x in args], attrs, v,
                                   dt)
        else:
            raise NotImplementedError(type(e))
    return vals[id(fn.body)]


def as_written(attrs, atype, v):
    """Attrs as a reader of the file sees them: doubles go through the
    version's text format (0.6 keeps 6 decimals)."""
    if attrs is None:
        return None
    out = dict(attrs)
    for f, kind in rw.attrs_fields(atype, "%d.%d.0" % v):
        if kind == "double" and out.get(f) is not None:
            out[f] = float(rw._format_double(out[f], v))
    return out


def flatten(val):
    if isinstance(val, tuple):
        out = []
        for x in val:
            out += flatten(x)
        return out
    return [val]


def flatten_types(t):
    if isinstance(t, rw.TupleType):
        out = []
        for f in t.fields:
            out += flatten_types(f)
        return out
    return [t]


# ---------------------------------------------------------------------------
# Case builder
# ---------------------------------------------------------------------------

class B:
    """Handed to each case function: makes inputs, weights and calls."""

    def __init__(self, name, version, params_mode, spans):
        self.name = name
        self.version = version
        self.v = rw.parse_version(version)
        self.params_mode = params_mode
        self.spans = spans
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.params = []
        self.arrays = {}
        self.bound = {}
        self.nspan = {}

    def rand(self, shape, lo=-1.0, hi=1.0, dtype="float32"):
        return self.rng.uniform(lo, hi, size=shape).astype(dtype)

    def input(self, name, shape, lo=-1.0, hi=1.0, dtype="float32"):
        arr = self.rand(shape, lo, hi, dtype)
        v = rw.Var(name, arr.shape, dtype)
        self.params.append(v)
        self.arrays[name] = arr
        return v

    def weight(self, name, shape, lo=-0.5, hi=0.5, arr=None, span=None):
        if arr is None:
            arr = self.rand(shape, lo, hi)
        arr = np.asarray(arr)
        if self.params_mode and arr.ndim > 0:
            v = rw.Var(name, arr.shape, str(arr.dtype))
            self.params.append(v)
            self.bound[name] = arr
            return v
        return rw.Const(arr, span=span)

    def const(self, arr, dtype="float32"):
        return rw.Const(np.array(arr, dtype=dtype))

    def span(self, base):
        if not self.spans:
            return None
        k = self.nspan.get(base, 0)
        self.nspan[base] = k + 1
        return rw.Span(base if k == 0 else "%s_%d" % (base, k))

    def call(self, op, args, attrs=None, name=None):
        sp = self.span(name or op.split(".")[-1])
        for a in args:
            if isinstance(a, rw.Const) and a.span is None and sp is not None \
                    and a.data.ndim > 0:
                a.span = sp          # frontends tag weights with the layer
        return rw.Call(op, args, attrs, span=sp)


CASES = []


def case(name, variants, desc=""):
    """Register a case; variants like "6f", "18mp", "9m", "12ft":
    minor version, m(odule)/f(unction) root, p = params file, t/u = force
    typed/untyped (default: typed for 0.6/0.7 modules, else alternating)."""
    def deco(fn):
        CASES.append((name, fn, variants.split(), desc or (fn.__doc__ or "").strip()))
        return fn
    return deco


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

def conv(b, x, wshape, attrs, wname="conv.weight", name="conv"):
    w = b.weight(wname, wshape, -0.4, 0.4)
    return b.call("nn.conv2d", [x, w], attrs, name=name)


@case("conv2d_basic", "6f 8m 18mp", "NCHW/OIHW 3x3, 2-value padding, channels and kernel_size set")
def _(b):
    x = b.input("data", (1, 3, 8, 8))
    return conv(b, x, (4, 3, 3, 3), {"padding": [1, 1], "channels": 4,
                                       "kernel_size": [3, 3]})


@case("conv2d_pad4_stride2_odd", "7m 12fp 19m", "asymmetric 4-value padding, stride 2, odd sizes, 5 channels")
def _(b):
    x = b.input("data", (1, 5, 9, 7))
    return conv(b, x, (6, 5, 3, 3), {"padding": [0, 1, 2, 1], "strides": [2, 2],
                                       "channels": 6, "kernel_size": [3, 3]})


@case("conv2d_pad1_batch2", "9f 16mp", "1-value padding, batch 2")
def _(b):
    x = b.input("x", (2, 3, 5, 5))
    return conv(b, x, (2, 3, 3, 3), {"padding": [1]})


@case("conv2d_stride_gt_kernel", "6m 18f", "2x2 kernel, stride 3, channels/kernel_size null")
def _(b):
    x = b.input("data", (1, 3, 11, 10))
    return conv(b, x, (4, 3, 2, 2), {"strides": [3, 3]})


@case("conv2d_dilation", "8fp 12m 19f", "dilation 2 (and 1x2), padding 2")
def _(b):
    x = b.input("data", (1, 4, 10, 9))
    y = conv(b, x, (3, 4, 3, 3), {"dilation": [2, 2], "padding": [2, 2],
                                    "channels": 3, "kernel_size": [3, 3]})
    return conv(b, y, (2, 3, 3, 3), {"dilation": [1, 2], "padding": [1, 2, 0, 1]},
                wname="conv2.weight", name="conv2")


@case("conv2d_depthwise17", "7f 9mp 18m", "depthwise 3x3, 17 channels (groups 17)")
def _(b):
    x = b.input("data", (1, 17, 6, 6))
    return conv(b, x, (17, 1, 3, 3), {"groups": 17, "padding": [1, 1],
                                        "channels": 17, "kernel_size": [3, 3]})


@case("conv2d_groups2", "6mp 16f", "groups 2, not depthwise (4 -> 6 channels)")
def _(b):
    x = b.input("data", (1, 4, 6, 6))
    return conv(b, x, (6, 2, 3, 3), {"groups": 2, "padding": [1, 1],
                                       "channels": 6, "kernel_size": [3, 3]})


@case("conv2d_1x1_image", "8m 19fp", "1x1 image, 1x1 kernel, 3 -> 5 channels")
def _(b):
    x = b.input("data", (1, 3, 1, 1))
    return conv(b, x, (5, 3, 1, 1), {"channels": 5, "kernel_size": [1, 1]})


@case("conv2d_width1_ch1", "9m 12f", "1 input channel, width 1, 2-value padding [1, 0]")
def _(b):
    x = b.input("data", (1, 1, 7, 1))
    return conv(b, x, (2, 1, 3, 1), {"padding": [1, 0]})


@case("conv2d_width7_rect", "6f 16m", "width 7, 1x3 kernel, strides [2, 1], 3-channel")
def _(b):
    x = b.input("data", (1, 3, 5, 7))
    return conv(b, x, (3, 3, 1, 3), {"strides": [2, 1], "padding": [0, 1, 0, 1],
                                       "kernel_size": [1, 3], "channels": 3})


@case("conv2d_nhwc_hwio", "7m 8f 18mp", "NHWC/HWIO 3x3, padding 1")
def _(b):
    x = b.input("input", (1, 6, 6, 3))
    return conv(b, x, (3, 3, 3, 5), {"padding": [1, 1], "data_layout": "NHWC",
                                       "kernel_layout": "HWIO", "channels": 5,
                                       "kernel_size": [3, 3]}, wname="conv/kernel")


@case("conv2d_nhwc_groups2_stride2", "9f 12mp 19m", "NHWC/HWIO groups 2, stride 2, odd input, asymmetric padding")
def _(b):
    x = b.input("input", (1, 7, 7, 4))
    return conv(b, x, (3, 3, 2, 6), {"padding": [0, 0, 1, 1], "strides": [2, 2],
                                       "groups": 2, "data_layout": "NHWC",
                                       "kernel_layout": "HWIO"}, wname="conv/kernel")


@case("dense_units", "6m 9fp 18m", "nn.dense with units set")
def _(b):
    x = b.input("data", (2, 10))
    w = b.weight("fc.weight", (5, 10))
    return b.call("nn.dense", [x, w], {"units": 5})


@case("dense_null_units", "7fp 12m 16f", "nn.dense with units null, 17 features")
def _(b):
    x = b.input("data", (1, 17))
    w = b.weight("fc.weight", (3, 17))
    return b.call("nn.dense", [x, w])


@case("dense_3d_input", "8m 19mp", "nn.dense of a rank-3 input")
def _(b):
    x = b.input("x", (2, 3, 8))
    w = b.weight("w", (4, 8))
    return b.call("nn.dense", [x, w], {"units": 4})


@case("matmul_nn", "8f 18m", "nn.matmul, no transposes")
def _(b):
    a = b.input("a", (3, 4))
    w = b.weight("b", (4, 5))
    return b.call("nn.matmul", [a, w])


@case("matmul_tb_units", "9mp 16f", "nn.matmul transpose_b, units set")
def _(b):
    a = b.input("a", (2, 6))
    w = b.weight("b", (3, 6))
    return b.call("nn.matmul", [a, w], {"transpose_b": True, "units": 3})


@case("matmul_ta", "12m 19fp", "nn.matmul transpose_a")
def _(b):
    a = b.input("a", (4, 3))
    w = b.weight("b", (4, 5))
    return b.call("nn.matmul", [a, w], {"transpose_a": True})


@case("matmul_ta_tb", "8mp 18f", "nn.matmul transpose_a and transpose_b")
def _(b):
    a = b.input("a", (6, 2))
    w = b.weight("b", (3, 6))
    return b.call("nn.matmul", [a, w], {"transpose_a": True, "transpose_b": True})


@case("batch_matmul_default", "6f 7m 12m 18f", "x (2,3,4) * y (2,5,4)^T; attrs null before 0.8, transpose_b true after")
def _(b):
    x = b.input("x", (2, 3, 4))
    y = b.input("y", (2, 5, 4))
    return b.call("nn.batch_matmul", [x, y])


@case("batch_matmul_const_rhs", "6m 16mp", "batch_matmul with a constant right-hand side")
def _(b):
    x = b.input("x", (3, 2, 5))
    y = b.weight("w", (3, 4, 5))
    return b.call("nn.batch_matmul", [x, y])


@case("batch_matmul_nt", "8m 19f", "transpose_b false (0.8+)")
def _(b):
    x = b.input("x", (2, 3, 4))
    y = b.input("y", (2, 4, 5))
    return b.call("nn.batch_matmul", [x, y], {"transpose_b": False})


@case("batch_matmul_ta", "9f 18m", "transpose_a true, transpose_b false (0.8+)")
def _(b):
    x = b.input("x", (3, 4, 2))
    y = b.input("y", (3, 4, 5))
    return b.call("nn.batch_matmul", [x, y], {"transpose_a": True,
                                              "transpose_b": False})


@case("batch_matmul_bcast", "18mp 19f", "batch 2 times batch 1 (broadcast batch)")
def _(b):
    x = b.input("x", (2, 3, 4))
    y = b.weight("w", (1, 5, 4))
    return b.call("nn.batch_matmul", [x, y])


@case("bias_add_axis1", "6m 12fp", "bias_add axis 1 on NCHW, 5 channels")
def _(b):
    x = b.input("data", (1, 5, 3, 3))
    return b.call("nn.bias_add", [x, b.weight("bias", (5,))])


@case("bias_add_axis_neg1", "7f 16m", "bias_add axis -1 on (2, 7)")
def _(b):
    x = b.input("data", (2, 7))
    return b.call("nn.bias_add", [x, b.weight("bias", (7,))], {"axis": -1})


@case("bias_add_axis3", "9m 19fp", "bias_add axis 3 on NHWC")
def _(b):
    x = b.input("data", (1, 4, 4, 3))
    return b.call("nn.bias_add", [x, b.weight("bias", (3,))], {"axis": 3})


def bn_params(b, c, prefix="bn"):
    g = b.weight(prefix + ".gamma", (c,), 0.5, 1.5)
    be = b.weight(prefix + ".beta", (c,), -0.5, 0.5)
    m = b.weight(prefix + ".mean", (c,), -0.5, 0.5)
    var = b.weight(prefix + ".var", (c,), 0.5, 2.0)
    return [g, be, m, var]


@case("batch_norm", "6f 8mp 16m", "batch_norm (3-tuple) + TupleGetItem 0, epsilon 1e-3")
def _(b):
    x = b.input("data", (1, 3, 4, 4))
    bn = b.call("nn.batch_norm", [x] + bn_params(b, 3), {"epsilon": 1e-3})
    return rw.TupleGetItem(bn, 0)


@case("batch_norm_axis3_noscale", "7m 12f 19mp", "batch_norm axis 3, scale false (gamma ignored)")
def _(b):
    x = b.input("data", (1, 4, 4, 5))
    bn = b.call("nn.batch_norm", [x] + bn_params(b, 5), {"axis": 3, "scale": False})
    return rw.TupleGetItem(bn, 0)


@case("batch_norm_nocenter", "9f 18m", "batch_norm center false (beta ignored), axis 1 on rank 2")
def _(b):
    x = b.input("data", (4, 6))
    bn = b.call("nn.batch_norm", [x] + bn_params(b, 6), {"center": False})
    return rw.TupleGetItem(bn, 0)


def unary_case(name, op, variants, lo=-1.0, hi=1.0, shape=(2, 3, 5)):
    @case(name, variants, "%s on %s, inputs in [%g, %g]" % (op, shape, lo, hi))
    def _(b):
        x = b.input("x", shape, lo, hi)
        return b.call(op, [x])


unary_case("relu", "nn.relu", "6m 9f 18m", shape=(1, 3, 4, 4))
unary_case("sigmoid", "sigmoid", "7f 12m 19m", -4, 4)
unary_case("tanh", "tanh", "8f 16m", -3, 3)
unary_case("exp", "exp", "6f 18m", -2, 2)
unary_case("log", "log", "7m 12f", 0.1, 4)
unary_case("sqrt", "sqrt", "8m 19f", 0.01, 4)
unary_case("rsqrt", "rsqrt", "9m 16f", 0.25, 4)
unary_case("negative", "negative", "6f 12m")
unary_case("abs", "abs", "7m 18f")
unary_case("erf", "erf", "8m 19m", -2.5, 2.5)
unary_case("copy", "copy", "9f 16m")
unary_case("sin", "sin", "18m", -3, 3)
unary_case("cos", "cos", "12f", -3, 3)
unary_case("tan", "tan", "19m", -1.2, 1.2)
unary_case("asin", "asin", "16f", -0.99, 0.99)
unary_case("acos", "acos", "18f", -0.99, 0.99)
unary_case("atan", "atan", "9m", -4, 4)
unary_case("sinh", "sinh", "18m", -3, 3)
unary_case("cosh", "cosh", "12m", -3, 3)
unary_case("asinh", "asinh", "19f", -4, 4)
unary_case("acosh", "acosh", "18m", 1.01, 5)
unary_case("atanh", "atanh", "16m", -0.95, 0.95)
unary_case("log2", "log2", "18f", 0.1, 8)
unary_case("log10", "log10", "8m", 0.1, 100)


@case("leaky_relu", "6f 12m 19m", "leaky_relu alpha 0.1")
def _(b):
    x = b.input("x", (1, 3, 4, 4))
    return b.call("nn.leaky_relu", [x], {"alpha": 0.1})


@case("prelu_axis1", "7m 16fp", "prelu with per-channel alpha, axis 1")
def _(b):
    x = b.input("x", (1, 3, 4, 4))
    return b.call("nn.prelu", [x, b.weight("alpha", (3,), 0.0, 0.5)])


@case("prelu_axis3", "8f 18mp", "prelu on NHWC, axis 3")
def _(b):
    x = b.input("x", (1, 4, 4, 5))
    return b.call("nn.prelu", [x, b.weight("alpha", (5,), 0.0, 0.5)], {"axis": 3})


@case("clip", "6m 9f 19m", "clip(-0.5, 0.75)")
def _(b):
    x = b.input("x", (2, 3, 4))
    return b.call("clip", [x], {"a_min": -0.5, "a_max": 0.75})


@case("clip_relu6", "12f 16m", "clip(0, 6) (ReLU6) on a scaled input")
def _(b):
    x = b.input("x", (1, 4, 3, 3), -8, 8)
    return b.call("clip", [x], {"a_min": 0.0, "a_max": 6.0})


@case("gelu_erf", "7f 8m 18mp", "gelu composed as x*0.5*(1+erf(x/sqrt2))")
def _(b):
    x = b.input("x", (2, 8), -3, 3)
    t = b.call("multiply", [x, b.const(1 / math.sqrt(2))], name="mul")
    t = b.call("erf", [t])
    t = b.call("add", [b.const(1.0), t], name="add")
    t = b.call("multiply", [x, t], name="mul")
    return b.call("multiply", [t, b.const(0.5)], name="mul")


# -- broadcasting binary ops -------------------------------------------------

@case("add_same_shape", "6f 16m", "add of two inputs of the same shape")
def _(b):
    return b.call("add", [b.input("x", (2, 3)), b.input("y", (2, 3))])


@case("add_bcast_both", "8m 12f 19m", "add where both sides broadcast: (3,1,5) + (4,1)")
def _(b):
    return b.call("add", [b.input("x", (3, 1, 5)), b.input("y", (4, 1))])


@case("add_scalar_const", "7m 18fp", "add with a rank-0 constant on the left and a rank-1 weight")
def _(b):
    x = b.input("x", (2, 3, 4))
    t = b.call("add", [b.const(0.25), x])
    return b.call("add", [t, b.weight("bias", (4,))])


@case("subtract_bcast", "6m 9f 18m", "subtract: rank-0 constant minus input, input minus (3,1) weight")
def _(b):
    x = b.input("x", (2, 3, 4))
    t = b.call("subtract", [b.const(1.5), x])
    return b.call("subtract", [t, b.weight("w", (3, 1))])


@case("multiply_bcast", "7f 12mp 19m", "multiply by a (4,) weight and a rank-0 constant")
def _(b):
    x = b.input("x", (1, 3, 4, 4))
    t = b.call("multiply", [x, b.weight("scale", (4,))])
    return b.call("multiply", [t, b.const(-2.0)])


@case("divide_bcast", "8f 16m", "divide (2,1,4) / (3,1), positive divisor")
def _(b):
    x = b.input("x", (2, 1, 4))
    y = b.input("y", (3, 1), 0.5, 2.0)
    return b.call("divide", [x, y])


@case("divide_by_const", "6m 18f", "divide by a rank-0 constant and by a rank-3 constant")
def _(b):
    x = b.input("x", (2, 3, 4))
    t = b.call("divide", [x, b.const(4.0)])
    return b.call("divide", [t, b.weight("d", (2, 1, 4), 0.5, 2.0)])


@case("power", "7m 9f 19m", "power: positive base, (3,) exponent constant, then rank-0 exponent")
def _(b):
    x = b.input("x", (2, 3), 0.5, 2.0)
    t = b.call("power", [x, b.weight("e", arr=np.array([0.5, 2.0, 3.0], np.float32),
                                     shape=None)])
    return b.call("power", [t, b.const(1.5)])


@case("maximum_minimum", "6f 12m 18m", "maximum (4,1) vs (1,5), then minimum with a rank-0 constant")
def _(b):
    t = b.call("maximum", [b.input("x", (4, 1)), b.input("y", (1, 5))])
    return b.call("minimum", [t, b.const(0.3)])


@case("minimum_maximum_const", "8m 16f", "minimum with a (1,) constant, maximum with a weight")
def _(b):
    x = b.input("x", (2, 3, 4))
    t = b.call("minimum", [x, b.const([0.5])])
    return b.call("maximum", [b.weight("w", (3, 1)), t])


# -- pooling -------------------------------------------------------------------

@case("max_pool_2x2", "6m 12f 19m", "max_pool2d 2x2 stride 2")
def _(b):
    x = b.input("data", (1, 3, 8, 8))
    return b.call("nn.max_pool2d", [x], {"pool_size": [2, 2], "strides": [2, 2]})


@case("max_pool_pad_ceil", "7m 9f 18m", "max_pool2d 3x3/2 pad 1 ceil_mode, odd size")
def _(b):
    x = b.input("data", (1, 2, 7, 7))
    return b.call("nn.max_pool2d", [x], {"pool_size": [3, 3], "strides": [2, 2],
                                         "padding": [1, 1], "ceil_mode": True})


@case("max_pool_asym", "8f 16m", "max_pool2d 2x3, strides (1,2), 4-value padding [0,1,1,0]")
def _(b):
    x = b.input("data", (1, 3, 5, 6))
    return b.call("nn.max_pool2d", [x], {"pool_size": [2, 3], "strides": [1, 2],
                                         "padding": [0, 1, 1, 0]})


@case("max_pool_stride_gt_kernel", "6f 19f", "max_pool2d 2x2 stride 3, 1-value padding")
def _(b):
    x = b.input("data", (1, 3, 8, 8))
    return b.call("nn.max_pool2d", [x], {"pool_size": [2, 2], "strides": [3, 3],
                                         "padding": [1]})


@case("max_pool_dilation", "8m 12m 18f", "max_pool2d 2x2 dilation 2 (0.8+)")
def _(b):
    x = b.input("data", (1, 2, 7, 7))
    return b.call("nn.max_pool2d", [x], {"pool_size": [2, 2], "dilation": [2, 2]})


@case("max_pool_nhwc", "7f 9m 18m", "max_pool2d NHWC 3x3/2 pad 1")
def _(b):
    x = b.input("data", (1, 6, 6, 3))
    return b.call("nn.max_pool2d", [x], {"pool_size": [3, 3], "strides": [2, 2],
                                         "padding": [1, 1], "layout": "NHWC"})


@case("avg_pool_2x2", "6f 16m", "avg_pool2d 2x2 stride 2")
def _(b):
    x = b.input("data", (1, 3, 6, 6))
    return b.call("nn.avg_pool2d", [x], {"pool_size": [2, 2], "strides": [2, 2]})


@case("avg_pool_pad_include", "7m 12f 19m", "avg_pool2d 3x3/1 pad 1, count_include_pad true")
def _(b):
    x = b.input("data", (1, 2, 5, 5))
    return b.call("nn.avg_pool2d", [x], {"pool_size": [3, 3], "padding": [1, 1],
                                         "count_include_pad": True})


@case("avg_pool_pad_exclude", "6m 8f 18m", "avg_pool2d 3x3/1 pad 1, count_include_pad false")
def _(b):
    x = b.input("data", (1, 2, 5, 5))
    return b.call("nn.avg_pool2d", [x], {"pool_size": [3, 3], "padding": [1, 1],
                                         "count_include_pad": False})


@case("avg_pool_ceil_exclude", "9f 16m 19f", "avg_pool2d 3x3/2 ceil_mode, count_include_pad false, asymmetric padding")
def _(b):
    x = b.input("data", (1, 3, 6, 7))
    return b.call("nn.avg_pool2d", [x], {"pool_size": [3, 3], "strides": [2, 2],
                                         "padding": [1, 0, 0, 1], "ceil_mode": True})


@case("avg_pool_nhwc", "7f 12m 18f", "avg_pool2d NHWC 2x2/1 pad 1 count_include_pad true")
def _(b):
    x = b.input("data", (1, 5, 5, 3))
    return b.call("nn.avg_pool2d", [x], {"pool_size": [2, 2], "padding": [1, 1],
                                         "layout": "NHWC", "count_include_pad": True})


@case("global_avg_pool_nchw", "6m 9f 18m", "global_avg_pool2d NCHW")
def _(b):
    return b.call("nn.global_avg_pool2d", [b.input("data", (1, 5, 4, 3))])


@case("global_avg_pool_nhwc", "7f 16m", "global_avg_pool2d NHWC")
def _(b):
    return b.call("nn.global_avg_pool2d", [b.input("data", (2, 3, 4, 5))],
                  {"layout": "NHWC"})


@case("global_max_pool_nchw", "8m 12f", "global_max_pool2d NCHW")
def _(b):
    return b.call("nn.global_max_pool2d", [b.input("data", (1, 3, 5, 5))])


@case("global_max_pool_nhwc", "6f 19m", "global_max_pool2d NHWC")
def _(b):
    return b.call("nn.global_max_pool2d", [b.input("data", (1, 4, 3, 17))],
                  {"layout": "NHWC"})


@case("adaptive_avg_divides", "6m 12f 18m", "adaptive_avg_pool2d 8x8 -> 4x4 (contrib. in 0.6)")
def _(b):
    x = b.input("data", (1, 3, 8, 8))
    return b.call("nn.adaptive_avg_pool2d", [x], {"output_size": [4, 4]})


@case("adaptive_avg_nondivide", "7m 9f 19m", "adaptive_avg_pool2d 7x5 -> 3x2 (overlapping windows)")
def _(b):
    x = b.input("data", (1, 2, 7, 5))
    return b.call("nn.adaptive_avg_pool2d", [x], {"output_size": [3, 2]})


@case("adaptive_avg_nhwc_1x1", "8f 16m", "adaptive_avg_pool2d NHWC 5x5 -> 1x1")
def _(b):
    x = b.input("data", (1, 5, 5, 3))
    return b.call("nn.adaptive_avg_pool2d", [x], {"output_size": [1, 1],
                                                  "layout": "NHWC"})


# -- softmax -------------------------------------------------------------------

@case("softmax_last", "6f 12m 19m", "softmax axis -1")
def _(b):
    return b.call("nn.softmax", [b.input("x", (2, 10), -3, 3)])


@case("softmax_axis1", "7m 16f", "softmax axis 1 of NCHW")
def _(b):
    return b.call("nn.softmax", [b.input("x", (1, 4, 3, 3), -3, 3)], {"axis": 1})


@case("log_softmax_last", "6m 9f 18m", "log_softmax axis -1")
def _(b):
    return b.call("nn.log_softmax", [b.input("x", (3, 7), -3, 3)])


@case("log_softmax_axis1", "8f 19m", "log_softmax axis 1 of a rank-3 tensor (0.8+)")
def _(b):
    return b.call("nn.log_softmax", [b.input("x", (2, 5, 3), -3, 3)], {"axis": 1})


# -- shapes --------------------------------------------------------------------

@case("reshape_0_m1", "6f 9m 18f", "reshape newshape [0, -1]")
def _(b):
    return b.call("reshape", [b.input("x", (2, 3, 4))], {"newshape": [0, -1]})


@case("reshape_m2", "7m 16f", "reshape [3, -1, -2] of (6,2,4,5) -> (3,4,4,5)")
def _(b):
    return b.call("reshape", [b.input("x", (6, 2, 4, 5))], {"newshape": [3, -1, -2]})


@case("reshape_m3", "8m 12f 19m", "reshape [0, -3, 0] of (2,3,4,5) -> (2,12,5) then [-3, -2]")
def _(b):
    t = b.call("reshape", [b.input("x", (2, 3, 4, 5))], {"newshape": [0, -3, 0]})
    return b.call("reshape", [t], {"newshape": [-3, -2]})


@case("reshape_m4", "6m 9f 18m", "reshape [0, -4, 3, -1, 0] of (2,12,5) -> (2,3,4,5)")
def _(b):
    return b.call("reshape", [b.input("x", (2, 12, 5))],
                  {"newshape": [0, -4, 3, -1, 0]})


@case("reshape_plain", "7f 16m", "reshape (4,6) -> (3,8)")
def _(b):
    return b.call("reshape", [b.input("x", (4, 6))], {"newshape": [3, 8]})


@case("reverse_reshape", "6f 8m 18m", "reverse_reshape [0, -1] of (2,3,4) -> (3,8), and [-1, 0] of (2,5,4) -> (10,4)")
def _(b):
    t1 = b.call("contrib_reverse_reshape", [b.input("x", (2, 3, 4))],
                {"newshape": [0, -1]}, name="reverse_reshape")
    t2 = b.call("contrib_reverse_reshape", [b.input("y", (2, 5, 4))],
                {"newshape": [-1, 0]}, name="reverse_reshape")
    return rw.Tuple([t1, t2])


@case("transpose_axes", "6m 12f 19m", "transpose axes [1, 0, 2] and negative axes [0, -1, 1]")
def _(b):
    t = b.call("transpose", [b.input("x", (2, 3, 4))], {"axes": [1, 0, 2]})
    return b.call("transpose", [t], {"axes": [0, -1, 1]})


@case("transpose_null_axes", "7f 9m 18f", "transpose with axes null (reverse)")
def _(b):
    return b.call("transpose", [b.input("x", (2, 3, 4, 5))])


@case("squeeze_axis", "6f 16m", "squeeze axis [0, 2] of (1,3,1,4)")
def _(b):
    return b.call("squeeze", [b.input("x", (1, 3, 1, 4))], {"axis": [0, 2]})


@case("squeeze_null", "8m 19f", "squeeze with axis null (all unit dims)")
def _(b):
    return b.call("squeeze", [b.input("x", (1, 3, 1, 1, 4))])


@case("expand_dims", "7m 12f 18m", "expand_dims axis 1; num_newaxis 2 at axis -1; axis 0")
def _(b):
    x = b.input("x", (2, 3))
    t1 = b.call("expand_dims", [x], {"axis": 1})
    t2 = b.call("expand_dims", [x], {"axis": -1, "num_newaxis": 2})
    t3 = b.call("expand_dims", [x], {"axis": 0})
    return rw.Tuple([t1, t2, t3])


@case("concatenate_axis1", "6m 9f 19m", "concatenate 3 tensors on axis 1 (one a constant)")
def _(b):
    x = b.input("x", (1, 2, 3))
    y = b.input("y", (1, 4, 3))
    c = b.weight("c", (1, 1, 3))
    return b.call("concatenate", [rw.Tuple([x, y, c])], {"axis": 1})


@case("concatenate_neg_axis", "7f 8m 16m", "concatenate on axis -1, the same input twice")
def _(b):
    x = b.input("x", (2, 3, 2))
    y = b.input("y", (2, 3, 5))
    return b.call("concatenate", [rw.Tuple([x, y, x])], {"axis": -1})


@case("split_sections", "6f 12m 18m", "split into 3 sections on axis 1, TupleGetItem of each")
def _(b):
    x = b.input("x", (2, 6, 3))
    s = b.call("split", [x], {"indices_or_sections": 3, "axis": 1})
    return rw.Tuple([rw.TupleGetItem(s, i) for i in range(3)])


@case("split_indices", "7m 9f 19m", "split at indices [1, 4] on axis -1")
def _(b):
    x = b.input("x", (2, 3, 6))
    s = b.call("split", [x], {"indices_or_sections": [1, 4], "axis": -1})
    return rw.Tuple([rw.TupleGetItem(s, 2), rw.TupleGetItem(s, 0),
                     rw.TupleGetItem(s, 1)])


@case("split_then_add", "8f 16m 18f", "split into 2 on axis 0, add the halves")
def _(b):
    x = b.input("x", (4, 5))
    s = b.call("split", [x], {"indices_or_sections": 2})
    return b.call("add", [rw.TupleGetItem(s, 0), rw.TupleGetItem(s, 1)])


@case("strided_slice_strides", "6m 12f 19m", "strided_slice with strides [1, 2, 3]")
def _(b):
    x = b.input("x", (2, 7, 8))
    return b.call("strided_slice", [x], {"begin": [0, 1, 0], "end": [2, 7, 8],
                                         "strides": [1, 2, 3]})


@case("strided_slice_negative", "7f 9m 18m", "strided_slice with negative begin/end")
def _(b):
    x = b.input("x", (3, 6, 5))
    return b.call("strided_slice", [x], {"begin": [-2, 1, -4], "end": [3, -1, -1],
                                         "strides": [1, 1, 1]})


@case("strided_slice_short_begin", "6f 16m", "strided_slice begin/end shorter than the rank")
def _(b):
    x = b.input("x", (1, 8, 4, 4))
    return b.call("strided_slice", [x], {"begin": [0, 2], "end": [1, 6],
                                         "strides": [1, 1]})


@case("strided_slice_size", "7m 8f 19m", "strided_slice slice_mode size (0.7+), size -1 = to the end")
def _(b):
    x = b.input("x", (2, 6, 5))
    return b.call("strided_slice", [x], {"begin": [0, 1, 2], "end": [2, 3, -1],
                                         "strides": [1, 1, 1], "slice_mode": "size"})


@case("strided_slice_axes", "8m 12f 18f", "strided_slice with axes [2, 1] (0.8+)")
def _(b):
    x = b.input("x", (2, 6, 7))
    return b.call("strided_slice", [x], {"begin": [1, 0], "end": [7, 5],
                                         "strides": [2, 2], "axes": [2, 1]})


@case("pad_value", "6f 8m 18m", "nn.pad constant mode, value 0.5 (attr before 0.8, 2nd argument after)")
def _(b):
    x = b.input("x", (1, 2, 3, 3))
    return b.call("nn.pad", [x], {"pad_width": [[0, 0], [0, 0], [1, 2], [2, 0]],
                                  "pad_value": 0.5})


@case("pad_zero_all_axes", "7m 12f 19m", "nn.pad with padding on every axis, value 0")
def _(b):
    x = b.input("x", (2, 3, 4))
    return b.call("nn.pad", [x], {"pad_width": [[1, 0], [0, 2], [3, 1]]})


@case("pad_negative_value", "9f 16m", "nn.pad value -1.25")
def _(b):
    x = b.input("x", (1, 3, 2, 2))
    return b.call("nn.pad", [x], {"pad_width": [[0, 0], [1, 1], [1, 1], [1, 1]],
                                  "pad_value": -1.25})


@case("batch_flatten", "6m 12f 19m", "batch_flatten (2,3,2,2) -> (2,12)")
def _(b):
    return b.call("nn.batch_flatten", [b.input("x", (2, 3, 2, 2))])


@case("batch_flatten_1x1", "7f 18m", "batch_flatten after global pooling ((1,5,1,1) -> (1,5))")
def _(b):
    t = b.call("nn.global_avg_pool2d", [b.input("x", (1, 5, 3, 3))])
    return b.call("nn.batch_flatten", [t])


# -- reductions ----------------------------------------------------------------

@case("mean_all", "6f 9m 18m", "mean with axis null")
def _(b):
    return b.call("mean", [b.input("x", (2, 3, 4))])


@case("mean_hw_keepdims", "7m 16f", "mean over [2, 3] keepdims (global pooling style)")
def _(b):
    return b.call("mean", [b.input("x", (1, 4, 3, 5))], {"axis": [2, 3],
                                                         "keepdims": True})


@case("mean_exclude", "8f 19m", "mean with exclude: every axis except 1, keepdims")
def _(b):
    return b.call("mean", [b.input("x", (2, 3, 4, 2))], {"axis": [1], "exclude": True,
                                                         "keepdims": True})


@case("sum_axis", "6m 12f 18m", "sum over axis [1]")
def _(b):
    return b.call("sum", [b.input("x", (2, 5, 3))], {"axis": [1]})


@case("sum_neg_multi", "7f 9m 19f", "sum over axes [0, -1] keepdims")
def _(b):
    return b.call("sum", [b.input("x", (2, 3, 4))], {"axis": [0, -1], "keepdims": True})


@case("max_axes", "6f 16m", "max over axes [1, 2]")
def _(b):
    return b.call("max", [b.input("x", (2, 3, 4, 2))], {"axis": [1, 2]})


@case("max_all_exclude", "8m 12f 18f", "max with axis null; max with exclude [0]")
def _(b):
    x = b.input("x", (3, 4, 2))
    return rw.Tuple([b.call("max", [x]),
                     b.call("max", [x], {"axis": [0], "exclude": True})])


@case("min_neg_axis", "7m 9f 19m", "min over axis [-1], keepdims")
def _(b):
    return b.call("min", [b.input("x", (2, 3, 5))], {"axis": [-1], "keepdims": True})


@case("min_all", "6m 16f", "min with axis null")
def _(b):
    return b.call("min", [b.input("x", (3, 4))])


# -- dropout, copy, layout_transform, cast ----------------------------------

@case("dropout", "6f 12m 18m", "nn.dropout (2-tuple) + TupleGetItem 0 (identity in inference)")
def _(b):
    x = b.input("x", (2, 8))
    d = b.call("nn.dropout", [x], {"rate": 0.25})
    return b.call("nn.relu", [rw.TupleGetItem(d, 0)])


@case("dropout_copy", "7m 9f 19m", "dropout then copy then multiply")
def _(b):
    x = b.input("x", (1, 3, 4))
    d = rw.TupleGetItem(b.call("nn.dropout", [x]), 0)
    c = b.call("copy", [d])
    return b.call("multiply", [c, b.const(2.0)])


@case("layout_transform", "6m 8f 16m", "layout_transform NCHW -> NHWC -> NCHW")
def _(b):
    x = b.input("x", (1, 3, 4, 5))
    t = b.call("layout_transform", [x], {"src_layout": "NCHW", "dst_layout": "NHWC"})
    u = b.call("nn.relu", [t])
    return rw.Tuple([t, b.call("layout_transform", [u], {"src_layout": "NHWC",
                                                         "dst_layout": "NCHW"})])


@case("layout_transform_nhwc_nchw", "7f 12m 19m", "layout_transform NHWC -> NCHW")
def _(b):
    x = b.input("x", (1, 4, 5, 3))
    return b.call("layout_transform", [x], {"src_layout": "NHWC", "dst_layout": "NCHW"})


@case("cast_int_roundtrip", "6f 9m 18m", "cast float32 -> int32 -> float32 (truncation toward zero)")
def _(b):
    x = b.input("x", (2, 6), -20, 20)
    t = b.call("cast", [x], {"dtype": "int32"})
    return b.call("cast", [t], {"dtype": "float32"})


@case("cast_f64_roundtrip", "7m 12f 19m", "cast float32 -> float64, multiply by a float64 constant, back to float32")
def _(b):
    x = b.input("x", (3, 4))
    t = b.call("cast", [x], {"dtype": "float64"})
    t = b.call("multiply", [t, b.const(1.0 / 3.0, "float64")])
    return b.call("cast", [t], {"dtype": "float32"})


@case("cast_int32_output", "8m 16f", "output of dtype int32: cast float32 -> int32 (the output is int32)")
def _(b):
    x = b.input("x", (2, 5), -9, 9)
    return b.call("cast", [x], {"dtype": "int32"})


# -- tuples and special outputs ------------------------------------------------

@case("tuple_outputs", "6m 9f 18m", "a tuple result with three outputs of different shapes")
def _(b):
    x = b.input("x", (2, 4))
    return rw.Tuple([b.call("nn.relu", [x]), b.call("sum", [x], {"axis": [1]}),
                     b.call("transpose", [x])])


@case("tuple_get_item_of_tuple", "7f 16m", "TupleGetItem of a Tuple expression")
def _(b):
    x = b.input("x", (2, 3))
    y = b.input("y", (2, 3))
    t = rw.Tuple([b.call("add", [x, y]), b.call("subtract", [x, y])])
    return b.call("multiply", [rw.TupleGetItem(t, 0), rw.TupleGetItem(t, 1)])


@case("const_output", "8m 12f 19m", "a constant used directly as an output")
def _(b):
    x = b.input("x", (2, 3))
    return rw.Tuple([b.call("nn.relu", [x]),
                     b.weight("table", (3, 2))])


@case("shared_const", "6f 18mp", "one constant (one relay.Constant node) used by three calls")
def _(b):
    x = b.input("x", (2, 4))
    c = b.weight("shared", (4,))
    t = b.call("add", [x, c])
    t = b.call("multiply", [t, c])
    return b.call("subtract", [t, c])


@case("input_as_output", "7m 9f 16m", "an output that is directly an input parameter")
def _(b):
    x = b.input("x", (2, 3))
    y = b.input("y", (3,))
    return rw.Tuple([b.call("add", [x, y]), y])


@case("same_output_twice", "8f 12m 18m", "the same value returned twice")
def _(b):
    x = b.input("x", (3, 2))
    t = b.call("tanh", [x])
    return rw.Tuple([t, t])


@case("let_chain", "6f 8m 19m", "nested relay.Let bindings (numbered iteratively from 0.8)")
def _(b):
    x = b.input("x", (2, 3))
    v1, v2, v3 = rw.Var("v1"), rw.Var("v2"), rw.Var("v3")
    e1 = b.call("add", [x, b.const(1.0)])
    e2 = b.call("multiply", [v1, v1])
    e3 = b.call("subtract", [v2, x])
    return rw.Let(v1, e1, rw.Let(v2, e2, rw.Let(v3, e3,
                  rw.Tuple([v3, b.call("nn.relu", [v1])]))))


@case("odd_input_names", "9mp 18f", "inputs named 'input.1' and 'input:0'; runtime input after the weights")
def _(b):
    x = b.input("input.1", (1, 3))
    w = b.weight("fc/kernel:0", (2, 3))
    y = b.input("input:0", (1, 2))
    return b.call("add", [b.call("nn.dense", [x, w], {"units": 2}), y])


# -- small networks --------------------------------------------------------------

@case("cnn_small", "6m 8mp 12fp 18m", "conv+bias+relu, max_pool, conv (groups 2)+relu, avg_pool, flatten, dense+bias, softmax")
def _(b):
    x = b.input("data", (1, 3, 12, 12))
    t = conv(b, x, (8, 3, 3, 3), {"padding": [1, 1], "channels": 8,
                                  "kernel_size": [3, 3]}, "conv1.weight", "conv1")
    t = b.call("nn.bias_add", [t, b.weight("conv1.bias", (8,))], name="conv1")
    t = b.call("nn.relu", [t])
    t = b.call("nn.max_pool2d", [t], {"pool_size": [2, 2], "strides": [2, 2]})
    t = conv(b, t, (6, 4, 3, 3), {"groups": 2, "channels": 6, "kernel_size": [3, 3]},
             "conv2.weight", "conv2")
    t = b.call("nn.relu", [t])
    t = b.call("nn.avg_pool2d", [t], {"pool_size": [2, 2], "strides": [2, 2],
                                      "ceil_mode": True})
    t = b.call("nn.batch_flatten", [t])
    t = b.call("nn.dense", [t, b.weight("fc.weight", (10, 24))], {"units": 10},
               name="fc")
    t = b.call("nn.bias_add", [t, b.weight("fc.bias", (10,))], {"axis": -1}, name="fc")
    return b.call("nn.softmax", [t])


@case("mbv2_like", "7mp 9m 16fp 19m", "conv 3x3/2 asymmetric pad + batch_norm + clip, depthwise + bn + clip, 1x1 conv + bn, residual add, global pool")
def _(b):
    x = b.input("input.1", (1, 3, 9, 9))
    t = conv(b, x, (8, 3, 3, 3), {"strides": [2, 2], "padding": [0, 0, 1, 1],
                                  "channels": 8, "kernel_size": [3, 3]}, "c1.w", "c1")
    t = rw.TupleGetItem(b.call("nn.batch_norm", [t] + bn_params(b, 8, "bn1")), 0)
    t = b.call("clip", [t], {"a_min": 0.0, "a_max": 6.0})
    r = t
    t = conv(b, t, (8, 1, 3, 3), {"groups": 8, "padding": [1, 1], "channels": 8,
                                  "kernel_size": [3, 3]}, "c2.w", "c2")
    t = rw.TupleGetItem(b.call("nn.batch_norm", [t] + bn_params(b, 8, "bn2")), 0)
    t = b.call("clip", [t], {"a_min": 0.0, "a_max": 6.0})
    t = conv(b, t, (8, 8, 1, 1), {}, "c3.w", "c3")
    t = rw.TupleGetItem(b.call("nn.batch_norm", [t] + bn_params(b, 8, "bn3")), 0)
    t = b.call("add", [t, r])
    t = b.call("nn.global_avg_pool2d", [t])
    return b.call("nn.batch_flatten", [t])


@case("nhwc_net", "8m 12mp 19f", "NHWC conv + bias_add(axis 3) + relu, max_pool NHWC, mean over [1,2], dense")
def _(b):
    x = b.input("input", (1, 8, 8, 3))
    t = conv(b, x, (3, 3, 3, 8), {"padding": [1, 1], "data_layout": "NHWC",
                                  "kernel_layout": "HWIO", "channels": 8,
                                  "kernel_size": [3, 3]}, "conv1/kernel", "conv1")
    t = b.call("nn.bias_add", [t, b.weight("conv1/bias", (8,))], {"axis": 3},
               name="conv1")
    t = b.call("nn.relu", [t])
    t = b.call("nn.max_pool2d", [t], {"pool_size": [2, 2], "strides": [2, 2],
                                      "layout": "NHWC"})
    t = b.call("mean", [t], {"axis": [1, 2]})
    return b.call("nn.dense", [t, b.weight("dense/kernel", (4, 8))], {"units": 4})


@case("attention_like", "8m 16f 19mp", "batch_matmul + softmax + batch_matmul (transpose_b false), reshape and transpose")
def _(b):
    q = b.input("q", (2, 4, 8))
    k = b.input("k", (2, 6, 8))
    vv = b.input("v", (2, 6, 8))
    s = b.call("nn.batch_matmul", [q, k])
    s = b.call("multiply", [s, b.const(1 / math.sqrt(8))])
    p = b.call("nn.softmax", [s])
    o = b.call("nn.batch_matmul", [p, vv], {"transpose_b": False})
    o = b.call("transpose", [o], {"axes": [1, 0, 2]})
    return b.call("reshape", [o], {"newshape": [0, -1]})


# -- operators composed of IR ops (compiler/ops_tensor.c) -------------------------

@case("conv1d_ncw", "7m 9fp 18m", "nn.conv1d NCW/OIW, 2-value padding [1, 2], stride 2, batch 2, odd width")
def _(b):
    x = b.input("x", (2, 3, 17))
    w = b.weight("conv.weight", (5, 3, 3), -0.4, 0.4)
    return b.call("nn.conv1d", [x, w], {"padding": [1, 2], "strides": [2],
                                        "channels": 5, "kernel_size": [3]})


@case("conv1d_groups_dilation", "8f 12mp 19m", "nn.conv1d groups 2, dilation 2, 1-value padding, then bias_add and relu")
def _(b):
    x = b.input("x", (1, 4, 13))
    w = b.weight("conv.weight", (6, 2, 3), -0.4, 0.4)
    y = b.call("nn.conv1d", [x, w], {"groups": 2, "dilation": [2], "padding": [2]})
    y = b.call("nn.bias_add", [y, b.weight("conv.bias", (6,))])
    return b.call("nn.relu", [y])


@case("conv1d_nwc_wio", "9m 16f 18mp", "nn.conv1d NWC/WIO, kernel 5, padding [2, 0], depthwise (groups 3)")
def _(b):
    x = b.input("x", (1, 11, 3))
    w = b.weight("conv.weight", (5, 1, 3), -0.4, 0.4)
    return b.call("nn.conv1d", [x, w], {"data_layout": "NWC", "kernel_layout": "WIO",
                                        "groups": 3, "padding": [2, 0]})


@case("conv1d_audio", "12fp 18m", "nn.conv1d 8 -> 24 channels, kernel 9, padding 4, bias_add and relu (fused across the conv's reshape views); then expand_dims, a per-channel multiply, squeeze and clip: a chain of views between the conv and the ops fused into it")
def _(b):
    x = b.input("x", (1, 8, 40))
    w = b.weight("conv.weight", (24, 8, 9), -0.3, 0.3)
    y = b.call("nn.conv1d", [x, w], {"padding": [4, 4], "channels": 24, "kernel_size": [9]})
    y = b.call("nn.bias_add", [y, b.weight("conv.bias", (24,))])
    y = b.call("nn.relu", [y])
    y = b.call("expand_dims", [y], {"axis": 2, "num_newaxis": 1})
    y = b.call("multiply", [y, b.weight("scale", (24, 1, 1), 0.5, 1.5)])
    y = b.call("squeeze", [y], {"axis": [2]})
    return b.call("clip", [y], {"a_min": 0.0, "a_max": 0.8})


@case("pool1d_max", "7f 9m 18m", "nn.max_pool1d pool 3, stride 2, padding 1; then ceil_mode on an even width")
def _(b):
    x = b.input("x", (2, 3, 15))
    y = b.call("nn.max_pool1d", [x], {"pool_size": [3], "strides": [2], "padding": [1]})
    return b.call("nn.max_pool1d", [y], {"pool_size": [3], "strides": [2],
                                          "ceil_mode": True})


@case("pool1d_max_nwc_dilation", "8m 19f", "nn.max_pool1d NWC, dilation 2, padding [0, 1]")
def _(b):
    x = b.input("x", (1, 12, 4))
    return b.call("nn.max_pool1d", [x], {"pool_size": [2], "dilation": [2], "padding": [0, 1],
                                          "layout": "NWC"})


@case("pool1d_avg", "7m 12f 18mp", "nn.avg_pool1d: count_include_pad false and true, asymmetric padding")
def _(b):
    x = b.input("x", (1, 4, 11))
    y = b.call("nn.avg_pool1d", [x], {"pool_size": [3], "strides": [2], "padding": [1, 2]})
    z = b.call("nn.avg_pool1d", [x], {"pool_size": [4], "strides": [3], "padding": [2],
                                       "count_include_pad": True})
    return rw.Tuple([y, z])


@case("pool1d_avg_ceil", "9f 16m", "nn.avg_pool1d ceil_mode, pool 2, stride 2, odd width (last window past the input)")
def _(b):
    x = b.input("x", (2, 3, 9))
    return b.call("nn.avg_pool1d", [x], {"pool_size": [2], "strides": [2], "ceil_mode": True})


@case("adaptive_avg_pool1d", "8m 12f 18mp", "nn.adaptive_avg_pool1d to 4 (uneven bins), to 1, and NWC to the same size")
def _(b):
    x = b.input("x", (1, 3, 10))
    xt = b.input("xt", (2, 7, 3))
    return rw.Tuple([b.call("nn.adaptive_avg_pool1d", [x], {"output_size": [4]}),
                     b.call("nn.adaptive_avg_pool1d", [x], {"output_size": [1]}),
                     b.call("nn.adaptive_avg_pool1d", [xt], {"layout": "NWC"})])


@case("full_const_fill", "7m 9f 18m", "full with a constant fill (float32 and int32 from a float fill), added to inputs")
def _(b):
    x = b.input("x", (2, 3))
    i = b.input("i", (4,), -50, 50, "int32")
    f = b.call("full", [b.const(0.5)], {"shape": [2, 3], "dtype": "float32"})
    k = b.call("full", [b.const(2.7)], {"shape": [4], "dtype": "int32"})
    return rw.Tuple([b.call("add", [x, f]), b.call("add", [i, k])])


@case("full_runtime_fill", "8m 16f", "full and full_like whose fill value is a runtime scalar input")
def _(b):
    v = b.input("v", ())
    x = b.input("x", (3, 1, 2))
    return rw.Tuple([b.call("full", [v], {"shape": [2, 1, 3], "dtype": "float32"}),
                     b.call("multiply", [x, b.call("full_like", [x, v])])])


@case("zeros_ones", "7f 12m 19m", "zeros, ones (float32, int32, int64, bool), zeros_like and ones_like of an int32 input; some outputs constant")
def _(b):
    x = b.input("x", (2, 3))
    i = b.input("i", (3, 2), -9, 9, "int32")
    return rw.Tuple([b.call("add", [x, b.call("ones", [], {"shape": [2, 3], "dtype": "float32"})]),
                     b.call("zeros", [], {"shape": [2, 2], "dtype": "float32"}),
                     b.call("ones", [], {"shape": [3], "dtype": "int64"}),
                     b.call("ones", [], {"shape": [2], "dtype": "bool"}),
                     b.call("add", [i, b.call("ones_like", [i])]),
                     b.call("zeros_like", [i])])


@case("broadcast_to", "7m 9f 18mp", "broadcast_to (3, 1) -> (2, 3, 4), (1, 4) -> (4, 4) of int32, a no-op broadcast, and broadcast_to_like")
def _(b):
    x = b.input("x", (3, 1))
    i = b.input("i", (1, 4), -9, 9, "int32")
    y = b.input("y", (3, 1))
    w = b.weight("w", (2, 3, 4))
    return rw.Tuple([b.call("broadcast_to", [x], {"shape": [2, 3, 4]}),
                     b.call("broadcast_to", [i], {"shape": [4, 4]}),
                     b.call("broadcast_to", [x], {"shape": [3, 1]}),
                     b.call("broadcast_to_like", [y, w])])


@case("reshape_like", "8f 12m 19mp", "reshape_like: whole shape, and lhs/rhs ranges (lhs_begin 1, rhs_end -1)")
def _(b):
    x = b.input("x", (2, 3, 4))
    y = b.input("y", (4, 6))
    z = b.input("z", (3, 4, 7))
    return rw.Tuple([b.call("reshape_like", [x, y]),
                     b.call("reshape_like", [x, z], {"lhs_begin": 1, "rhs_end": -1})])


@case("collapse_sum_like", "7m 16f", "collapse_sum_like (2, 3, 4) to (3, 1) and to (2, 3, 4) (no-op)")
def _(b):
    x = b.input("x", (2, 3, 4))
    y = b.input("y", (3, 1))
    return rw.Tuple([b.call("collapse_sum_like", [x, y]),
                     b.call("collapse_sum_like", [x, x])])


@case("stack", "7f 9m 18m", "stack of 3 tensors on axis 0, of 2 on axis -1, and of int32 tensors on axis 1")
def _(b):
    x = b.input("x", (2, 3))
    y = b.input("y", (2, 3))
    i = b.input("i", (4,), -9, 9, "int32")
    j = b.input("j", (4,), -9, 9, "int32")
    return rw.Tuple([b.call("stack", [rw.Tuple([x, y, x])]),
                     b.call("stack", [rw.Tuple([x, y])], {"axis": -1}),
                     b.call("stack", [rw.Tuple([i, j])], {"axis": 1})])


@case("take_const_indices", "7m 9f 18mp", "take with constant indices: axis 1 wrap with negatives (LSTM-style), clip past both ends, 2-D int64 indices, flattened (axis null), int32 data")
def _(b):
    x = b.input("x", (2, 5, 3))
    i = b.input("i", (4, 3), -9, 9, "int32")
    return rw.Tuple([
        b.call("take", [x, b.const([-1, 0, 3, 4], "int32")], {"axis": 1, "mode": "wrap"}),
        b.call("take", [x, b.const([[-3, 9], [2, 2]], "int64")], {"axis": -1}),
        b.call("take", [x, b.const([7, 0, 29, 3, 1], "int64")], {"mode": "fast"}),
        b.call("take", [i, b.const(2, "int32")], {"axis": 0})])


@case("layer_norm", "7f 12m 18mp", "nn.layer_norm over the last axis (transformer-style, values offset by 3), and over axis 1 without scale and center")
def _(b):
    x = b.input("x", (2, 5, 7), 2.0, 4.0)
    g = b.weight("ln.weight", (7,), 0.5, 1.5)
    be = b.weight("ln.bias", (7,))
    y = b.input("y", (3, 4, 2))
    return rw.Tuple([b.call("nn.layer_norm", [x, g, be]),
                     b.call("nn.layer_norm", [y, b.weight("g2", (4,)), b.weight("b2", (4,))],
                            {"axis": 1, "center": False, "scale": False, "epsilon": 1e-3})])


@case("layer_norm_corners", "18m 9f", "nn.layer_norm's one kernel at its corners: a middle axis of a 4-d tensor, a negative axis with scale only, axis 0 with center only, a normalised axis of 1 (variance 0) and odd sizes")
def _(b):
    x = b.input("x", (2, 5, 3, 7), -2.0, 3.0)
    y = b.input("y", (3, 13, 1))
    z = b.input("z", (9, 5))
    u = b.input("u", (4, 1))
    w = b.input("w", (1, 7, 33), 2.0, 4.0)
    return rw.Tuple([
        b.call("nn.layer_norm", [x, b.weight("g1", (5,), 0.5, 1.5), b.weight("b1", (5,))],
               {"axis": 1}),
        b.call("nn.layer_norm", [y, b.weight("g2", (13,), 0.5, 1.5), b.weight("b2", (13,))],
               {"axis": -2, "center": False}),
        b.call("nn.layer_norm", [z, b.weight("g3", (9,)), b.weight("b3", (9,))],
               {"axis": 0, "scale": False, "epsilon": 1e-2}),
        b.call("nn.layer_norm", [u, b.weight("g4", (1,)), b.weight("b4", (1,))]),
        b.call("nn.layer_norm", [w, b.weight("g5", (33,), 0.5, 1.5), b.weight("b5", (33,))],
               {"epsilon": 1e-6})])


@case("instance_norm", "8m 16f", "nn.instance_norm NCHW (axis 1) and NWC (axis 2)")
def _(b):
    x = b.input("x", (2, 3, 4, 5))
    y = b.input("y", (2, 6, 3))
    return rw.Tuple([b.call("nn.instance_norm", [x, b.weight("g", (3,), 0.5, 1.5),
                                                 b.weight("b", (3,))]),
                     b.call("nn.instance_norm", [y, b.weight("g2", (3,), 0.5, 1.5),
                                                 b.weight("b2", (3,))], {"axis": 2})])


@case("group_norm", "7m 9f 19mp", "nn.group_norm 3 groups of 2 channels (NCHW), and 2 groups on a rank-3 tensor with epsilon 1e-2")
def _(b):
    x = b.input("x", (2, 6, 3, 3))
    y = b.input("y", (1, 4, 5))
    return rw.Tuple([b.call("nn.group_norm", [x, b.weight("g", (6,), 0.5, 1.5),
                                              b.weight("b", (6,))], {"num_groups": 3}),
                     b.call("nn.group_norm", [y, b.weight("g2", (4,), 0.5, 1.5),
                                              b.weight("b2", (4,))],
                            {"num_groups": 2, "epsilon": 1e-2, "center": False})])


@case("variance", "7f 12m 18m", "variance(data, mean): axis 1 keepdims, unbiased over all axes, exclude")
def _(b):
    x = b.input("x", (3, 4, 5))
    m1 = b.call("mean", [x], {"axis": [1], "keepdims": True})
    m2 = b.call("mean", [x], {"keepdims": True})
    m3 = b.call("mean", [x], {"axis": [0], "keepdims": True, "exclude": True})
    return rw.Tuple([
        b.call("variance", [x, m1], {"axis": [1], "keepdims": True}),
        b.call("variance", [x, m2], {"unbiased": True}),
        b.call("variance", [x, m3], {"axis": [0], "exclude": True})])


# -- data movement and window normalisations --------------------------------------

@case("reverse", "7m 12f 18mp", "reverse along axis 1, axis -1 of int32, and an axis of size 1")
def _(b):
    x = b.input("x", (2, 5, 3))
    i = b.input("i", (4, 3), -9, 9, "int32")
    return rw.Tuple([b.call("reverse", [x], {"axis": 1}), b.call("reverse", [i], {"axis": -1}),
                     b.call("reverse", [b.call("expand_dims", [x], {"axis": 0})], {"axis": 0})])


@case("tile_repeat", "8f 9m 19m", "tile with reps of the same rank, fewer (leading 1s) and more (new axes); repeat on axis 1 and -1 (int32)")
def _(b):
    x = b.input("x", (2, 3))
    i = b.input("i", (3, 2), -9, 9, "int32")
    return rw.Tuple([b.call("tile", [x], {"reps": [2, 3]}), b.call("tile", [x], {"reps": [2]}),
                     b.call("tile", [x], {"reps": [2, 1, 2]}),
                     b.call("repeat", [x], {"repeats": 3, "axis": 1}),
                     b.call("repeat", [i], {"repeats": 2, "axis": -1})])


@case("depth_space", "7f 12m 18m", "depth_to_space DCR and CRD (block 2), space_to_depth (block 2), NCHW and NHWC")
def _(b):
    x = b.input("x", (1, 8, 3, 2))
    y = b.input("y", (2, 3, 4, 6))
    z = b.input("z", (1, 2, 3, 12))
    return rw.Tuple([b.call("nn.depth_to_space", [x], {"block_size": 2}),
                     b.call("nn.depth_to_space", [x], {"block_size": 2, "mode": "CRD"}),
                     b.call("nn.space_to_depth", [y], {"block_size": 2}),
                     b.call("nn.depth_to_space", [z], {"block_size": 2, "layout": "NHWC"})])


@case("upsampling_nearest", "7m 9f 16m 18mp", "nn.upsampling nearest_neighbor, scales 2 x 3 (NCHW) and 2 x 2 (NHWC)")
def _(b):
    x = b.input("x", (1, 2, 3, 4))
    y = b.input("y", (1, 3, 2, 5))
    return rw.Tuple([b.call("nn.upsampling", [x], {"scale_h": 2.0, "scale_w": 3.0}),
                     b.call("nn.upsampling", [y], {"scale_h": 2.0, "scale_w": 2.0,
                                                   "layout": "NHWC"})])


@case("lrn", "7f 12m 18m", "nn.lrn size 5 over 7 channels (AlexNet constants), size 4 (even) over axis 3")
def _(b):
    x = b.input("x", (1, 7, 3, 3), -2, 2)
    y = b.input("y", (2, 3, 2, 6), -2, 2)
    return rw.Tuple([b.call("nn.lrn", [x], {"size": 5, "alpha": 1e-4, "beta": 0.75, "bias": 2.0}),
                     b.call("nn.lrn", [y], {"size": 4, "axis": 3, "alpha": 0.5, "beta": 0.5,
                                            "bias": 1.0})])


@case("l2_normalize", "8m 16f 19mp", "nn.l2_normalize over axis 1 (eps 1e-12) and over axes [1, 2] with a large eps")
def _(b):
    x = b.input("x", (2, 5, 3))
    return rw.Tuple([b.call("nn.l2_normalize", [x], {"eps": 1e-12, "axis": [1]}),
                     b.call("nn.l2_normalize", [x], {"eps": 4.0, "axis": [1, 2]})])


# -- elementwise operators of the table's later rows -------------------------------

@case("rounding_ops", "7m 12f 18mp", "floor, ceil, round (halves away from zero), trunc and sign on halves, integers and fractions; sign of int32 and int8")
def _(b):
    x = b.input("x", (2, 8))
    b.arrays["x"] = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, 3.0],
                              [-1.2, 0.7, -0.7, 1.2, 2.49, -2.51, 7.0, -7.0]], np.float32)
    i = b.input("i", (5,), -3, 3, "int32")
    j = b.input("j", (3,), -100, 100, "int8")
    return rw.Tuple([b.call(op, [x]) for op in ("floor", "ceil", "round", "trunc", "sign")]
                    + [b.call("sign", [i]), b.call("sign", [j])])


@case("exp_sigmoid_range", "12m 18f", "exp and sigmoid over the float range (rk_expf): +-inf, NaN, past overflow (88.73) and underflow (-103.98), subnormal results, tiny and signed zeros, a sweep of [-110, 110]; softmax of rows of 37 with a NaN, a +inf, -inf and a spread of 160")
def _(b):
    x = b.input("x", (4, 64))
    edge = [-np.inf, np.inf, np.nan, -1e30, 1e30, -110.0, 110.0, -104.5, -103.97, -103.9,
            -100.0, -95.0, -88.0, -87.4, -87.3, -80.0, -20.0, -1e-3, -1e-30, -0.0, 0.0,
            1e-30, 1e-3, 0.34657359, -0.34657359, 0.5, 1.0, 20.0, 80.0, 88.5, 88.72, 88.73,
            89.0, 104.5, 2.5e-8, -2.5e-8]
    sweep = np.linspace(-110.0, 110.0, 4 * 64 - len(edge))
    b.arrays["x"] = np.concatenate([edge, sweep]).astype(np.float32).reshape(4, 64)
    s = b.input("s", (4, 37), -80.0, 80.0)
    b.arrays["s"][0, 5] = np.nan
    b.arrays["s"][1, 30] = np.inf
    b.arrays["s"][2, :] = -np.inf
    b.arrays["s"][2, 36] = 1.0
    return rw.Tuple([b.call("exp", [x]), b.call("sigmoid", [x]), b.call("nn.softmax", [s])])


def _ties(b, name, shape, dtype="float32"):
    v = b.input(name, shape, -2, 2, dtype)
    b.arrays[name] = b.rng.integers(-1, 2, size=shape).astype(dtype)
    return v


@case("compare_float", "8f 16m 19m", "equal, not_equal, less, less_equal, greater, greater_equal of float32 (2, 3, 4) and (3, 1) with ties: bool outputs")
def _(b):
    x = _ties(b, "x", (2, 3, 4))
    y = _ties(b, "y", (3, 1))
    return rw.Tuple([b.call(op, [x, y]) for op in rw._COMPARE])


@case("compare_int", "7m 9f 18m", "comparisons of int32, int64 (token-id style) and uint8 tensors with ties, one against a constant")
def _(b):
    i = _ties(b, "i", (2, 5), "int32")
    j = _ties(b, "j", (5,), "int32")
    k = b.input("k", (6,), 0, 30000, "int64")
    u = b.input("u", (4,), 0, 255, "uint8")
    return rw.Tuple([b.call("less", [i, j]), b.call("equal", [i, j]),
                     b.call("not_equal", [k, b.const(5, "int64")]),
                     b.call("greater_equal", [u, b.const([0, 100, 200, 255], "uint8")])])


@case("logical_ops", "7f 12m 19mp", "logical_and, logical_or, logical_xor, logical_not on bool inputs (broadcast) and on comparison results")
def _(b):
    p = b.input("p", (2, 4), dtype="bool")
    q = b.input("q", (4,), dtype="bool")
    b.arrays["p"] = b.rng.integers(0, 2, size=(2, 4)).astype(bool)
    b.arrays["q"] = b.rng.integers(0, 2, size=(4,)).astype(bool)
    x = b.input("x", (2, 4))
    gt = b.call("greater", [x, b.const(0.0)])
    return rw.Tuple([b.call("logical_and", [p, q]), b.call("logical_or", [p, q]),
                     b.call("logical_xor", [p, q]), b.call("logical_not", [p]),
                     b.call("logical_and", [gt, b.call("logical_not", [q])])])


@case("clip_int", "8m 16f 18m", "clip on int8 (-5.5, 100.2), uint8 (3, 200) and int32 (-1000, 1000) tensors")
def _(b):
    i8 = b.input("i8", (2, 6), -128, 127, "int8")
    u8 = b.input("u8", (7,), 0, 255, "uint8")
    i32 = b.input("i32", (3, 3), -5000, 5000, "int32")
    return rw.Tuple([b.call("clip", [i8], {"a_min": -5.5, "a_max": 100.2}),
                     b.call("clip", [u8], {"a_min": 3.0, "a_max": 200.0}),
                     b.call("clip", [i32], {"a_min": -1000.0, "a_max": 1000.0})])


@case("cast_dtypes", "7m 12f 18m", "cast float32 -> int8, uint8, int32, int64, bool (0.5 is true); bool, int32, int8 -> float32; int64 -> int32; uint8 -> int32")
def _(b):
    x = b.input("x", (2, 5), -100, 100)
    b.arrays["x"][0, :3] = [0.5, 0.0, -0.25]
    u = b.input("u", (2, 5), 0, 200)
    p = b.input("p", (3,), dtype="bool")
    b.arrays["p"] = np.array([True, False, True])
    i = b.input("i", (4,), -9999, 9999, "int32")
    k = b.input("k", (4,), -99999, 99999, "int64")
    s8 = b.input("s8", (4,), -128, 127, "int8")
    u8 = b.input("u8", (4,), 0, 255, "uint8")
    cast = lambda t, d: b.call("cast", [t], {"dtype": d})
    return rw.Tuple([cast(x, "int8"), cast(u, "uint8"), cast(x, "int32"), cast(x, "int64"),
                     cast(x, "bool"), cast(p, "float32"), cast(i, "float32"),
                     cast(s8, "float32"), cast(k, "int32"), cast(u8, "int32"),
                     cast(i, "bool")])


def _ints(b, name, shape, lo, hi, dtype):
    """An integer input drawn uniformly from [lo, hi] (both ends included)."""
    v = b.input(name, shape, lo, hi, dtype)
    b.arrays[name] = b.rng.integers(lo, hi + 1, size=shape).astype(dtype)
    return v


@case("take_runtime", "8m 12f 18m 19mp", "take with indices given at run time: clip past both ends (int32, axis 1), wrap with negatives (int64, axis -1), fast in range, flattened (axis null), and int8, uint8, bool, int64 data")
def _(b):
    x = b.input("x", (3, 5, 4))
    i = _ints(b, "i", (2, 3), -8, 8, "int32")
    k = _ints(b, "k", (7,), -13, 13, "int64")
    f = _ints(b, "f", (2, 2), 0, 4, "int64")
    q = _ints(b, "q", (4, 3), -128, 127, "int8")
    u = _ints(b, "u", (5,), 0, 255, "uint8")
    m = b.input("m", (3, 5), dtype="bool")
    b.arrays["m"] = b.rng.integers(0, 2, size=(3, 5)).astype(bool)
    t = _ints(b, "t", (6,), -2 ** 62, 2 ** 62, "int64")
    return rw.Tuple([
        b.call("take", [x, i], {"axis": 1}),
        b.call("take", [x, k], {"axis": -1, "mode": "wrap"}),
        b.call("take", [x, f], {"axis": 1, "mode": "fast"}),
        b.call("take", [x, i], {"mode": "clip"}),
        b.call("take", [q, k], {"axis": 0, "mode": "wrap"}),
        b.call("take", [u, i], {"axis": 0}),
        b.call("take", [m, f], {"axis": 1, "mode": "fast"}),
        b.call("take", [t, k], {"axis": 0, "mode": "wrap"})])


@case("take_embedding", "8m 12f 18mp 19m", "BERT-style embedding: int64 token ids (1, 7) into a (30, 16) table, plus position embeddings taken by int64 positions, then layer_norm")
def _(b):
    ids = _ints(b, "input_ids", (1, 7), 0, 29, "int64")
    pos = _ints(b, "position_ids", (1, 7), 0, 7, "int64")
    emb = b.weight("embeddings.word_embeddings.weight", (30, 16))
    pe = b.weight("embeddings.position_embeddings.weight", (8, 16))
    e = b.call("add", [b.call("take", [emb, ids], {"axis": 0}),
                       b.call("take", [pe, pos], {"axis": 0})])
    g = b.weight("embeddings.LayerNorm.weight", (16,), 0.5, 1.5)
    be = b.weight("embeddings.LayerNorm.bias", (16,))
    return b.call("nn.layer_norm", [e, g, be], {"axis": -1, "epsilon": 1e-12})


@case("take_batch_dims", "9m 18f", "take with batch_dims 1: axis 2 in wrap mode, axis 1 in clip mode, and batch_dims -1 with 2-D indices")
def _(b):
    x = b.input("x", (2, 3, 5))
    i = _ints(b, "i", (2, 4), -7, 7, "int32")
    y = b.input("y", (2, 5, 3))
    j = _ints(b, "j", (2, 3), -2, 6, "int64")
    return rw.Tuple([
        b.call("take", [x, i], {"axis": 2, "batch_dims": 1, "mode": "wrap"}),
        b.call("take", [y, j], {"axis": 1, "batch_dims": 1}),
        b.call("take", [y, j], {"axis": 2, "batch_dims": -1, "mode": "wrap"})])


@case("gather", "7m 12f 18mp", "gather along axis 1 (int64 indices, shape of the data), along -1 with indices smaller than the data on every axis (int32), along 0 of int32 and int8 data")
def _(b):
    x = b.input("x", (3, 4, 5))
    i = _ints(b, "i", (3, 2, 5), 0, 3, "int64")
    j = _ints(b, "j", (2, 3, 4), 0, 4, "int32")
    d = _ints(b, "d", (4, 3), -1000, 1000, "int32")
    q = _ints(b, "q", (4, 3), -128, 127, "int8")
    k = _ints(b, "k", (6, 2), 0, 3, "int64")
    return rw.Tuple([b.call("gather", [x, i], {"axis": 1}),
                     b.call("gather", [x, j], {"axis": -1}),
                     b.call("gather", [d, k], {"axis": 0}),
                     b.call("gather", [q, k], {"axis": 0})])


@case("where", "7f 12m 19mp", "where with a bool condition (2, 1, 4) against x (3, 4) and a scalar y, a float32 condition (zeros and -0.0 false), int32 operands under an int32 condition, and a comparison result")
def _(b):
    c = b.input("c", (2, 1, 4), dtype="bool")
    b.arrays["c"] = b.rng.integers(0, 2, size=(2, 1, 4)).astype(bool)
    x = b.input("x", (3, 4))
    fc = b.input("fc", (3, 4))
    b.arrays["fc"] = np.array([0.0, -0.0, 1.5, np.nan] * 3, np.float32).reshape(3, 4)
    i = _ints(b, "i", (3, 1), -9, 9, "int32")
    j = _ints(b, "j", (4,), -9, 9, "int32")
    ic = _ints(b, "ic", (1, 4), -1, 1, "int32")
    gt = b.call("greater", [x, b.const(0.0)])
    return rw.Tuple([b.call("where", [c, x, b.const(-7.0)]),
                     b.call("where", [fc, x, b.call("negative", [x])]),
                     b.call("where", [ic, i, j]),
                     b.call("where", [gt, x, b.const([1.0, 2.0, 3.0, 4.0])])])


@case("argmax_argmin", "7m 8f 18m 19mp", "argmax along axis 1, argmin along -1 with keepdims, argmax of everything, argmax over axes 0 and 2 (not adjacent), argmin with exclude; int32 and uint8 data with ties (first index wins)")
def _(b):
    x = b.input("x", (2, 3, 5))
    i = _ints(b, "i", (4, 6), -3, 3, "int32")
    u = _ints(b, "u", (3, 5), 1, 4, "uint8")
    return rw.Tuple([
        b.call("argmax", [x], {"axis": [1]}),
        b.call("argmin", [x], {"axis": [-1], "keepdims": True}),
        b.call("argmax", [x]),
        b.call("argmax", [x], {"axis": [0, 2]}),
        b.call("argmin", [x], {"axis": [1], "exclude": True}),
        b.call("argmax", [i], {"axis": [1]}),
        b.call("argmin", [u], {"axis": [0], "keepdims": True})])


@case("argmax_last_index", "8m 18f", "argmax and argmin with select_last_index on int32 and float32 data with ties, over axis 0 and axis -1")
def _(b):
    i = _ints(b, "i", (5, 4), -2, 2, "int32")
    x = _ties(b, "x", (3, 6))
    return rw.Tuple([
        b.call("argmax", [i], {"axis": [0], "select_last_index": True}),
        b.call("argmin", [i], {"axis": [-1], "select_last_index": True, "keepdims": True}),
        b.call("argmax", [x], {"axis": [1], "select_last_index": True}),
        b.call("argmin", [x], {"axis": [0]})])


@case("cumsum", "8m 12f 18mp 19m", "cumsum along axis 1 and exclusive along -1 (float32), flattened (axis null) int32 summed in int64, int8 in int32, bool in int32, and int32 wrapping past 2^31")
def _(b):
    x = b.input("x", (2, 5, 3))
    i = _ints(b, "i", (3, 4), -1000, 1000, "int32")
    q = _ints(b, "q", (2, 7), -128, 127, "int8")
    m = b.input("m", (3, 4), dtype="bool")
    b.arrays["m"] = b.rng.integers(0, 2, size=(3, 4)).astype(bool)
    w = _ints(b, "w", (6,), 2 ** 30, 2 ** 31 - 1, "int32")
    return rw.Tuple([
        b.call("cumsum", [x], {"axis": 1}),
        b.call("cumsum", [x], {"axis": -1, "exclusive": True}),
        b.call("cumsum", [i], {"dtype": "int64"}),
        b.call("cumsum", [q], {"axis": 1, "dtype": "int32"}),
        b.call("cumsum", [m], {"axis": 0, "dtype": "int32", "exclusive": True}),
        b.call("cumsum", [w], {"axis": 0})])


@case("prod", "7m 12f 18mp", "prod over axis 1, over the last axis with keepdims, over everything, and with exclude")
def _(b):
    x = b.input("x", (2, 3, 5), 0.5, 1.5)
    return rw.Tuple([b.call("prod", [x], {"axis": [1]}),
                     b.call("prod", [x], {"axis": [-1], "keepdims": True}),
                     b.call("prod", [x]),
                     b.call("prod", [x], {"axis": [0, 2], "exclude": True})])


@case("adaptive_max_pool", "8m 12f 18mp", "nn.adaptive_max_pool2d (1, 3, 7, 9) -> (3, 4) NCHW and -> (2, 2) NHWC, of int8 data, nn.adaptive_max_pool1d (2, 3, 10) -> 4, and nn.adaptive_avg_pool2d of int32 data with negative sums (truncating division)")
def _(b):
    x = b.input("x", (1, 3, 7, 9))
    h = b.input("h", (1, 5, 6, 3))
    q = _ints(b, "q", (1, 2, 5, 5), -128, 127, "int8")
    r = b.input("r", (2, 3, 10))
    i = _ints(b, "i", (1, 2, 5, 7), -1000, 900, "int32")
    return rw.Tuple([
        b.call("nn.adaptive_max_pool2d", [x], {"output_size": [3, 4]}),
        b.call("nn.adaptive_max_pool2d", [h], {"output_size": [2], "layout": "NHWC"}),
        b.call("nn.adaptive_max_pool2d", [q], {"output_size": [3, 2]}),
        b.call("nn.adaptive_max_pool1d", [r], {"output_size": [4]}),
        b.call("nn.adaptive_avg_pool2d", [i], {"output_size": [3, 4]})])


def deconv(b, x, wshape, attrs, wname="deconv.weight", name="deconv", op="nn.conv2d_transpose"):
    w = b.weight(wname, wshape, -0.4, 0.4)
    return b.call(op, [x, w], attrs, name=name)


@case("conv2d_transpose_unet", "8m 16fp 18mp", "U-Net decoder: conv2d_transpose 2x2 stride 2 (IOHW), bias_add, relu; odd sizes")
def _(b):
    x = b.input("data", (1, 6, 5, 7))
    y = deconv(b, x, (6, 4, 2, 2), {"channels": 4, "kernel_size": [2, 2], "strides": [2, 2],
                                      "padding": [0, 0, 0, 0], "output_padding": [0, 0],
                                      "kernel_layout": "IOHW"})
    y = b.call("nn.bias_add", [y, b.weight("deconv.bias", (4,))])
    return b.call("nn.relu", [y])


@case("conv2d_transpose_decoder", "12fp 18m", "decoder layer: conv2d_transpose 8 -> 16 channels, 4x4, stride 2, padding 1 (four 2x2 phase convs), bias_add, relu; odd sizes")
def _(b):
    x = b.input("data", (1, 8, 6, 11))
    y = deconv(b, x, (8, 16, 4, 4), {"channels": 16, "kernel_size": [4, 4], "strides": [2, 2],
                                       "padding": [1, 1, 1, 1], "kernel_layout": "IOHW"})
    y = b.call("nn.bias_add", [y, b.weight("deconv.bias", (16,))])
    return b.call("nn.relu", [y])


@case("conv2d_transpose_dcgan", "9m 18mp 19f", "DCGAN-like generator (relay.testing.dcgan): dense, reshape, two 4x4 stride-2 padding-1 conv2d_transpose with batch_norm and relu, tanh")
def _(b):
    z = b.input("z", (1, 10))
    h = b.call("nn.dense", [z, b.weight("g.dense.weight", (128, 10))], {"units": 128})
    h = b.call("nn.relu", [b.call("reshape", [h], {"newshape": [1, 8, 4, 4]})])
    h = deconv(b, h, (8, 6, 4, 4), {"channels": 6, "kernel_size": [4, 4], "strides": [2, 2],
                                      "padding": [1, 1], "kernel_layout": "IOHW"},
               wname="g.deconv1.weight", name="deconv1")
    g, be, m, var = bn_params(b, 6, "g.bn1")
    h = b.call("nn.relu", [rw.TupleGetItem(b.call("nn.batch_norm", [h, g, be, m, var]), 0)])
    h = deconv(b, h, (6, 3, 4, 4), {"channels": 3, "kernel_size": [4, 4], "strides": [2, 2],
                                      "padding": [1, 1], "kernel_layout": "IOHW"},
               wname="g.deconv2.weight", name="deconv2")
    return b.call("tanh", [h])


@case("conv2d_transpose_groups_dilation", "12m 18f 19mp", "conv2d_transpose: groups 2, strides 2x3, dilation 2x1, 4-value padding, output_padding 1x2; stride 1 with padding 3 > k-1 (a crop); stride 2 with padding 3,3,1,1")
def _(b):
    x = b.input("x", (1, 4, 5, 6))
    y1 = deconv(b, x, (4, 3, 3, 3), {"groups": 2, "strides": [2, 3], "dilation": [2, 1],
                                       "padding": [1, 0, 2, 1], "output_padding": [1, 2],
                                       "channels": 6, "kernel_layout": "IOHW"})
    x2 = b.input("x2", (1, 3, 6, 5))
    y2 = deconv(b, x2, (3, 2, 3, 3), {"padding": [3, 1], "kernel_layout": "IOHW"},
                wname="deconv2.weight", name="deconv2")
    y3 = deconv(b, x2, (3, 5, 3, 3), {"strides": [2, 2], "padding": [3, 3, 1, 1],
                                        "kernel_layout": "IOHW"},
                wname="deconv3.weight", name="deconv3")
    return rw.Tuple([y1, y2, y3])


@case("conv2d_transpose_phases", "18m 19fp", "conv2d_transpose at strides above 1 (computed per output phase): strides 3 and 2x3 with kernels equal to, one above and not a multiple of the stride; paddings that crop inside a phase (larger than the kernel's reach), asymmetric, with output_padding; groups 2; batch 2; conv1d_transpose at stride 4")
def _(b):
    x = b.input("x", (2, 4, 5, 6))
    ys = []
    for i, (ws, a) in enumerate([
            ((4, 3, 3, 3), {"strides": [3, 3]}),
            ((4, 2, 4, 5), {"strides": [3, 2], "padding": [2, 1, 0, 3], "output_padding": [2, 1]}),
            ((4, 3, 5, 4), {"strides": [2, 3], "padding": [4, 3], "groups": 2}),
            ((4, 2, 7, 3), {"strides": [2, 3], "padding": [0, 2, 5, 0], "output_padding": [1, 0]}),
            ((4, 1, 2, 2), {"strides": [2, 2], "padding": [1, 1, 1, 1], "groups": 4})]):
        a = dict(a, kernel_layout="IOHW")
        ys.append(deconv(b, x, ws, a, wname="deconv%d.weight" % i, name="deconv%d" % i))
    x1 = b.input("x1", (1, 3, 7))
    ys.append(deconv(b, x1, (3, 2, 6), {"strides": [4], "padding": [3, 2],
                                          "output_padding": [1], "kernel_layout": "IOW"},
                     wname="deconv1d.weight", name="deconv1d", op="nn.conv1d_transpose"))
    return rw.Tuple(ys)


@case("conv2d_transpose_layouts", "8f 16m 18mp", "conv2d_transpose NHWC data with HWOI weights (Keras/TFLite style), stride 2, padding 1, output_padding 1; OIHW weights with out_layout NHWC, groups 3 (depthwise-like)")
def _(b):
    x = b.input("x", (1, 5, 4, 3))
    y1 = deconv(b, x, (3, 3, 2, 3), {"strides": [2, 2], "padding": [1, 1],
                                       "output_padding": [1, 1], "data_layout": "NHWC",
                                       "kernel_layout": "HWOI"})
    x2 = b.input("x2", (1, 3, 4, 5))
    y2 = deconv(b, x2, (1, 3, 3, 3), {"groups": 3, "strides": [2, 2], "padding": [1, 1],
                                        "kernel_layout": "OIHW", "out_layout": "NHWC"},
                wname="deconv2.weight", name="deconv2")
    return rw.Tuple([y1, y2])


@case("conv2d_transpose_old_dialect", "6m 7f 7mp", "conv2d_transpose as TVM 0.6/0.7 wrote it: kernel_layout OIHW naming the weight [in][out], stride 2, padding 1, output_padding 1")
def _(b):
    x = b.input("data", (1, 4, 3, 5))
    return deconv(b, x, (4, 2, 3, 3), {"strides": [2, 2], "padding": [1, 1],
                                         "output_padding": [1, 1], "channels": 2,
                                         "kernel_size": [3, 3], "kernel_layout": "OIHW"})


@case("conv1d_transpose", "7m 9f 12mp 18m", "conv1d_transpose: stride 3, padding 2,1, output_padding 1, dilation 2; groups 2 with stride 2 (kernel_layout OIW before 0.12, IOW after: the same weight)")
def _(b):
    kl = "IOW" if b.v >= (0, 12) else "OIW"
    x = b.input("x", (1, 4, 9))
    y1 = deconv(b, x, (4, 3, 5), {"strides": [3], "padding": [2, 1], "output_padding": [1],
                                    "dilation": [2], "kernel_layout": kl},
                op="nn.conv1d_transpose")
    x2 = b.input("x2", (2, 4, 6))
    y2 = deconv(b, x2, (4, 2, 3), {"strides": [2], "padding": [1], "groups": 2,
                                     "kernel_layout": kl},
                wname="deconv2.weight", name="deconv2", op="nn.conv1d_transpose")
    return rw.Tuple([y1, y2])


RESIZE_COORDS = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                 "tf_half_pixel_for_nn"]


def resize(b, x, size, **kw):
    return b.call("image.resize2d", [x], dict(size=list(size), **kw))


@case("resize2d_linear", "8m 12f 16mp 18m 19f", "image.resize2d linear in every coordinate mode, 5x7 -> 9x4 (up and down), and to 1x3 (the out == 1 corners)")
def _(b):
    x = b.input("x", (1, 3, 5, 7))
    outs = [resize(b, x, (9, 4), method="linear", coordinate_transformation_mode=c)
            for c in RESIZE_COORDS]
    outs += [resize(b, x, (1, 3), method="linear", coordinate_transformation_mode=c)
             for c in ("pytorch_half_pixel", "align_corners")]
    return rw.Tuple(outs)


@case("resize2d_nearest", "8f 12m 18m 19mp", "image.resize2d nearest_neighbor: every coordinate mode and rounding method (and the defaults), odd sizes up and down, an integer multiple (TVM's integer division), NHWC")
def _(b):
    x = b.input("x", (1, 2, 5, 6))
    combos = [("asymmetric", ""), ("half_pixel", "round"), ("half_pixel", "round_prefer_floor"),
              ("half_pixel", "round_prefer_ceil"), ("align_corners", ""),
              ("tf_half_pixel_for_nn", "floor"), ("pytorch_half_pixel", "ceil"),
              ("asymmetric", "ceil"), ("half_pixel", "floor"), ("align_corners", "floor")]
    outs = []
    for k, (c, r) in enumerate(combos):
        size = (8, 4) if k % 2 == 0 else (3, 11)
        outs.append(resize(b, x, size, method="nearest_neighbor",
                           coordinate_transformation_mode=c, rounding_method=r))
    outs.append(resize(b, x, (10, 12), method="nearest_neighbor",
                       coordinate_transformation_mode="asymmetric", rounding_method="round"))
    y = b.input("y", (1, 5, 6, 3))
    outs.append(resize(b, y, (7, 13), layout="NHWC", method="nearest_neighbor",
                       coordinate_transformation_mode="half_pixel", rounding_method="round"))
    return rw.Tuple(outs)


@case("resize2d_cubic", "8m 16f 18mp", "image.resize2d cubic: alpha -0.75 half_pixel (PyTorch's), alpha -0.5 with cubic_exclude asymmetric, align_corners downsampling, NHWC")
def _(b):
    x = b.input("x", (1, 2, 6, 5))
    y = b.input("y", (2, 4, 5, 3))
    return rw.Tuple([
        resize(b, x, (11, 9), method="cubic", cubic_alpha=-0.75),
        resize(b, x, (9, 13), method="cubic", coordinate_transformation_mode="asymmetric",
               cubic_exclude=1),
        resize(b, x, (4, 3), method="cubic", coordinate_transformation_mode="align_corners",
               cubic_alpha=-0.75),
        resize(b, y, (7, 8), method="cubic", layout="NHWC",
               coordinate_transformation_mode="pytorch_half_pixel", cubic_exclude=1)])


@case("resize2d_int8", "12m 18f", "image.resize2d on uint8 (nearest asymmetric and half_pixel round, linear 2x half_pixel) and int8 (nearest align_corners)")
def _(b):
    u = b.input("u", (1, 3, 5, 6), 0, 255, "uint8")
    s8 = b.input("s8", (1, 2, 4, 4), -128, 127, "int8")
    return rw.Tuple([
        resize(b, u, (7, 9), method="nearest_neighbor",
               coordinate_transformation_mode="asymmetric"),
        resize(b, u, (4, 11), method="nearest_neighbor", rounding_method="round"),
        resize(b, u, (10, 12), method="linear"),
        resize(b, s8, (7, 5), method="nearest_neighbor",
               coordinate_transformation_mode="align_corners")])


@case("upsampling_interp", "7m 9f 16mp 18m", "nn.upsampling bilinear align_corners scale 2, bilinear scale 2, bicubic scale 1.5 x 2.5, nearest scale 1.5 (NHWC) and nearest align_corners")
def _(b):
    x = b.input("x", (1, 3, 5, 4))
    y = b.input("y", (1, 4, 5, 2))
    up = lambda t, **kw: b.call("nn.upsampling", [t], kw)  # noqa: E731
    return rw.Tuple([
        up(x, scale_h=2.0, scale_w=2.0, method="bilinear", align_corners=True),
        up(x, scale_h=2.0, scale_w=2.0, method="bilinear"),
        up(x, scale_h=1.5, scale_w=2.5, method="bicubic"),
        up(y, scale_h=1.5, scale_w=1.5, layout="NHWC"),
        up(x, scale_h=2.0, scale_w=3.0, align_corners=True)])

# ---------------------------------------------------------------------------
# Writing a case
# ---------------------------------------------------------------------------

def parse_variant(s):
    i = 0
    while i < len(s) and s[i].isdigit():
        i += 1
    version = "0.%d.0" % int(s[:i])
    rest = s[i:]
    root = {"m": "module", "f": "function"}[rest[0]]
    return version, root, "p" in rest, ("t" if "t" in rest else
                                          "u" if "u" in rest else None)


def count_ops(fn, v):
    counts = {}
    order = rw._topo([fn.body], lambda e: rw._expr_children(e, v))
    for e in order:
        if isinstance(e, rw.Call) and isinstance(e.op, str):
            n = rw.op_name(e.op, "%d.%d.0" % v)
            counts[n] = counts.get(n, 0) + 1
    return dict(sorted(counts.items()))


def const_stats(fn, v, bound):
    order = rw._topo([fn.body], lambda e: rw._expr_children(e, v))
    cs = [e for e in order if isinstance(e, rw.Const)]
    ib = sum(c.data.nbytes for c in cs)
    bb = sum(a.nbytes for a in bound.values())
    return {"count": len(cs) + len(bound), "bytes": ib + bb, "inline": len(cs),
            "inline_bytes": ib, "bound_params": len(bound), "bound_bytes": bb}


def meta_dump(meta):
    """json.dumps(indent=1) with short int lists on one line (fixture style)."""
    text = json.dumps(meta, indent=1, ensure_ascii=False)
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.endswith("[") :
            j = i + 1
            items = []
            while j < len(lines) and not lines[j].strip().startswith("]"):
                items.append(lines[j].strip().rstrip(","))
                j += 1
            if j < len(lines) and all(_scalar(t) for t in items):
                end = lines[j].strip()
                out.append(line + ", ".join(items) + end)
                i = j + 1
                continue
        out.append(line)
        i += 1
    return "\n".join(out) + "\n"


def _scalar(t):
    return t and (t[0] in '"-0123456789' and not t.endswith("{"))


def build_case(name, fn, variant, index):
    version, root_kind, params_mode, typed_flag = parse_variant(variant)
    v = rw.parse_version(version)
    spans = v >= (0, 12)
    b = B(name, version, params_mode, spans)
    body = fn(b)
    func = rw.Function(b.params, body)
    if typed_flag == "t":
        typed = True
    elif typed_flag == "u":
        typed = False
    elif root_kind == "module" and v < (0, 8):
        typed = True      # IRModule::Add type-checked in 0.6/0.7
    else:
        typed = index % 2 == 1
    root = rw.Module({"main": func}) if root_kind == "module" else func
    # infer types always (for the output metadata and the cross-check)
    rw.infer_types(root, version)
    text = rw.save_json(root, version, typed=typed)
    out_types = flatten_types(func.body.checked_type)
    env = dict(b.arrays)
    env.update(b.bound)
    ref64 = flatten(evaluate(func, env, v, np.float64))
    ref32 = flatten(evaluate(func, env, v, np.float32))
    expected = []
    worst = 0.0
    for t, r64, r32 in zip(out_types, ref64, ref32):
        if tuple(r64.shape) != tuple(t.shape):
            raise AssertionError("%s: reference shape %s != inferred %s"
                                 % (name, r64.shape, t.shape))
        e = np.asarray(r64).astype(t.dtype)
        expected.append(e)
        if e.dtype.kind == "f":
            err = np.abs(r32.astype(np.float64) - e.astype(np.float64))
            bound = ATOL + RTOL * np.abs(e.astype(np.float64))
            if e.size:
                worst = max(worst, float((err / bound).max()))
        elif not np.array_equal(r32, e):
            worst = max(worst, 1e9)
    if len(out_types) != len(ref64):
        raise AssertionError("%s: %d outputs vs %d types" % (name, len(ref64),
                                                             len(out_types)))
    if worst > 0.5:
        raise AssertionError("%s: float32 run uses %.2f of the tolerance"
                             % (name, worst))
    runtime = [p for p in b.params if p.name not in b.bound]
    meta = {
        "generator": "tests/gen_golden.py (tests/relaywriter.py; expected outputs "
                     "from numpy/torch, not TVM and not relayc)",
        "model": name,
        "description": CASE_DESC[name],
        "seed": zlib.crc32(name.encode()),
        "tvm_version": version,
        "root": root_kind,
        "byoc": False,
        "params_file": bool(b.bound),
        "typed": typed,
        "function": "main" if root_kind == "module" else None,
        "inputs": [{"name": p.name, "shape": list(p.type_annotation.shape),
                    "dtype": p.type_annotation.dtype} for p in runtime],
        "outputs": [{"shape": list(e.shape), "dtype": str(e.dtype)} for e in expected],
        "params": [{"name": k, "shape": list(a.shape), "dtype": str(a.dtype)}
                   for k, a in b.bound.items()],
        "ops": count_ops(func, v),
        "op_list": sorted(count_ops(func, v)),
        "constants": const_stats(func, v, b.bound),
        "tolerance": {"rtol": RTOL, "atol": ATOL,
                      "float32_error_ratio": float("%.3g" % worst),
                      "note": "max |numpy/torch float32 - expected| / (atol + "
                              "rtol*|expected|) over all outputs"},
        "expected_from": "numpy %s / PyTorch %s torch.nn.functional in float64, "
                         "cast to the output dtype" % (np.__version__,
                                                       torch.__version__),
    }
    files = {"model.json": text.encode("utf-8"),
             "meta.json": meta_dump(meta).encode("utf-8")}
    if b.bound:
        files["model.params"] = rw.save_params(b.bound, version)
    for p in runtime:
        files["input_%s.npy" % p.name] = _npy(b.arrays[p.name])
    for k, e in enumerate(expected):
        files["expected_%d.npy" % k] = _npy(e)
    dirname = "%s-%s%s%s" % (name, version, "-fn" if root_kind == "function" else "",
                             "-params" if b.bound else "")
    return dirname, files, meta


def _npy(a):
    import io
    bio = io.BytesIO()
    np.save(bio, np.ascontiguousarray(a) if np.ndim(a) else a, allow_pickle=False)
    return bio.getvalue()


CASE_DESC = {}


def compare_trees(want_dir, got_dir):
    """Differences between a committed golden tree and a fresh one.  Models,
    params and inputs must be byte-identical; expected outputs may differ by
    float rounding of another numpy/torch build (1e-6 relative); meta.json
    may differ only in the library versions and the float32 error ratio."""
    diffs = []
    cases = lambda d: sorted(x for x in os.listdir(d)
                             if _ours(os.path.join(d, x, "meta.json")))
    a, b = cases(want_dir), cases(got_dir)
    if a != b:
        diffs.append("case sets differ: only committed %s, only generated %s"
                     % (sorted(set(a) - set(b))[:5], sorted(set(b) - set(a))[:5]))
    for c in sorted(set(a) & set(b)):
        fa = sorted(os.listdir(os.path.join(want_dir, c)))
        fb = sorted(os.listdir(os.path.join(got_dir, c)))
        if fa != fb:
            diffs.append("%s: files %s vs %s" % (c, fa, fb))
            continue
        for f in fa:
            pa, pb = os.path.join(want_dir, c, f), os.path.join(got_dir, c, f)
            if f.startswith("expected_"):
                x, y = np.load(pa), np.load(pb)
                if x.shape != y.shape or x.dtype != y.dtype or not np.allclose(
                        x, y, rtol=1e-6, atol=1e-9, equal_nan=True):
                    diffs.append("%s/%s differs" % (c, f))
            elif f == "meta.json":
                with open(pa) as fh:
                    x = json.load(fh)
                with open(pb) as fh:
                    y = json.load(fh)
                for m in (x, y):
                    m.pop("expected_from", None)
                    m["tolerance"].pop("float32_error_ratio", None)
                if x != y:
                    diffs.append("%s/%s differs" % (c, f))
            else:
                with open(pa, "rb") as fh1, open(pb, "rb") as fh2:
                    if fh1.read() != fh2.read():
                        diffs.append("%s/%s differs" % (c, f))
    return diffs


def _ours(meta):
    """Whether meta names a case this script wrote (tests/qnn/gen_qnn.py writes into the
    same folder)."""
    if not os.path.isfile(meta):
        return False
    with open(meta) as f:
        return json.load(f).get("generator", "").startswith("tests/gen_golden.py")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "golden"))
    ap.add_argument("--only", default=None, help="only cases whose name contains this")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="generate into a temporary directory and compare with --out")
    args = ap.parse_args(argv)
    if args.check:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            rc = main(["--out", tmp] + (["--only", args.only] if args.only else []))
            if rc:
                return rc
            diffs = compare_trees(args.out, tmp)
        for d in diffs[:20]:
            print("DIFF " + d)
        print("%s is %s" % (args.out, "out of date (%d differences)" % len(diffs)
                            if diffs else "up to date"))
        return 1 if diffs else 0
    for name, _fn, _variants, desc in CASES:
        CASE_DESC[name] = desc
    jobs = []
    for name, fn, variants, _desc in CASES:
        if args.only and args.only not in name:
            continue
        for k, var in enumerate(variants):
            jobs.append((name, fn, var, k))
    if args.list:
        for name, _fn, var, _k in jobs:
            print(name, var)
        return 0
    if not args.only and os.path.isdir(args.out):
        for d in os.listdir(args.out):
            p = os.path.join(args.out, d)
            if os.path.isdir(p) and _ours(os.path.join(p, "meta.json")):
                shutil.rmtree(p)
    os.makedirs(args.out, exist_ok=True)
    per_op, per_dialect, seen = {}, {}, set()
    total = 0
    for name, fn, var, k in jobs:
        dirname, files, meta = build_case(name, fn, var, k)
        if dirname in seen:
            raise AssertionError("duplicate case directory " + dirname)
        seen.add(dirname)
        d = os.path.join(args.out, dirname)
        os.makedirs(d, exist_ok=True)
        for fname, data in files.items():
            with open(os.path.join(d, fname), "wb") as f:
                f.write(data)
            total += len(data)
        per_dialect[meta["tvm_version"]] = per_dialect.get(meta["tvm_version"], 0) + 1
        for op in meta["ops"]:
            c = rw.canonical_op(op)
            e = per_op.setdefault(c, {"cases": 0, "dialects": set(), "roots": set(),
                                      "params": set()})
            e["cases"] += 1
            e["dialects"].add(meta["tvm_version"])
            e["roots"].add(meta["root"])
            e["params"].add(meta["params_file"])
    if not args.only:
        write_index(args.out, per_op, per_dialect, len(seen), total)
    print("%d cases, %.2f MB" % (len(seen), total / 1e6))
    return 0


def write_index(out, per_op, per_dialect, ncases, total):
    lines = ["# Golden cases for relayc", "",
             "Generated by `tests/gen_golden.py` (do not edit by hand; re-run it). "
             "Models are written by `tests/relaywriter.py`; expected outputs come "
             "from numpy / torch.nn.functional in float64 (never from relayc or TVM). "
             "Compare with `|got - expected| <= atol + rtol*|expected|` "
             "(rtol 1e-4, atol 1e-5; `meta.json` has the values).", "",
             "Directory names: `<case>-<tvm_version>[-fn][-params]` "
             "(`-fn`: the root is a bare relay.Function; `-params`: weights are main "
             "parameters bound from `model.params`).", "",
             "%d cases, %.2f MB." % (ncases, total / 1e6), "",
             "## Cases per dialect", "", "| tvm_version | cases |", "| --- | --- |"]
    for ver in DIALECTS:
        lines.append("| %s | %d |" % (ver, per_dialect.get(ver, 0)))
    lines += ["", "## Cases per operator", "",
              "| op | cases | dialects | roots | params file |", "| --- | --- | --- | --- | --- |"]
    for op in sorted(per_op):
        e = per_op[op]
        lines.append("| `%s` | %d | %s | %s | %s |" % (
            op, e["cases"], ", ".join(sorted(e["dialects"], key=rw.parse_version)),
            ", ".join(sorted(e["roots"])),
            ", ".join("yes" if p else "no" for p in sorted(e["params"]))))
    lines.append("")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
