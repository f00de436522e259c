#!/usr/bin/env python3
"""relayc compile --report FILE.json and --report-svg FILE.svg.

For several fixture models and both constants modes: the JSON parses and agrees with
the emitted header (NAME_WORKSPACE_SIZE, _ALIGN, _CONSTANTS_SIZE, input and output
sizes) and with NAME.bin's size; the memory plan is sound (aligned, inside the
workspace, no two buffers overlapping in both time and space, the peak where the live
bytes are most); the MAC counts are right for lenet and mlp; the summary is printed;
the SVG is well-formed XML with one box per buffer and the peak marked; both files
are the same whatever the output folder (no paths in them) and from run to run.

    test_report.py --relayc build/relayc --fixtures DIR
"""
import json
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwtest  # noqa: E402

DTYPE_BYTES = {"float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int32": 4, "int64": 8, "bool": 1}
# Multiply-accumulates, from the fixtures' architectures (tests/.. README of the fixtures):
# lenet: conv 5x5 1->6 on 28x28 (pad 2), conv 5x5 6->16 to 10x10, dense 400-120-84-10;
# mlp: dense 784->128->10.
KNOWN_MACS = {
    "lenet-0.18.0": 6 * 28 * 28 * 25 + 16 * 10 * 10 * 6 * 25 + 400 * 120 + 120 * 84 + 84 * 10,
    "mlp-0.8.0": 784 * 128 + 128 * 10,
}
CASES = [("lenet-0.18.0", "c"), ("lenet-0.18.0", "bin"), ("mlp-0.8.0", "bin"),
         ("mbv2_block-0.18.0", "c"), ("misc-0.18.0-params", "c"), ("resnet_block-0.18.0", "bin")]
SVG = "{http://www.w3.org/2000/svg}"


def check_case(tap, a, fxname, mode, work):
    fx = fwtest.fixture(a.fixtures, fxname)
    name = "m_" + re.sub(r"\W", "_", fxname)
    U = name.upper()
    out = os.path.join(work, "%s-%s" % (name, mode))
    rj, rs = os.path.join(out, "report.json"), os.path.join(out, "plan.svg")
    st, log = fwtest.compile_model(a.relayc, fx, out, name, mode, ["--report", rj, "--report-svg", rs])
    what = "%s (%s)" % (fxname, mode)
    if not tap.ok(st == 0, "%s: relayc compile --report --report-svg" % what, log):
        return
    tap.ok(all(k in log for k in ("memory plan:", "kernels:", "MACs", "workspace")),
           "%s: a summary on stdout" % what, log)
    try:
        with open(rj) as f:
            r = json.load(f)
    except ValueError as e:
        tap.ok(False, "%s: the report is JSON" % what, str(e))
        return
    tap.ok(True, "%s: the report is JSON" % what)
    h = fwtest.header_macros(os.path.join(out, name + ".h"))
    m = r["memory"]
    tap.ok(m["workspace_bytes"] == h[U + "_WORKSPACE_SIZE"] and m["workspace_align"] == h[U + "_WORKSPACE_ALIGN"],
           "%s: workspace %d bytes, align %d, as in NAME.h" % (what, m["workspace_bytes"], m["workspace_align"]),
           "header: %s" % h)
    if mode == "bin":
        blob = os.path.getsize(os.path.join(out, name + ".bin"))
        tap.ok(m["constants_blob_bytes"] == h[U + "_CONSTANTS_SIZE"] == blob and m["constants_bytes"] <= blob,
               "%s: constants %d bytes in a %d-byte NAME.bin, as NAME_CONSTANTS_SIZE" % (what, m["constants_bytes"], blob),
               "report %s, header %s, file %d" % (m, h.get(U + "_CONSTANTS_SIZE"), blob))
    else:
        # the sizes of the NAME_cK objects NAME_constants.c defines (host compiler)
        obj = os.path.join(out, "constants.o")
        st, log = fwtest.run(["cc", "-std=c99", "-c", os.path.join(out, name + "_constants.c"), "-o", obj])
        total = -1
        if st == 0:
            st, log = fwtest.run(["nm", "-S", "--defined-only", obj])
            total = sum(int(f[1], 16) for f in (ln.split() for ln in log.splitlines())
                        if len(f) == 4 and re.fullmatch(r"%s_c\d+" % name, f[3]))
        tap.ok(m["constants_bytes"] == total, "%s: constants %d bytes, the objects NAME_constants.c defines"
               % (what, m["constants_bytes"]), "nm -S gives %d bytes\n%s" % (total, log))
    io = 0
    for kind, key in (("inputs", "INPUT"), ("outputs", "OUTPUT")):
        for i, t in enumerate(r[kind]):
            io += h["%s_%s%d_SIZE" % (U, key, i)] * DTYPE_BYTES[t["dtype"]]
    tap.ok(m["io_bytes"] == io == m["input_bytes"] + m["output_bytes"],
           "%s: inputs and outputs %d bytes, as NAME_INPUTk/OUTPUTk_SIZE" % (what, m["io_bytes"]),
           "header gives %d" % io)

    # the plan
    bufs, steps = r["plan"]["buffers"], r["plan"]["steps"]
    errs = []
    for b in bufs:
        if b["offset"] % m["workspace_align"] or b["offset"] < 0 or b["offset"] + b["size"] > m["workspace_bytes"]:
            errs.append("buffer %d misplaced: %s" % (b["id"], b))
        if not (0 <= b["first"] <= b["last"] <= steps):
            errs.append("buffer %d: bad live range" % b["id"])
        if (not b["values"] and "scratch_of_json_node" not in b) or \
                any(v["bytes"] > b["size"] for v in b["values"]):
            errs.append("buffer %d: holds %s" % (b["id"], b["values"]))
        for v in b["values"]:
            if not (b["first"] <= v["step"] <= b["last"]) or "json_node" not in v:
                errs.append("buffer %d: value %s outside its live range" % (b["id"], v))
    for x in bufs:
        for y in bufs:
            if x["id"] < y["id"] and x["first"] <= y["last"] and y["first"] <= x["last"] and \
                    x["offset"] < y["offset"] + y["size"] and y["offset"] < x["offset"] + x["size"]:
                errs.append("buffers %d and %d overlap in time and space" % (x["id"], y["id"]))
    top = max([b["offset"] + b["size"] for b in bufs] + [0])
    if top != m["workspace_bytes"]:
        errs.append("the buffers end at %d, the workspace at %d" % (top, m["workspace_bytes"]))
    live = r["plan"]["live_bytes"]
    if live and (max(live) != m["peak_live_bytes"] or live[m["peak_step"]] != m["peak_live_bytes"]):
        errs.append("peak %d at step %d, but live bytes are %s" % (m["peak_live_bytes"], m["peak_step"], live))
    if m["peak_live_bytes"] > m["workspace_bytes"]:
        errs.append("peak above the workspace")
    tap.ok(not errs, "%s: memory plan of %d buffers over %d steps is sound" % (what, len(bufs), steps),
           "\n".join(errs))

    # the kernels
    ks = r["kernels"]
    errs = []
    if len(ks) != steps or [k["step"] for k in ks] != list(range(steps)):
        errs.append("%d kernels for %d steps" % (len(ks), steps))
    for k in ks:
        heavy = k["op"] in ("conv2d", "matmul", "qconv2d", "qmatmul")
        if (k["macs"] > 0) != heavy:
            errs.append("kernel %s: %d MACs" % (k["op"], k["macs"]))
    if sum(k["macs"] for k in ks) != r["total_macs"]:
        errs.append("total_macs is not the sum")
    if fxname in KNOWN_MACS and r["total_macs"] != KNOWN_MACS[fxname]:
        errs.append("total %d MACs, want %d" % (r["total_macs"], KNOWN_MACS[fxname]))
    tap.ok(not errs, "%s: %d kernels, %d MACs in all%s" % (what, len(ks), r["total_macs"],
           " (as the architecture gives)" if fxname in KNOWN_MACS else ""), "\n".join(errs))

    # the SVG
    try:
        root = ET.parse(rs).getroot()
    except ET.ParseError as e:
        tap.ok(False, "%s: the SVG is well-formed XML" % what, str(e))
        return
    boxes = [el for el in root.iter(SVG + "rect")
             if el.find(SVG + "title") is not None and el.find(SVG + "title").text.startswith("buffer ")]
    peak = [el for el in root.iter(SVG + "line") if el.get("id") == "peak"]
    tap.ok(root.tag == SVG + "svg" and len(boxes) == len(bufs) and (peak or not steps),
           "%s: the SVG is well-formed, %d boxes for %d buffers, peak marked" % (what, len(boxes), len(bufs)))

    # reproducible, no paths
    out2 = os.path.join(work, "elsewhere", "deeper")
    rj2, rs2 = os.path.join(out2, "r.json"), os.path.join(out2, "r.svg")
    st, log = fwtest.compile_model(a.relayc, fx, out2, name, mode, ["--report", rj2, "--report-svg", rs2])
    same = st == 0 and all(open(p, "rb").read() == open(q, "rb").read() for p, q in ((rj, rj2), (rs, rs2)))
    text = open(rj).read() + open(rs).read()
    tap.ok(same and work not in text and a.fixtures not in text,
           "%s: the same report and SVG from another output folder; no paths in them" % what)


def main():
    a = fwtest.parser(__doc__.split("\n\n")[0]).parse_args()
    tap = fwtest.Tap()
    fwtest.need_tools(tap, "cc", "nm")
    work = fwtest.tempdir("relayc-report.")
    try:
        for fxname, mode in CASES:
            check_case(tap, a, fxname, mode, work)
        # --report is an option of compile only
        fx = fwtest.fixture(a.fixtures, "mlp-0.8.0")
        st, log = fwtest.run([a.relayc, "info", fx["model"], "--report", os.path.join(work, "x.json")])
        tap.ok(st == 2 and "compile" in log, "relayc info --report is refused", log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
