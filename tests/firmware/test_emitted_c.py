#!/usr/bin/env python3
"""The emitted C on a Cortex-M4F: warning-free, freestanding but for <math.h>, no model
data in RAM, small stack frames. For every fixture model, in both constants modes:

  * NAME.c and NAME_constants.c compile with
      arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
                        -std=c99 -Os -Wall -Wextra -pedantic -Werror -fstack-usage
  * they #include nothing but <math.h>, <stddef.h>, <stdint.h> and NAME.h (NAME.h:
    <stddef.h>, <stdint.h>);
  * tests/cortex_m/check_model_objects.sh on the objects: no symbol or allocated
    writable section in .data/.bss/common, every function's frame (-fstack-usage)
    under 256 bytes and bounded, every undefined symbol a <math.h> function, a
    compiler helper or the model's own.

    test_emitted_c.py --relayc build/relayc --fixtures DIR [--jobs 2]
"""
import concurrent.futures
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwtest  # noqa: E402

CC = "arm-none-eabi-gcc"
FLAGS = fwtest.M4_FLAGS + fwtest.STRICT_FLAGS + ["-fstack-usage"]
ALLOWED_SYSTEM = {"math.h", "stddef.h", "stdint.h"}


def one(relayc, fixtures, fxname, mode, work):
    """Returns a list of (ok, what, detail)."""
    res = []
    fx = fwtest.fixture(fixtures, fxname)
    name = re.sub(r"\W", "_", fxname)
    out = os.path.join(work, "%s-%s" % (name, mode))
    st, log = fwtest.compile_model(relayc, fx, out, name, mode)
    if st != 0:
        return [(False, "%s (%s): relayc compile" % (fxname, mode), log)]
    srcs = [name + ".c"] + ([name + "_constants.c"] if mode == "c" else [])
    inc_bad = []
    for f in srcs + [name + ".h"]:
        with open(os.path.join(out, f)) as fh:
            for inc in re.findall(r'^\s*#\s*include\s*([<"][^>"]+[>"])', fh.read(), flags=re.M):
                if inc[1:-1] not in ALLOWED_SYSTEM and inc != '"%s.h"' % name:
                    inc_bad.append("%s: #include %s" % (f, inc))
    res.append((not inc_bad, "%s (%s): includes only <math.h>, <stddef.h>, <stdint.h>, NAME.h"
                % (fxname, mode), "\n".join(inc_bad)))
    objs, logs, ok = [], [], True
    for f in srcs:
        obj = os.path.join(out, f[:-2] + ".o")
        st, log = fwtest.run([CC] + FLAGS + ["-I", out, "-c", os.path.join(out, f), "-o", obj])
        ok = ok and st == 0 and not log.strip()
        logs.append(log)
        objs.append(obj)
    res.append((ok, "%s (%s): compiles with no warning under -Os -Werror" % (fxname, mode),
                "\n".join(logs)))
    if not ok:
        return res
    st, log = fwtest.run([os.path.join(fwtest.CORTEX_M_TESTS, "check_model_objects.sh"),
                          "--stack-limit", "256", "--name", name] + objs)
    frames = ", ".join(re.findall(r"largest stack frame (\d+ bytes \([^)]*\))", log))
    res.append((st == 0, "%s (%s): no data in RAM, stack frames < 256 bytes (largest: %s), "
                "nothing from libc beyond <math.h>" % (fxname, mode, frames), log))
    notes = [ln for ln in log.splitlines() if ln.startswith("note")]
    if notes:
        res.append((True, "%s (%s): %s" % (fxname, mode, "; ".join(notes)), ""))
    return res


def main():
    ap = fwtest.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*", help="fixture folders (default: all)")
    a = ap.parse_args()
    tap = fwtest.Tap()
    fwtest.need_tools(tap, CC, "arm-none-eabi-nm", "arm-none-eabi-readelf")
    names = a.only or sorted(d for d in os.listdir(a.fixtures)
                             if os.path.isfile(os.path.join(a.fixtures, d, "model.json")))
    if not names:
        tap.bail("no fixtures in %s" % a.fixtures)
    work = fwtest.tempdir("relayc-emitted-c.")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            jobs = [ex.submit(one, a.relayc, a.fixtures, n, m, work) for n in names for m in ("c", "bin")]
            for j in jobs:
                for ok, what, detail in j.result():
                    tap.ok(ok, what, detail)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
