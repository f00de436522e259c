"""qnnwriter: the QNN operators for tests/relaywriter.py (TVM 0.7 and later).

Importing this module registers, in relaywriter's tables, the attrs types of the QNN
operators (from the shared relay-attrs-schema.tsv and relay-json-format.md sections
8.4 and 8.5), their Python-frontend defaults and their type relations:

  qnn.quantize(data, output_scale, output_zero_point)            QuantizeAttrs
  qnn.dequantize(data, input_scale, input_zero_point)            DequantizeAttrs
  qnn.requantize(data, input_scale, input_zero_point,
                 output_scale, output_zero_point)                RequantizeAttrs
  qnn.conv2d(data, weight, input_zero_point, kernel_zero_point,
             input_scale, kernel_scale)                          Conv2DAttrs
  qnn.dense(data, weight, izp, kzp, input_scale, kernel_scale)   DenseAttrs
  qnn.add|subtract|mul(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale,
             rhs_zero_point, output_scale, output_zero_point)    BroadcastAttrs (0.9+; null before)
  qnn.concatenate(Tuple data, Tuple scales, Tuple zero_points,
                  output_scale, output_zero_point)               ConcatenateAttrs
  fixed_point_multiply(data)                                     FixedPointMultiplyAttrs

relaywriter itself is not edited: its tables are extended here, and its per-call
normalisation and type relation are wrapped (module globals it looks up at call time).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import relaywriter as rw  # noqa: E402

rw.ATTRS_SCHEMA.update({
    "relay.attrs.QuantizeAttrs": [
        ((0, 7), (0, 19), [("out_dtype", "dtype"), ("axis", "int")])],
    "relay.attrs.DequantizeAttrs": [
        ((0, 7), (0, 13), [("axis", "int")]),
        ((0, 14), (0, 19), [("out_dtype", "dtype"), ("axis", "int")])],
    "relay.attrs.RequantizeAttrs": [
        ((0, 7), (0, 8), [("axis", "int"), ("rounding", "str"), ("out_dtype", "dtype")]),
        ((0, 9), (0, 19), [("axis", "int"), ("rounding", "str"), ("compute_dtype", "str"),
                           ("out_dtype", "dtype")])],
    "relay.attrs.BroadcastAttrs": [
        ((0, 9), (0, 19), [("lhs_axis", "int"), ("rhs_axis", "int")])],
    "relay.attrs.FixedPointMultiplyAttrs": [
        ((0, 7), (0, 19), [("multiplier", "int"), ("shift", "int")])],
})

_CONV = dict(rw.OPS["nn.conv2d"].defaults, out_dtype="int32")
rw.OPS.update({
    "qnn.quantize": rw.OpInfo("relay.attrs.QuantizeAttrs", {"out_dtype": "int8", "axis": -1},
                              since=(0, 7)),
    "qnn.dequantize": rw.OpInfo("relay.attrs.DequantizeAttrs",
                                {"out_dtype": "float32", "axis": -1}, since=(0, 7)),
    "qnn.requantize": rw.OpInfo("relay.attrs.RequantizeAttrs", {
        "axis": -1, "rounding": None, "compute_dtype": "None", "out_dtype": "int8"},
        since=(0, 7)),
    "qnn.conv2d": rw.OpInfo("relay.attrs.Conv2DAttrs", _CONV, since=(0, 7)),
    "qnn.dense": rw.OpInfo("relay.attrs.DenseAttrs", {"units": None, "out_dtype": "int32"},
                           since=(0, 7)),
    "qnn.concatenate": rw.OpInfo("relay.attrs.ConcatenateAttrs", {"axis": 0}, since=(0, 7)),
    "fixed_point_multiply": rw.OpInfo("relay.attrs.FixedPointMultiplyAttrs",
                                      {"multiplier": None, "shift": None}, since=(0, 7)),
})
for _n in ("qnn.add", "qnn.subtract", "qnn.mul"):
    rw.OPS[_n] = rw.OpInfo("relay.attrs.BroadcastAttrs", {"lhs_axis": -1, "rhs_axis": -1},
                           since=(0, 7))

_orig_normalized = rw._normalized
_orig_call_type = rw.call_type


def _normalized(call, v):
    """QNN dialect rules on top of relaywriter's: BroadcastAttrs appear in 0.9 (null
    attrs before), RequantizeAttrs.rounding defaults to UPWARD before 0.9 and to "None"
    after, compute_dtype appears in 0.9."""
    op = rw.canonical_op(call.op) if isinstance(call.op, str) else None
    if op in ("qnn.add", "qnn.subtract", "qnn.mul") and v < (0, 9):
        if call.attrs:
            raise ValueError("%s has no attrs before 0.9" % op)
        return (list(call.args), None, None)
    if op == "qnn.requantize":
        key = ("_qnorm", v)
        cache = call.__dict__.setdefault("_cache", {})
        if key not in cache:
            args, attrs, atype = _orig_normalized(call, v)
            attrs = dict(attrs)
            if attrs.get("rounding") is None:
                attrs["rounding"] = "UPWARD" if v < (0, 9) else "None"
            if v < (0, 9) and attrs.get("compute_dtype", "None") != "None":
                raise ValueError("qnn.requantize compute_dtype appears in 0.9")
            cache[key] = (args, attrs, atype)
        return cache[key]
    if op == "qnn.dequantize" and v < (0, 14):
        res = _orig_normalized(call, v)
        if res[1] and res[1].get("out_dtype", "float32") != "float32":
            raise ValueError("qnn.dequantize out_dtype appears in 0.14")
        return res
    return _orig_normalized(call, v)


def call_type(op, arg_types, attrs, v):
    op = rw.canonical_op(op)
    a = attrs or {}
    tt = rw._tt
    if op == "qnn.quantize":
        return rw.TensorType(tt(arg_types[0]).shape, a["out_dtype"])
    if op == "qnn.dequantize":
        return rw.TensorType(tt(arg_types[0]).shape, a.get("out_dtype", "float32"))
    if op == "qnn.requantize":
        return rw.TensorType(tt(arg_types[0]).shape, a["out_dtype"])
    if op == "fixed_point_multiply":
        return rw.TensorType(tt(arg_types[0]).shape, tt(arg_types[0]).dtype)
    if op == "qnn.conv2d":
        return _orig_call_type("nn.conv2d", arg_types[:2], a, v)
    if op == "qnn.dense":
        x, w = tt(arg_types[0]), tt(arg_types[1])
        return rw.TensorType(list(x.shape[:-1]) + [w.shape[0]], a["out_dtype"])
    if op in ("qnn.add", "qnn.subtract", "qnn.mul"):
        x, y = tt(arg_types[0]), tt(arg_types[1])
        return rw.TensorType(rw._broadcast(x.shape, y.shape), x.dtype)
    if op == "qnn.concatenate":
        return _orig_call_type("concatenate", arg_types[:1], a, v)
    return _orig_call_type(op, arg_types, attrs, v)


rw._normalized = _normalized
rw.call_type = call_type
