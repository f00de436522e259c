#!/usr/bin/python3
"""`relayc info` lists every unsupported (operator, dtype) pair in one run; prints TAP.

Usage: /usr/bin/python3 tests/realmodels/test_info_dtypes.py RELAYC

Quantized graphs from TVM's frontends put integer tensors between `cast`s into operators
that relayc does not compile in their dtype (an int8 nn.adaptive_avg_pool2d: TVM would sum
in int8). Such a call is listed as "OP on DTYPE" next to the operators relayc does not
know, with the dtypes the operator takes, `info` exits 1, and `compile` names them all
(exit 2, nothing written). A call whose lowering fails for another reason keeps its own
error. The models are written with
tests/relaywriter.py.
"""
import json
import os
import sys


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import relaywriter as rw  # noqa: E402
from common import WRAPPER, describe, sanitizer_report  # noqa: E402

UNKNOWN = "test.no_such_operator"


def call_nodes(text, op):
    """Indices of the Call nodes of operator op in a save_json text."""
    nodes = json.loads(text)["nodes"]
    ops = {i for i, n in enumerate(nodes)
           if n["type_key"] == "Op" and n.get("repr_str") == op}
    return [i for i, n in enumerate(nodes)
            if n["type_key"] == "relay.Call" and int(n["attrs"]["op"]) in ops]


def pool_i8(shape=(1, 4, 6, 6)):
    x = rw.Var("x", shape, "int8")
    p = rw.Call("nn.adaptive_avg_pool2d", [x], {"output_size": [1, 1]})
    return x, rw.Call("cast", [p], {"dtype": "float32"})


def models():
    """(name, root): models with int32 or int8 operands of float32-only operators."""
    out = []
    x, y = pool_i8()
    out.append(("an int8 adaptive_avg_pool2d", rw.Function([x], rw.Call("nn.relu", [y]))))
    # two such calls of different operators and dtypes, and an operator relayc does not know
    # in between: all three in one run
    x, y = pool_i8()
    s = rw.Call("sigmoid", [y])
    c = rw.Call("cast", [s], {"dtype": "int8"})
    g = rw.Call("nn.global_max_pool2d", [c])
    m = rw.Call("cast", [rw.Call("nn.global_avg_pool2d", [rw.Call("cast", [g], {"dtype": "int32"})])],
                {"dtype": "float32"})
    out.append(("two dtypes and an unknown operator", rw.Function([x], m)))
    # one function with the int8 call, inlined twice: listed once
    x, y = pool_i8()
    fx = rw.Var("a", (1, 4, 6, 6), "int8")
    _, inner = pool_i8()
    inner.args[0].args[0] = fx
    gv = rw.GlobalVar("pool")
    main = rw.Function([x], rw.Call("add", [rw.Call(gv, [x]), rw.Call(gv, [x])]))
    out.append(("a call inlined twice", rw.Module([("main", main), (gv, rw.Function([fx], inner))])))
    return out


def write(path, root, typed=True, unknown_for=None):
    text = rw.save_json(root, version="0.18.0", typed=typed)
    if unknown_for:
        text = text.replace('"repr_str": "%s"' % unknown_for, '"repr_str": "%s"' % UNKNOWN)
    with open(path, "w") as f:
        f.write(text)
    return text


def info(relayc, path):
    cmd = WRAPPER + [relayc, "info", path, "--json"]
    r = common.run(cmd)
    try:
        j = json.loads(r[1]) if r[0] in (0, 1) else None
    except ValueError:
        j = None
    return r, cmd, j


def main():
    relayc = os.path.abspath(sys.argv[1])
    t = common.Tap()
    with common.work_dir("relayc-info-dtypes-") as work:
        cases = models()
        for k, (name, root) in enumerate(cases):
            path = os.path.join(work, "m%d.json" % k)
            text = write(path, root, unknown_for="sigmoid" if k == 1 else None)
            pools = {op: call_nodes(text, op) for op in
                     ("nn.adaptive_avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
                      UNKNOWN)}
            want = [{"op": "nn.adaptive_avg_pool2d on int8", "node": pools["nn.adaptive_avg_pool2d"][0]}]
            if k == 1:
                want += [{"op": UNKNOWN, "node": pools[UNKNOWN][0]},
                         {"op": "nn.global_max_pool2d on int8", "node": pools["nn.global_max_pool2d"][0]},
                         {"op": "nn.global_avg_pool2d on int32", "node": pools["nn.global_avg_pool2d"][0]}]
                want.sort(key=lambda u: u["node"])
            r, cmd, j = info(relayc, path)
            got = j.get("unsupported") if j else None
            t.result(r[0] == 1 and got == want and not sanitizer_report(r[2]),
                     "%s: info exits 1 listing %s" % (name, ", ".join(w["op"] for w in want)),
                     "got %s\nexpected %s\n%s" % (got, want, describe(cmd, r)))
            if k == 0:
                cmd = WRAPPER + [relayc, "info", path]
                r = common.run(cmd)
                line = ("unsupported: nn.adaptive_avg_pool2d on int8 at nodes[%d] "
                        "(nn.adaptive_avg_pool2d takes float32, int32)" % want[0]["node"])
                t.result(r[0] == 1 and line in r[1].split("\n"), "%s: info (text) prints '%s'"
                         % (name, line), describe(cmd, r))
                out = os.path.join(work, "out")
                os.makedirs(out)
                cmd = WRAPPER + [relayc, "compile", path, "-o", out]
                r = common.run(cmd)
                msg = ("unsupported operators: nn.adaptive_avg_pool2d on int8 (nodes[%d]; "
                       "nn.adaptive_avg_pool2d takes float32, int32)" % want[0]["node"])
                t.result(r[0] == 2 and msg in r[2] and not os.listdir(out) and
                         len(r[2].strip().split("\n")) == 1,
                         "%s: compile exits 2 naming it, writes nothing" % name, describe(cmd, r))
                # without checked types the call is listed, and lowering stops there
                path2 = os.path.join(work, "untyped.json")
                write(path2, cases[0][1], typed=False)
                r, cmd, j = info(relayc, path2)
                got = j.get("unsupported") if j else None
                t.result(r[0] == 1 and got == want and not sanitizer_report(r[2]),
                         "untyped: info exits 1 listing nn.adaptive_avg_pool2d on int8",
                         "got %s\n%s" % (got, describe(cmd, r)))
        # a failure that is no dtype's: 3-d data fails in float32 too; the call is not listed
        # and its (first) error stands
        x = rw.Var("x", (1, 4, 6), "int8")
        f = rw.Function([x], rw.Call("nn.adaptive_avg_pool2d", [x], {"output_size": [1, 1]}))
        path = os.path.join(work, "bad.json")
        text = write(path, f, typed=False)
        node = call_nodes(text, "nn.adaptive_avg_pool2d")[0]
        cmd = WRAPPER + [relayc, "info", path]
        r = common.run(cmd)
        t.result(r[0] == 2 and "nodes[%d] (Call nn.adaptive_avg_pool2d): expected 4-d data, got [1, 4, 6]"
                 % node in r[2] and "unsupported" not in r[1] + r[2],
                 "3-d int8 data: info exits 2 with the call's error, lists nothing",
                 describe(cmd, r))
        # float32 operands are compiled: nothing listed
        x = rw.Var("x", (1, 4, 6, 6))
        f = rw.Function([x], rw.Call("nn.adaptive_avg_pool2d", [x], {"output_size": [1, 1]}))
        path = os.path.join(work, "f32.json")
        write(path, f)
        r, cmd, j = info(relayc, path)
        t.result(r[0] == 0 and j and j.get("unsupported") == [], "float32: info exits 0, nothing listed",
                 describe(cmd, r))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
