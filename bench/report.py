#!/usr/bin/python3
"""report.py: the benchmark table, from bench/harness.c's and torch_models.py's JSON lines.

Float shapes in GFLOP/s, the int8 shapes (q_*) in GOP/s (2 ops per multiply-add, as the
float FLOPs), with relayc's int8 GOP/s over its float GFLOP/s on the same shape.

Usage: report.py SHAPES.json RAW.jsonl RESULTS.json [--quick 0|1]
Prints the table and writes RESULTS.json: the environment, every measurement, GFLOP/s,
the ratios and their geometric means.
"""
import json
import math
import os
import platform
import subprocess
import sys


def geomean(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def env():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return {"cpu": cpu, "gcc": gcc, "machine": platform.machine(),
            "loadavg": os.getloadavg()[0], "cores": os.cpu_count()}


def clang_section(t, shapes, out):
    """relayc's code compiled by clang -O3 -march=native (label clang) against gcc's."""
    names = [s["name"] for kind in ("conv", "dense", "qconv", "qdense") for s in shapes.get(kind, [])]
    names += [m["name"] for m in shapes["models"]]
    ratio = {}
    for name in names:
        a, b = t.get((name, "relayc")), t.get((name, "relayc_clang"))
        if a and b and a["median_s"] > 0:
            ratio[name] = b["median_s"] / a["median_s"]
    out["clang_over_gcc"] = ratio
    if not ratio:
        return
    cc = subprocess.run(["clang", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    print()
    print("relayc's code compiled by clang -O3 -march=native (%s): its median time over gcc -O3 "
          "-march=native's (below 1: clang faster)" % cc)
    items = list(ratio.items())
    for i in range(0, len(items), 4):
        print("".join("  %-24s%6.2f" % kv for kv in items[i:i + 4]))
    for what, kinds in (("float kernels", ("conv", "dense")), ("int8 kernels", ("qconv", "qdense")),
                        ("models", None)):
        if kinds:
            v = [ratio[s["name"]] for k in kinds for s in shapes.get(k, []) if s["name"] in ratio]
        else:
            v = [ratio[m["name"]] for m in shapes["models"] if m["name"] in ratio]
        if v:
            print("  geomean, %s: %.2f (%.2f-%.2f)" % (what, geomean(v), min(v), max(v)))


def main():
    shapes = json.load(open(sys.argv[1]))
    rows = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
    quick = "--quick" in sys.argv and sys.argv[sys.argv.index("--quick") + 1] == "1"
    t = {}
    for r in rows:
        key = r["method"] + ("_" + r["label"] if r.get("label") else "")
        t[(r["case"], key)] = r
    e = env()
    out = {"env": e, "target": shapes["target"], "quick": quick, "kernels": [], "models": [],
           "raw": rows}
    cols = [("relayc", "relayc -O3"), ("relayc_O2", "-O2"), ("generic", "generic"),
            ("naive", "naive"), ("openblas", "OpenBLAS"), ("onednn", "oneDNN"),
            ("onednn_nchw", "oneDNN+io")]
    ratios = [("naive", "x naive"), ("openblas", "x OpenBLAS"), ("onednn", "x oneDNN"),
              ("onednn_nchw", "x oneDNN+io")]
    print("relayc --target %s kernels vs baselines: GFLOP/s (higher is better), median of %s" %
          (shapes["target"], "1 run (--quick: one iteration of each method, not a measurement)"
           if quick else "21 samples"))
    print("one core (taskset -c %s), one thread; %s; %s; load average %.1f at the end" %
          (os.environ.get("BENCH_CPU", "0"), e["cpu"], e["gcc"], e["loadavg"]))
    print("relayc -O3 = gcc -O3 -march=native (the reference setting); '-O2': no -march; "
          "generic: --target generic at gcc -O3 -march=native, gen/T = generic over relayc -O3")
    print("oneDNN: blocked layouts, no reorders timed; oneDNN+io: with the NCHW input/output "
          "reorders (a user with NCHW tensors); dense: oneDNN inner product, plain layouts")
    print("int8 rows: qnn.conv2d / qnn.dense + bias_add + requantize, int8 in and out, GOP/s; "
          "int8/f32 = relayc's int8 GOP/s over its float GFLOP/s on the same shape")
    print("int8 oneDNN: s8 src (zero point attribute), s8 weights, s32 bias, s8 dst, per-channel "
          "output scales, preferred layouts; dense: inner product, src zero point in the bias")
    head = "%-22s" % "shape" + "".join("%10s" % c[1] for c in cols) + " |" + \
        "".join("%13s" % r[1] for r in ratios) + "%10s%10s" % ("int8/f32", "gen/T") + \
        "  oneDNN's implementation"
    print(head)
    print("-" * len(head))
    kinds = ("conv", "dense", "qconv", "qdense")
    groups = {kind: {k: [] for k, _ in ratios + [("int8_f32", ""), ("generic", "")]}
              for kind in kinds}
    best = {kind: {k: [] for k, _ in ratios + [("generic", "")]} for kind in kinds}
    best_lines = []
    relayc_float = {}   # float shape name -> relayc GFLOP/s

    def num(v, fmt, width):
        """v in fmt, two significant digits below 0.1 (int8 ratios to oneDNN), or '-'."""
        if v is None or v != v:
            return "%*s" % (width, "-")
        return "%*.2g" % (width, v) if abs(v) < 0.1 else fmt % v
    for kind in kinds:
        if kind == "qconv":
            line = "int8 (GOP/s)"
            print(line + " " + "-" * (len(head) - len(line) - 1))
            best_lines.append("int8")
        for s in shapes.get(kind, []):
            name = s["name"]
            ops = s["ops"] if kind[0] == "q" else s["flops"]
            gf = {}
            for key, _ in cols:
                r = t.get((name, key))
                gf[key] = ops / r["median_s"] * 1e-9 if r and r["median_s"] > 0 else None
            rat, brat = {}, {}
            for key, _ in ratios:
                if gf.get("relayc") and gf.get(key):
                    rat[key] = gf["relayc"] / gf[key]
                    groups[kind][key].append(rat[key])
                a, b = t.get((name, "relayc")), t.get((name, key))
                if a and b and a.get("min_s") and b.get("min_s"):
                    brat[key] = b["min_s"] / a["min_s"]
                    best[kind][key].append(brat[key])
            # --target generic against the run's target, same rounds (median; fastest)
            if gf.get("relayc") and gf.get("generic"):
                rat["generic"] = gf["generic"] / gf["relayc"]
                groups[kind]["generic"].append(rat["generic"])
            a, b = t.get((name, "relayc")), t.get((name, "generic"))
            if a and b and a.get("min_s") and b.get("min_s"):
                brat["generic"] = a["min_s"] / b["min_s"]
                best[kind]["generic"].append(brat["generic"])
            if kind[0] != "q":
                relayc_float[name] = gf.get("relayc")
                i8f = None
            else:
                f = relayc_float.get(s["float"])
                i8f = gf["relayc"] / f if gf.get("relayc") and f else None
                if i8f:
                    groups[kind]["int8_f32"].append(i8f)
            best_lines.append("%-22s" % name + "".join(
                num(brat.get(k), "%13.2f", 13) for k, _ in ratios) + num(brat.get("generic"), "%10.2f", 10))
            line = "%-22s" % name + "".join(
                "%10.1f" % gf[k] if gf[k] else "%10s" % "-" for k, _ in cols) + " |" + \
                "".join(num(rat.get(k), "%13.2f", 13) for k, _ in ratios) + \
                (num(i8f, "%10.2f", 10) if kind[0] == "q" else " " * 10) + \
                num(rat.get("generic"), "%10.2f", 10)
            impl = t.get((name, "onednn"), {}).get("impl")
            print(line + ("  " + impl if impl else ""))
            errs = {k: t[(name, k)]["err"] for k, _ in cols if (name, k) in t}
            row = {"name": name, "kind": kind, "ratio": rat, "ratio_fastest": brat,
                   "onednn_impl": t.get((name, "onednn"), {}).get("impl")}
            if kind[0] == "q":
                row.update({"float": s["float"], "ops": ops, "gops": gf, "int8_over_float": i8f,
                            "max_abs_err": errs})
            else:
                row.update({"flops": ops, "gflops": gf, "max_rel_err": errs})
            out["kernels"].append(row)
        g = {k: geomean(v) for k, v in groups[kind].items()}
        gb = {k: geomean(v) for k, v in best[kind].items()}
        # a column with no ratios (OpenBLAS on int8) is null in the JSON, not NaN
        out["geomean_" + kind] = {k: v if v == v else None for k, v in g.items()}
        out["geomean_fastest_" + kind] = {k: v if v == v else None for k, v in gb.items()}
        label = "geomean " + {"qconv": "int8 conv", "qdense": "int8 dense"}.get(kind, kind)
        best_lines.append("%-22s" % label + "".join(num(gb[k], "%13.2f", 13) for k, _ in ratios) +
                          num(gb["generic"], "%10.2f", 10))
        print("%-22s" % label + " " * 10 * len(cols) + " |" +
              "".join(num(g[k], "%13.2f", 13) for k, _ in ratios) +
              (num(g["int8_f32"], "%10.2f", 10) if kind[0] == "q" else " " * 10) +
              num(g["generic"], "%10.2f", 10))
    print()
    print("the same ratios from each method's fastest sample (less sensitive to machine load)")
    print("%-22s" % "shape" + "".join("%13s" % r[1] for r in ratios) + "%10s" % "gen/T")
    for line in best_lines:
        print(line)
    # --target generic over the run's target on the float conv and dense shapes, and on the
    # int8 ones, which a model quantized for a core of any kind runs (not the float kernels)
    for key, label, kinds in (("geomean_generic_over_target", "float", ("conv", "dense")),
                              ("geomean_generic_over_target_int8", "int8", ("qconv", "qdense"))):
        med = [k["ratio"]["generic"] for k in out["kernels"]
               if k["kind"] in kinds and "generic" in k["ratio"]]
        fast = [k["ratio_fastest"]["generic"] for k in out["kernels"]
                if k["kind"] in kinds and "generic" in k["ratio_fastest"]]
        out[key] = {"median": geomean(med) if med else None,
                    "fastest": geomean(fast) if fast else None}
        if med:
            print("generic / %s, %s conv and dense (%d shapes), geomean: %.2f (medians), %.2f "
                  "(fastest samples); per shape %.2f-%.2f" % (shapes["target"], label, len(med),
                                                              geomean(med), geomean(fast),
                                                              min(med), max(med)))
    a64 = [r for r in rows if r["method"] in ("a64_gcc_O3", "a64_clang_O3")]
    for method, cc in (("a64_gcc_O3", "aarch64-linux-gnu-gcc -O3 -S"),
                       ("a64_clang_O3", "clang --target=aarch64-linux-gnu -O3 -S")):
        rs = [r for r in a64 if r["method"] == method]
        if not rs:
            continue
        print("--target generic float kernels for AArch64 (%s), innermost loops: vector fmla / "
              "scalar fmadd / sp loads+stores / instructions" % cc)
        for r in rs:
            print("  %-22s %3d loops %5d vector %5d scalar %5d sp %6d insns" % (
                r["case"], r["loops"], r["vec_fma"], r["scalar_fma"], r["spill"], r["insns"]))
    out["a64"] = a64
    bad = [k["name"] for k in out["kernels"] if k.get("max_rel_err", {}).get("relayc", 0) > 1e-4]
    if bad:
        print("WRONG RESULTS (relative error over 1e-4 against the naive loops): " + ", ".join(bad))
    for what, ks in (("float", ("conv", "dense")), ("int8", ("qconv", "qdense"))):
        impls = sorted({k["onednn_impl"] for k in out["kernels"]
                        if k["kind"] in ks and k.get("onednn_impl")})
        if impls:
            print("oneDNN %s implementations: %s" % (what, ", ".join(impls)))
    qerr = {m: max([k["max_abs_err"][m] for k in out["kernels"]
                    if m in k.get("max_abs_err", {})], default=None) for m in ("relayc", "onednn")}
    if qerr["relayc"] is not None:
        print("int8 outputs against the naive loops: relayc max |diff| %s (must be 0), oneDNN %s "
              "(tolerance 1: it rounds scale * acc to nearest even, TVM adds 1/2 and floors)" %
              (qerr["relayc"], "-" if qerr["onednn"] is None else qerr["onednn"]))
    bad = [k["name"] for k in out["kernels"] if k.get("max_abs_err", {}).get("relayc", 0) > 0]
    if bad:
        print("WRONG RESULTS (int8: relayc differs from the naive loops): " + ", ".join(bad))
    bad = [k["name"] for k in out["kernels"] if k.get("max_abs_err", {}).get("onednn", 0) > 1]
    if bad:
        print("oneDNN int8 differs from the naive loops by more than 1: " + ", ".join(bad))
    print()
    print("whole models (batch 1), microseconds per inference; .text bytes of the emitted model")
    mh = "%-20s%12s%12s%12s%12s%12s%10s%12s%12s%12s%12s%10s" % (
        "model", "relayc -O3", "relayc -O2", "tcc", "PyTorch", "x PyTorch", "tcc/-O3",
        "text x86", "generic-O2", "generic-Os", "cortexm-Os", "err")
    print(mh)
    print("-" * len(mh))
    for m in shapes["models"]:
        name = m["name"]

        def us(key):
            r = t.get((name, key))
            return r["median_s"] * 1e6 if r else None

        def size(key):
            r = t.get((name, key))
            return r["bytes"] if r else None
        rel, o2, tcc, pt = us("relayc"), us("relayc_O2"), us("relayc_tcc"), us("pytorch")
        row = {"name": name, "relayc_us": rel, "relayc_O2_us": o2, "tcc_us": tcc, "pytorch_us": pt,
               "speedup_vs_pytorch": pt / rel if pt and rel else None,
               "tcc_slowdown": tcc / rel if tcc and rel else None,
               "text_x86": size("text_x86"), "text_generic_O2": size("text_generic_O2"),
               "text_generic_Os": size("text_generic_Os"),
               "text_cortexm_Os": size("text_cortexm_Os")}
        # relayc -O3 against PyTorch's output (models gen.py wrote: m["reference"])
        r = t.get((name, "relayc"))
        row["err_vs_pytorch"] = r.get("err") if r and m.get("reference") else None
        out["models"].append(row)

        def f(v, fmt):
            return fmt % v if v is not None else "%*s" % (int(fmt[1:].split(".")[0].rstrip("df")), "-")
        print("%-20s" % name + f(rel, "%12.1f") + f(o2, "%12.1f") + f(tcc, "%12.1f") +
              f(pt, "%12.1f") + f(row["speedup_vs_pytorch"], "%12.2f") +
              f(row["tcc_slowdown"], "%10.1f") + f(row["text_x86"], "%12d") +
              f(row["text_generic_O2"], "%12d") + f(row["text_generic_Os"], "%12d") +
              f(row["text_cortexm_Os"], "%12d") +
              f(row["err_vs_pytorch"], "%10.1e"))
    print("err: relayc -O3's largest |difference| from PyTorch relative to the largest output "
          "(the models written by gen.py; the harness fails over 1e-3)")
    clang_section(t, shapes, out)
    with open(sys.argv[3], "w") as fp:
        json.dump(out, fp, indent=1)
    print("\nwritten: " + sys.argv[3])


if __name__ == "__main__":
    main()
