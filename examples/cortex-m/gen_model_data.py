#!/usr/bin/env python3
"""Writes model_data.h and model_glue.h for examples/cortex-m/main.c.

    gen_model_data.py --header DIR/NAME.h --name NAME --mode c|bin \
        --inputs in0.npy [in1.npy ...] --expected out0.npy [...] \
        [--atol 1e-5] [--rtol 1e-5] --outdir BUILD

model_data.h  the inputs and expected outputs as C arrays (floats as exact hex
              literals), the output buffers, the tolerances, and the tables
              main.c walks (model_inputs[], model_outputs[]).
model_glue.h  includes NAME.h, maps its macros (named with NAME in capitals,
              LENET_WORKSPACE_SIZE for lenet) to MODEL_*, and defines
              model_glue_run(workspace, constants), which calls NAME_run with
              one argument per input and output, and model_glue_call(), which
              describes the same call for counter_measure() (counter.h).

The element type of each array follows the NAME_run prototype in NAME.h (when it
can be read), converting the .npy data if needed; the counts are checked against
UPPER_NUM_INPUTS / UPPER_NUM_OUTPUTS at generation time and again at compile time.
Needs numpy.
"""
import argparse
import math
import os
import re
import sys

import numpy as np

# C type -> (numpy dtype, harness h_dtype)
C_TYPES = {
    "float": ("float32", "H_F32"),
    "double": ("float64", "H_F64"),
    "int8_t": ("int8", "H_I8"),
    "uint8_t": ("uint8", "H_U8"),
    "int16_t": ("int16", "H_I16"),
    "uint16_t": ("uint16", "H_U16"),
    "int32_t": ("int32", "H_I32"),
    "uint32_t": ("uint32", "H_U32"),
    "int64_t": ("int64", "H_I64"),
    "uint64_t": ("uint64", "H_U64"),
    "bool": ("bool", "H_BOOL"),
    "_Bool": ("bool", "H_BOOL"),
}
NP_TO_C = {
    "float32": "float", "float64": "double", "int8": "int8_t", "uint8": "uint8_t",
    "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t", "uint32": "uint32_t",
    "int64": "int64_t", "uint64": "uint64_t", "bool": "uint8_t",
}


def fail(msg):
    sys.stderr.write("gen_model_data.py: error: %s\n" % msg)
    sys.exit(2)


def note(msg):
    sys.stderr.write("gen_model_data.py: note: %s\n" % msg)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_macros(text, name):
    """NAME_X -> integer value, for the macros that are plain integer expressions."""
    out = {}
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+%s_([A-Z0-9_]+)[ \t]+(.+)$" % re.escape(name),
                         text, flags=re.M):
        expr = m.group(2).strip()
        expr = re.sub(r"\((?:size_t|unsigned|int|uint32_t|uint64_t)\)", "", expr)
        expr = re.sub(r"(?<=[0-9])[uUlL]+\b", "", expr)
        if re.fullmatch(r"[0-9xXa-fA-F()+\-*/ \t]+", expr):
            try:
                out[m.group(1)] = int(eval(expr.replace("/", "//"), {"__builtins__": {}}))
            except Exception:  # noqa: BLE001 - anything unreadable is left out
                pass
    return out


def run_params(text, name):
    """The parameters of NAME_run as (c_type, is_const, declared_count or None)."""
    m = re.search(r"\bint\s+%s_run\s*\(([^)]*)\)" % re.escape(name), text)
    if not m:
        return None
    params = []
    for raw in m.group(1).split(","):
        p = " ".join(raw.split())
        if not p or p == "void":
            continue
        count = None
        arr = re.search(r"\[\s*([^\]]*)\]\s*$", p)
        if arr:
            if re.fullmatch(r"[0-9]+", arr.group(1).strip()):
                count = int(arr.group(1))
            p = p[:arr.start()] + " *"
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\*", p)
        is_const = "const" in words
        words = [w for w in words if w not in ("const", "restrict", "__restrict", "volatile")]
        if words and words[-1] != "*":
            words = words[:-1]          # the parameter name
        if "*" not in words:
            return None                 # not a pointer: not the documented API
        base = " ".join(w for w in words if w != "*")
        params.append((base, is_const, count))
    return params


def c_literal(value, ctype):
    if ctype in ("float", "double"):
        v = float(value)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        h = v.hex()                                  # e.g. -0x1.8000000000000p-3
        mant, exp = h.split("p")
        if "." in mant:
            mant = mant.rstrip("0").rstrip(".")
        lit = mant + "p" + exp
        return lit + ("f" if ctype == "float" else "")
    if ctype in ("bool", "_Bool"):
        return "1" if value else "0"
    v = int(value)
    if ctype == "int64_t":
        return "(-INT64_C(9223372036854775807) - 1)" if v == -(1 << 63) else "INT64_C(%d)" % v
    if ctype == "uint64_t":
        return "UINT64_C(%d)" % v
    if ctype == "int32_t" and v == -(1 << 31):
        return "(-2147483647 - 1)"
    if ctype in ("uint32_t",):
        return "%du" % v
    return "%d" % v


def c_array(ctype, name, arr, const, per_line):
    flat = arr.reshape(-1)
    n = max(int(flat.size), 1)
    head = "static %s%s %s[%d] H_ALIGNED(16)" % ("const " if const else "", ctype, name, n)
    if not const:
        return head + ";\n"
    if flat.size == 0:
        return head + " = {0};\n"
    lits = [c_literal(x, ctype) for x in flat.tolist()]
    lines = []
    for i in range(0, len(lits), per_line):
        lines.append("    " + ", ".join(lits[i:i + per_line]) + ",")
    return head + " = {\n" + "\n".join(lines) + "\n};\n"


def load_npy(path, ctype, what):
    try:
        arr = np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001
        fail("%s: cannot read as .npy: %s" % (path, e))
    want_dt = np.dtype(C_TYPES[ctype][0]) if ctype in C_TYPES else None
    if want_dt is None:
        return arr
    if arr.dtype != want_dt:
        src, dst = arr.dtype.kind, want_dt.kind
        same_kind = (src == dst) or (src in "iu" and dst in "iu")
        if not same_kind and not (src in "iub" and dst == "f"):
            fail("%s: dtype %s does not fit the %s type %s of the model" % (path, arr.dtype, what, ctype))
        conv = arr.astype(want_dt)
        if src in "iu" and dst in "iu" and not np.array_equal(conv.astype(arr.dtype), arr):
            fail("%s: values out of range for %s" % (path, ctype))
        note("%s: converted %s to %s" % (os.path.basename(path), arr.dtype, want_dt))
        arr = conv
    return np.ascontiguousarray(arr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--header", required=True, help="the model's NAME.h")
    ap.add_argument("--name", required=True)
    ap.add_argument("--mode", choices=("c", "bin"), required=True)
    ap.add_argument("--inputs", nargs="*", default=[])
    ap.add_argument("--expected", nargs="*", default=[])
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--outdir", required=True)
    a = ap.parse_args()

    name = a.name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        fail("model name %r is not a C identifier" % name)
    try:
        with open(a.header, encoding="utf-8") as f:
            text = strip_comments(f.read())
    except OSError as e:
        fail("cannot read the model header: %s" % e)
    # relayc names functions and types with NAME as given (lenet_run) and macros
    # with NAME in capitals (LENET_WORKSPACE_SIZE).
    upper = name.upper()
    macros = header_macros(text, upper)
    for m in ("WORKSPACE_SIZE", "WORKSPACE_ALIGN", "NUM_INPUTS", "NUM_OUTPUTS"):
        if not re.search(r"#\s*define\s+%s_%s\b" % (re.escape(upper), m), text):
            fail("%s does not define %s_%s" % (a.header, upper, m))
    has_const_size = re.search(r"#\s*define\s+%s_CONSTANTS_SIZE\b" % re.escape(upper), text)
    if a.mode == "bin" and not has_const_size:
        fail("mode bin, but %s does not define %s_CONSTANTS_SIZE" % (a.header, upper))
    if a.mode == "c" and has_const_size:
        fail("mode c, but %s defines %s_CONSTANTS_SIZE (a bin-mode model?)" % (a.header, upper))

    nin, nout = len(a.inputs), len(a.expected)
    for key, have in (("NUM_INPUTS", nin), ("NUM_OUTPUTS", nout)):
        if key in macros and macros[key] != have:
            fail("%s_%s is %d but %d .npy file(s) were given" % (upper, key, macros[key], have))

    # Element types from the prototype; fall back to the .npy dtypes.
    params = run_params(text, name)
    want_params = nin + nout + 1 + (1 if a.mode == "bin" else 0)
    in_types = out_types = None
    in_counts = out_counts = [None] * 0
    if params is None:
        note("could not read the %s_run prototype; array types follow the .npy files" % name)
    elif len(params) != want_params:
        fail("%s_run takes %d argument(s); %d input(s), %d output(s), the workspace%s make %d"
             % (name, len(params), nin, nout, " and the constants" if a.mode == "bin" else "",
                want_params))
    else:
        ins, outs = params[:nin], params[nin:nin + nout]
        for i, (t, c, _) in enumerate(ins):
            if not c:
                fail("argument %d of %s_run should be a const pointer (an input)" % (i, name))
        for i, (t, c, _) in enumerate(outs):
            if c:
                fail("argument %d of %s_run should be a non-const pointer (an output)" % (nin + i, name))
        in_types = [t for t, _, _ in ins]
        out_types = [t for t, _, _ in outs]
        in_counts = [n for _, _, n in ins]
        out_counts = [n for _, _, n in outs]

    def arrays(paths, types, counts, what):
        res = []
        for i, p in enumerate(paths):
            ctype = types[i] if types else None
            arr = load_npy(p, ctype, what)
            if ctype is None:
                if arr.dtype.name not in NP_TO_C:
                    fail("%s: unsupported dtype %s" % (p, arr.dtype))
                ctype = NP_TO_C[arr.dtype.name]
            if ctype not in C_TYPES:
                fail("%s_run %s %d has element type %r, which the harness does not know"
                     % (name, what, i, ctype))
            if counts and counts[i] is not None and counts[i] != arr.size:
                fail("%s: %d elements, but %s_run declares %d" % (p, arr.size, name, counts[i]))
            res.append((p, ctype, arr))
        return res

    inputs = arrays(a.inputs, in_types, in_counts, "input")
    outputs = arrays(a.expected, out_types, out_counts, "output")

    guard = "MODEL_DATA_H"
    d = []
    d.append("/* model_data.h: generated by gen_model_data.py for model %s. Do not edit. */\n" % name)
    d.append("#ifndef %s\n#define %s\n\n" % (guard, guard))
    d.append("#include <math.h>\n#include <stdint.h>\n\n#include \"harness.h\"\n\n")
    d.append("#define MODEL_DATA_ATOL %r\n#define MODEL_DATA_RTOL %r\n\n" % (a.atol, a.rtol))
    for i, (p, ctype, arr) in enumerate(inputs):
        d.append("/* input %d: %s, %s %s */\n" % (i, os.path.basename(p), arr.dtype, list(arr.shape)))
        d.append(c_array(ctype, "model_in%d" % i, arr, True, 6))
        d.append("\n")
    for i, (p, ctype, arr) in enumerate(outputs):
        d.append("/* output %d: %s, %s %s */\n" % (i, os.path.basename(p), arr.dtype, list(arr.shape)))
        d.append(c_array(ctype, "model_out%d" % i, arr, False, 6))
        d.append(c_array(ctype, "model_want%d" % i, arr, True, 6))
        d.append("\n")

    def cstr(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    d.append("static const h_input model_inputs[%d] = {\n" % (nin + 1))
    for i, (p, ctype, arr) in enumerate(inputs):
        d.append("    {%s, %s, model_in%d, %d},\n" % (cstr(os.path.basename(p)), C_TYPES[ctype][1], i, arr.size))
    d.append("    {0, H_F32, 0, 0},\n};\n\n")
    d.append("static const h_output model_outputs[%d] = {\n" % (nout + 1))
    for i, (p, ctype, arr) in enumerate(outputs):
        d.append("    {%s, %s, model_out%d, model_want%d, %d},\n"
                 % (cstr(os.path.basename(p)), C_TYPES[ctype][1], i, i, arr.size))
    d.append("    {0, H_F32, 0, 0, 0},\n};\n\n")
    d.append("#endif /* %s */\n" % guard)

    g = []
    g.append("/* model_glue.h: generated by gen_model_data.py for model %s. Do not edit.\n"
             " * Include after model_data.h. */\n" % name)
    g.append("#ifndef MODEL_GLUE_H\n#define MODEL_GLUE_H\n\n")
    g.append("#include \"%s.h\"\n\n" % name)
    g.append("#define MODEL_NAME_STR \"%s\"\n" % name)
    g.append("#define MODEL_WORKSPACE_SIZE (%s_WORKSPACE_SIZE)\n" % upper)
    g.append("#define MODEL_WORKSPACE_ALIGN (%s_WORKSPACE_ALIGN)\n" % upper)
    if a.mode == "bin":
        g.append("#define MODEL_CONSTANTS_IN_BIN 1\n")
        g.append("#define MODEL_CONSTANTS_SIZE (%s_CONSTANTS_SIZE)\n" % upper)
    else:
        g.append("#define MODEL_CONSTANTS_IN_BIN 0\n")
    g.append("\n/* Compile-time checks: the arrays given match the model's arity. */\n")
    g.append("typedef char model_glue_inputs_match[(%s_NUM_INPUTS) == %d ? 1 : -1];\n" % (upper, nin))
    g.append("typedef char model_glue_outputs_match[(%s_NUM_OUTPUTS) == %d ? 1 : -1];\n\n" % (upper, nout))
    args = ["model_in%d" % i for i in range(nin)] + ["model_out%d" % i for i in range(nout)]
    args.append("workspace")
    if a.mode == "bin":
        args.append("constants")
    g.append("static int model_glue_run(void *workspace, const void *constants)\n{\n")
    if a.mode == "c":
        g.append("    (void)constants;\n")
    g.append("    return %s_run(%s);\n}\n\n" % (name, ", ".join(args)))
    g.append("/* The same call as words for counter_measure() (counter.h); 0 if %s_run\n"
             " * takes more arguments than the counter passes. */\n" % name)
    g.append("static int model_glue_call(counter_call *c, void *workspace, const void *constants)\n{\n")
    g.append("#if %d <= COUNTER_MAX_ARGS\n" % len(args))
    if a.mode == "c":
        g.append("    (void)constants;\n")
    g.append("    c->fn = (uintptr_t)%s_run;\n" % name)
    g.append("    c->nargs = %d;\n" % len(args))
    for i, arg in enumerate(args):
        g.append("    c->args[%d] = (uint32_t)(uintptr_t)%s;\n" % (i, arg))
    g.append("    return 1;\n#else\n    (void)c;\n    (void)workspace;\n    (void)constants;\n"
             "    return 0;\n#endif\n}\n\n")
    g.append("#endif /* MODEL_GLUE_H */\n")

    os.makedirs(a.outdir, exist_ok=True)
    for fname, parts in (("model_data.h", d), ("model_glue.h", g)):
        path = os.path.join(a.outdir, fname)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(parts))
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
