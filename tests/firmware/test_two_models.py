#!/usr/bin/env python3
"""Two relayc models linked into one program, on the host (gcc) or on an emulated
Cortex-M4F (arm-none-eabi-gcc, QEMU mps2-an386).

Model A (lenet, constants as C arrays) and model B (mlp, constants as a NAME.bin blob
linked as its own section) are compiled by relayc and linked with two_models.c, which
runs A, B, A, B on one shared workspace (typed then generic entry points) and checks
every output. Also checks the symbol prefix: every global symbol the model objects
define starts with NAME_, every macro of NAME.h with NAME in capitals, and the link
has no clash.

    test_two_models.py --relayc build/relayc --fixtures DIR --target host|cortex-m
"""
import os
import re
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwtest  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = [("a", "lenet", "lenet-0.18.0", "c"), ("b", "mlp", "mlp-0.8.0", "bin")]
ATOL, RTOL = 1e-5, 1e-4      # the fixtures' tolerance (meta.json)


def c_float(v):
    v = float(v)
    assert np.isfinite(v), v
    return v.hex() + "f"


def c_array(decl, arr):
    flat = [c_float(x) for x in np.asarray(arr, dtype=np.float32).reshape(-1)]
    lines = [", ".join(flat[i:i + 6]) for i in range(0, len(flat), 6)]
    return "%s = {\n    %s\n};\n" % (decl, ",\n    ".join(lines))


def data_header(models, blob_syms):
    out = ["/* two_models_data.h: written by test_two_models.py. */\n",
           "#include <stddef.h>\n\n"]
    out.append("typedef struct { float *got; const float *want; size_t count; } check_output;\n\n")
    out.append("#define TWO_ATOL %r\n#define TWO_RTOL %r\n\n" % (ATOL, RTOL))
    for (tag, name, fx, mode) in models:
        T, U = tag.upper(), name.upper()
        out.append('#include "%s.h"\n' % name)
        out.append('#define %s_NAME "%s"\n' % (T, name))
        out.append("#define %s_WORKSPACE_SIZE %s_WORKSPACE_SIZE\n" % (T, U))
        out.append("#define %s_WORKSPACE_ALIGN %s_WORKSPACE_ALIGN\n" % (T, U))
        out.append("#define %s_NUM_OUT %d\n" % (T, len(fx["expected"])))
        ins, outs = [], []
        for i, p in enumerate(fx["inputs"]):
            arr = np.load(p)
            assert arr.dtype == np.float32, p
            out.append(c_array("static const float %s_in%d[%d] __attribute__((aligned(16)))"
                               % (tag, i, arr.size), arr))
            ins.append("%s_in%d" % (tag, i))
        checks = []
        for k, p in enumerate(fx["expected"]):
            arr = np.load(p)
            assert arr.dtype == np.float32, p
            out.append("static float %s_out%d[%d] __attribute__((aligned(16)));\n" % (tag, k, arr.size))
            out.append(c_array("static const float %s_want%d[%d]" % (tag, k, arr.size), arr))
            outs.append("%s_out%d" % (tag, k))
            checks.append("{ %s_out%d, %s_want%d, %d }" % (tag, k, tag, k, arr.size))
        out.append("static const check_output %s_outputs[%d] = { %s };\n"
                   % (tag, len(checks), ", ".join(checks)))
        blob = "NULL"
        if mode == "bin":
            out.append("extern const unsigned char %s[];\n" % blob_syms[tag])
            blob = blob_syms[tag]
        typed = ins + outs + ["ws"] + ([blob] if mode == "bin" else [])
        out.append("static int %s_run(void *ws)\n{\n    return %s_run(%s);\n}\n"
                   % (tag, name, ", ".join(typed)))
        out.append("static int %s_run_generic(void *ws)\n{\n"
                   "    const void *const ins[] = { %s };\n"
                   "    void *const outs[] = { %s };\n"
                   "    return %s_run_generic(ins, outs, ws, %s);\n}\n\n"
                   % (tag, ", ".join(ins) or "NULL", ", ".join(outs), name, blob))
    return "".join(out)


def blob_asm(target, sym, path):
    if target == "host":
        sec, typ, note = ".rodata", "@object", '    .section .note.GNU-stack,"",@progbits\n'
    else:   # the harness's linker script places .model_constants in flash
        sec, typ, note = '.model_constants, "a", %progbits', "%object", ""
    return ("    .section %s\n    .balign 16\n    .global %s\n    .type %s, %s\n%s:\n"
            "    .incbin \"%s\"\n    .size %s, . - %s\n%s" % (sec, sym, sym, typ, sym, path, sym, sym, note))


def main():
    ap = fwtest.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=("host", "cortex-m"), required=True)
    a = ap.parse_args()
    tap = fwtest.Tap()
    if a.target == "host":
        cc, nm = os.environ.get("CC", "gcc"), "nm"
        fwtest.need_tools(tap, cc, nm)
        cflags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror"]
    else:
        cc, nm = "arm-none-eabi-gcc", "arm-none-eabi-nm"
        fwtest.need_tools(tap, cc, nm, "qemu-system-arm", "timeout")
        cflags = fwtest.M4_FLAGS + ["-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror",
                                    "-ffunction-sections", "-fdata-sections"]
    work = fwtest.tempdir("relayc-two-models.")
    try:
        models, blob_syms, srcs, incs = [], {}, [], ["-I" + work]
        for tag, name, fxname, mode in MODELS:
            fx = fwtest.fixture(a.fixtures, fxname)
            d = os.path.join(work, tag)
            st, log = fwtest.compile_model(a.relayc, fx, d, name, mode)
            if not tap.ok(st == 0, "relayc compile %s as %s (constants %s)" % (fxname, name, mode), log):
                tap.done()
            models.append((tag, name, fx, mode))
            incs.append("-I" + d)
            srcs.append(os.path.join(d, name + ".c"))
            if mode == "c":
                srcs.append(os.path.join(d, name + "_constants.c"))
            else:
                blob_syms[tag] = "two_models_%s_blob" % tag
                s = os.path.join(work, "%s_blob.S" % tag)
                with open(s, "w") as f:
                    f.write(blob_asm(a.target, blob_syms[tag], os.path.join(d, name + ".bin")))
                srcs.append(s)

            # the prefix: macros, types and symbols
            U = name.upper()
            with open(os.path.join(d, name + ".h")) as f:
                text = f.read()
            macros = re.findall(r"^#\s*define\s+(\w+)", text, flags=re.M)
            bad = [m for m in macros if not m.startswith(U + "_")]
            tap.ok(macros and not bad, "%s.h: all %d macros start with %s_" % (name, len(macros), U),
                   "not prefixed: %s" % bad)
            types = re.findall(r"\}\s*(\w+)\s*;", text)
            bad = [t for t in types if not t.startswith(name + "_")]
            tap.ok(not bad, "%s.h: every type starts with %s_ (%s)" % (name, name, ", ".join(types)),
                   "not prefixed: %s" % bad)
            syms = []
            for src in [x for x in srcs if x.startswith(d + os.sep) and x.endswith(".c")]:
                obj = src[:-2] + ".o"
                st, log = fwtest.run([cc] + cflags + ["-I" + d, "-c", src, "-o", obj])
                if not tap.ok(st == 0, "%s compiles with %s %s" % (os.path.basename(src), cc,
                                                                 " ".join(cflags)), log):
                    tap.done()
                st, log = fwtest.run([nm, "-g", "--defined-only", obj])
                syms += [ln.split()[-1] for ln in log.splitlines() if ln.strip()]
            bad = [s for s in syms if not s.startswith(name + "_")]
            tap.ok(syms and not bad, "%s: all %d global symbols start with %s_" % (name, len(syms), name),
                   "not prefixed: %s" % bad)

        with open(os.path.join(work, "two_models_data.h"), "w") as f:
            f.write(data_header(models, blob_syms))
        exe = os.path.join(work, "two_models" + (".elf" if a.target != "host" else ""))
        main_c = os.path.join(HERE, "two_models.c")
        if a.target == "host":
            cmd = [cc] + cflags + incs + [main_c] + srcs + ["-o", exe, "-lm"]
        else:
            h = fwtest.HARNESS
            cmd = ([cc] + cflags + incs + ["-I" + h, main_c, os.path.join(h, "startup.c"),
                                           os.path.join(h, "semihost.c")] + srcs +
                   ["-nostartfiles", "--specs=nano.specs", "--specs=nosys.specs",
                    "-T", os.path.join(h, "mps2.ld"), "-Wl,--gc-sections", "-Wl,--fatal-warnings",
                    "-o", exe, "-lm"])
        st, log = fwtest.run(cmd)
        if not tap.ok(st == 0, "both models link into one %s program" % a.target,
                      " ".join(cmd) + "\n" + log):
            tap.done()
        if a.target == "host":
            st, log = fwtest.run([exe], timeout=120)
        else:
            st, log = fwtest.run([os.path.join(fwtest.HARNESS, "run_qemu.sh"), exe, "an386", "120"],
                                 timeout=180)
            _, size = fwtest.run(["arm-none-eabi-size", "-A", exe])
            tap.note("arm-none-eabi-size -A:\n" + "\n".join(
                ln for ln in size.splitlines() if re.match(r"\.(text|rodata|model_constants|data|bss)\s", ln)))
        tap.note(log)
        tap.ok(st == 0 and "RESULT: PASS" in log, "the program runs both models and every output matches",
               "exit status %d" % st)
    finally:
        if os.environ.get("KEEP_TMP"):
            print("# kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
