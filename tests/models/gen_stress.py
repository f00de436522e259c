#!/usr/bin/python3
"""Writes the stress cases of tests/models/cases/: small models at the edges that the golden
cases do not reach (non-finite constants, rank 0 and rank 8, an empty tensor, no inputs,
40 inputs, 150 constants, odd input names, outputs that alias inputs, constants, views or
each other, buffers read after an in-place candidate, concatenates whose operands are
written in place and those that cannot be, slices viewed in place, channel shuffles). Same layout as tests/golden.

  /usr/bin/python3 tests/models/gen_stress.py [OUT]     (default: tests/models/cases)

Expected outputs come from numpy (float64, cast to the output dtype), never from relayc.
"""
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import relaywriter as rw  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "cases")
V = "0.18.0"
rng = np.random.default_rng(5)


def write(name, params, body, inputs, expected, ops, version=V, elided=None):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    f = rw.Function(params, body)
    root = rw.Module({"main": f})
    rw.infer_types(root, version)
    with open(os.path.join(d, "model.json"), "w", encoding="utf-8") as fh:
        fh.write(rw.save_json(root, version))
    for p, a in zip(params, inputs):
        np.save(os.path.join(d, "input_%s.npy" % p.name), a)
    for k, e in enumerate(expected):
        np.save(os.path.join(d, "expected_%d.npy" % k), np.array(e, order="C"))
    meta = {"generator": "tests/models/gen_stress.py (expected outputs from numpy)",
            "tvm_version": version,
            "inputs": [{"name": p.name, "shape": list(a.shape), "dtype": str(a.dtype)} for p, a in zip(params, inputs)],
            "outputs": [{"shape": list(e.shape), "dtype": str(e.dtype)} for e in expected],
            "ops": ops, "tolerance": {"rtol": 1e-4, "atol": 1e-5}}
    if elided is not None:  # kernels the memory plan leaves without code (run_case.py)
        meta["elided"] = elided
    with open(os.path.join(d, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")

def f32(*s): return rng.standard_normal(s).astype(np.float32)

# 1. nonfinite and odd constants
c = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4028235e38, -1e-40, 0.5], np.float32)
x = rw.Var("x", (2, 8)); xa = f32(2, 8)
with np.errstate(all="ignore"):
    e = (xa + c).astype(np.float32)
write("nonfinite_const", [x], rw.Call("add", [x, rw.Const(c)]), [xa], [e], {"add": 1})

# 2. rank-0 input and output
x = rw.Var("x", ()); xa = np.array(1.5, np.float32)
write("scalar_io", [x], rw.Call("exp", [x]), [xa], [np.exp(xa).astype(np.float32)], {"exp": 1})

# 3. empty tensor
x = rw.Var("x", (0, 3)); xa = np.zeros((0, 3), np.float32)
write("empty_tensor", [x], rw.Call("nn.relu", [x]), [xa], [xa.copy()], {"nn.relu": 1})

# 4. same dying buffer twice: add(t, t), then in-place chain with broadcast
x = rw.Var("x", (3, 5)); xa = f32(3, 5)
t = rw.Call("exp", [x]); u = rw.Call("add", [t, t]); b = rw.Const(f32(5))
v = rw.Call("multiply", [b, u])
e = (b.data * (2 * np.exp(xa.astype(np.float64)))).astype(np.float32)
write("same_buffer_twice", [x], v, [xa], [e], {"exp": 1, "add": 1, "multiply": 1})

# 5. rank 8
sh = (2, 1, 2, 1, 3, 1, 2, 2)
x = rw.Var("x", sh); xa = f32(*sh)
y = rw.Var("y", (3, 1, 2, 1)); ya = f32(3, 1, 2, 1)
write("rank8_bcast", [x, y], rw.Call("subtract", [x, y]), [xa, ya], [(xa - ya).astype(np.float32)], {"subtract": 1})

# 6. many inputs -> concatenate
xs = [rw.Var("x%d" % i, (1, 2)) for i in range(40)]; xas = [f32(1, 2) for _ in xs]
write("forty_inputs", xs, rw.Call("concatenate", [rw.Tuple(xs)], {"axis": 1}), xas, [np.concatenate(xas, 1)], {"concatenate": 1})

# 7. tuple output: input, constant, same temp twice, view of temp
x = rw.Var("x", (2, 3)); xa = f32(2, 3); cc = f32(2, 3)
t = rw.Call("tanh", [x]); r = rw.Call("reshape", [t], {"newshape": [3, 2]})
write("tuple_mixed", [x], rw.Tuple([x, rw.Const(cc), t, r, t]), [xa],
      [xa, cc, np.tanh(xa), np.tanh(xa).reshape(3, 2), np.tanh(xa)], {"tanh": 1, "reshape": 1})

# 8. an int32 input and output (cast, multiply by a scalar constant, cast back)
x = rw.Var("x", (4,), "int32"); xa = np.array([1, -2, 300, 7], np.int32)
t = rw.Call("cast", [x], {"dtype": "float32"}); u = rw.Call("multiply", [t, rw.Const(np.array(0.5, np.float32))])
write("int_input", [x], rw.Call("cast", [u], {"dtype": "int32"}), [xa], [(xa * 0.5).astype(np.int32)], {"cast": 2, "multiply": 1})

# 9. softmax over an axis of size 1, reduce to scalar
x = rw.Var("x", (3, 1)); xa = f32(3, 1)
s = rw.Call("nn.softmax", [x], {"axis": 1}); m = rw.Call("sum", [s], {"axis": None, "keepdims": False})
write("softmax_size1_sum", [x], m, [xa], [np.array(3.0, np.float32)], {"nn.softmax": 1, "sum": 1})

# 10. output is a view of an input (reshape) and the input is also an output
x = rw.Var("x", (2, 6)); xa = f32(2, 6)
write("input_view_outputs", [x], rw.Tuple([rw.Call("reshape", [x], {"newshape": [3, 4]}), x]), [xa], [xa.reshape(3, 4), xa], {"reshape": 1})

# 11. live range: a temp used after an in-place candidate
x = rw.Var("x", (4, 4)); xa = f32(4, 4)
a = rw.Call("exp", [x]); b1 = rw.Call("negative", [a]); c1 = rw.Call("add", [b1, a])   # a used after b
d1 = rw.Call("multiply", [c1, b1])
A = np.exp(xa.astype(np.float64)); B = -A; C = B + A; D = C * B
write("liveness", [x], d1, [xa], [D.astype(np.float32)], {"exp": 1, "negative": 1, "add": 1, "multiply": 1})

# 12. transpose of a split output and concat back with the other (views + copies)
x = rw.Var("x", (2, 6)); xa = f32(2, 6)
sp = rw.Call("split", [x], {"indices_or_sections": 2, "axis": 1})
p0 = rw.TupleGetItem(sp, 0); p1 = rw.TupleGetItem(sp, 1)
tt = rw.Call("transpose", [p0], {"axes": [1, 0]}); t2 = rw.Call("transpose", [p1], {"axes": [1, 0]})
cat = rw.Call("concatenate", [rw.Tuple([t2, tt, t2])], {"axis": 0})
xs = np.split(xa, 2, 1)
write("split_transpose_concat", [x], cat, [xa], [np.concatenate([xs[1].T, xs[0].T, xs[1].T], 0)], {"split": 1, "transpose": 2, "concatenate": 1})

# 13. odd input names: "=" (the separator of --input), quotes, backslash, a trigraph, non-ASCII
names = ["a=b", "x \"q\" \\ ??= *", "\u00fc\u00df"]
xs = [rw.Var(n, (2,)) for n in names]; xas = [f32(2) for _ in xs]
s = rw.Call("add", [rw.Call("add", [xs[0], xs[1]]), xs[2]])
write("odd_names", xs, s, xas, [(xas[0] + xas[1] + xas[2]).astype(np.float32)], {"add": 2})

# 14. no runtime input at all
c1 = f32(2, 3); c2 = f32(3)
write("zero_inputs", [], rw.Call("multiply", [rw.Const(c1), rw.Const(c2)]), [], [(c1 * c2).astype(np.float32)], {"multiply": 1})

# 15. many distinct constants (the bin offset table), two with equal data
x = rw.Var("x", (1, 5)); xa = f32(1, 5); e = xa.astype(np.float64); s = x
cs = [f32(5) * 0.01 for _ in range(150)]
cs[7] = cs[3].copy()
for c in cs:
    s = rw.Call("add", [s, rw.Const(c)]); e = e + c
write("many_constants", [x], s, [xa], [e.astype(np.float32)], {"add": 150})

# 16. an output read again by later nodes
x = rw.Var("x", (3, 4)); xa = f32(3, 4)
o0 = rw.Call("nn.relu", [x]); o1 = rw.Call("exp", [o0]); o2 = rw.Call("add", [o0, o1])
r = np.maximum(xa, 0).astype(np.float64)
write("output_read_back", [x], rw.Tuple([o0, o1, o2]), [xa],
      [r.astype(np.float32), np.exp(r).astype(np.float32), (r + np.exp(r)).astype(np.float32)], {"nn.relu": 1, "exp": 1, "add": 1})

# 17. concatenates along channels (batch 1) whose operands are written in place: one nested
# in another, one that is the model's output; the report must show them without code
def call(op, *a, **at): return rw.Call(op, list(a), at)
x = rw.Var("x", (1, 3, 5, 6)); xa = f32(1, 3, 5, 6); X = xa.astype(np.float64)
c1 = call("concatenate", rw.Tuple([call("nn.relu", x), call("negative", x)]), axis=1)
c2 = call("concatenate", rw.Tuple([c1, call("exp", x)]), axis=1)
o0 = call("multiply", c2, rw.Const(np.float32(2)))
o1 = call("concatenate", rw.Tuple([call("sigmoid", x), call("tanh", x)]), axis=-3)
E2 = np.concatenate([np.maximum(X, 0), -X, np.exp(X)], 1) * 2
E1 = np.concatenate([1 / (1 + np.exp(-X)), np.tanh(X)], 1)
write("concat_in_place", [x], rw.Tuple([o0, o1]), [xa], [E2.astype(np.float32), E1.astype(np.float32)],
      {"concatenate": 3, "nn.relu": 1, "negative": 1, "exp": 1, "multiply": 1, "sigmoid": 1, "tanh": 1},
      elided={"concatenate": 3})

# 18. concatenates that cannot be in place, or only partly: an operand read elsewhere too,
# a model input, the same operand twice, an operand that is a model output, along an inner
# axis, along channels with a batch of 2
x = rw.Var("x", (1, 2, 3, 4)); xa = f32(1, 2, 3, 4); X = xa.astype(np.float64)
z = rw.Var("z", (2, 2, 3)); za = f32(2, 2, 3); Z = za.astype(np.float64)
a = call("nn.relu", x); b3 = call("tanh", x); o = call("sigmoid", x)
outs = [call("concatenate", rw.Tuple([a, call("exp", x)]), axis=1), call("multiply", a, rw.Const(np.float32(3))),
        call("concatenate", rw.Tuple([x, call("negative", x)]), axis=1),
        call("concatenate", rw.Tuple([b3, b3]), axis=1),
        call("concatenate", rw.Tuple([o, call("abs", x)]), axis=1), o,
        call("concatenate", rw.Tuple([call("sin", x), call("cos", x)]), axis=2),
        call("concatenate", rw.Tuple([call("exp", z), call("nn.relu", z)]), axis=1)]
R, S = np.maximum(X, 0), 1 / (1 + np.exp(-X))
exp = [np.concatenate([R, np.exp(X)], 1), R * 3, np.concatenate([X, -X], 1),
       np.concatenate([np.tanh(X)] * 2, 1), np.concatenate([S, np.abs(X)], 1), S,
       np.concatenate([np.sin(X), np.cos(X)], 2), np.concatenate([np.exp(Z), np.maximum(Z, 0)], 1)]
write("concat_not_in_place", [x, z], rw.Tuple(outs), [xa, za], [e.astype(np.float32) for e in exp],
      {"concatenate": 6, "nn.relu": 2, "exp": 2, "multiply": 1, "negative": 1, "tanh": 1, "sigmoid": 1,
       "abs": 1, "sin": 1, "cos": 1}, elided={})

# 19. slices viewed in place: splits along channels of an input and of a computed tensor
# (the split of x's middle third is never read),
# a slice that is a model output, one read after its source's other reader (an in-place
# candidate) ran, a contiguous strided_slice; a slice along an inner axis is copied
x = rw.Var("x", (1, 6, 4, 4)); xa = f32(1, 6, 4, 4); X = xa.astype(np.float64)
sx = call("split", x, indices_or_sections=3, axis=1)
t = call("exp", x)
st = call("split", t, indices_or_sections=2, axis=1)
w = call("negative", t)
g = lambda s, k: rw.TupleGetItem(s, k)
outs = [call("add", g(sx, 0), g(sx, 2)), call("nn.relu", g(st, 1)), g(st, 1),
        call("add", call("sum", w, axis=[1], keepdims=True), g(st, 0)),
        call("nn.relu", call("strided_slice", x, begin=[0, 2], end=[1, 4], strides=[1, 1])),
        call("nn.relu", call("strided_slice", x, begin=[0, 0, 1], end=[1, 6, 3], strides=[1, 1, 1]))]
T = np.exp(X)
exp = [X[:, 0:2] + X[:, 4:6], np.maximum(T[:, 3:6], 0), T[:, 3:6], (-T).sum(1, keepdims=True) + T[:, 0:3],
       np.maximum(X[:, 2:4], 0), np.maximum(X[:, :, 1:3], 0)]
write("split_views", [x], rw.Tuple(outs), [xa], [e.astype(np.float32) for e in exp],
      {"split": 2, "exp": 1, "negative": 1, "add": 2, "nn.relu": 3, "sum": 1, "strided_slice": 2},
      elided={"split": 4, "strided_slice": 1})

# 20. channel shuffles as TVM's PyTorch frontend writes ShuffleNetV2's (split, concatenate,
# reshape, transpose, reshape), with 2 and 3 groups, each then one concatenate along the
# interleaved axis, and one whose operands are not equal slices of the shuffled tensor (its
# concatenate in place, then the transpose)
def shuffle(v, c, g, h, w):
    v = call("reshape", v, newshape=[1, g, c // g, h, w])
    v = call("transpose", v, axes=[0, 2, 1, 3, 4])
    return call("reshape", v, newshape=[1, c, h, w])
def np_shuffle(v, g):
    n, c, h, w = v.shape
    return v.reshape(n, g, c // g, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w)
x = rw.Var("x", (1, 8, 3, 4)); xa = f32(1, 8, 3, 4); X = xa.astype(np.float64)
y = rw.Var("y", (1, 9, 2, 2)); ya = f32(1, 9, 2, 2); Y = ya.astype(np.float64)
sp = call("split", x, indices_or_sections=[4], axis=1)
o0 = shuffle(call("concatenate", rw.Tuple([g(sp, 0), call("sigmoid", g(sp, 1))]), axis=1), 8, 2, 3, 4)
o1 = shuffle(call("concatenate", rw.Tuple([call("exp", y), call("negative", y), y]), axis=1), 27, 3, 2, 2)
o2 = shuffle(call("concatenate", rw.Tuple([call("nn.relu", x), call("tanh", g(sp, 0))]), axis=1), 12, 2, 3, 4)
E0 = np_shuffle(np.concatenate([X[:, :4], 1 / (1 + np.exp(-X[:, 4:]))], 1), 2)
E1 = np_shuffle(np.concatenate([np.exp(Y), -Y, Y], 1), 3)
E2 = np_shuffle(np.concatenate([np.maximum(X, 0), np.tanh(X[:, :4])], 1), 2)
write("channel_shuffle", [x, y], rw.Tuple([o0, o1, o2]), [xa, ya], [e.astype(np.float32) for e in (E0, E1, E2)],
      {"split": 1, "concatenate": 3, "reshape": 6, "transpose": 3, "sigmoid": 1, "exp": 1, "negative": 1,
       "nn.relu": 1, "tanh": 1}, elided={"split": 2, "concatenate": 1})

# 21. concatenate operands that are reshapes of computed results (a detection head's
# flattened outputs, a transposed conv's phases): the results are written in place through
# the reshape; not when the result is also read elsewhere, or is itself viewed twice
x = rw.Var("x", (1, 3, 4, 5)); xa = f32(1, 3, 4, 5); X = xa.astype(np.float64)
y = rw.Var("y", (1, 2, 3, 4)); ya = f32(1, 2, 3, 4); Y = ya.astype(np.float64)
flat = lambda v, n: call("reshape", v, newshape=[1, n])
o0 = call("multiply", call("concatenate", rw.Tuple([flat(call("nn.relu", x), 60),
                                                    flat(call("exp", y), 24)]), axis=1),
          rw.Const(np.float32(2)))
t = call("tanh", y)
o1 = call("concatenate", rw.Tuple([flat(call("sigmoid", x), 60), flat(t, 24)]), axis=1)
o2 = call("negative", t)
n2 = call("abs", x)
o3 = call("concatenate", rw.Tuple([flat(n2, 60), flat(n2, 60)]), axis=1)
E0 = np.concatenate([np.maximum(X, 0).reshape(1, 60), np.exp(Y).reshape(1, 24)], 1) * 2
E1 = np.concatenate([(1 / (1 + np.exp(-X))).reshape(1, 60), np.tanh(Y).reshape(1, 24)], 1)
E3 = np.concatenate([np.abs(X).reshape(1, 60)] * 2, 1)
write("concat_of_reshapes", [x, y], rw.Tuple([o0, o1, o2, o3]), [xa, ya],
      [e.astype(np.float32) for e in (E0, E1, -np.tanh(Y), E3)],
      {"concatenate": 3, "reshape": 6, "nn.relu": 1, "exp": 1, "multiply": 1, "sigmoid": 1,
       "tanh": 1, "negative": 1, "abs": 1}, elided={"concatenate": 1})

# 22. elementwise ops after data movement that gathers conv results (fuse.c sink): a relu
# after a channel shuffle of two convs moves into both convs, the per-channel add after it
# does not (the shuffle moves channels); a per-channel add after a concatenate of convs
# along channels does not (the second conv's channels are offset); a sigmoid after a
# slice of a conv and a scalar multiply after a transpose of one move into them
def conv1x1(v, w): return call("nn.conv2d", v, rw.Const(w), channels=w.shape[0], kernel_size=[1, 1])
def np1x1(v, w): return np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), v)
x = rw.Var("x", (1, 3, 4, 5)); xa = f32(1, 3, 4, 5); X = xa.astype(np.float64)
ws = [f32(4, 3, 1, 1) for _ in range(6)]
b8 = f32(8, 1, 1)
sh = shuffle(call("concatenate", rw.Tuple([conv1x1(x, ws[0]), conv1x1(x, ws[1])]), axis=1), 8, 2, 4, 5)
o0 = call("add", call("nn.relu", sh), rw.Const(b8))
o1 = call("add", call("concatenate", rw.Tuple([conv1x1(x, ws[2]), conv1x1(x, ws[3])]), axis=1),
          rw.Const(b8))
o2 = call("sigmoid", call("strided_slice", conv1x1(x, ws[4]), begin=[0, 1, 1], end=[1, 3, 4],
                          strides=[1, 1, 2]))
o3 = call("multiply", rw.Const(np.float32(-1.5)), call("transpose", conv1x1(x, ws[5]), axes=[0, 2, 3, 1]))
C = [np1x1(X, w) for w in ws]
E0 = np.maximum(np_shuffle(np.concatenate(C[0:2], 1), 2), 0) + b8
E1 = np.concatenate(C[2:4], 1) + b8
E2 = 1 / (1 + np.exp(-C[4][:, 1:3, 1:4:2]))
E3 = -1.5 * C[5].transpose(0, 2, 3, 1)
write("sink_into_convs", [x], rw.Tuple([o0, o1, o2, o3]), [xa],
      [e.astype(np.float32) for e in (E0, E1, E2, E3)],
      {"nn.conv2d": 6, "concatenate": 2, "reshape": 2, "transpose": 2, "nn.relu": 1, "add": 2,
       "strided_slice": 1, "sigmoid": 1, "multiply": 1})

print("wrote %s" % OUT)
