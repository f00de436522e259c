#!/usr/bin/python3
"""gen.py: writes the benchmark's inputs into OUT (see bench/run).

  OUT/models/NAME.json   one Relay model per kernel shape (conv2d or dense alone, constant
                         weights), written with tests/relaywriter.py; and per shape an int8
                         one, q_NAME: qnn.conv2d / qnn.dense (int8 input with a nonzero zero
                         point, int8 per-channel weights) + nn.bias_add (int32) +
                         qnn.requantize to int8, per-channel scales (a TFLite-style layer)
  OUT/data/NAME.{x,w}    the input and the weights, raw float32 (OIHW / [n][k]); for the
                         int8 shapes x and w are int8, q_NAME.b the int32 bias and
                         q_NAME.sc the float32 per-channel scales in_scale / out_scale
  OUT/src/NAME.*         relayc compile --target TARGET of each model, and of the LeNet,
                         MobileNetV2-block and MLP fixtures; OUT/src/NAME_g.* the kernel
                         shapes again with --target generic (the harness's `generic` column)
  OUT/naive.c            each shape as the loop nest a simple generator emits: literal
                         bounds, bounds checks in the innermost loop, no blocking (int8:
                         an int32 accumulator, then the bias and TVM's fixed-point
                         requantize with per-channel multipliers and shifts)
  OUT/cases.c            the table bench/harness.c walks
  OUT/shapes.json        the shapes, for bench/report.py and bench/torch_models.py

  OUT/models/{encoder,lstm,conv1d,deconv}.json, OUT/data/NAME.ref
                         the models of seq_models.py and PyTorch's output on the
                         harness's input (the reference the harness checks)
  OUT/models/{resnet18,...}.json, OUT/data/NAME.ref
                         the torchvision models of tv_models.py, the same way; compiled
                         for TARGET and (the tcc column) generic only

Usage: gen.py OUT RELAYC FIXTURES_DIR [--target T] [--models-only] [--case SUBSTR]
              [--filter SUBSTR]
With --case, only the kernel shapes whose name, or int8 name q_NAME, contains SUBSTR (each
with its float and int8 model) and no whole models; with --filter, only the whole models whose name contains
SUBSTR (the kernel shapes are all written: bench/run filters them when timing).
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "qnn"))
import relaywriter as rw  # noqa: E402
import qnnwriter  # noqa: E402,F401  (registers the QNN operators in relaywriter)
import qnn_ref  # noqa: E402
import seq_models  # noqa: E402
import tv_models  # noqa: E402

# name, ci, h, w, co, kernel, stride, pad, groups
CONVS = [
    ("conv3x3_32_56", 32, 56, 56, 32, 3, 1, 1, 1),
    ("conv3x3_3to32_s2_224", 3, 224, 224, 32, 3, 2, 1, 1),
    ("conv1x1_64to128_28", 64, 28, 28, 128, 1, 1, 0, 1),
    ("dwconv3x3_128_28", 128, 28, 28, 128, 3, 1, 1, 128),
    ("conv3x3_64_56", 64, 56, 56, 64, 3, 1, 1, 1),
    ("conv5x5_1to6_28", 1, 28, 28, 6, 5, 1, 2, 1),
]
# name, batch, k, n
DENSES = [
    ("dense_784to128", 1, 784, 128),
    ("dense_1024to1000", 1, 1024, 1000),
    ("dense_4096to4096", 1, 4096, 4096),
    ("dense_1024to1000_b32", 32, 1024, 1000),
]
# the int8 layers: input and output zero points (weights: zero point 0, per channel)
Q_XZP, Q_YZP = -3, 2
# fixture folder, name
MODELS = [("lenet-0.18.0", "lenet"), ("mbv2_block-0.18.0", "mbv2_block"), ("mlp-0.18.0", "mlp")]


def conv_out(h, k, s, p):
    return (h + 2 * p - k) // s + 1


def naive_conv(name, ci, h, w, co, k, s, p, g):
    ho, wo = conv_out(h, k, s, p), conv_out(w, k, s, p)
    cig, cog = ci // g, co // g
    return f"""
void naive_{name}(const float *restrict x, const float *restrict w, float *restrict y)
{{
    int oc, oy, ox, ic, ky, kx;
    for (oc = 0; oc < {co}; oc++)
        for (oy = 0; oy < {ho}; oy++)
            for (ox = 0; ox < {wo}; ox++) {{
                float acc = 0.0f;
                for (ic = 0; ic < {cig}; ic++)
                    for (ky = 0; ky < {k}; ky++)
                        for (kx = 0; kx < {k}; kx++) {{
                            int iy = oy * {s} - {p} + ky, ix = ox * {s} - {p} + kx;
                            if (iy >= 0 && iy < {h} && ix >= 0 && ix < {w})
                                acc += w[((oc * {cig} + ic) * {k} + ky) * {k} + kx] *
                                       x[((oc / {cog} * {cig} + ic) * {h} + iy) * {w} + ix];
                        }}
                y[(oc * {ho} + oy) * {wo} + ox] = acc;
            }}
}}
"""


def naive_dense(name, m, k, n):
    return f"""
void naive_{name}(const float *restrict x, const float *restrict w, float *restrict y)
{{
    int r, c, t;
    for (r = 0; r < {m}; r++)
        for (c = 0; c < {n}; c++) {{
            float acc = 0.0f;
            for (t = 0; t < {k}; t++)
                acc += x[r * {k} + t] * w[c * {k} + t];
            y[r * {n} + c] = acc;
        }}
}}
"""


def naive_requant(indent):
    """The int32 accumulator acc of channel c plus bias, requantized to int8 as TVM's
    qnn.requantize lowers it (UPWARD rounding, shift <= 0: multiplier below 1)."""
    return "\n".join(indent + line for line in (
        "acc += b[c];",
        "v = ((int64_t)acc * mult[c] + ((int64_t)1 << (30 - shift[c]))) >> (31 - shift[c]);",
        f"r = (int32_t)v + {Q_YZP};",
        "y[o] = (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);"))


def c_ints(v):
    return ", ".join(str(int(t)) for t in v)


def naive_qconv(name, ci, h, w, co, k, s, p, g, mult, shift):
    ho, wo = conv_out(h, k, s, p), conv_out(w, k, s, p)
    cig, cog = ci // g, co // g
    return f"""
void naive_{name}(const int8_t *restrict x, const int8_t *restrict w, const int32_t *restrict b,
                  int8_t *restrict y)
{{
    static const int32_t mult[{co}] = {{ {c_ints(mult)} }};
    static const int32_t shift[{co}] = {{ {c_ints(shift)} }};
    int c, oy, ox, ic, ky, kx;
    for (c = 0; c < {co}; c++)
        for (oy = 0; oy < {ho}; oy++)
            for (ox = 0; ox < {wo}; ox++) {{
                int32_t acc = 0, r;
                int64_t v;
                long o = (c * {ho} + oy) * {wo} + ox;
                for (ic = 0; ic < {cig}; ic++)
                    for (ky = 0; ky < {k}; ky++)
                        for (kx = 0; kx < {k}; kx++) {{
                            int iy = oy * {s} - {p} + ky, ix = ox * {s} - {p} + kx;
                            if (iy >= 0 && iy < {h} && ix >= 0 && ix < {w})
                                acc += (x[((c / {cog} * {cig} + ic) * {h} + iy) * {w} + ix] - ({Q_XZP})) *
                                       w[((c * {cig} + ic) * {k} + ky) * {k} + kx];
                        }}
{naive_requant(" " * 16)}
            }}
}}
"""


def naive_qdense(name, m, k, n, mult, shift):
    return f"""
void naive_{name}(const int8_t *restrict x, const int8_t *restrict w, const int32_t *restrict b,
                  int8_t *restrict y)
{{
    static const int32_t mult[{n}] = {{ {c_ints(mult)} }};
    static const int32_t shift[{n}] = {{ {c_ints(shift)} }};
    int r0, c, t;
    for (r0 = 0; r0 < {m}; r0++)
        for (c = 0; c < {n}; c++) {{
            int32_t acc = 0, r;
            int64_t v;
            long o = (long)r0 * {n} + c;
            for (t = 0; t < {k}; t++)
                acc += (x[r0 * {k} + t] - ({Q_XZP})) * w[c * {k} + t];
{naive_requant(" " * 12)}
        }}
}}
"""


def quant_layer(rng, xshape, wshape, taps):
    """An int8 layer's tensors: input, per-channel symmetric int8 weights, int32 bias, the
    scales (input, per-channel weights, output: about 40 int8 steps per standard deviation
    of the output), and per channel the requantize multiplier and shift TVM derives from
    in_scale / out_scale (tests/qnn/qnn_ref.py)."""
    co = wshape[0]
    x = np.clip(np.rint(rng.standard_normal(xshape) * 40) + Q_XZP, -128, 127).astype(np.int8)
    wf = rng.standard_normal(wshape) * rng.uniform(0.5, 2.0, (co,) + (1,) * (len(wshape) - 1))
    amax = np.abs(wf.reshape(co, -1)).max(axis=1)
    wscale = (amax / 127).astype(np.float32)
    w = np.clip(np.rint(wf / wscale.reshape((co,) + (1,) * (len(wshape) - 1))), -127,
                127).astype(np.int8)
    sx = np.float32(0.05)
    iscale = (sx * wscale).astype(np.float32)
    xstd = float(np.std(x.astype(np.float64) - Q_XZP))
    wstd = np.std(w.reshape(co, -1).astype(np.float64), axis=1)
    acc_std = np.sqrt(taps) * xstd * wstd
    bias = np.rint(rng.standard_normal(co) * acc_std * 0.25).astype(np.int32)
    so = np.float32(np.mean(acc_std * iscale) / 40)
    ms = [qnn_ref.multiplier(float(si) / float(so)) for si in iscale]
    assert all(sh <= 0 for _, sh in ms), "naive requantize assumes multipliers below 1"
    ratio = np.array([float(si) / float(so) for si in iscale], dtype=np.float32)
    return x, w, bias, sx, wscale, iscale, so, [m for m, _ in ms], [sh for _, sh in ms], ratio


def requant(t, iscale, so, axis):
    return rw.Call("qnn.requantize", [t, rw.Const(iscale), rw.Const(np.int32(0)),
                                      rw.Const(np.float32(so)), rw.Const(np.int32(Q_YZP))],
                   {"axis": axis, "out_dtype": "int8"})


def tv_build(name):
    """A torchvision model as seq_models.build gives one: module, Relay, input, output."""
    x = seq_models.harness_input(tv_models.SHAPE)
    net, func, y = tv_models.build(name, x)
    return net, func, x, y


def write_model(path, func):
    with open(path, "w") as f:
        f.write(rw.save_json(rw.Module({"main": func}), version="0.18.0"))


def main():
    out, relayc, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
    target = "x86-64-avx2"
    if "--target" in sys.argv:
        target = sys.argv[sys.argv.index("--target") + 1]
    only = sys.argv[sys.argv.index("--case") + 1] if "--case" in sys.argv else None
    mfilter = sys.argv[sys.argv.index("--filter") + 1] if "--filter" in sys.argv else ""
    # a shape's float name or its int8 one (q_NAME): --case q_conv is every conv shape
    convs = [c for c in CONVS if only is None or only in c[0] or only in "q_" + c[0]]
    denses = [d for d in DENSES if only is None or only in d[0] or only in "q_" + d[0]]
    for d in ("models", "data", "src"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    rng = np.random.default_rng(7)
    if "--models-only" in sys.argv: # the whole models alone (bench/run --models-only)
        convs, denses = [], []
    naive = ["/* naive.c: generated by bench/gen.py */\n"]
    table = []
    shapes = {"conv": [], "dense": [], "models": [], "target": target}
    for name, ci, h, w, co, k, s, p, g in convs:
        x = rng.standard_normal((1, ci, h, w)).astype(np.float32)
        wt = (rng.standard_normal((co, ci // g, k, k)) / np.sqrt(ci // g * k * k)).astype(np.float32)
        xv = rw.Var("x", x.shape)
        y = rw.Call("nn.conv2d", [xv, rw.Const(wt)], {
            "strides": [s, s], "padding": [p, p, p, p], "groups": g, "channels": co,
            "kernel_size": [k, k]})
        write_model(os.path.join(out, "models", name + ".json"), rw.Function([xv], y))
        x.tofile(os.path.join(out, "data", name + ".x"))
        wt.tofile(os.path.join(out, "data", name + ".w"))
        naive.append(naive_conv(name, ci, h, w, co, k, s, p, g))
        ho, wo = conv_out(h, k, s, p), conv_out(w, k, s, p)
        macs = co * ho * wo * (ci // g) * k * k
        table.append(f'    {{ "{name}", 0, {{ 1, {ci}, {h}, {w}, {co}, {ho}, {wo}, {k}, {k}, {s}, {s}, '
                     f'1, 1, {p}, {p}, {p}, {p}, {g} }}, 0, 0, 0, {x.size}, {co * ho * wo}, {wt.size}, '
                     f'{name.upper()}_WORKSPACE_SIZE, {name}_run, naive_{name}, {name}_g_run, '
                     f'{name.upper()}_G_WORKSPACE_SIZE }},')
        shapes["conv"].append(dict(name=name, ci=ci, h=h, w=w, co=co, k=k, s=s, p=p, g=g,
                                   flops=2 * macs))
    for name, m, k, n in denses:
        x = rng.standard_normal((m, k)).astype(np.float32)
        wt = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
        xv = rw.Var("x", x.shape)
        y = rw.Call("nn.dense", [xv, rw.Const(wt)], {"units": n})
        write_model(os.path.join(out, "models", name + ".json"), rw.Function([xv], y))
        x.tofile(os.path.join(out, "data", name + ".x"))
        wt.tofile(os.path.join(out, "data", name + ".w"))
        naive.append(naive_dense(name, m, k, n))
        table.append(f'    {{ "{name}", 1, {{ 0 }}, {m}, {n}, {k}, {x.size}, {m * n}, {wt.size}, '
                     f'{name.upper()}_WORKSPACE_SIZE, {name}_run, naive_{name}, {name}_g_run, '
                     f'{name.upper()}_G_WORKSPACE_SIZE }},')
        shapes["dense"].append(dict(name=name, m=m, k=k, n=n, flops=2 * m * n * k))
    qtable = []
    shapes["qconv"], shapes["qdense"] = [], []
    for name, ci, h, w, co, k, s, p, g in convs:
        qn = "q_" + name
        x, wt, bias, sx, wscale, iscale, so, mult, shift, ratio = quant_layer(
            rng, (1, ci, h, w), (co, ci // g, k, k), ci // g * k * k)
        xv = rw.Var("x", x.shape, "int8")
        y = rw.Call("qnn.conv2d", [xv, rw.Const(wt), rw.Const(np.int32(Q_XZP)),
                                   rw.Const(np.int32(0)), rw.Const(sx), rw.Const(wscale)], {
            "strides": [s, s], "padding": [p, p, p, p], "groups": g, "channels": co,
            "kernel_size": [k, k], "out_dtype": "int32"})
        y = rw.Call("nn.bias_add", [y, rw.Const(bias)], {"axis": 1})
        write_model(os.path.join(out, "models", qn + ".json"),
                    rw.Function([xv], requant(y, iscale, so, 1)))
        for ext, a in (("x", x), ("w", wt), ("b", bias), ("sc", ratio)):
            a.tofile(os.path.join(out, "data", qn + "." + ext))
        naive.append(naive_qconv(qn, ci, h, w, co, k, s, p, g, mult, shift))
        ho, wo = conv_out(h, k, s, p), conv_out(w, k, s, p)
        macs = co * ho * wo * (ci // g) * k * k
        qtable.append(f'    {{ "{qn}", 0, {{ 1, {ci}, {h}, {w}, {co}, {ho}, {wo}, {k}, {k}, {s}, {s}, '
                      f'1, 1, {p}, {p}, {p}, {p}, {g} }}, 0, 0, 0, {x.size}, {co * ho * wo}, '
                      f'{wt.size}, {co}, {Q_XZP}, {Q_YZP}, {qn.upper()}_WORKSPACE_SIZE, {qn}_run, '
                      f'naive_{qn}, {qn}_g_run, {qn.upper()}_G_WORKSPACE_SIZE }},')
        shapes["qconv"].append(dict(name=qn, float=name, ops=2 * macs))
    for name, m, k, n in denses:
        qn = "q_" + name
        x, wt, bias, sx, wscale, iscale, so, mult, shift, ratio = quant_layer(rng, (m, k), (n, k), k)
        xv = rw.Var("x", x.shape, "int8")
        y = rw.Call("qnn.dense", [xv, rw.Const(wt), rw.Const(np.int32(Q_XZP)),
                                  rw.Const(np.int32(0)), rw.Const(sx), rw.Const(wscale)],
                    {"units": n, "out_dtype": "int32"})
        y = rw.Call("nn.bias_add", [y, rw.Const(bias)], {"axis": 1})
        write_model(os.path.join(out, "models", qn + ".json"),
                    rw.Function([xv], requant(y, iscale, so, 1)))
        for ext, a in (("x", x), ("w", wt), ("b", bias), ("sc", ratio)):
            a.tofile(os.path.join(out, "data", qn + "." + ext))
        naive.append(naive_qdense(qn, m, k, n, mult, shift))
        qtable.append(f'    {{ "{qn}", 1, {{ 0 }}, {m}, {n}, {k}, {x.size}, {m * n}, {wt.size}, {n}, '
                      f'{Q_XZP}, {Q_YZP}, {qn.upper()}_WORKSPACE_SIZE, {qn}_run, naive_{qn}, '
                      f'{qn}_g_run, {qn.upper()}_G_WORKSPACE_SIZE }},')
        shapes["qdense"].append(dict(name=qn, float=name, ops=2 * m * n * k))
    qnames = [q["name"] for q in shapes["qconv"] + shapes["qdense"]]
    names = [c[0] for c in convs] + [d[0] for d in denses] + qnames
    for name in names:
        # the shape for the run's target, and for --target generic (NAME_g)
        for t, n in ((target, name), ("generic", name + "_g")):
            subprocess.run([relayc, "compile", os.path.join(out, "models", name + ".json"),
                            "--target", t, "--name", n, "-o", os.path.join(out, "src")],
                           check=True, stdout=subprocess.DEVNULL)
    models = []
    # the fixtures, then the sequence, transformer and audio models (seq_models.py) and the
    # torchvision models (tv_models.py), written here with PyTorch's output on the
    # harness's input as their reference
    todo = [(os.path.join(fixtures, folder, "model.json"), name, folder, None)
            for folder, name in (MODELS if only is None else []) if mfilter in name]
    written = [(name, seq_models.build) for name in seq_models.MODELS]
    written += [(name, tv_build) for name in tv_models.MODELS]
    for name, make in (written if only is None else []):
        if mfilter not in name:
            continue
        _, func, x, y = make(name)
        path = os.path.join(out, "models", name + ".json")
        write_model(path, func)
        y.tofile(os.path.join(out, "data", name + ".ref"))
        todo.append((path, name, None, (x.shape, y.shape)))
    for path, name, folder, io in todo:
        variants = ((target, "", "src"), ("generic", "_generic", "src"),
                    ("cortex-m", "_cortexm", "src"), ("generic", "", "src_generic"))
        if name in tv_models.MODELS:  # no code size columns for these
            variants = (variants[0], variants[3])
        for t, suffix, sub in variants:
            os.makedirs(os.path.join(out, sub), exist_ok=True)
            subprocess.run([relayc, "compile", path, "--target", t,
                            "--name", name + suffix, "-o", os.path.join(out, sub)], check=True,
                           stdout=subprocess.DEVNULL)
        if folder:
            meta = json.load(open(os.path.join(fixtures, folder, "meta.json")))
            inputs, outputs = meta["inputs"], meta["outputs"]
        else:
            inputs = [{"name": "input0", "shape": list(io[0]), "dtype": "float32"}]
            outputs = [{"shape": list(io[1]), "dtype": "float32"}]
        ins = [int(np.prod(i["shape"])) for i in inputs]
        outs = [int(np.prod(o["shape"])) for o in outputs]
        models.append(f'    {{ "{name}", {name}_run_generic, {name.upper()}_WORKSPACE_SIZE, '
                      f'{ins[0]}, {outs[0]} }},')
        shapes["models"].append(dict(name=name, folder=folder, inputs=inputs, outputs=outputs,
                                     reference=folder is None))
    model_names = [m[1] for m in todo]
    naive[0] += "#include <stdint.h>\n"
    with open(os.path.join(out, "naive.c"), "w") as f:
        f.write("".join(naive))
    with open(os.path.join(out, "cases.c"), "w") as f:
        f.write('/* cases.c: generated by bench/gen.py */\n#include "bench.h"\n')
        for name in names + [n + "_g" for n in names] + model_names:
            f.write(f'#include "src/{name}.h"\n')
        for name in names:
            if name in qnames:
                f.write(f"void naive_{name}(const int8_t *restrict x, const int8_t *restrict w, "
                        f"const int32_t *restrict b, int8_t *restrict y);\n")
            else:
                f.write(f"void naive_{name}(const float *restrict x, const float *restrict w, "
                        f"float *restrict y);\n")
        f.write("const BenchCase bench_cases[] = {\n" + "\n".join(table or ["    { 0 }"]) + "\n};\n")
        f.write(f"const int bench_case_count = {len(table)};\n")
        f.write("const BenchQCase bench_qcases[] = {\n" + "\n".join(qtable or ["    { 0 }"]) + "\n};\n")
        f.write(f"const int bench_qcase_count = {len(qtable)};\n")
        f.write("const BenchModel bench_models[] = {\n" + "\n".join(models) + "\n};\n")
        f.write(f"const int bench_model_count = {len(models)};\n")
    # what the harnesses link: kernel shapes, then the models (src_generic: the models as
    # `relayc run` compiles them, --target generic, for the tcc column); the kernel shapes
    # for --target generic apart (sources_generic.txt: built once, -O3 -march=native)
    for fname, sub, lst in (("sources.txt", "src", names + model_names),
                            ("sources_kernels.txt", "src", names),
                            ("sources_generic.txt", "src", [n + "_g" for n in names]),
                            ("sources_models_generic.txt", "src_generic", model_names)):
        with open(os.path.join(out, fname), "w") as f:
            for name in lst:
                f.write(os.path.join(out, sub, name + ".c") + "\n")
                f.write(os.path.join(out, sub, name + "_constants.c") + "\n")
    with open(os.path.join(out, "shapes.json"), "w") as f:
        json.dump(shapes, f, indent=1)


if __name__ == "__main__":
    main()
