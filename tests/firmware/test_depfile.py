#!/usr/bin/env python3
"""relayc compile --depfile, and outputs left untouched when unchanged.

  * the depfile names every emitted file (and the reports) as targets and the model
    and params files as prerequisites, with gcc -MP style phony rules; paths with
    spaces are escaped; GNU make and ninja both read it (a real Makefile and a real
    build.ninja: up to date after a build, out of date when the params file changes);
  * an unchanged recompile rewrites nothing (every output keeps its mtime, no
    temporary file is left behind); a change that only touches the header rewrites
    the header alone; a deleted output is written again;
  * with ninja's restat, touching the model reruns relayc but does not rebuild what
    is compiled from the unchanged outputs.

    test_depfile.py --relayc build/relayc --fixtures DIR
"""
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwtest  # noqa: E402


def parse_depfile(text):
    """Make-syntax rules -> [(targets, prerequisites)], undoing '\\ ' and '$$'."""
    rules = []
    for line in text.replace("\\\n", " ").splitlines():
        if not line.strip():
            continue
        words, cur, i = [], "", 0
        while i < len(line):
            c = line[i]
            if c == "\\" and i + 1 < len(line) and line[i + 1] in " #":
                cur += line[i + 1]
                i += 2
                continue
            if c == "$" and i + 1 < len(line) and line[i + 1] == "$":
                cur += "$"
                i += 2
                continue
            if c == " ":
                if cur:
                    words.append(cur)
                cur = ""
            else:
                cur += c
            i += 1
        if cur:
            words.append(cur)
        colon = words.index(":") if ":" in words else None
        if colon is None:   # "target:" glued to the colon
            k = next(k for k, w in enumerate(words) if w.endswith(":"))
            words[k] = words[k][:-1]
            rules.append((words[:k + 1], words[k + 1:]))
        else:
            rules.append((words[:colon], words[colon + 1:]))
    return rules


def mtimes(paths):
    return {p: os.stat(p).st_mtime_ns for p in paths}


def main():
    a = fwtest.parser(__doc__.split("\n\n")[0]).parse_args()
    tap = fwtest.Tap()
    fwtest.need_tools(tap, "make", "ninja", "cc")
    fx = fwtest.fixture(a.fixtures, "lenet-0.18.0-params")
    work = fwtest.tempdir("relayc-depfile.")
    try:
        # the model in a folder whose name needs escaping
        src = os.path.join(work, "my models")
        os.makedirs(src)
        model, params = os.path.join(src, "lenet.json"), os.path.join(src, "lenet$1.params")
        shutil.copy(fx["model"], model)
        shutil.copy(fx["params"], params)
        out = os.path.join(work, "gen out")
        os.makedirs(out)
        dep = os.path.join(out, "lenet.d")
        base = [a.relayc, "compile", model, "--params", params, "-o", out, "--depfile", dep,
                "--report", os.path.join(out, "lenet.json"), "--report-svg", os.path.join(out, "lenet.svg")]
        st, log = fwtest.run(base)
        if not tap.ok(st == 0, "relayc compile --depfile", log):
            tap.done()
        files = [os.path.join(out, f) for f in ("lenet.h", "lenet.c", "lenet_constants.c",
                                                "lenet.json", "lenet.svg")]
        text = open(dep).read()
        tap.note("the depfile:\n" + text)
        rules = parse_depfile(text)
        main_rule = rules[0] if rules else ([], [])
        tap.ok(sorted(main_rule[0]) == sorted(files) and main_rule[1] == [model, params],
               "the depfile: the emitted files and reports depend on the model and the params file",
               "rules: %s" % rules)
        tap.ok(sorted(r[0][0] for r in rules[1:]) == sorted([model, params]) and all(not r[1] for r in rules[1:]),
               "the depfile has a phony rule for each input (a deleted input rebuilds, as gcc -MP)",
               "rules: %s" % rules)

        # unchanged recompile: nothing rewritten
        before = mtimes(files + [dep])
        time.sleep(0.02)
        listing = sorted(os.listdir(out))
        st, log = fwtest.run(base)
        after = mtimes(files + [dep])
        tap.ok(st == 0 and before == after, "an unchanged recompile keeps every output's mtime",
               "before %s\nafter %s" % (before, after))
        tap.ok(sorted(os.listdir(out)) == listing, "and leaves no temporary file behind",
               "%s\n%s" % (listing, sorted(os.listdir(out))))
        # an option recorded in the header only: just the header (and reports) change
        st, log = fwtest.run(base + ["--max-workspace", "1M"])
        after2 = mtimes(files + [dep])
        changed = sorted(os.path.basename(p) for p in files + [dep] if after2[p] != after[p])
        tap.ok(st == 0 and changed == ["lenet.h", "lenet.json"],
               "a change that touches only the header rewrites only the header and the report",
               "rewritten: %s" % changed)
        os.unlink(os.path.join(out, "lenet.c"))
        st, log = fwtest.run(base + ["--max-workspace", "1M"])
        tap.ok(st == 0 and os.path.isfile(os.path.join(out, "lenet.c")), "a deleted output is written again")
        st, log = fwtest.run(base)   # back to the first options

        # GNU make reads the depfile (relative paths, as a build system passes them)
        mk = os.path.join(work, "Makefile")
        with open(mk, "w") as f:
            f.write("RELAYC := %s\n"
                    "all: make\\ out/lenet.h\n"
                    "make\\ out/lenet.h:\n"
                    "\tmkdir -p 'make out'\n"
                    "\t$(RELAYC) compile 'my models/lenet.json' --params 'my models/lenet$$1.params' "
                    "-o 'make out' --depfile 'make out/lenet.d'\n"
                    "-include make\\ out/lenet.d\n" % a.relayc)
        st, log = fwtest.run(["make", "-f", mk], cwd=work)
        mdep = os.path.join(work, "make out", "lenet.d")
        rules = parse_depfile(open(mdep).read()) if os.path.exists(mdep) else []
        tap.ok(st == 0 and rules and rules[0][1] == ["my models/lenet.json", "my models/lenet$1.params"],
               "make: builds; the depfile names the inputs as given", "%s\n%s" % (log, rules))
        st, log = fwtest.run(["make", "-q", "-f", mk], cwd=work)
        tap.ok(st == 0, "make: up to date after the build (make -q)", log)
        later = time.time() + 5
        os.utime(params, (later, later))
        st, log = fwtest.run(["make", "-q", "-f", mk], cwd=work)
        tap.ok(st == 1, "make: out of date once the params file changes", "make -q exit %d\n%s" % (st, log))
        os.utime(params, None)
        os.utime(model, None)

        # ninja reads it too; with restat, an unchanged output rebuilds nothing downstream
        nb = os.path.join(work, "build.ninja")
        nin = lambda p: p.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")  # noqa: E731
        with open(nb, "w") as f:
            f.write("rule relayc\n"
                    "  command = %s compile 'my models/lenet.json' --params 'my models/lenet$$1.params' "
                    "-o 'ninja out' --depfile ninja.d\n"
                    "  depfile = ninja.d\n  deps = gcc\n  restat = 1\n"
                    "rule cc\n  command = cc -std=c99 -c $in -o $out\n"
                    "build %s %s: relayc\n"
                    "build lenet.o: cc %s | %s\n"
                    % (a.relayc, nin("ninja out/lenet.h"), nin("ninja out/lenet.c"),
                       nin("ninja out/lenet.c"), nin("ninja out/lenet.h")))
        os.makedirs(os.path.join(work, "ninja out"))
        st, log = fwtest.run(["ninja", "-C", work], timeout=120)
        tap.ok(st == 0, "ninja: builds with the depfile", log)
        st, log = fwtest.run(["ninja", "-C", work, "-t", "deps"])
        tap.ok("my models/lenet.json" in log and "my models/lenet$1.params" in log,
               "ninja: recorded the model and params file as dependencies", log)
        st, log = fwtest.run(["ninja", "-C", work, "-n", "-d", "explain"])
        tap.ok(st == 0 and "no work to do" in log, "ninja: no work to do after the build", log)
        obj = os.path.join(work, "lenet.o")
        t0 = os.stat(obj).st_mtime_ns if os.path.exists(obj) else None
        later = time.time() + 5
        os.utime(params, (later, later))
        st, log = fwtest.run(["ninja", "-C", work, "-d", "explain"], timeout=120)
        tap.ok(st == 0 and "relayc compile" in log and t0 and os.stat(obj).st_mtime_ns == t0,
               "ninja: a touched params file reruns relayc, but lenet.o (from the unchanged "
               "lenet.c) is not rebuilt", log)
        st, log = fwtest.run(["ninja", "-C", work, "-n", "-d", "explain"])
        tap.ok(st == 0 and "no work to do" in log, "ninja: and then there is no work to do", log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
