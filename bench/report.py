#!/usr/bin/python3
"""report.py: the benchmark table, from bench/harness.c's and torch_models.py's JSON lines.

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
    cols = [("relayc", "relayc -O3"), ("relayc_O2", "-O2"),
            ("naive", "naive"), ("openblas", "OpenBLAS"), ("onednn", "oneDNN"),
            ("onednn_nchw", "oneDNN+io")]
    ratios = [("naive", "x naive"), ("openblas", "x OpenBLAS"), ("onednn", "x oneDNN"),
              ("onednn_nchw", "x oneDNN+io")]
    print("relayc --target %s kernels vs baselines: GFLOP/s (higher is better), median of %s" %
          (shapes["target"], "1 run (--quick: not a measurement)" if quick else "21 samples"))
    print("one core (taskset -c 0), one thread; %s; %s; load average %.1f at the end" %
          (e["cpu"], e["gcc"], e["loadavg"]))
    print("relayc -O3 = gcc -O3 -march=native (the reference setting); '-O2': no -march")
    print("oneDNN: blocked layouts, no reorders timed; oneDNN+io: with the NCHW input/output "
          "reorders (a user with NCHW tensors); dense: oneDNN inner product, plain layouts")
    head = "%-22s" % "shape" + "".join("%10s" % c[1] for c in cols) + " |" + \
        "".join("%13s" % r[1] for r in ratios)
    print(head)
    print("-" * len(head))
    groups = {"conv": {k: [] for k, _ in ratios}, "dense": {k: [] for k, _ in ratios}}
    best = {"conv": {k: [] for k, _ in ratios}, "dense": {k: [] for k, _ in ratios}}
    best_lines = []
    for kind in ("conv", "dense"):
        for s in shapes[kind]:
            name, flops = s["name"], s["flops"]
            gf = {}
            for key, _ in cols:
                r = t.get((name, key))
                gf[key] = flops / r["median_s"] * 1e-9 if r and r["median_s"] > 0 else None
            rat, brat = {}, {}
            for key, _ in ratios:
                if gf.get("relayc") and gf.get(key):
                    rat[key] = gf["relayc"] / gf[key]
                    groups[kind][key].append(rat[key])
                a, b = t.get((name, "relayc")), t.get((name, key))
                if a and b and a.get("min_s") and b.get("min_s"):
                    brat[key] = b["min_s"] / a["min_s"]
                    best[kind][key].append(brat[key])
            best_lines.append("%-22s" % name + "".join(
                "%13.2f" % brat[k] if k in brat else "%13s" % "-" for k, _ in ratios))
            line = "%-22s" % name + "".join(
                "%10.1f" % gf[k] if gf[k] else "%10s" % "-" for k, _ in cols) + " |" + \
                "".join("%13.2f" % rat[k] if k in rat else "%13s" % "-" for k, _ in ratios)
            print(line)
            errs = {k: t[(name, k)]["err"] for k, _ in cols if (name, k) in t}
            out["kernels"].append({"name": name, "kind": kind, "flops": flops, "gflops": gf,
                                   "ratio": rat, "ratio_fastest": brat, "max_rel_err": errs})
        g = {k: geomean(v) for k, v in groups[kind].items()}
        out["geomean_" + kind] = g
        gb = {k: geomean(v) for k, v in best[kind].items()}
        out["geomean_fastest_" + kind] = gb
        best_lines.append("%-22s" % ("geomean " + kind) + "".join("%13.2f" % gb[k] for k, _ in ratios))
        print("%-22s" % ("geomean " + kind) + " " * 10 * len(cols) + " |" +
              "".join("%13.2f" % g[k] for k, _ in ratios))
    print()
    print("the same ratios from each method's fastest sample (less sensitive to machine load)")
    print("%-22s" % "shape" + "".join("%13s" % r[1] for r in ratios))
    for line in best_lines:
        print(line)
    bad = [k["name"] for k in out["kernels"] if k["max_rel_err"].get("relayc", 0) > 1e-4]
    if bad:
        print("WRONG RESULTS (relative error over 1e-4 against the naive loops): " + ", ".join(bad))
    print()
    print("whole models (batch 1), microseconds per inference; .text bytes of the emitted model")
    mh = "%-12s%12s%12s%12s%12s%12s%10s%12s%12s%12s" % (
        "model", "relayc -O3", "relayc -O2", "tcc", "PyTorch", "x PyTorch", "tcc/-O3",
        "text x86", "generic-O2", "cortexm-Os")
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
               "text_cortexm_Os": size("text_cortexm_Os")}
        out["models"].append(row)

        def f(v, fmt):
            return fmt % v if v is not None else "%*s" % (int(fmt[1:].split(".")[0].rstrip("df")), "-")
        print("%-12s" % name + f(rel, "%12.1f") + f(o2, "%12.1f") + f(tcc, "%12.1f") +
              f(pt, "%12.1f") + f(row["speedup_vs_pytorch"], "%12.2f") +
              f(row["tcc_slowdown"], "%10.1f") + f(row["text_x86"], "%12d") +
              f(row["text_generic_O2"], "%12d") + f(row["text_cortexm_Os"], "%12d"))
    with open(sys.argv[3], "w") as fp:
        json.dump(out, fp, indent=1)
    print("\nwritten: " + sys.argv[3])


if __name__ == "__main__":
    main()
