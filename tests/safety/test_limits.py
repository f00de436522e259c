#!/usr/bin/python3
"""relayc's stated limits (compiler/relayc.h) against hostile models. TAP.

Usage: /usr/bin/python3 tests/safety/test_limits.py RELAYC

Each model is small (a few KB to a few MB, written here) and asks for something over one
limit, or for work that would be quadratic or exponential without one. relayc must exit
2 with one line 'relayc: error: FILE: WHERE: WHAT' naming the limit and its value, or
compile, within a time bound and without a large allocation (peak RSS is measured).
RELAYC_WRAPPER (the meson test setup 'valgrind') is put before each relayc command.
"""
import base64
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402
from common import WRAPPER  # noqa: E402

SLOW = 20 if WRAPPER else 1     # valgrind
TAP = common.Tap(diag_lines=20)
result = TAP.result


def run(args, timeout=600):
    """(exit status, stdout, stderr, seconds, peak RSS in MB of the process)."""
    t0 = time.time()
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        p = subprocess.Popen(WRAPPER + args, stdout=fo, stderr=fe)
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)      # the child's own rusage
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
    return (p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
            time.time() - t0, ru.ru_maxrss / 1024)


class Doc:
    """A minimal Relay JSON document (TVM 0.8 layout: names and layouts as String refs)."""

    def __init__(self):
        self.nodes = [{"type_key": ""}]
        self.blobs = []

    def add(self, node):
        self.nodes.append(node)
        return len(self.nodes) - 1

    def string(self, s):
        return self.add({"type_key": "runtime.String", "repr_str": s})

    def array(self, items):
        return self.add({"type_key": "Array", "data": list(items)})

    def intimm(self, v):
        return self.add({"type_key": "IntImm", "attrs": {"dtype": "int64", "value": str(v)}})

    def ttype(self, shape, dtype="float32"):
        return self.add({"type_key": "relay.TensorType", "attrs": {
            "dtype": dtype, "shape": str(self.array([self.intimm(d) for d in shape]))}})

    def var(self, name, shape=None, ty=None):
        vid = self.add({"type_key": "relay.Id", "attrs": {"name_hint": str(self.string(name))}})
        if ty is None and shape is not None:
            ty = self.ttype(shape)
        return self.add({"type_key": "relay.Var", "attrs": {
            "vid": str(vid), "type_annotation": str(ty or 0), "_checked_type_": "0"}})

    def op(self, name):
        return self.add({"type_key": "Op", "repr_str": name})

    def call(self, op, args, attrs=0):
        return self.add({"type_key": "relay.Call", "attrs": {
            "op": str(op), "args": str(self.array(args)), "attrs": str(attrs),
            "type_args": str(self.array([])), "_checked_type_": "0"}})

    def attrs(self, key, fields):
        return self.add({"type_key": key, "attrs": {k: str(v) for k, v in fields.items()}})

    def tuple(self, fields):
        return self.add({"type_key": "relay.Tuple", "attrs": {"fields": str(self.array(fields)),
                                                             "_checked_type_": "0"}})

    def function(self, params, body):
        return self.add({"type_key": "relay.Function", "attrs": {
            "params": str(self.array(params)), "body": str(body), "ret_type": "0",
            "type_params": str(self.array([])), "attrs": "0", "_checked_type_": "0"}})

    def constant(self, blob_index):
        return self.add({"type_key": "relay.Constant", "attrs": {"data": str(blob_index),
                                                                "_checked_type_": "0"}})

    def blob(self, shape, data, code=2, bits=32):
        # DLTensor record: magic, reserved, device (type, id), ndim, dtype, shape, size, data
        raw = struct.pack("<QQii", 0xDD5E40F096B4A13F, 0, 1, 0) + struct.pack("<iBBH", len(shape),
                                                                            code, bits, 1)
        raw += b"".join(struct.pack("<q", d) for d in shape)
        raw += struct.pack("<q", len(data)) + data
        self.blobs.append(base64.b64encode(raw).decode())
        return len(self.blobs) - 1

    def write(self, path, root, version="0.8.0"):
        doc = {"root": root, "nodes": self.nodes, "b64ndarrays": self.blobs,
               "attrs": {"tvm_version": version}}
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))


def module(d, fn):
    """Wraps fn as main of an IRModule; returns the root."""
    gv = d.add({"type_key": "GlobalVar", "attrs": {"name_hint": str(d.string("main"))}})
    fns = d.add({"type_key": "Map", "data": [gv, fn]})
    gvm = d.add({"type_key": "Map", "keys": ["main"], "data": [gv]})
    return d.add({"type_key": "IRModule", "attrs": {"functions": str(fns),
                                                   "global_var_map_": str(gvm)}})


def expect_error(relayc, path, words, desc, seconds=30, mb=600, extra=()):
    r = run([relayc, "compile", path, "-o", os.path.dirname(path), "--name", "m"] + list(extra))
    lines = [l for l in r[2].split("\n") if l.strip()]
    good = (r[0] == 2 and len(lines) == 1 and lines[0].startswith("relayc: error: " + path + ": ")
            and all(w in lines[0] for w in words))
    result(good, "%s: exit 2, one line naming %s" % (desc, " / ".join(words)),
           "exit %d\n%s" % (r[0], r[2][:600]))
    result(r[3] < seconds * SLOW and (WRAPPER or r[4] < mb),
           "%s: %.1f s (bound %d s), peak RSS %.0f MB (bound %d MB)" % (desc, r[3], seconds * SLOW,
                                                                       r[4], mb))
    return r


def heavy(desc):
    """The big cases are left out under valgrind (minutes each); ASan covers them."""
    if WRAPPER:
        result(True, "# SKIP %s under RELAYC_WRAPPER" % desc)
    return not WRAPPER


def expect_ok(relayc, path, desc, seconds=30, mb=600, extra=()):
    r = run([relayc, "compile", path, "-o", os.path.dirname(path), "--name", "m"] + list(extra))
    result(r[0] == 0, "%s: compiles" % desc, "exit %d\n%s" % (r[0], r[2][:600]))
    result(r[3] < seconds * SLOW and (WRAPPER or r[4] < mb),
           "%s: %.1f s (bound %d s), peak RSS %.0f MB (bound %d MB)" % (desc, r[3], seconds * SLOW,
                                                                       r[4], mb))


def relu_model(shape, dtype="float32"):
    d = Doc()
    x = d.var("x", ty=d.ttype(shape, dtype))
    return d, module(d, d.function([x], d.call(d.op("nn.relu"), [x])))


def main():
    relayc = sys.argv[1]
    with common.work_dir("relayc_limits_") as work:
        def path(name):
            p = os.path.join(work, name)
            os.makedirs(p)
            return os.path.join(p, "model.json")

        # file size: a sparse file over 4 GiB is refused before it is read
        p = path("file_size")
        with open(p, "wb") as f:
            f.truncate((4 << 30) + 1)
        expect_error(relayc, p, ["more than the limit of 4294967296"], "a 4 GiB + 1 file")
        os.unlink(p)

        # JSON nesting: cJSON stops at 1000 levels
        p = path("nesting")
        with open(p, "w") as f:
            f.write('{"nodes": ' + "[" * 1200 + "]" * 1200 + "}")
        expect_error(relayc, p, ["nesting", "1000"], "JSON nested 1200 deep")

        # JSON values: counted before cJSON parses (each costs it about 80 bytes)
        p = path("json_values")
        with open(p, "w") as f:
            f.write('{"nodes": [' + "0," * (17 << 20) + "0]}")
        expect_error(relayc, p, ["more than 16777216 JSON values"], "17 Mi JSON numbers")
        os.unlink(p)

        # the node table
        if heavy("4000001 nodes"):
            p = path("nodes")
            with open(p, "w") as f:
                f.write('{"root": 0, "nodes": [' + "{}," * 4000000 + "{}]}")
            expect_error(relayc, p, ["4000001 nodes", "limit of 4000000"], "4000001 nodes",
                         mb=1200)
            os.unlink(p)

        # rank
        d, root = relu_model([1] * 9)
        p = path("rank")
        d.write(p, root)
        expect_error(relayc, p, ["rank 9", "limit of 8"], "a rank-9 input")

        # elements: one dimension, and the product
        for desc, shape, words in [("dimension 2^31", [1 << 31], ["2147483648", "2147483647"]),
                                   ("2^16 x 2^16 elements", [65536, 65536], ["2147483647"]),
                                   ("2^62 x 2^62 elements", [1 << 62, 1 << 62], ["2147483647"])]:
            d, root = relu_model(shape)
            p = path("elements_%d" % TAP.n)
            d.write(p, root)
            expect_error(relayc, p, words, "an input of " + desc)

        # an op result over the element limit: broadcasting two large vectors
        d = Doc()
        x = d.var("x", [46341, 1])
        y = d.var("y", [1, 46341])
        root = module(d, d.function([x, y], d.call(d.op("add"), [x, y])))
        p = path("broadcast")
        d.write(p, root)
        expect_error(relayc, p, ["more than 2147483647 elements"], "add [46341,1] + [1,46341]")

        # total constant bytes: dropout's mask of an input of 2^30 floats (4 GiB)
        d = Doc()
        x = d.var("x", [1 << 30])
        dr = d.call(d.op("nn.dropout"), [x], d.attrs("relay.attrs.DropoutAttrs", {"rate": "0.5"}))
        tgi = d.add({"type_key": "relay.TupleGetItem", "attrs": {"tuple_value": str(dr),
                                                                 "index": "1"}})
        root = module(d, d.function([x], tgi))
        p = path("const_bytes")
        d.write(p, root)
        expect_error(relayc, p, ["constants exceed 2147483648 bytes"], "a 4 GiB dropout mask")

        # one blob named by 20000 Constant nodes: decoded once, not 20000 times
        if heavy("20000 Constants of one blob"):
            d = Doc()
            b = d.blob([65536], b"\0" * (65536 * 4))
            x = d.var("x", [65536])
            acc = x
            for _ in range(20000):
                acc = d.call(d.op("add"), [acc, d.constant(b)])
            root = module(d, d.function([x], acc))
            p = path("shared_blob")
            d.write(p, root)
            expect_ok(relayc, p, "20000 Constants of one 256 KiB blob", seconds=60, mb=800)

        # attrs fields
        d, root = relu_model([4])
        d.attrs("relay.attrs.ReshapeAttrs", {"f%d" % i: "0" for i in range(1025)})
        p = path("fields")
        d.write(p, root)
        expect_error(relayc, p, ["more than 1024 fields"], "an attrs object of 1025 fields")

        # names
        d = Doc()
        x = d.var("n" * 5000, [4])
        root = module(d, d.function([x], d.call(d.op("nn.relu"), [x])))
        p = path("name")
        d.write(p, root)
        expect_error(relayc, p, ["5000 bytes", "limit of 4096"], "a 5000-byte var name")

        # exponential inlining: f_k(x) = f_{k-1}(f_{k-1}(x)), 40 levels (2^40 calls)
        if heavy("2^40 inlined relu calls"):
            d = Doc()
            x0 = d.var("x", [4])
            f = d.function([x0], d.call(d.op("nn.relu"), [x0]))
            for k in range(40):
                xk = d.var("x%d" % k, [4])
                f = d.function([xk], d.call(f, [d.call(f, [xk])]))
            xm = d.var("input", [4])
            root = module(d, d.function([xm], d.call(f, [xm])))
            p = path("inline_exp")
            d.write(p, root)
            expect_error(relayc, p, ["250000 IR nodes"], "2^40 inlined relu calls", seconds=60,
                         mb=1500)

        # the same without ops: tuples only, so no IR node is made
        if heavy("2^40 inlined tuple calls"):
            d = Doc()
            x0 = d.var("x", [4])
            f = d.function([x0], d.tuple([x0, x0]))
            for k in range(40):
                xk = d.var("x%d" % k, [4])
                tgi = d.add({"type_key": "relay.TupleGetItem", "attrs": {
                    "tuple_value": str(d.call(f, [xk])), "index": "0"}})
                f = d.function([xk], d.tuple([tgi, d.add({"type_key": "relay.TupleGetItem", "attrs": {
                    "tuple_value": str(d.call(f, [tgi])), "index": "1"}})]))
            xm = d.var("input", [4])
            root = module(d, d.function([xm], d.call(f, [xm])))
            p = path("inline_exp_tuples")
            d.write(p, root)
            expect_error(relayc, p, ["2000000 expressions"], "2^40 inlined tuple calls",
                         seconds=60, mb=1500)

        # a tuple of 100000 fields, each a distinct call: linear, not quadratic
        if heavy("a 100000-field tuple"):
            d = Doc()
            x = d.var("x", [1])
            relu = d.op("nn.relu")
            fields = [d.call(relu, [x]) for _ in range(100000)]
            t = d.tuple(fields)
            tgi = d.add({"type_key": "relay.TupleGetItem", "attrs": {"tuple_value": str(t),
                                                                     "index": "7"}})
            root = module(d, d.function([x], tgi))
            p = path("wide_tuple")
            d.write(p, root)
            expect_ok(relayc, p, "a 100000-field tuple", seconds=60, mb=1500)

        # strided_slice with more axes than the rank
        d = Doc()
        x = d.var("x", [4, 4])
        arr = lambda vals: d.array([d.intimm(v) for v in vals])
        sa = d.attrs("relay.attrs.StridedSliceAttrs", {
            "begin": arr([0] * 20), "end": arr([1] * 20), "strides": arr([1] * 20),
            "axes": arr([0, 1] * 10), "slice_mode": d.string("end")})
        root = module(d, d.function([x], d.call(d.op("strided_slice"), [x], sa)))
        p = path("slice_axes")
        d.write(p, root)
        expect_error(relayc, p, ["axes has 20 entries"], "strided_slice with 20 axes on rank 2")
    return TAP.finish()


if __name__ == "__main__":
    sys.exit(main())
