#!/usr/bin/python3
"""The operator-level exact tests of relayc's QNN support (TAP).

Usage: /usr/bin/python3 tests/qnn/test_qnn.py RELAYC [--only SUBSTR] [--keep DIR]

  1. qnn_ref's fixed-point multiplier against values worked out by hand from TVM's
     GetFixedPointMultiplierShift, and its rounding rules on exact halves.
  2. Every operator case of gen_qnn.py (--set ops: each edge case in one or more TVM
     dialects) is generated into a temporary directory and run through
     tests/models/run_case.py: relayc info, check with libtcc and --reference, run, and the
     emitted C compiled with gcc, clang (-std=c99 -Wall -Wextra -pedantic -Werror) and tcc
     and run by a harness; tolerance 0: every output must match bit for bit.
  3. The quantized models in tests/golden/qnn_* are what gen_qnn.py writes now.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import gen_qnn  # noqa: E402
import qnn_ref as q  # noqa: E402

RUN_CASE = os.path.join(os.path.dirname(HERE), "models", "run_case.py")


def reference_self_checks(t):
    # (d, m, s) with d = m * 2^(s - 31): frexp significand in [0.5, 1)
    known = [(0.25, 1 << 30, -1), (0.5, 1 << 30, 0), (1.0, 1 << 30, 1), (0.75, 3 << 29, 0),
             (2.0 ** 20, 1 << 30, 21), (0.0, 0, 0),
             (0.1, 1717986918, -3),            # 0.8 * 2^31 = 1717986918.4 -> down
             (1 - 2.0 ** -40, 1 << 30, 1)]     # rounds to 2^31: halved, shift + 1
    bad = ["multiplier(%r) = %r, expected %r" % (d, q.multiplier(d), (m, s))
           for d, m, s in known if q.multiplier(d) != (m, s)]
    t.result(not bad, "qnn_ref: fixed-point multipliers of known ratios", "\n".join(bad))
    x = np.array([-3, -2, -1, 0, 1, 2, 3])
    up = q.requantize(x, 0.5, 0, 1.0, 0, rounding="UPWARD", out_dtype="int32")
    tn = q.requantize(x, 0.5, 0, 1.0, 0, rounding="TONEAREST", out_dtype="int32")
    want_up, want_tn = [-1, -1, 0, 0, 1, 1, 2], [-2, -1, -1, 0, 1, 1, 2]
    t.result(list(up) == want_up and list(tn) == want_tn,
             "qnn_ref: halves round up (UPWARD) and away from zero (TONEAREST)",
             "UPWARD %s (want %s), TONEAREST %s (want %s)" % (list(up), want_up, list(tn),
                                                              want_tn))
    big = q.requantize(np.array([200], np.int32), 2.0 ** 24, 0, 1.0, 0,
                       out_dtype="int32")
    t.result(int(big[0]) == q.wrap(200 << 24, 32),
             "qnn_ref: an int32 result past the range wraps (TVM casts the int64 product)",
             "got %d" % int(big[0]))


def refuses_v06(t, relayc, work):
    """A TVM 0.6 model with a QNN call fails with a clear message (0.6's attrs-based QNN
    is not supported)."""
    import relaywriter as rw
    saved = rw.OPS["qnn.dequantize"]
    rw.OPS["qnn.dequantize"] = rw.OpInfo()     # 0.6: scale and zero point were attrs
    try:
        x = rw.Var("x", (2, 3), "int8")
        f = rw.Function([x], rw.Call("qnn.dequantize", [x]))
        rw.infer_types(f, "0.6.0")
        text = rw.save_json(f, version="0.6.0", typed=True)
    finally:
        rw.OPS["qnn.dequantize"] = saved
    path = os.path.join(work, "qnn06.json")
    with open(path, "w") as fh:
        fh.write(text)
    out = os.path.join(work, "qnn06_out")
    os.makedirs(out)
    st, _, err = common.run([relayc, "compile", path, "-o", out])
    t.result(st == 2 and "TVM 0.6's QNN dialect" in err and not os.listdir(out),
             "a TVM 0.6 QNN call is refused with a clear message",
             "exit %d, stderr: %s" % (st, err))


def run_one(relayc, d):
    p = subprocess.run([sys.executable, RUN_CASE, relayc, d], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=600)
    out = p.stdout.decode("utf-8", "replace")
    lines = out.splitlines()
    bad = [i for i, l in enumerate(lines) if l.startswith("not ok")]
    n = sum(1 for l in lines if l.startswith("ok ") or l.startswith("not ok"))
    diag = []
    for i in bad[:6]:
        diag.append(lines[i])
        j = i + 1
        while j < len(lines) and lines[j].startswith("#") and j < i + 14:
            diag.append(lines[j])
            j += 1
    good = p.returncode == 0 and not bad and n > 0
    return good, n, "\n".join(diag) if diag else out[-3000:]


def pads_folded(t, relayc, d):
    """conv_pad_folded: the two pads by the input zero point are the convs' padding now
    (the graph after fuse-qnn has no pad before them and their windows grew); the pad
    of 0 against zero point 5 and the pad of the channels stay."""
    p = subprocess.run([relayc, "info", os.path.join(d, "model.json"), "--dump-after",
                        "fuse-qnn"], capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if " = pad(" in ln or " = qconv2d(" in ln]
    pads = [ln for ln in lines if " = pad(" in ln]
    convs = [ln.split(" k=", 1)[1].split(" x=")[0] for ln in lines if " = qconv2d(" in ln]
    want = ["3x3 s=1,1 d=1,1 pad=1,3,3,1 g=4", "3x3 s=2,1 d=1,1 pad=2,0,0,3 g=1",
            "3x3 s=1,1 d=1,1 pad=0,0,0,0 g=1", "3x3 s=1,1 d=1,1 pad=0,0,0,0 g=1"]
    t.result(p.returncode == 0 and len(pads) == 2 and convs == want,
             "%s: pads by the zero point folded into the conv2d padding, the others kept"
             % os.path.basename(d), p.stderr + "\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("relayc")
    ap.add_argument("--only", default=None)
    ap.add_argument("--keep", default=None, help="generate the cases into DIR and keep them")
    a = ap.parse_args(argv)
    relayc = os.path.abspath(a.relayc)
    t = common.Tap(diag_lines=80)
    reference_self_checks(t)
    if a.keep:
        shutil.rmtree(a.keep, ignore_errors=True)
    with common.work_dir("relayc-qnn-", a.keep) as work:
        import contextlib
        import io
        refuses_v06(t, relayc, work)
        with contextlib.redirect_stdout(io.StringIO()):
            dirs = gen_qnn.generate("ops", work, a.only)
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
            results = list(ex.map(lambda d: run_one(relayc, d), dirs))
        total = 0
        for d, (good, n, diag) in zip(dirs, results):
            total += n
            t.result(good, "%s: %d checks (info, check libtcc / --reference, run, gcc, clang, "
                     "tcc, harness), exact" % (os.path.basename(d), n), diag)
        print("# %d operator cases, %d checks" % (len(dirs), total))
        for d in dirs:
            if os.path.basename(d).startswith("conv_pad_folded"):
                pads_folded(t, relayc, d)
    if not a.only:
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = gen_qnn.main(["--set", "models", "--check"])
        t.result(rc == 0, "tests/golden/qnn_* are what gen_qnn.py writes now", buf.getvalue())
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
