#!/usr/bin/env python3
"""The relayc command line as a build step: --version, --help, budgets, the header.

  * relayc --version gives the version (the same as relayc.h's and meson's);
  * relayc --help documents every option cmd/main.c accepts, and relayc compile
    --help every option compile uses;
  * NAME.h records the relayc version and the options that shape the output, and
    nothing that changes from run to run or machine to machine: compiling the same
    model from other folders, by relative or absolute path, gives the same bytes in
    every emitted file, with no path and no date in them;
  * --max-workspace and --max-constants: over budget, relayc fails (status 3) saying
    how much it needs and which tensors are live at the peak, and writes nothing.
    Over budget is exit status 3.

    test_cli.py --relayc build/relayc --fixtures DIR --source-root SRC
"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwtest  # noqa: E402

# Options of run, check and info only (every other option must be in compile --help).
NOT_COMPILE = {"--input", "--expect", "--rtol", "--atol", "--reference", "--json", "--version", "--cc",
               "--junit", "--profile", "--repeat"}


def main():
    ap = fwtest.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--source-root", default=fwtest.SOURCE_ROOT)
    a = ap.parse_args()
    tap = fwtest.Tap()
    relayc = os.path.abspath(a.relayc)

    # --version
    with open(os.path.join(a.source_root, "compiler", "relayc.h")) as f:
        hver = re.search(r'#define RELAYC_VERSION "([^"]+)"', f.read()).group(1)
    with open(os.path.join(a.source_root, "meson.build")) as f:
        mver = re.search(r"version:\s*'([^']+)'", f.read()).group(1)
    st, log = fwtest.run([relayc, "--version"])
    tap.ok(st == 0 and log.splitlines()[0] == "relayc " + hver and hver == mver,
           "relayc --version prints 'relayc %s' (relayc.h %s, meson.build %s)" % (hver, hver, mver), log)

    # --help documents every option main.c parses
    with open(os.path.join(a.source_root, "cmd", "main.c")) as f:
        src = f.read()
    opts = set(re.findall(r'\{ O_\w+, "(-[-\w]+)"', src)) - {"-h", "--help"}
    st, general = fwtest.run([relayc, "--help"])
    st2, comp = fwtest.run([relayc, "compile", "--help"])
    documented = lambda o, text: re.search(r"(^|[\s,\[])%s([\s,=\]]|$)" % re.escape(o), text, flags=re.M)  # noqa: E731
    missing = sorted(o for o in opts if not documented(o, general))
    tap.ok(st == 0 and opts and not missing, "relayc --help documents all %d options: %s"
           % (len(opts), " ".join(sorted(opts))), "undocumented: %s\n%s" % (missing, general))
    missing = sorted(o for o in opts - NOT_COMPILE if not documented(o, comp))
    tap.ok(st2 == 0 and comp != general and not missing,
           "relayc compile --help documents every compile option (%d)" % len(opts - NOT_COMPILE),
           "undocumented: %s (if the option is not for compile, add it to NOT_COMPILE)\n%s" % (missing, comp))

    fx = fwtest.fixture(a.fixtures, "lenet-0.18.0-params")
    work = fwtest.tempdir("relayc-cli.")
    try:
        # the header: version, options, and nothing from the machine or the clock
        d1, d2 = os.path.join(work, "one"), os.path.join(work, "two", "deeper")
        os.makedirs(d1)
        os.makedirs(os.path.join(d2, "src"))
        shutil.copy(fx["model"], os.path.join(d2, "src", "model.json"))
        shutil.copy(fx["params"], os.path.join(d2, "src", "model.params"))
        opts1 = ["--name", "net", "--constants", "c", "--max-workspace", "1M", "--max-constants", "2M"]
        st, log = fwtest.run([relayc, "compile", fx["model"], "--params", fx["params"], "-o", d1] + opts1)
        tap.ok(st == 0, "compile by absolute path", log)
        time.sleep(1.1)   # a date or time in the output would now differ
        os.makedirs(os.path.join(d2, "out"))
        st, log = fwtest.run([relayc, "compile", "src/model.json", "--params", "src/model.params",
                              "-o", "out"] + opts1, cwd=d2)
        tap.ok(st == 0, "compile by relative path, from another folder, a second later", log)
        files = ["net.h", "net.c", "net_constants.c"]
        diff = [f for f in files if open(os.path.join(d1, f), "rb").read() != open(os.path.join(d2, "out", f), "rb").read()]
        tap.ok(not diff, "every emitted file is the same bytes", "differ: %s" % diff)
        header = open(os.path.join(d1, "net.h")).read()
        comment = header[:header.index("*/")]
        tap.note(comment)
        tap.ok("relayc " + hver in comment, "NAME.h records the relayc version")
        m = re.search(r"Options: (.*)", comment)
        tap.ok(m and all(o in m.group(1) for o in ("--name net", "--constants c", "--max-workspace 1M",
                                                    "--max-constants 2M", "--params model.params")),
               "NAME.h records the options used", comment)
        leaks = []
        for f in files:
            text = open(os.path.join(d1, f)).read()
            for needle in (work, a.fixtures, os.path.dirname(fx["model"]), os.getcwd(), os.path.expanduser("~")):
                if needle and len(needle) > 1 and needle in text:
                    leaks.append("%s holds %s" % (f, needle))
            for pat in (r"\b(19|20)\d\d-\d\d-\d\d\b", r"\b\d\d:\d\d:\d\d\b",
                        r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2}\b"):
                for hit in re.findall(pat, text[:20000]):
                    leaks.append("%s: looks like a date or time: %s" % (f, hit))
            leaks += ["%s: a path: %s" % (f, p) for p in re.findall(r"(?:^|\s)(/[\w.-]+/[\w./-]+)", text[:20000])]
        tap.ok(not leaks, "no paths, dates or times in the emitted files", "\n".join(leaks))

        # budgets
        empty = os.path.join(work, "budget")
        os.makedirs(empty)
        st, log = fwtest.run([relayc, "compile", fx["model"], "--params", fx["params"], "-o", empty,
                              "--max-workspace", "16K"])
        tap.note(log)
        log_ws = log
        tap.ok(st == 3 and re.search(r"workspace needs \d+ bytes", log) and "16384" in log
               and "live at the peak" in log and re.search(r"float32 \[[\d, ]+\] from nodes\[\d+\]", log),
               "over --max-workspace: fails, says how much it needs and which tensors are live at the peak", log)
        tap.ok(not os.listdir(empty), "and writes nothing", os.listdir(empty))
        st, log = fwtest.run([relayc, "compile", fx["model"], "--params", fx["params"], "-o", empty,
                              "--max-constants", "100K"])
        tap.note(log)
        tap.ok(st == 3 and re.search(r"constants need \d+ bytes", log) and "102400" in log,
               "over --max-constants: fails and says how much the constants need", log)
        tap.ok(not os.listdir(empty), "and writes nothing", os.listdir(empty))
        # the figures the two refusals above named
        ws_need = re.search(r"workspace needs (\d+) bytes", log_ws)
        c_need = re.search(r"constants need (\d+) bytes", log)
        st, log = fwtest.run([relayc, "compile", fx["model"], "--params", fx["params"], "-o", empty,
                              "--max-workspace", ws_need.group(1) if ws_need else "?",
                              "--max-constants", c_need.group(1) if c_need else "?"])
        tap.ok(st == 0, "a budget of exactly what the model needs passes", log)
        st, log = fwtest.run([relayc, "compile", fx["model"], "-o", empty, "--max-workspace", "lots"])
        tap.ok(st == 2 and "byte count" in log, "a budget that is not a number is refused", log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
