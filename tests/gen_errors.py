#!/usr/bin/python3
"""Generate tests/errors/: inputs relayc must reject with a clear message.

For each case <name>:
  <name>.json     the model (or a file that is not a model at all)
  <name>.params   (some cases) a params file to pass with it
  <name>.expect   one line: a substring the error message should contain
                  (a first guess; adjust it to the compiler's wording)

Each file is a valid model with exactly one thing wrong, written by
tests/relaywriter.py (mutations are re-printed in TVM's layout), so the
failure is the intended one and not an earlier one.

Usage: /usr/bin/python3 tests/gen_errors.py [--out DIR] [--check]
"""

import argparse
import base64
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import relaywriter as rw  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "qnn"))
import qnnwriter  # noqa: E402,F401  (registers the QNN operators in relaywriter)

CASES = []


def case(name, expect, what):
    def deco(fn):
        CASES.append((name, expect, what, fn))
        return fn
    return deco


def rng():
    return np.random.default_rng(7)


def small_model(version="0.18.0", typed=False):
    """fn (%data: (1, 3, 4, 4)) { relu(conv2d(%data, W) + b) } as a module."""
    r = rng()
    x = rw.Var("data", (1, 3, 4, 4))
    w = rw.Const(r.uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32))
    b = rw.Const(r.uniform(-1, 1, (2,)).astype(np.float32))
    c = rw.Call("nn.conv2d", [x, w], {"padding": [1, 1], "channels": 2,
                                      "kernel_size": [3, 3]})
    y = rw.Call("nn.relu", [rw.Call("nn.bias_add", [c, b])])
    return rw.Module({"main": rw.Function([x], y)})


def doc_of(text):
    return json.loads(text)


def find(doc, type_key, pred=None):
    for i, n in enumerate(doc["nodes"]):
        if n.get("type_key") == type_key and (pred is None or pred(n)):
            return i
    raise KeyError(type_key)


def op_call(doc, opname):
    """Index of the first relay.Call whose op is ``opname``."""
    for i, n in enumerate(doc["nodes"]):
        if n.get("type_key") == "relay.Call":
            op = doc["nodes"][int(n["attrs"]["op"])]
            if op.get("repr_str") == opname or op.get("global_key") == opname:
                return i
    raise KeyError(opname)


def fmt(doc):
    return rw.format_document(doc)


def blob_edit(doc, k, edit):
    raw = bytearray(base64.b64decode(doc["b64ndarrays"][k]))
    raw = edit(raw)
    doc["b64ndarrays"][k] = base64.b64encode(bytes(raw)).decode()


# ---------------------------------------------------------------------------

@case("truncated_json", "invalid JSON", "a valid model.json cut off in the middle of a node")
def _():
    text = rw.save_json(small_model(), "0.18.0")
    return {"json": text[:len(text) * 3 // 5]}


@case("empty_file", "invalid JSON", "an empty file")
def _():
    return {"json": ""}


@case("not_json_relay_text", "invalid JSON", "Relay text (mod.astext()) instead of save_json output")
def _():
    return {"json": '#[version = "0.0.5"]\ndef @main(%data: Tensor[(1, 3, 4, 4), '
                    'float32]) {\n  nn.relu(%data)\n}\n'}


@case("node_index_out_of_range", "out of range", "a Call's args Array refers to node 999 of a 40-node table")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    call = op_call(doc, "nn.conv2d")
    args = int(doc["nodes"][call]["attrs"]["args"])
    doc["nodes"][args]["data"][1] = 999
    return {"json": fmt(doc)}


@case("attr_ref_out_of_range", "out of range", "a Call's \"attrs\" field holds index 12345")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.8.0"))
    call = op_call(doc, "nn.conv2d")
    doc["nodes"][call]["attrs"]["attrs"] = "12345"
    return {"json": fmt(doc)}


@case("reference_cycle", "cycle", "relu's argument list refers back to the relu call itself")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    call = op_call(doc, "nn.relu")
    args = int(doc["nodes"][call]["attrs"]["args"])
    doc["nodes"][args]["data"] = [call]
    return {"json": fmt(doc)}


@case("unknown_type_key", "relay.FooBar", "an expression node whose type_key no TVM release has")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    call = op_call(doc, "nn.bias_add")
    doc["nodes"][call]["type_key"] = "relay.FooBar"
    return {"json": fmt(doc)}


@case("wrong_node_type", "Array", "a Call's args field points to an IntImm instead of an Array")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    call = op_call(doc, "nn.relu")
    doc["nodes"][call]["attrs"]["args"] = str(find(doc, "IntImm"))
    return {"json": fmt(doc)}


@case("blob_bad_magic", "magic", "b64ndarrays[0] does not start with 0xDD5E40F096B4A13F")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))

    def edit(raw):
        raw[0:8] = struct.pack("<Q", 0xDD5E40F096B4A13E)
        return raw
    blob_edit(doc, 0, edit)
    return {"json": fmt(doc)}


@case("blob_short", "truncated", "b64ndarrays[0] holds 8 bytes less data than data_byte_size says")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    blob_edit(doc, 0, lambda raw: raw[:-8])
    return {"json": fmt(doc)}


@case("blob_header_only", "truncated", "b64ndarrays[0] ends inside the shape")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    blob_edit(doc, 0, lambda raw: raw[:36])
    return {"json": fmt(doc)}


@case("blob_bad_base64", "base64", "b64ndarrays[1] contains characters outside the base64 alphabet")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    s = doc["b64ndarrays"][1]
    doc["b64ndarrays"][1] = s[:20] + "*!$%" + s[24:]
    return {"json": fmt(doc)}


@case("blob_size_mismatch", "data_byte_size", "b64ndarrays[0]: shape (2,3,3,3) float32 needs 216 bytes, data_byte_size says 212 (and 212 follow)")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))

    def edit(raw):
        ndim, = struct.unpack_from("<i", raw, 24)
        off = 32 + 8 * ndim
        n, = struct.unpack_from("<q", raw, off)
        struct.pack_into("<q", raw, off, n - 4)
        return raw[:-4]
    blob_edit(doc, 0, edit)
    return {"json": fmt(doc)}


@case("blob_index_out_of_range", "b64ndarrays", "a relay.Constant's data field is 7 but the file has 2 blobs")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    k = find(doc, "relay.Constant")
    doc["nodes"][k]["attrs"]["data"] = "7"
    return {"json": fmt(doc)}


@case("shape_overflow_blob", "overflow", "a blob of shape (2^32, 2^32, 4): the element count overflows int64")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))

    def edit(raw):
        head = struct.pack("<QQiii", 0xDD5E40F096B4A13F, 0, 1, 0, 3)
        head += struct.pack("<BBH", 2, 32, 1)
        head += struct.pack("<3q", 1 << 32, 1 << 32, 4)
        head += struct.pack("<q", 0)
        return bytearray(head)
    blob_edit(doc, 0, edit)
    return {"json": fmt(doc)}


@case("shape_overflow_var", "overflow", "an input of shape (2^32, 2^32, 16) (int64 IntImm dims): the element count overflows int64")
def _():
    x = rw.Var("data", type_annotation=rw.TensorType((1, 1, 1), "float32"))
    m = rw.Module({"main": rw.Function([x], rw.Call("nn.relu", [x]))})
    doc = doc_of(rw.save_json(m, "0.18.0"))
    k = find(doc, "relay.TensorType")
    dims = doc["nodes"][int(doc["nodes"][k]["attrs"]["shape"])]["data"]
    for j, val in zip(dims, ["4294967296", "4294967296", "16"]):
        doc["nodes"][j]["attrs"]["dtype"] = "int64"
        doc["nodes"][j]["attrs"]["value"] = val
    return {"json": fmt(doc)}


def mlp_params_model(version="0.18.0"):
    r = rng()
    x = rw.Var("data", (1, 10))
    w = rw.Var("fc.weight", (5, 10))
    b = rw.Var("fc.bias", (5,))
    y = rw.Call("nn.bias_add", [rw.Call("nn.dense", [x, w], {"units": 5}), b])
    params = {"fc.weight": r.uniform(-1, 1, (5, 10)).astype(np.float32),
              "fc.bias": r.uniform(-1, 1, (5,)).astype(np.float32)}
    return rw.Module({"main": rw.Function([x, w, b], y)}), params


@case("params_bad_magic", "magic", "the params file does not start with 0xF7E58D4F05049CB7 (it is a bare DLTensor blob)")
def _():
    m, p = mlp_params_model()
    return {"json": rw.save_json(m, "0.18.0"),
            "params": rw.ndarray_blob(p["fc.weight"])}


@case("params_truncated", "truncated", "the params file ends in the middle of the second tensor")
def _():
    m, p = mlp_params_model()
    raw = rw.save_params(p)
    return {"json": rw.save_json(m, "0.18.0"), "params": raw[:-6]}


@case("param_missing", "fc.bias", "main has parameters data, fc.weight, fc.bias; the params file holds only fc.weight (so fc.bias would silently become a runtime input)")
def _():
    m, p = mlp_params_model()
    del p["fc.bias"]
    return {"json": rw.save_json(m, "0.18.0"), "params": rw.save_params(p)}


@case("param_unknown_name", "fc2.weight", "the params file holds a tensor named fc2.weight that is no parameter of main")
def _():
    m, p = mlp_params_model()
    p["fc2.weight"] = np.zeros((3, 5), np.float32)
    return {"json": rw.save_json(m, "0.18.0"), "params": rw.save_params(p)}


@case("param_misshaped", "shape", "fc.weight is (5, 10) in main but (10, 5) in the params file")
def _():
    m, p = mlp_params_model()
    p["fc.weight"] = np.ascontiguousarray(p["fc.weight"].T)
    return {"json": rw.save_json(m, "0.18.0"), "params": rw.save_params(p)}


@case("param_wrong_dtype", "float64", "fc.bias is float32 in main but float64 in the params file")
def _():
    m, p = mlp_params_model()
    p["fc.bias"] = p["fc.bias"].astype(np.float64)
    return {"json": rw.save_json(m, "0.18.0"), "params": rw.save_params(p)}


@case("conv2d_three_strides", "strides", "nn.conv2d with strides [1, 1, 1]")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    k = find(doc, "relay.attrs.Conv2DAttrs")
    arr = int(doc["nodes"][k]["attrs"]["strides"])
    d = doc["nodes"][arr]["data"]
    doc["nodes"][arr]["data"] = d + [d[0]]
    return {"json": fmt(doc)}


@case("conv2d_channel_mismatch", "channels", "nn.conv2d weight (2, 4, 3, 3) on 3-channel data")
def _():
    r = rng()
    x = rw.Var("data", (1, 3, 4, 4))
    w = rw.Const(r.uniform(-1, 1, (2, 4, 3, 3)).astype(np.float32))
    y = rw.Call("nn.conv2d", [x, w], {"padding": [1, 1]})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.8.0")}


@case("dense_mismatch", "dense", "nn.dense weight has 12 input features, data has 10")
def _():
    r = rng()
    x = rw.Var("data", (1, 10))
    w = rw.Const(r.uniform(-1, 1, (4, 12)).astype(np.float32))
    y = rw.Call("nn.dense", [x, w])
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.12.0")}


@case("add_no_broadcast", "broadcast", "add of (2, 3) and (4,): the shapes do not broadcast")
def _():
    x = rw.Var("x", (2, 3))
    y = rw.Var("y", (4,))
    return {"json": rw.save_json(rw.Module({"main": rw.Function(
        [x, y], rw.Call("add", [x, y]))}), "0.18.0")}


@case("reshape_bad_size", "reshape", "reshape of 24 elements to [5, -1]")
def _():
    x = rw.Var("x", (2, 3, 4))
    # written with a valid newshape, then changed (the writer checks sizes)
    doc = doc_of(rw.save_json(rw.Module({"main": rw.Function(
        [x], rw.Call("reshape", [x], {"newshape": [4, -1]}))}), "0.9.0"))
    k = find(doc, "relay.attrs.ReshapeAttrs")
    first = doc["nodes"][int(doc["nodes"][k]["attrs"]["newshape"])]["data"][0]
    doc["nodes"][first]["attrs"]["value"] = "5"
    return {"json": fmt(doc)}


@case("tvm_ffi_0_22", "unsupported", "a TVM 0.22+ tvm-ffi JSON graph (root_index / nodes of type+data / metadata): Relax, not Relay")
def _():
    doc = {"root_index": 1,
           "nodes": [{"type": "None"},
                     {"type": "ir.IRModule", "data": {"functions": 2,
                                                      "global_infos": 3,
                                                      "attrs": 4}},
                     {"type": "ffi.Map", "data": []},
                     {"type": "ffi.Map", "data": []},
                     {"type": "ir.DictAttrs", "data": {"__dict__": 5}},
                     {"type": "ffi.Map", "data": []}],
           "metadata": {"tvm_version": "0.22.0"}}
    return {"json": json.dumps(doc, indent=2)}


@case("float16_input", "float16", "the input is float16")
def _():
    x = rw.Var("x", (1, 8), "float16")
    return {"json": rw.save_json(rw.Module({"main": rw.Function(
        [x], rw.Call("nn.relu", [x]))}), "0.18.0", typed=True)}


@case("unsupported_op_correlation", "nn.correlation", "nn.correlation (its attrs node an LRNAttrs), an operator relayc does not implement")
def _():
    doc = doc_of(rw.save_json(small_model(), "0.18.0"))
    call = op_call(doc, "nn.relu")
    op = int(doc["nodes"][call]["attrs"]["op"])
    doc["nodes"][op]["repr_str"] = "nn.correlation"
    doc["nodes"].append({"type_key": "relay.attrs.LRNAttrs", "attrs": {
        "alpha": "0.0001", "axis": "1", "beta": "0.75", "bias": "2", "size": "5"}})
    doc["nodes"][call]["attrs"]["attrs"] = str(len(doc["nodes"]) - 1)
    return {"json": fmt(doc)}


@case("missing_main", "main", "a module whose only function is @forward")
def _():
    x = rw.Var("x", (2, 2))
    return {"json": rw.save_json(rw.Module({"forward": rw.Function(
        [x], rw.Call("nn.relu", [x]))}), "0.9.0")}


@case("dynamic_shape", "dynamic", "an input whose batch dimension is tir.Any")
def _():
    x = rw.Var("x", (1, 8))
    doc = doc_of(rw.save_json(rw.Module({"main": rw.Function(
        [x], rw.Call("nn.relu", [x]))}), "0.8.0"))
    k = find(doc, "relay.TensorType")
    dim0 = doc["nodes"][int(doc["nodes"][k]["attrs"]["shape"])]["data"][0]
    doc["nodes"][dim0] = {"type_key": "tir.Any", "attrs": {"dtype": "int32",
                                                           "span": "0"}}
    return {"json": fmt(doc)}


@case("bool_constant_0_6", "bool", "a 0.6 file with a bool constant: TVM 0.6 wrote sub-byte tensors with no data")
def _():
    x = rw.Var("x", (3,))
    m = rw.Const(np.array([True, False, True]))
    y = rw.Call("multiply", [x, rw.Call("cast", [m], {"dtype": "float32"})])
    return {"json": rw.save_json(rw.Function([x], y), "0.6.0")}


@case("conv1d_padding_3_values", "attrs.padding: expected 1 or 2 integers", "nn.conv1d with padding [1, 1, 1] (1-D padding takes 1 or 2 values)")
def _():
    x = rw.Var("x", (1, 3, 9))
    w = rw.Const(rng().uniform(-1, 1, (2, 3, 3)).astype(np.float32))
    y = rw.Call("nn.conv1d", [x, w], {"padding": [1, 1, 1]})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.18.0")}


@case("take_batch_dims_mismatch", "batch axis 0: indices [3, 4] and data [2, 3, 5] differ", "take with batch_dims 1 whose indices have 3 batches and the data 2")
def _():
    x = rw.Var("x", (2, 3, 5))
    i = rw.Var("i", (3, 4), "int64")
    y = rw.Call("take", [x, i], {"axis": 2, "batch_dims": 1})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x, i], y)}), "0.18.0")}


@case("layer_norm_gamma_shape", "gamma has shape [5]", "nn.layer_norm over an axis of 4 with a gamma of 5 values")
def _():
    x = rw.Var("x", (2, 4))
    g = rw.Const(np.ones(5, np.float32))
    b = rw.Const(np.zeros(4, np.float32))
    y = rw.Call("nn.layer_norm", [x, g, b])
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.9.0")}


@case("less_mixed_dtypes", "operands have different dtypes: float32 and int32", "less of a float32 and an int32 tensor (TVM's type relation refuses it)")
def _():
    x = rw.Var("x", (2, 3))
    y = rw.Var("y", (2, 3))
    doc = doc_of(rw.save_json(rw.Module({"main": rw.Function(
        [x, y], rw.Call("less", [x, y]))}), "0.18.0"))
    types = [int(n["attrs"]["type_annotation"]) for n in doc["nodes"]
             if n.get("type_key") == "relay.Var"]
    doc["nodes"][types[-1]]["attrs"]["dtype"] = "int32"
    return {"json": fmt(doc)}


@case("upsampling_unknown_method", "attrs.method 'trilinear' is not supported", "nn.upsampling with method trilinear (a 3-D method)")
def _():
    x = rw.Var("x", (1, 2, 4, 4))
    y = rw.Call("nn.upsampling", [x], {"scale_h": 1.5, "scale_w": 2.0, "method": "trilinear"})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.16.0")}


@case("broadcast_to_bad_shape", "cannot broadcast [2, 3] to [2, 4]", "broadcast_to (2, 3) -> (2, 4)")
def _():
    x = rw.Var("x", (2, 3))
    y = rw.Call("broadcast_to", [x], {"shape": [2, 3]})
    doc = doc_of(rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.12.0"))
    k = find(doc, "relay.attrs.InitOpAttrs")
    last = doc["nodes"][int(doc["nodes"][k]["attrs"]["shape"])]["data"][1]
    doc["nodes"][last]["attrs"]["value"] = "4"
    return {"json": fmt(doc)}



def _one_call(op, args, attrs, version="0.18.0"):
    """A module whose main is one call of op on the Vars args."""
    return {"json": rw.save_json(rw.Module({"main": rw.Function(
        list(args), rw.Call(op, list(args), attrs))}), version)}


@case("gather_indices_rank", "the indices [3] must have the rank of the data [3, 4]", "gather with 1-D indices into 2-D data (TVM requires equal ranks)")
def _():
    return _one_call("gather", [rw.Var("x", (3, 4)), rw.Var("i", (3,), "int64")], {"axis": 0})


@case("where_mixed_dtypes", "x and y have different dtypes: float32 and int32", "where choosing between a float32 and an int32 tensor")
def _():
    return _one_call("where", [rw.Var("c", (3,), "bool"), rw.Var("x", (3,)),
                               rw.Var("y", (3,), "int32")], None)


@case("argmax_empty_axis", "reduction over an empty axis 1", "argmax along an axis of size 0")
def _():
    return _one_call("argmax", [rw.Var("x", (2, 0, 3))], {"axis": [1]})


@case("cumsum_float_to_int", "cumsum of float32 in int32 is not supported", "cumsum of float32 data with dtype int32 (a float sum converted to an integer type)")
def _():
    return _one_call("cumsum", [rw.Var("x", (2, 3))], {"axis": 1, "dtype": "int32"})


@case("adaptive_avg_pool_int8", "nn.adaptive_avg_pool2d on int8", "nn.adaptive_avg_pool2d of int8 data (TVM sums in int8, wrapping)")
def _():
    return _one_call("nn.adaptive_avg_pool2d", [rw.Var("x", (1, 2, 5, 5), "int8")],
                     {"output_size": [2, 2]})


@case("prod_int32", "prod on int32", "prod of an int32 tensor")
def _():
    return _one_call("prod", [rw.Var("x", (2, 3), "int32")], {"axis": [1]})


@case("qnn_requantize_zp_count", "the input scale (3 values) and zero point (2) do not match", "qnn.requantize with 3 per-channel input scales but 2 zero points (the lowering fails after it has read both)")
def _():
    x = rw.Var("x", (1, 3, 2, 2), "int32")
    y = rw.Call("qnn.requantize", [x, rw.Const(np.array([0.5, 0.25, 0.125], np.float32)),
                                   rw.Const(np.array([0, 1], np.int32)),
                                   rw.Const(np.array(0.5, np.float32)), rw.Const(np.array(0, np.int32))],
                {"axis": 1, "out_dtype": "int8"})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.18.0")}


@case("qnn_dequantize_zp_count", "the scale (3 values) and zero point (2) do not match", "qnn.dequantize with 3 per-channel scales but 2 zero points (the lowering fails after it has read both)")
def _():
    x = rw.Var("x", (1, 3, 2, 2), "int8")
    y = rw.Call("qnn.dequantize", [x, rw.Const(np.array([0.5, 0.25, 0.125], np.float32)),
                                   rw.Const(np.array([0, 1], np.int32))], {"axis": 1})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.18.0")}


@case("qnn_requantize_output_scale_zero", "the output scale is 0", "qnn.requantize to an output scale of 0")
def _():
    x = rw.Var("x", (1, 3, 2, 2), "int32")
    y = rw.Call("qnn.requantize", [x, rw.Const(np.array([0.5, 0.25, 0.125], np.float32)),
                                   rw.Const(np.array([0, 1, 2], np.int32)),
                                   rw.Const(np.array(0.0, np.float32)), rw.Const(np.array(0, np.int32))],
                {"axis": 1, "out_dtype": "int8"})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.18.0")}

# ---------------------------------------------------------------------------

@case("resize2d_crop_and_resize", "coordinate_transformation_mode tf_crop_and_resize is not supported", "image.resize2d with tf_crop_and_resize (its roi is not compiled)")
def _():
    x = rw.Var("x", (1, 2, 4, 4))
    y = rw.Call("image.resize2d", [x], {"size": [6, 6], "roi": [0.1, 0.1, 0.9, 0.9],
                                        "coordinate_transformation_mode": "tf_crop_and_resize"})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.18.0")}


@case("conv2d_transpose_output_padding", "attrs.output_padding 2 must be smaller than the stride (2) or the dilation (1)", "nn.conv2d_transpose with output_padding 2 at stride 2")
def _():
    x = rw.Var("x", (1, 2, 4, 4))
    w = rw.Const(rng().uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32))
    y = rw.Call("nn.conv2d_transpose", [x, w], {"strides": [2, 2], "padding": [1, 1],
                                                "output_padding": [2, 2],
                                                "kernel_layout": "IOHW"})
    return {"json": rw.save_json(rw.Module({"main": rw.Function([x], y)}), "0.18.0")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "errors"))
    ap.add_argument("--check", action="store_true",
                    help="generate into a temporary directory and compare with --out")
    args = ap.parse_args(argv)
    if args.check:
        import filecmp
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            main(["--out", tmp])
            names = sorted(os.listdir(tmp))
            have = sorted(f for f in os.listdir(args.out)) if os.path.isdir(
                args.out) else []
            bad = [n for n in names if n not in have or not filecmp.cmp(
                os.path.join(tmp, n), os.path.join(args.out, n), shallow=False)]
            bad += [n for n in have if n not in names]
        for n in bad[:20]:
            print("DIFF " + n)
        print("%s is %s" % (args.out, "out of date" if bad else "up to date"))
        return 1 if bad else 0
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        if f.endswith((".json", ".params", ".expect")):
            os.remove(os.path.join(args.out, f))
    rows = []
    for name, expect, what, fn in CASES:
        files = fn()
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            f.write(files["json"])
        if "params" in files:
            with open(os.path.join(args.out, name + ".params"), "wb") as f:
                f.write(files["params"])
        with open(os.path.join(args.out, name + ".expect"), "w") as f:
            f.write(expect + "\n")
        rows.append("| `%s` | %s | %s | `%s` |" % (
            name, "yes" if "params" in files else "", what, expect))
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write("\n".join([
            "# Error cases for relayc", "",
            "Generated by `tests/gen_errors.py`; re-run it rather than editing. "
            "Each `<case>.json` (with `<case>.params` when listed) must make relayc "
            "exit non-zero, leave no output file, and print an error containing "
            "the one-line substring in `<case>.expect` (the trailing newline is not "
            "part of it). The substrings are first guesses: adjust them in "
            "`tests/gen_errors.py` to the compiler's wording.", "",
            "Apart from the one defect named below, every model is valid "
            "(written by `tests/relaywriter.py`).", "",
            "`param_missing` is a policy choice: a `main` parameter that the params "
            "file does not bind could also be taken as an extra runtime input. "
            "Drop the case if relayc decides that.", "",
            "A deep model for stack-depth tests is not committed: "
            "`tests/gen_chain.py --n 100000 OUT/` writes one (model, input, "
            "expected output, meta.json).", "",
            "| case | params | what is wrong | expected substring |",
            "| --- | --- | --- | --- |"] + rows) + "\n")
    print("%d error cases in %s" % (len(CASES), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
