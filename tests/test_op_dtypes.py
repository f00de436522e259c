#!/usr/bin/python3
"""Every operator takes exactly the dtypes `relayc ops --json` lists for it.

usage: test_op_dtypes.py RELAYC [--survey] [--only OP,OP...]

For every operator `relayc ops --json` lists and every dtype of PROBE_DTYPES, a tiny model
calls the operator on data of that dtype (the call's shapes, attrs and other arguments
come from SPECS below: most operators share a generic spec, one input [2, 3, 4, 5]), then
  - a listed dtype: `relayc check` (libtcc) of the model matches the output of the numpy
    reference (tests/gen_golden.py's evaluator; tests/qnn/qnn_ref.py for the QNN
    operators): integers and bool exactly, floats within rtol 1e-4, atol 1e-5; and so
    does `relayc check --reference` (the interpreter constant folding runs);
  - a dtype not listed: relayc refuses it: exit status 2, one line on stderr naming the
    JSON node (the call, or for a dtype relayc does not read at all the typed node) and
    the dtype, and no output file written.
One TAP result per operator. `--survey` prints what relayc does with each (operator,
dtype) whatever the list says (ok, refused, mismatch, crash), for finding out what an
operator really takes; `--only` restricts the operators.
"""
import concurrent.futures
import json
import os
import sys
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "qnn"))
import common  # noqa: E402
import gen_golden as gg  # noqa: E402
import gen_qnn  # noqa: E402  (registers the QNN operators in relaywriter)
import relaywriter as rw  # noqa: E402

# every dtype of relaywriter's files, float16 and int16 included (relayc reads neither)
PROBE_DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int16", "int32", "int64",
                "bool"]
X = (2, 3, 4, 5)
RTOL, ATOL = 1e-4, 1e-5
# Integer results of an interpolation computed in float32 (as TVM computes it) and
# truncated: where the exact value is an integer, float32 and the float64 reference may
# land on either side of it.
INT_ATOL = {"image.resize2d": 1, "nn.upsampling": 1}


class Probe:
    """Builds one probe model: the call of op on data of dtype dt."""

    def __init__(self, op, dt, seed):
        self.op, self.dt = op, dt
        self.rng = np.random.default_rng(seed)
        self.params, self.arrays = [], {}
        self.version = "0.18.0"

    def array(self, shape, dtype=None, lo=-1.0, hi=1.0, ilo=None, ihi=None, narrow=False):
        """Random data: floats in [lo, hi); bool 0 or 1; integers in [ilo, ihi], by default
        wide (int32 and int64 past 2^24, where a float32 computation would round; int64
        below 2^53, where the float64 reference would),
        or with narrow in -3..3 (0..6 unsigned: products, equal elements)."""
        dt = np.dtype(dtype or self.dt)
        if dt.kind == "f":
            return self.rng.uniform(lo, hi, size=shape).astype(dt)
        if dt.kind == "b":
            return self.rng.integers(0, 2, size=shape).astype(bool)
        wide = {1: 100, 2: 10000, 4: 1 << 26, 8: 1 << 50}[dt.itemsize]
        top = 3 if narrow else wide
        ilo = (0 if dt.kind == "u" else -top) if ilo is None else ilo
        ihi = (2 * top if dt.kind == "u" else top) if ihi is None else ihi
        return self.rng.integers(ilo, ihi + 1, size=shape).astype(dt)

    def x(self, shape=X, dtype=None, **kw):
        """A runtime input."""
        arr = self.array(shape, dtype, **kw)
        name = "x%d" % len(self.params)
        self.params.append(rw.Var(name, arr.shape, str(arr.dtype)))
        self.arrays[name] = arr
        return self.params[-1]

    def c(self, shape, dtype=None, **kw):
        """A constant (weights, a bias, ...)."""
        return rw.Const(self.array(shape, dtype, **kw))

    def call(self, args, attrs=None, op=None):
        return rw.Call(op or self.op, args, attrs)


QDT = ("int8", "uint8", "int32")     # the data dtypes qnn_ref.py computes


def _qnn(p, fn):
    """A QNN probe: fn(b, dt) makes (expr, value) with gen_qnn's builder, whose values come
    from qnn_ref.py. For a dtype qnn_ref does not take, the value is not computed (None)."""
    b = gen_qnn.B(int(p.rng.integers(1 << 30)))
    expr, value = fn(b, p.dt)
    p.params, p.arrays = b.params, dict(b.inputs)
    return expr, value if p.dt in QDT else None


def _q(b, shape, dt, const=False):
    """Quantized data of dtype dt as gen_qnn's (expr, value); for a dtype qnn_ref does not
    take, the value handed to the reference is a stand-in (int8 zeros)."""
    k = np.dtype(dt).kind
    arr = (b.ints(shape, dt, -20, 20) if k == "i" else b.ints(shape, dt, 0, 40) if k == "u"
           else np.asarray(b.rng.uniform(-2, 2, size=shape)).astype(dt))
    if const:
        t = (rw.Const(arr), arr)
    else:
        t = b.input("x%d" % len(b.params), arr)
    return t if dt in QDT else (t[0], np.zeros(shape, np.int8))


def _quantize(b, dt):
    x = b.input("x0", np.asarray(b.rng.uniform(-3, 3, size=X), np.float32))
    if dt in QDT:
        return b.quantize(x, 0.05, 3, out_dtype=dt)
    return rw.Call("qnn.quantize", [x[0], rw.Const(gen_qnn.f32(0.05)), rw.Const(gen_qnn.i32(3))],
                   {"axis": -1, "out_dtype": dt}), None


def unary(**kw):
    return lambda p: p.call([p.x(**kw)])


def binary(ykw=None, **kw):
    return lambda p: p.call([p.x(**kw), p.x(**(ykw or kw))])


def _is_float(p):
    return np.dtype(p.dt).kind == "f"


def attrs(a, shape=X, **kw):
    return lambda p: p.call([p.x(shape, **kw)], a)


def _cast(p):
    x = p.x(lo=0.0, hi=5.0)
    return rw.Tuple([p.call([x], {"dtype": d}) for d in
                     ("float32", "float64", "int8", "uint8", "int32", "int64", "bool")])


def _batch_norm(p):
    ps = [p.c((3,), lo=0.5, hi=1.5, ilo=1, ihi=2) for _ in range(4)]
    return rw.TupleGetItem(p.call([p.x()] + ps, {"epsilon": 1e-3}), 0)


def _v06(fn):
    def spec(p):
        p.version = "0.6.0"
        return fn(p)
    return spec


def _variants(p, attrs_list):
    """Calls with each attrs of attrs_list on one input, as a tuple: a dtype is listed only
    when every form of the operator takes it."""
    x = p.x()
    return rw.Tuple([p.call([x], a) for a in attrs_list])


def _where(p):
    return p.call([p.x(dtype="bool"), p.x(), p.x()])


def _variance(p):
    return p.call([p.x(), p.x((2, 1, 4, 5))], {"axis": [1]})


SPECS = {
    # elementwise (runtime/elementwise.def); the domains of the partial functions
    "log": unary(lo=0.1, hi=2.0, ilo=1, ihi=6), "sqrt": unary(lo=0.1, hi=2.0, ilo=0, ihi=6),
    "rsqrt": unary(lo=0.1, hi=2.0, ilo=1, ihi=6), "log2": unary(lo=0.1, hi=2.0, ilo=1, ihi=6),
    "log10": unary(lo=0.1, hi=2.0, ilo=1, ihi=6), "acosh": unary(lo=1.1, hi=3.0, ilo=1, ihi=6),
    "asin": unary(lo=-0.9, hi=0.9, ilo=0, ihi=0), "acos": unary(lo=-0.9, hi=0.9, ilo=0, ihi=0),
    "atanh": unary(lo=-0.9, hi=0.9, ilo=0, ihi=0),
    "divide": binary(ykw={"lo": 0.5, "hi": 2.0, "ilo": 1, "ihi": 3}),
    "multiply": binary(narrow=True),
    "power": binary(ykw={"lo": -2.0, "hi": 2.0, "ilo": 0, "ihi": 3}, lo=0.5, hi=2.0,
                    ilo=0, ihi=3),
    "nn.conv2d": lambda p: p.call([p.x(), p.c((4, 3, 3, 3))], {"padding": [1, 1]}),
    "nn.dense": lambda p: p.call([p.x((2, 5)), p.c((4, 5))]),
    "nn.matmul": lambda p: p.call([p.x((2, 5)), p.c((5, 4))]),
    "nn.batch_matmul": lambda p: p.call([p.x((2, 3, 5)), p.x((2, 4, 5))]),
    "nn.bias_add": lambda p: p.call([p.x(), p.c((3,))]),
    "nn.batch_norm": _batch_norm,
    "nn.leaky_relu": attrs({"alpha": 0.25}),
    "nn.prelu": lambda p: p.call([p.x(), p.c((3,), lo=0.0, hi=0.5)]),
    "clip": lambda p: p.call([p.x()], {"a_min": -0.5, "a_max": 0.5} if _is_float(p)
                             else {"a_min": -50.0, "a_max": 60.0}),
    "nn.max_pool2d": attrs({"pool_size": [2, 2]}),
    "nn.avg_pool2d": attrs({"pool_size": [2, 2]}),
    "nn.adaptive_avg_pool2d": attrs({"output_size": [2, 2]}),
    "contrib.adaptive_avg_pool2d": _v06(attrs({"output_size": [2, 2]})),
    "nn.softmax": attrs({"axis": -1}),
    "nn.log_softmax": attrs({"axis": -1}),
    "reshape": attrs({"newshape": [6, 20]}),
    "contrib_reverse_reshape": attrs({"newshape": [-1, 20]}),
    "_contrib_reverse_reshape": _v06(attrs({"newshape": [-1, 20]})),
    "transpose": attrs({"axes": [0, 2, 3, 1]}),
    "squeeze": attrs({"axis": [1]}, (2, 1, 4, 5)),
    "expand_dims": attrs({"axis": 1}),
    "concatenate": lambda p: p.call([rw.Tuple([p.x(), p.x()])], {"axis": 1}),
    "split": attrs({"indices_or_sections": 3, "axis": 1}),
    "strided_slice": attrs({"begin": [0, 1, 0, 1], "end": [2, 3, 4, 5],
                            "strides": [1, 1, 2, 2]}),
    "nn.pad": lambda p: p.call([p.x(), p.c(())], {"pad_width": [[0, 0], [0, 0], [1, 2],
                                                                 [2, 0]]}),
    "mean": attrs({"axis": [1]}), "sum": attrs({"axis": [1]}),
    "max": attrs({"axis": [1]}), "min": attrs({"axis": [1]}), "prod": attrs({"axis": [1]}),
    "nn.dropout": lambda p: rw.TupleGetItem(p.call([p.x()], {"rate": 0.5}), 0),
    "layout_transform": attrs({"src_layout": "NCHW", "dst_layout": "NHWC"}),
    "cast": _cast,
    "nn.conv1d": lambda p: p.call([p.x((2, 3, 5)), p.c((4, 3, 3))], {"padding": [1, 1]}),
    "nn.max_pool1d": attrs({"pool_size": [2]}, (2, 3, 5)),
    "nn.avg_pool1d": attrs({"pool_size": [2]}, (2, 3, 5)),
    "nn.adaptive_avg_pool1d": attrs({"output_size": [2]}, (2, 3, 5)),
    "nn.adaptive_max_pool1d": attrs({"output_size": [2]}, (2, 3, 5)),
    "nn.adaptive_max_pool2d": attrs({"output_size": [2, 2]}),
    "full": lambda p: p.call([p.c(())], {"shape": [2, 3], "dtype": p.dt}),
    "full_like": lambda p: p.call([p.x(), p.c(())]),
    "zeros": lambda p: p.call([], {"shape": [2, 3], "dtype": p.dt}),
    "ones": lambda p: p.call([], {"shape": [2, 3], "dtype": p.dt}),
    "broadcast_to": attrs({"shape": list(X)}, (1, 3, 1, 5)),
    "broadcast_to_like": lambda p: p.call([p.x((1, 3, 1, 5)), p.x()]),
    "reshape_like": lambda p: p.call([p.x(), p.x((6, 20))]),
    "collapse_sum_like": lambda p: p.call([p.x(), p.x((3, 1, 5))]),
    "stack": lambda p: p.call([rw.Tuple([p.x(), p.x()])], {"axis": 1}),
    "take": lambda p: p.call([p.x(), rw.Const(np.array([0, 2, 1], np.int32))],
                             {"axis": 1, "mode": "clip"}),
    "nn.layer_norm": lambda p: p.call([p.x(), p.c((5,)), p.c((5,))]),
    "nn.instance_norm": lambda p: p.call([p.x(), p.c((3,)), p.c((3,))]),
    "nn.group_norm": lambda p: p.call([p.x((2, 4, 3, 5)), p.c((4,)), p.c((4,))],
                                      {"num_groups": 2}),
    "variance": _variance,
    "reverse": attrs({"axis": 1}),
    "tile": attrs({"reps": [1, 2, 1, 1]}),
    "repeat": attrs({"repeats": 2, "axis": 1}),
    "nn.depth_to_space": attrs({"block_size": 2}, (2, 4, 2, 3)),
    "nn.space_to_depth": attrs({"block_size": 2}, (2, 3, 4, 6)),
    "nn.upsampling": lambda p: _variants(p, [{"scale_h": 2.0, "scale_w": 2.0}, {
        "scale_h": 1.5, "scale_w": 2.0, "method": "bilinear", "align_corners": True}]),
    "nn.lrn": attrs({"size": 3, "axis": 1}),
    "nn.l2_normalize": attrs({"eps": 1e-12, "axis": [1]}),
    "gather": lambda p: p.call([p.x(), rw.Const(p.array((2, 3, 4, 2), "int32", ilo=0, ihi=4))],
                               {"axis": 3}),
    "where": _where,
    "argmax": attrs({"axis": [1]}), "argmin": attrs({"axis": [1]}),
    "cumsum": lambda p: p.call([p.x()], {"axis": 1, "dtype": "int32" if p.dt == "bool" else ""}),
    "nn.conv2d_transpose": lambda p: p.call([p.x(), p.c((3, 2, 3, 3))],
                                            {"kernel_layout": "IOHW"}),
    "nn.conv1d_transpose": lambda p: p.call([p.x((2, 3, 5)), p.c((3, 2, 3))],
                                            {"kernel_layout": "IOW"}),
    "image.resize2d": lambda p: _variants(p, [{"size": [3, 7], "method": "linear"}, {
        "size": [5, 3], "method": "nearest_neighbor", "rounding_method": "round"}]),
    # QNN: the dtype is the quantized data's (qnn.quantize: its out_dtype)
    "qnn.quantize": lambda p: _qnn(p, _quantize),
    "qnn.dequantize": lambda p: _qnn(p, lambda b, dt: b.dequantize(_q(b, X, dt), 0.05, 2)),
    "qnn.requantize": lambda p: _qnn(p, lambda b, dt: _tuple(
        [b.requantize(_q(b, X, dt), 0.05, 2, 0.11, 1, out_dtype=o) for o in QDT])),
    "qnn.conv2d": lambda p: _qnn(p, lambda b, dt: b.conv2d(
        _q(b, X, dt), _q(b, (4, 3, 3, 3), dt, const=True), 2, 1, 0.05, 0.02, padding=(1, 1))),
    "qnn.dense": lambda p: _qnn(p, lambda b, dt: b.dense(
        _q(b, (2, 5), dt), _q(b, (4, 5), dt, const=True), 2, 1, 0.05, 0.02)),
    "qnn.add": lambda p: _qnn(p, lambda b, dt: b.qbinary(
        "qnn.add", _q(b, X, dt), _q(b, X, dt), 0.05, 2, 0.07, 1, 0.1, 3)),
    "qnn.subtract": lambda p: _qnn(p, lambda b, dt: b.qbinary(
        "qnn.subtract", _q(b, X, dt), _q(b, X, dt), 0.05, 2, 0.07, 1, 0.1, 3)),
    "qnn.mul": lambda p: _qnn(p, lambda b, dt: b.qbinary(
        "qnn.mul", _q(b, X, dt), _q(b, X, dt), 0.05, 2, 0.07, 1, 0.1, 3)),
    "qnn.concatenate": lambda p: _qnn(p, lambda b, dt: b.qconcat(
        [_q(b, X, dt), _q(b, X, dt)], [0.05, 0.07], [2, 1], 0.1, 3, axis=1)),
    "fixed_point_multiply": lambda p: _qnn(p, lambda b, dt: b.fixed_point_multiply(
        _q(b, X, dt), 1 << 30, 1)),
}


def _tuple(pairs):
    return rw.Tuple([e for e, _ in pairs]), tuple(v for _, v in pairs)


def spec_of(op):
    if op in SPECS:
        return SPECS[op]
    if op in rw._COMPARE:
        return binary(narrow=True)
    if rw.OPS.get(rw.canonical_op(op)) and rw.OPS[rw.canonical_op(op)].rel == "Broadcast":
        return binary()
    return unary()              # the generic spec: one input [2, 3, 4, 5]


def build(op, dt, work):
    """Writes the probe model, its inputs and (when the reference computes one) its
    expected outputs into work; returns (the relayc arguments, the JSON nodes that may
    be named, the reference's error or None)."""
    p = Probe(op, dt, zlib.crc32(("%s %s" % (op, dt)).encode()))
    out = spec_of(op)(p)
    expr, value = out if isinstance(out, tuple) else (out, None)
    fn = rw.Function(p.params, expr)
    try:
        rw.infer_types(fn, p.version)
        typed = True
    except Exception:           # a type relation of relaywriter's refuses the dtype
        typed = False
    text = rw.save_json(fn, p.version, typed=typed, infer_ret_type=typed)
    with open(os.path.join(work, "model.json"), "w") as f:
        f.write(text)
    doc = json.loads(text)
    nodes = doc["nodes"]
    names = {rw.op_name(op, p.version), op}
    calls = [i for i, n in enumerate(nodes) if n.get("type_key") == "relay.Call"
             and _op_name(nodes[int(n["attrs"]["op"])]) in names]
    args = []
    for name, arr in p.arrays.items():
        path = os.path.join(work, "in_%s.npy" % name)
        np.save(path, arr)
        args += ["--input", "%s=%s" % (name, path)]
    try:
        types = gg.flatten_types(fn.body.checked_type)
        if value is None:
            env = dict(p.arrays)
            with np.errstate(all="ignore"):     # unlisted dtypes: whatever numpy says
                value = gg.evaluate(fn, env, rw.parse_version(p.version), np.float64)
        vals = gg.flatten(value)
        for k, (t, v) in enumerate(zip(types, vals)):
            path = os.path.join(work, "expected_%d.npy" % k)
            with np.errstate(all="ignore"):
                np.save(path, np.asarray(v).astype(t.dtype))
            args += ["--expect", path]
        ref_error = None
    except Exception as e:      # a dtype the reference does not compute (not listed)
        ref_error = "%s: %s" % (type(e).__name__, e)
    return args, calls, ref_error


def _op_name(node):
    return node.get("repr_str", node.get("global_key"))


def probe(relayc, op, dt):
    """(class, detail): class is ok, mismatch, reference-mismatch (--reference),
    refused, bad-refusal, accepted (no reference to compare with), crash or error."""
    with tempfile.TemporaryDirectory(prefix="relayc_dt_") as work:
        try:
            args, calls, ref_error = build(op, dt, work)
        except Exception as e:  # relaywriter itself rejects the model (a type relation)
            return "unwritable", "%s: %s" % (type(e).__name__, e)
        outdir = os.path.join(work, "out")
        if ref_error:
            cmd = [relayc, "run", os.path.join(work, "model.json"), "-o", outdir] + [
                a for a in args if a != "--expect" and "expected_" not in a]
        else:
            cmd = [relayc, "check", os.path.join(work, "model.json"), "-q", "-o", outdir,
                   "--rtol", "0" if _exact(dt) else str(RTOL),
                   "--atol", str(INT_ATOL.get(op, 0)) if _exact(dt) else str(ATOL)] + args
        st, out, err = common.run(cmd)
        wrote = os.path.exists(outdir) and os.listdir(outdir)
        lines = err.strip().splitlines()
        desc = common.describe(cmd, (st, out, err))
        if st == 0 and not ref_error:
            # the reference interpreter (which constant folding runs) computes it too
            cmd += ["--reference"]
            r = common.run(cmd)
            return ("ok", "") if r[0] == 0 else ("reference-" + ("mismatch" if r[0] == 1 else
                                                                "error"), common.describe(cmd, r))
        if st == 0:
            return "accepted", "no reference: %s\n%s" % (ref_error, desc)
        if st == 1 and not ref_error:
            return "mismatch", desc
        if st == 2:
            named = any("nodes[%d]" % k in err for k in calls) and op in err
            if dt in ("float16", "int16"):  # not read at all: the typed node
                named = "nodes[" in err
            if len(lines) == 1 and dt in err and named and not wrote:
                return "refused", lines[0]
            return "bad-refusal", desc + ("\n(wrote %s)" % sorted(os.listdir(outdir))
                                          if wrote else "")
        return ("crash" if st < 0 or st > 3 else "error"), desc


def _exact(dt):
    return np.dtype(dt).kind != "f"


def list_ops(relayc):
    st, out, err = common.run([relayc, "ops", "--json"])
    if st != 0:
        return None, "relayc ops --json: exit %d: %s" % (st, err.strip())
    ops = json.loads(out)
    return {(o["name"] if isinstance(o, dict) else o):
            (o.get("dtypes", []) if isinstance(o, dict) else []) for o in ops}, None


def main():
    args = sys.argv[1:]
    survey = "--survey" in args
    only = None
    if "--only" in args:
        only = args[args.index("--only") + 1].split(",")
    relayc = args[0]
    tap = common.Tap()
    ops, why = list_ops(relayc)
    if ops is None:
        tap.bail(why)
    names = [o for o in ops if only is None or o in only]
    jobs = [(op, dt) for op in names for dt in PROBE_DTYPES]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        res = dict(zip(jobs, pool.map(lambda j: probe(relayc, *j), jobs)))
    if survey:
        for op in names:
            print("%-28s %s" % (op, " ".join("%s:%s" % (dt, res[(op, dt)][0])
                                             for dt in PROBE_DTYPES)))
        return 0
    for op in names:
        bad = []
        for dt in PROBE_DTYPES:
            cls, detail = res[(op, dt)]
            want = "ok" if dt in ops[op] else "refused"
            if cls != want:
                bad.append("%s %s: %s, expected %s\n%s" % (
                    op, dt, cls, "a match" if want == "ok" else "a one-line refusal",
                    detail))
        tap.result(not bad, "%s takes %s and refuses the other dtypes" % (
            op, " ".join(ops[op]) or "nothing"), "\n".join(bad))
    for dt in PROBE_DTYPES:
        tap.note("%-8s %3d operators" % (dt, sum(dt in ops[o] for o in names)))
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
