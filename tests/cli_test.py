#!/usr/bin/python3
"""The relayc command line: options, exit codes, messages, default names. TAP.

Usage: /usr/bin/python3 tests/cli_test.py RELAYC FIXTURES_DIR [1|2]   (one part of the sections, or all)

Exit codes: 0 success, 1 'check' mismatch or 'info' on unsupported operators, 2 any error
(one line on stderr, 'relayc: error: ...'), 3 a budget exceeded. Every command's --help is
compared with what the parser accepts. Uses the fixtures lenet-0.18.0, mlp-0.8.0,
mlp-0.8.0-params and misc-0.18.0, and testing_mlp and torch_small_cnn of the TVM 0.18
fixtures beside them (copied or edited in a temporary directory); --profile also uses
testing_squeezenet. The --cc tests use gcc, and clang when it is installed.
"""
import concurrent.futures
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

import common
import relaywriter as rw
from common import WRAPPER, sanitizer_report

HERE = os.path.dirname(os.path.abspath(__file__))

run = functools.partial(common.run, timeout=120)
describe = functools.partial(common.describe, out_lines=15, err_lines=15)


class Cli:
    def __init__(self, relayc, fixtures, work):
        self.relayc = relayc
        self.fx = fixtures
        self.tvm = os.path.join(os.path.dirname(os.path.abspath(fixtures)), "tvm-0.18")
        self.work = work
        self.t = common.Tap()

    def fixture(self, name, f="model.json"):
        return os.path.join(self.fx, name, f)

    def rc(self, *args, wrap=True, **kw):
        cmd = (WRAPPER if wrap else []) + [self.relayc] + list(args)
        return cmd, run(cmd, **kw)

    def expect_ok(self, desc, *args, status=0, stdout_has=(), **kw):
        cmd, r = self.rc(*args, **kw)
        bad = []
        if r[0] != status:
            bad.append("exit status %d, expected %d" % (r[0], status))
        if sanitizer_report(r[2]):
            bad.append("sanitizer report")
        for s in stdout_has:
            if s not in r[1]:
                bad.append("stdout lacks %r" % s)
        self.t.result(not bad, desc, "\n".join(bad) + "\n" + describe(cmd, r))
        return r

    def expect_error(self, desc, *args, has=(), prefix="relayc: error: ", empty_dir=None, status=2,
                     stdout_empty=True, **kw):
        """exit status (2), exactly one stderr line starting with prefix and containing every has."""
        cmd, r = self.rc(*args, **kw)
        bad = []
        if r[0] != status:
            bad.append("exit status %d, expected %d" % (r[0], status))
        if sanitizer_report(r[2]):
            bad.append("sanitizer report")
        lines = r[2].split("\n")
        if lines[-1] == "":
            lines.pop()
        if len(lines) != 1:
            bad.append("%d lines on stderr, expected 1" % len(lines))
        if not r[2].startswith(prefix):
            bad.append("stderr does not start with %r" % prefix)
        for s in has:
            if s not in r[2]:
                bad.append("stderr lacks %r" % s)
        if stdout_empty and r[1].strip():
            bad.append("something on stdout")
        if empty_dir is not None and os.listdir(empty_dir):
            bad.append("files written to %s: %s" % (empty_dir, os.listdir(empty_dir)))
        self.t.result(not bad, desc, "\n".join(bad) + "\n" + describe(cmd, r))
        return r

    def misc(self):
        """misc-0.18.0: the model, its inputs x and y, its expected outputs 0 and 1."""
        d = os.path.join(self.fx, "misc-0.18.0")
        return tuple(os.path.join(d, f) for f in ("model.json", "input_x.npy", "input_y.npy",
                                                  "expected_0.npy", "expected_1.npy"))

    def tmpdir(self, name):
        d = os.path.join(self.work, name)
        os.makedirs(d)
        return d

    # ---- the commands and options ----

    def general(self):
        r = self.expect_ok("--help exits 0 and prints the usage", "--help",
                           stdout_has=("usage:", "compile", "check", "info", "run", "ops", "verify",
                                       "Exit codes"))
        self.expect_ok("-h exits 0", "-h", stdout_has=("usage:",))
        r = self.expect_ok("--version exits 0", "--version", stdout_has=("relayc ",))
        self.t.result(r[1].count("\n") == 1 and r[1].split()[1][0].isdigit(),
                      "--version prints one line 'relayc X.Y.Z'", repr(r[1]))
        self.expect_ok("compile --help exits 0", "compile", "--help", stdout_has=("usage:",))
        cmd, r = self.rc()
        self.t.result(r[0] == 2 and "usage" in r[2], "no arguments: exit 2 and the usage on stderr",
                      describe(cmd, r))
        model = self.fixture("mlp-0.8.0")
        self.expect_error("unknown command: exit 2, one line", "frobnicate", model, has=("frobnicate",))
        self.expect_error("unknown option: exit 2, one line", "info", model, "--frobnicate",
                          has=("--frobnicate",))
        self.expect_error("option without its value: exit 2", "compile", model, "--name", has=("--name",))
        self.expect_error("no model file: exit 2", "info")
        self.expect_error("two model files: exit 2", "info", model, model)
        self.expect_error("--constants xyz: exit 2", "compile", model, "--constants", "xyz",
                          has=("--constants",))
        self.expect_error("--rtol abc: exit 2", "check", model, "--rtol", "abc", has=("--rtol",))
        self.expect_error("--atol -1: exit 2", "check", model, "--atol", "-1", has=("--atol",))
        self.expect_error("--max-workspace 12Q: exit 2", "compile", model, "--max-workspace", "12Q",
                          has=("--max-workspace",))
        self.expect_error("--dump-after an unknown pass: exit 2", "info", model, "--dump-after",
                          "no-such-pass", has=("no-such-pass",))
        missing = os.path.join(self.work, "no-such-model.json")
        self.expect_error("a missing model file: exit 2 naming it", "info", missing,
                          prefix="relayc: error: %s: " % missing)

    # ---- one grammar: every command's help against the parser ----

    COMMANDS = ("compile", "run", "check", "verify", "info", "ops")
    # a valid value for each option that takes one (the parser checks some values)
    VALUES = {"--params": "m.params", "--function": "main", "-o": "outdir", "--name": "net",
              "--constants": "bin", "--target": "cortex-m", "--max-workspace": "1K",
              "--max-constants": "2M", "--report": "r.json", "--report-svg": "r.svg",
              "--depfile": "d.d", "--dump-after": "fuse", "--input": "x=x.npy", "--expect": "e.npy",
              "--rtol": "0.5", "--atol": "0.5", "--json": "out.json", "--junit": "out.xml",
              "--cc": "gcc", "--repeat": "3"}

    def help_options(self, text):
        """{option: takes a value} from the Options section of a command's help."""
        opts = {}
        section = text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0] if "\nOptions:\n" in text else ""
        for line in section.split("\n"):
            m = re.match(r"^  (?:(-\w), )?(--?[\w-]+)(?: (\S+))?", line)
            if m:
                opts[m.group(2)] = m.group(3) is not None
                if m.group(1):
                    opts[m.group(1)] = m.group(3) is not None
        return opts

    def grammar(self):
        t = self.t
        helps = {}
        for c in self.COMMANDS:
            cmd, r = self.rc(c, "--help")
            cmd2, r2 = self.rc("help", c)
            name = "check" if c == "verify" else c
            t.result(r[0] == 0 and r[1].startswith("usage: relayc %s " % name) and r2 == r,
                     "%s --help prints its own usage, the same as relayc help %s" % (c, c),
                     describe(cmd, r) + describe(cmd2, r2))
            codes = {"compile": ("0 ", "2 ", "3 "), "run": ("0 ", "2 "), "check": ("0 ", "1 ", "2 "),
                     "verify": ("0 ", "1 ", "2 "), "info": ("0 ", "1 ", "2 ", "3 "), "ops": ("0",)}[c]
            ex = r[1].split("Exit status:", 1)[-1]
            t.result("Exit status:" in r[1] and all(k in ex for k in codes),
                     "%s --help documents its exit codes %s" % (c, "/".join(k.strip() for k in codes)),
                     r[1][-600:])
            helps[c] = self.help_options(r[1])
        everything = {}
        for c in helps:
            everything.update(helps[c])
        t.result(len(everything) > 20, "the helps list %d options in all" % len(everything),
                 str(sorted(everything)))
        # every option a help lists parses for that command (--help after it stops before
        # any work), in both spellings; every other option is refused naming the command
        model = self.fixture("mlp-0.8.0")
        runs = []  # (command, option, takes, form): hundreds of runs, on every core
        for c in self.COMMANDS:
            for o, valued in sorted(everything.items()):
                if o in ("-h", "--help"):
                    continue
                takes = o in helps[c]
                forms = [[o] + ([self.VALUES[o]] if helps[c].get(o) else [])]
                if takes and helps[c].get(o) and o.startswith("--"):
                    forms.append([o + "=" + self.VALUES[o]])
                runs += [(c, o, takes, f) for f in forms]
        # under RELAYC_WRAPPER (valgrind: half a second a command, most of CI's valgrind
        # stage) the first accepted and the first refused option of each command run under
        # it, the others as they are: the parser's memory checks on every form are the
        # sanitizer run's (the same matrix under ASan + UBSan)
        first = {}
        for k, (c, _, takes, _) in enumerate(runs):
            first.setdefault((c, takes), k)
        wrapped = set(first.values())

        def help_run(k, run_):
            c, form = run_[0], run_[3]
            args = [c] + form + ([] if c == "ops" else [model]) + ["--help"]
            return self.rc(*args, wrap=k in wrapped)[1]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            results = list(pool.map(help_run, range(len(runs)), runs))
        for c in self.COMMANDS:
            name = "check" if c == "verify" else c
            wrong = []
            for (c2, o, takes, f), r in zip(runs, results):
                if c2 != c:
                    continue
                if takes and not (r[0] == 0 and r[1].startswith("usage: relayc %s" % name)):
                    wrong.append("%s: refused: %s" % (" ".join(f), r[2].strip()))
                if not takes and not (r[0] == 2 and ("%s does not take %s" % (name, o)) in r[2]
                                      and r[2].count("\n") == 1):
                    wrong.append("%s: not refused naming %s: %s %s" % (o, name, r[0], r[2].strip()))
            t.result(not wrong, "%s: the options its help lists parse (also as --opt=value), the "
                     "others are refused naming %s" % (c, name), "\n".join(wrong))
        # the general help lists every option with the commands that take it
        cmd, r = self.rc("--help")
        listed = {}
        for line in r[1].split("Options, and the commands that take them:\n", 1)[-1].split("\n\n")[0].split("\n"):
            m = re.match(r"^  (?:-\w, )?(--?[\w-]+) +(.*)$", line)
            if m:
                listed[m.group(1)] = set(m.group(2).split())
        want = {}
        for c, opts in helps.items():
            for o in opts:
                if c != "verify" and o not in ("-q", "-h"):
                    want.setdefault(o, set()).add(c)
        t.result(listed == want, "relayc --help lists each option with exactly the commands whose "
                 "help lists it", "listed %s\nwant %s" % (listed, want))
        # the README's "Using it" names no option relayc lacks, and misses none
        readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
        with open(readme) as f:
            using = f.read().split("## Using it", 1)[1].split("\n## ", 1)[0]
        named = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*|-o|-q)\b", using)) - {"--version"}
        t.result(named - {"-q"} <= set(listed) and set(listed) - {"-h", "--help"} <= named,
                 "README's Using it names exactly the options relayc takes",
                 "unknown: %s\nnot in the README: %s" % (sorted(named - set(listed)),
                                                         sorted(set(listed) - named)))
        self.expect_error("relayc help nosuch: exit 2", "help", "nosuch", has=("nosuch",))
        # the combinations the issue found ignored
        self.expect_error("run --expect: refused naming run", "run", model, "--expect", "x.npy",
                          has=("run does not take --expect",))
        self.expect_error("compile --reference: refused naming compile", "compile", model, "--reference",
                          has=("compile does not take --reference",))
        self.expect_error("info --constants bin: refused naming info", "info", model, "--constants", "bin",
                          has=("info does not take --constants",))
        self.expect_error("a flag given a value: exit 2", "check", model, "--reference=yes",
                          has=("--reference",))
        # byte counts with suffixes, against the workspace info --json gives
        cmd, r = self.rc("info", "--json", model)
        ws = json.loads(r[1])["memory"]["workspace"]
        for v in ("10G", "1GiB", "2M", "3MiB", "64K", "64KiB", "64k", str(ws), "%dB" % ws):
            self.expect_ok("info --max-workspace %s: passes (workspace %d)" % (v, ws), "info", model,
                           "--max-workspace", v)
        self.expect_ok("info --max-workspace=%d passes" % ws, "info", model, "--max-workspace=%d" % ws)
        self.expect_error("info --max-workspace %d: exit 3 (a budget)" % (ws - 1), "info", model,
                          "--max-workspace", str(ws - 1), status=3, has=("workspace needs %d" % ws,),
                          prefix="relayc: error: %s: " % model, stdout_empty=False)
        self.expect_error("info --max-constants 1K: exit 3", "info", model, "--max-constants", "1K",
                          status=3, has=("over --max-constants 1024",), stdout_empty=False)
        for bad in ("12Q", "1.5K", "-1", "", "K", "1KB", "99999999999G"):
            self.expect_error("--max-workspace %r: exit 2" % bad, "compile", model, "--max-workspace", bad,
                              has=("--max-workspace",))
        # choices are listed
        self.expect_error("--dump-after nosuch lists the passes", "info", model, "--dump-after", "nosuch",
                          has=("nosuch", "lower", "fold-constants", "fuse"))
        self.expect_error("--constants xyz lists c and bin", "compile", model, "--constants", "xyz",
                          has=("c or bin",))
        self.expect_error("--target xyz lists the targets", "compile", model, "--target", "xyz",
                          has=("generic", "x86-64-avx2", "cortex-m"))
        # --function nope: the module's functions, as its global_var_map_ names them
        byoc = self.fixture("lenet-0.18.0-byoc")
        with open(byoc) as f:
            doc = json.load(f)
        gvmap = doc["nodes"][int(doc["nodes"][doc["root"]]["attrs"]["global_var_map_"])]["keys"]
        self.expect_error("--function nope lists the module's functions (%s)" % ", ".join(gvmap), "info",
                          byoc, "--function", "nope", has=["nope"] + ["'%s'" % k for k in gvmap])
        # relayc ops: one line per operator, its name and then its dtypes in a column of their
        # own; every operator of the TVM 0.18 fixtures relayc checks (meta.json)
        cmd, r = self.rc("ops")
        rows = [re.match(r"^(\S+)( +)(\S.*)$", line) for line in r[1].splitlines()]
        ops = [m.group(1) if m else None for m in rows]
        cmd2, r2 = self.rc("ops", "--json")
        need = set()
        for fx in ("testing_mlp", "torch_small_cnn"):
            with open(os.path.join(self.tvm, fx, "meta.json")) as f:
                need |= set(json.load(f)["ops"])
        t.result(r[0] == 0 and need <= set(ops) and len(ops) == len(set(ops)) > 30,
                 "relayc ops lists every operator of the fixtures (%s)" % ", ".join(sorted(need)),
                 describe(cmd, r))
        dtypes = {"float32", "float64", "int8", "uint8", "int32", "int64", "bool"}
        width = max(len(o or "") for o in ops)
        table = {m.group(1): m.group(3).split() for m in rows if m}
        t.result(all(m and len(m.group(1) + m.group(2)) == width + 2 and
                     set(m.group(3).split()) <= dtypes for m in rows),
                 "relayc ops: NAME, then its dtypes from column %d" % (width + 2), r[1][:3000])
        t.result(table.get("nn.conv2d") == ["float32"] and table.get("qnn.conv2d") == ["int8", "uint8"]
                 and table.get("reshape") == ["float32", "float64", "int8", "uint8", "int32",
                                              "int64", "bool"],
                 "relayc ops: nn.conv2d float32, qnn.conv2d int8 uint8, reshape every dtype",
                 r[1][:3000])
        try:
            j = json.loads(r2[1])
            good = r2[0] == 0 and [(o["name"], o["dtypes"]) for o in j] == \
                [(o, table.get(o)) for o in ops] and all(set(o) == {"name", "dtypes"} for o in j)
        except (ValueError, TypeError, KeyError) as e:
            good = False
            r2 = (r2[0], r2[1], r2[2] + str(e))
        t.result(good, "relayc ops --json: the same list, [{\"name\", \"dtypes\"}]",
                 describe(cmd2, r2))
        cmd3, r3 = self.rc("ops", "--help")
        t.result(r3[0] == 0 and r3[1].startswith("usage: relayc ops [--json]\n") and
                 all(w in r3[1] for w in ("one per line", "dtypes", "QNN", "refused",
                                           '{"name": ..., "dtypes": [...]}')),
                 "relayc ops --help describes the columns, the QNN dtypes and --json",
                 describe(cmd3, r3))
        self.expect_error("relayc ops MODEL: exit 2", "ops", model)

    # ---- silent surprises ----

    def unbound(self):
        """Weights left as inputs: a warning naming --params (an error with --strict), info
        marks them; the names come from the fixture's meta.json, not from relayc."""
        t = self.t
        src = os.path.join(self.tvm, "testing_mlp")
        with open(os.path.join(src, "meta.json")) as f:
            meta = json.load(f)
        weights = [p["name"] for p in meta["params"]]
        d = self.tmpdir("unbound")
        model = os.path.join(d, "mlp.json")
        shutil.copy(os.path.join(src, "model.json"), model)
        shutil.copy(os.path.join(src, "model.params"), os.path.join(d, "mlp.params"))
        out = self.tmpdir("unbound_out")
        cmd, r = self.rc("compile", model, "-o", out)
        lines = r[2].strip().split("\n")
        t.result(r[0] == 0 and len(lines) == 1 and lines[0].startswith("relayc: warning: %s: " % model)
                 and "--params" in lines[0] and "mlp.params" in lines[0] and "%d inputs" % len(weights)
                 in lines[0], "compile without --params, a params file beside: one warning line "
                 "naming --params and the file", describe(cmd, r))
        out2 = self.tmpdir("unbound_strict")
        self.expect_error("... with --strict: exit 2, nothing written", "compile", model, "-o", out2,
                          "--strict", has=("--params", "mlp.params"), empty_dir=out2)
        cmd, r = self.rc("compile", model, "-o", out, "--params", os.path.join(d, "mlp.params"))
        t.result(r[0] == 0 and not r[2].strip(), "with --params: no warning", describe(cmd, r))
        cmd, r = self.rc("info", model)
        marked = [ln.split()[2] for ln in r[1].split("\n") if ln.startswith("input ") and "unbound weight" in ln]
        t.result(sorted(marked) == sorted(weights), "info marks each unbound weight input",
                 "marked %s\nweights %s\n%s" % (marked, weights, describe(cmd, r)))
        cmd, r = self.rc("info", "--json", model)
        j = json.loads(r[1])
        marked = [i["name"] for i in j["inputs"] if i.get("looks_like_weight")]
        t.result(sorted(marked) == sorted(weights), "info --json: looks_like_weight on each", r[1][:1500])
        # no params file beside, but names like weights (fc1.weight, ...)
        d2 = self.tmpdir("unbound_names")
        m2 = os.path.join(d2, "net.json")
        shutil.copy(self.fixture("mlp-0.8.0-params"), m2)
        cmd, r = self.rc("info", m2)
        t.result(r[0] == 0 and "relayc: warning:" in r[2] and "fc1.weight" in r[2] and "--params FILE" in r[2],
                 "weight-like names and no params file: the warning names them", describe(cmd, r))

    def nan_worst(self):
        """check names the element that fails worst; NaN and Inf mismatches come first."""
        t = self.t
        d = os.path.join(self.fx, "misc-0.18.0")
        model = os.path.join(d, "model.json")
        good = ["--input", "x=" + os.path.join(d, "input_x.npy"), "--input", "y=" + os.path.join(d, "input_y.npy"),
                "--expect", os.path.join(d, "expected_0.npy")]
        want = np.load(os.path.join(d, "expected_1.npy"))
        flat = want.reshape(-1)
        cases = [("NaN", np.float32("nan")), ("+inf", np.float32("inf")), ("-inf", np.float32("-inf"))]
        for k, (what, val) in enumerate(cases):
            bad = flat.copy()
            at = (3 + 5 * k) % bad.size
            bad[at] = val
            near = (at + 1) % bad.size      # a passing element, close to its tolerance
            bad[near] = bad[near] + np.float32(0.9 * (1e-5 + 1e-4 * abs(bad[near])))
            path = os.path.join(self.work, "nan_%d.npy" % k)
            np.save(path, bad.reshape(want.shape))
            js = os.path.join(self.work, "nan_%d.json" % k)
            cmd, r = self.rc("check", model, *good, "--expect", path, "--json", js)
            idx = "[%s]" % ", ".join(str(i) for i in np.unravel_index(at, want.shape))
            line = [ln for ln in r[1].split("\n") if ln.startswith("output 1")]
            t.result(r[0] == 1 and line and "MISMATCH: 1 of" in line[0] and "worst at %s" % idx in line[0],
                     "check: a %s expected: 1 mismatch, and the worst element named is it, %s" % (what, idx),
                     describe(cmd, r))
            try:
                with open(js) as f:
                    w = json.load(f)["outputs"][1]["worst"][0]
                t.result(w["index"] == [int(i) for i in np.unravel_index(at, want.shape)] and not w["ok"]
                         and w["expected"] == {"NaN": "nan", "+inf": "inf", "-inf": "-inf"}[what],
                         "check --json: the worst element is the %s mismatch" % what, json.dumps(w))
            except (OSError, ValueError, KeyError, IndexError) as e:
                t.result(False, "check --json with a %s" % what, str(e))

    # ---- CI outputs ----

    def special_outputs(self):
        """An output path that is a pipe (as /dev/null is a device) is written as it is: a
        staged file renamed over it would replace it with a regular file (as root,
        /dev/null itself)."""
        import stat
        import threading
        t = self.t
        model, x, y, e0, e1 = self.misc()
        fifo = os.path.join(self.work, "out.fifo")
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
        reader.start()
        cmd, r = self.rc("check", model, "--input", "x=" + x, "--input", "y=" + y,
                         "--expect", e0, "--expect", e1, "--json", fifo)
        reader.join(30)
        try:
            status = json.loads(got[0].decode())["status"] if got else None
        except ValueError:
            status = None
        t.result(r[0] == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode) and status == "match",
                 "check --json PIPE: the report goes through the pipe, which stays a pipe",
                 "still a pipe: %s, read %r\n%s" % (stat.S_ISFIFO(os.stat(fifo).st_mode),
                                                    got[:1], describe(cmd, r)))

    def ci(self):
        import xml.etree.ElementTree as ET
        t = self.t
        model, x, y, e0, e1 = self.misc()
        ins = ["--input", "x=" + x, "--input", "y=" + y]
        want1 = np.load(e1)
        idx = tuple(s // 2 for s in want1.shape)
        bad = want1.copy()
        bad[idx] += np.float32(1.0)
        pe = os.path.join(self.work, "ci_perturbed.npy")
        np.save(pe, bad)
        js, xmlf, out = (os.path.join(self.work, "ci.json"), os.path.join(self.work, "ci.xml"),
                         os.path.join(self.work, "ci_out", "deeper"))
        cmd, r = self.rc("check", model, *ins, "--expect", e0, "--expect", pe, "--json", js, "--junit", xmlf,
                         "-o", out)
        t.result(r[0] == 1, "check --json --junit -o on a mismatch: exit 1", describe(cmd, r))
        try:
            with open(js) as f:
                j = json.load(f)
            o0, o1 = j["outputs"]
            exp0 = np.load(e0)
            errs = []
            if j["status"] != "mismatch":
                errs.append("status %s" % j["status"])
            if o0["status"] != "ok" or o0["mismatches"] != 0 or o0["shape"] != list(exp0.shape) \
                    or o0["elements"] != exp0.size or o0["dtype"] != str(exp0.dtype):
                errs.append("output 0: %s" % o0)
            if o1["status"] != "mismatch" or o1["mismatches"] != 1 or o1["elements"] != want1.size \
                    or o1["worst"][0]["index"] != list(idx) or abs(o1["max_abs_error"] - 1.0) > 1e-3 \
                    or o1["rtol"] != 1e-4 or o1["atol"] != 1e-5 or o1["expected_file"] != pe:
                errs.append("output 1: %s" % o1)
            if len(o1["worst"]) < 2 or o1["worst"][1]["ok"] is not True:
                errs.append("output 1's worst elements: %s" % o1["worst"])
            t.result(not errs, "check --json: status, shapes, dtypes, tolerances, counts, the worst element",
                     "\n".join(errs))
        except (OSError, ValueError, KeyError) as e:
            t.result(False, "check --json writes the documented JSON", str(e))
        try:
            root = ET.parse(xmlf).getroot()
            cases = root.findall("./testsuite/testcase")
            fails = [c.get("name") for c in cases if c.find("failure") is not None]
            t.result(root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
                     and [c.get("name") for c in cases] == ["output_0", "output_1"] and fails == ["output_1"]
                     and "MISMATCH" in cases[1].find("failure").get("message"),
                     "check --junit: one testcase per output, the mismatch a failure", open(xmlf).read())
        except (OSError, ET.ParseError) as e:
            t.result(False, "check --junit writes JUnit XML", str(e))
        got = [os.path.join(out, "output_%d.npy" % k) for k in (0, 1)]
        ok = all(os.path.isfile(g) for g in got) and \
            np.allclose(np.load(got[0]), np.load(e0), rtol=1e-4, atol=1e-5) and \
            np.allclose(np.load(got[1]), want1, rtol=1e-4, atol=1e-5)
        t.result(ok, "check -o DIR (created) keeps the actual outputs as .npy, matching the reference",
                 str(os.listdir(os.path.dirname(out)) if os.path.isdir(os.path.dirname(out)) else "no dir"))
        cmd, r = self.rc("check", model, *ins, "--expect", e0, "--expect", e1, "--json", "-")
        try:
            t.result(r[0] == 0 and json.loads(r[1])["status"] == "match", "check --json -: only JSON on stdout",
                     describe(cmd, r))
        except ValueError as e:
            t.result(False, "check --json - prints JSON", str(e) + describe(cmd, r))
        cmd, r = self.rc("check", model, *ins, "--expect", e0, "--expect", pe, "-q")
        t.result(r[0] == 1 and r[1] == "", "check -q: nothing on stdout, exit 1 on a mismatch", describe(cmd, r))
        # check DIR / verify DIR on the TVM fixtures
        for fx in ("testing_mlp", "torch_small_cnn"):
            fd = os.path.join(self.tvm, fx)
            for c in ("check", "verify"):
                self.expect_ok("%s %s (the fixture folder)" % (c, fx), c, fd, stdout_has=("output 0: ok",))
        copy = os.path.join(self.work, "fx_copy")
        shutil.copytree(os.path.join(self.tvm, "testing_mlp"), copy)
        e = np.load(os.path.join(copy, "expected_0.npy"))
        e.reshape(-1)[0] += 1
        np.save(os.path.join(copy, "expected_0.npy"), e)
        self.expect_ok("check DIR with a wrong expected_0.npy: exit 1", "check", copy, status=1,
                       stdout_has=("MISMATCH",))
        os.remove(os.path.join(copy, "input_data.npy"))
        self.expect_error("check DIR without input_data.npy: exit 2 naming it", "check", copy,
                          has=("input_data.npy",))
        # .npz inputs
        xa, ya = np.load(x), np.load(y)
        npz = os.path.join(self.work, "in.npz")
        np.savez(npz, x=xa, y=ya)
        self.expect_ok("check --input FILE.npz (every array by name)", "check", model, "--input", npz,
                       "--expect", e0, "--expect", e1)
        xz, yz = os.path.join(self.work, "x.npz"), os.path.join(self.work, "y.npz")
        np.savez(xz, x=xa)
        np.savez(yz, ya)
        self.expect_ok("check --input x=in.npz --input y=y.npz (by name; np.savez's arr_0)", "check", model,
                       "--input", "x=" + npz, "--input", "y=" + yz, "--expect", e0, "--expect", e1)
        comp = os.path.join(self.work, "comp.npz")
        np.savez_compressed(comp, x=xa, y=ya)
        self.expect_error("a compressed .npz: exit 2 saying so", "check", model, "--input", comp,
                          "--expect", e0, "--expect", e1, has=(comp, "compressed"))
        self.expect_error("an .npz without the array: exit 2 naming the arrays", "check", model,
                          "--input", "x=" + npz, "--input", "y=" + xz, "--expect", e0, "--expect", e1,
                          has=("x.npz", "'y'", "'x'"))
        extra = os.path.join(self.work, "extra.npz")
        np.savez(extra, x=xa, y=ya, z=ya)
        self.expect_error("an .npz with an array no input has: exit 2", "check", model, "--input", extra,
                          "--expect", e0, "--expect", e1, has=("'z'",))
        trunc = os.path.join(self.work, "trunc.npz")
        with open(npz, "rb") as f:
            data = f.read()
        with open(trunc, "wb") as f:
            f.write(data[:len(data) // 2])
        self.expect_error("a truncated .npz: exit 2", "check", model, "--input", trunc, "--expect", e0,
                          "--expect", e1, has=(trunc,))

    # ---- report and summary ----

    def summary(self):
        t = self.t
        model = self.fixture("lenet-0.18.0")
        out = self.tmpdir("quiet")
        cmd, r = self.rc("compile", model, "-o", out, "-q", "--report", os.path.join(out, "r.json"))
        t.result(r[0] == 0 and r[1] == "" and os.path.isfile(os.path.join(out, "model.h")),
                 "compile -q: nothing on stdout, the files written", describe(cmd, r))
        cwd = self.tmpdir("report_stdout")
        cmd, r = self.rc("compile", model, "-o", "gen", "--report", "-", cwd=cwd)
        try:
            j = json.loads(r[1])
            t.result(r[0] == 0 and "memory" in j and not os.path.exists(os.path.join(cwd, "-")),
                     "compile --report -: the JSON on stdout, no file named '-'", str(os.listdir(cwd)))
        except ValueError as e:
            t.result(False, "compile --report - prints JSON", str(e) + describe(cmd, r))
        cmd, r = self.rc("run", model, "--input", "data=" + self.fixture("lenet-0.18.0", "input_data.npy"),
                         "-o", out, "-q")
        t.result(r[0] == 0 and r[1] == "" and os.path.isfile(os.path.join(out, "output_0.npy")),
                 "run -q: nothing on stdout, output_0.npy written", describe(cmd, r))
        # a long chain: the summary stays a few short lines
        chain = os.path.join(self.work, "chain.json")
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_chain.py"),
               "--n", "3000", chain]
        r = run(cmd)
        if t.result(r[0] == 0, "gen_chain.py --n 3000", describe(cmd, r)):
            out = self.tmpdir("chain_out")
            cmd, r = self.rc("compile", chain, "-o", out, "--report", os.path.join(out, "r.json"))
            lines = r[1].rstrip("\n").split("\n")
            with open(os.path.join(out, "r.json")) as f:
                steps = len(json.load(f)["kernels"])
            t.result(r[0] == 0 and len(lines) <= 16 and max(len(ln) for ln in lines) <= 160 and steps >= 1000,
                     "compile --report on a %d-kernel chain: %d summary lines of at most %d characters"
                     % (steps, len(lines), max(len(ln) for ln in lines)), r[1][:3000])
            t.result(r[2] == "", "... and nothing on stderr when it is not a terminal", r[2][:500])
            # on a terminal: a progress line, rewritten in place, cleared at the end
            import pty
            master, slave = pty.openpty()
            p = subprocess.Popen(WRAPPER + [self.relayc, "compile", chain, "-o", out, "-q"],
                                 stdout=subprocess.PIPE, stderr=slave)
            os.close(slave)
            err = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
            p.wait(timeout=120)
            os.close(master)
            text = err.decode("utf-8", "replace")
            t.result(p.returncode == 0 and "relayc: %s: pass fold-constants" % chain in text
                     and "planning memory" in text and text.endswith("\r\x1b[K"),
                     "compile on a terminal, %d steps: progress lines on stderr, cleared at the end" % steps,
                     repr(text[-800:]))

    def bad_input(self):
        """Messages that say what is wrong: no type_key, trailing garbage, truncation, a
        params file that is something else."""
        # a params file whose weight is misspelt: the stray name and the missing one
        case = os.path.join(HERE, "golden", "add_scalar_const-0.18.0-fn-params")
        with open(os.path.join(case, "meta.json")) as f:
            params = json.load(f)["params"]
        stray = {p["name"] + "X": np.zeros(p["shape"], p["dtype"]) for p in params}
        ppath = os.path.join(self.work, "stray.params")
        with open(ppath, "wb") as f:
            f.write(rw.save_params(stray))
        self.expect_error("a params file with a misspelt weight names the stray and the missing "
                          "parameter", "info", os.path.join(case, "model.json"), "--params", ppath,
                          has=("'%sX'" % params[0]["name"], "does not hold",
                               "'%s'" % params[0]["name"]))
        model = self.fixture("mlp-0.8.0")
        with open(model, "rb") as f:
            text = f.read()
        doc = json.loads(text)
        k = next(i for i, n in enumerate(doc["nodes"]) if i > 0 and n.get("type_key"))
        del doc["nodes"][k]["type_key"]
        path = os.path.join(self.work, "no_type_key.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        self.expect_error("a node without type_key: the key is missing, at nodes[%d]" % k, "info", path,
                          has=("nodes[%d]" % k, '"type_key"'), prefix="relayc: error: %s: " % path)
        path = os.path.join(self.work, "trailing.json")
        with open(path, "wb") as f:
            f.write(text.rstrip() + b"\n}garbage\n")
        self.expect_error("a document followed by other characters: refused naming the byte", "info", path,
                          has=("byte %d" % (len(text.rstrip()) + 1), "after the document", "}garbage"),
                          prefix="relayc: error: %s: " % path)
        for frac in (0.5, 0.9):
            path = os.path.join(self.work, "cut_%d.json" % int(frac * 10))
            with open(path, "wb") as f:
                f.write(text[:int(len(text) * frac)])
            self.expect_error("a JSON document cut at %d%%: unexpected end of file (truncated?)" % (frac * 100),
                              "info", path, has=("unexpected end of file (truncated?)",),
                              prefix="relayc: error: %s: " % path)
        npy = self.fixture("misc-0.18.0", "input_x.npy")
        self.expect_error("--params FILE.npy: not a TVM params file (it looks like a .npy)", "info", model,
                          "--params", npy, has=("not a TVM params file (it looks like a .npy)",))

    def svg(self):
        """--report-svg: labels in the SVG's text agree with the JSON report; it renders."""
        import xml.etree.ElementTree as ET
        t = self.t
        out = self.tmpdir("svg")
        svg, rj = os.path.join(out, "plan.svg"), os.path.join(out, "plan.json")
        self.expect_ok("compile --report --report-svg (mbv2_block, x86-64-avx2: row buffers)", "compile",
                       self.fixture("mbv2_block-0.18.0"), "--target", "x86-64-avx2", "-o", out, "-q",
                       "--report", rj, "--report-svg", svg)
        try:
            with open(rj) as f:
                r = json.load(f)
            root = ET.parse(svg).getroot()
        except (OSError, ValueError, ET.ParseError) as e:
            t.result(False, "the report and the SVG are readable", str(e))
            return
        ns = "{http://www.w3.org/2000/svg}"
        texts = lambda cls: [e.text or "" for e in root.iter(ns + "text") if e.get("class") == cls]  # noqa: E731
        steps = texts("step")
        bad = [k for k in r["kernels"] if not any(s.startswith("%d %s" % (k["step"], k["relay_op"] or k["op"])[:20])
                                                  for s in steps)]
        t.result(len(steps) == len(r["kernels"]) and not bad,
                 "the SVG names each of the %d steps by its kernel's op" % len(r["kernels"]),
                 "steps %s\nmissing %s" % (steps, bad))
        labels = texts("buffer")
        ws = r["memory"]["workspace_bytes"]
        big = [b for b in r["plan"]["buffers"] if b["values"] and b["size"] * 4 >= ws and b["last"] > b["first"]]
        want = ["%s [%s]" % (b["values"][0]["relay_op"] or b["values"][0]["op"],
                             ", ".join(str(d) for d in b["values"][0]["shape"])) for b in big]
        t.result(big and all(w in labels for w in want),
                 "each large box is labelled with its tensor's op and shape (%d)" % len(big),
                 "labels %s\nwant %s" % (labels, want))
        rows = [b for b in r["plan"]["buffers"] if "scratch_of_json_node" in b]
        hatched = [e for e in root.iter(ns + "rect") if e.get("fill") == "url(#rowbuf)"
                   and "row buffer of nodes[" in (e.findtext(ns + "title") or "")]
        legend = [e for e in root.iter(ns + "g") if e.get("id") == "legend"]
        t.result(rows and len(hatched) == len(rows) and legend and
                 any("row buffer" in (e.text or "") for e in legend[0].iter(ns + "text")),
                 "row buffers (%d in the JSON) are drawn as such, and the legend says so" % len(rows),
                 "hatched %d" % len(hatched))
        png = os.path.join(out, "plan.png")
        cmd = ["rsvg-convert", svg, "-o", png]
        r2 = run(cmd)
        ok = r2[0] == 0 and os.path.isfile(png) and os.path.getsize(png) > 10000
        if ok:
            with open(png, "rb") as f:
                ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
        t.result(ok, "the SVG renders to a PNG (rsvg-convert)", describe(cmd, r2))

    def example_meson(self):
        """examples/meson with a model of two inputs and two outputs (misc-0.18.0)."""
        t = self.t
        if not shutil.which("meson") or not shutil.which("ninja"):
            t.result(False, "examples/meson: meson and ninja are installed (tools/install-deps.sh)")
            return
        model, x, y, e0, e1 = self.misc()
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "meson")
        b = os.path.join(self.work, "example_meson")
        cmd = ["meson", "setup", b, src, "-Drelayc=" + self.relayc, "-Dmodel=" + model, "-Dname=misc",
               "-Dinput=%s,%s" % (x, y), "-Dexpected=%s,%s" % (e0, e1)]
        r = run(cmd)
        if t.result(r[0] == 0, "examples/meson: setup with two inputs and two expected outputs",
                    describe(cmd, r)):
            cmd = ["meson", "test", "-C", b, "-v"]
            r = run(cmd)
            t.result(r[0] == 0 and "ok: every output matches" in r[1],
                     "examples/meson: the two-input, two-output model builds and matches", describe(cmd, r))

    def info(self):
        t = self.t
        model = self.fixture("lenet-0.18.0")
        self.expect_ok("info exits 0 on a supported model; its constant figures say which is which",
                       "info", model, stdout_has=("nn.conv2d", "bytes as stored", "after folding"))
        r = self.expect_ok("info --json exits 0 on a supported model", "info", "--json", model)
        try:
            j = json.loads(r[1])
            t.result(j.get("unsupported") == [] and "memory" in j,
                     "info --json: unsupported is [] and memory is given", r[1][:2000])
        except ValueError as e:
            t.result(False, "info --json prints JSON", str(e))
        # two operators renamed to ones relayc lacks
        with open(model) as f:
            doc = json.load(f)
        renames = {"nn.relu": "nn.correlation", "nn.max_pool2d": "nn.max_pool3d"}
        want = []
        for i, n in enumerate(doc["nodes"]):
            if n.get("type_key") in ("Op", "relay.Op") and n.get("repr_str") in renames:
                old = n["repr_str"]
                n["repr_str"] = renames[old]
                for j, c in enumerate(doc["nodes"]):
                    if c.get("type_key") in ("relay.Call", "Call") and c["attrs"].get("op") == str(i):
                        want.append({"op": renames[old], "node": j})
        t.result(len(want) >= 3, "the edited model calls the renamed operators", str(want))
        bad_model = os.path.join(self.work, "unsupported.json")
        with open(bad_model, "w") as f:
            json.dump(doc, f, indent=2)
        r = self.expect_ok("info exits 1 on unsupported operators", "info", bad_model, status=1,
                           stdout_has=("nn.correlation", "nn.max_pool3d"))
        r = self.expect_ok("info --json exits 1 on unsupported operators", "info", "--json", bad_model,
                           status=1)
        try:
            j = json.loads(r[1])
            got = j.get("unsupported")
            key = lambda u: (u.get("node", -1), u.get("op", ""))
            t.result(isinstance(got, list) and sorted(got, key=key) == sorted(want, key=key),
                     "info --json lists every unsupported call with its node index",
                     "got      %s\nexpected %s" % (got, want))
            ops = j.get("ops", {})
            counts = {}
            for w in want:
                counts[w["op"]] = counts.get(w["op"], 0) + 1
            t.result(all(ops.get(k) == v for k, v in counts.items()) and "nn.relu" not in ops,
                     "info --json counts the unsupported operators in ops",
                     "%s\nexpected %s" % (json.dumps(ops), counts))
            t.result(bool(j.get("inputs")),
                     "info --json still lists the inputs", json.dumps(j.get("inputs")))
        except ValueError as e:
            t.result(False, "info --json prints JSON on unsupported operators", str(e) + r[1][:500])
        out = self.tmpdir("unsupported_out")
        r = self.expect_error("compile exits 2 naming every unsupported operator", "compile",
                              bad_model, "-o", out, has=("nn.correlation", "nn.max_pool3d"),
                              prefix="relayc: error: %s: " % bad_model, empty_dir=out)
        for w in want:
            if "nodes[%d]" % w["node"] not in r[2]:
                t.result(False, "compile's message names nodes[%d]" % w["node"], r[2])
                break
        else:
            t.result(True, "compile's message names every unsupported call's node")
        # a malformed file
        trunc = os.path.join(self.work, "truncated.json")
        with open(model, "rb") as f:
            data = f.read()
        with open(trunc, "wb") as f:
            f.write(data[:len(data) // 2])
        self.expect_error("info exits 2 on a malformed file", "info", trunc,
                          prefix="relayc: error: %s:" % trunc)
        self.expect_error("info --json exits 2 on a malformed file", "info", "--json", trunc,
                          prefix="relayc: error: %s:" % trunc)

    def check(self):
        t = self.t
        model, x, y, e0, e1 = self.misc()
        good = ["--input", "x=" + x, "--input", "y=" + y]
        self.expect_ok("check exits 0 on matching outputs", "check", model, *good, "--expect", e0,
                       "--expect", e1, stdout_has=("output 0", "output 1"))
        # one element perturbed
        want = np.load(e1)
        idx = tuple(s - 1 for s in want.shape)
        bad = want.copy()
        bad[idx] += np.float32(1.0)
        pe = os.path.join(self.work, "perturbed.npy")
        np.save(pe, bad)
        r = self.expect_ok("check exits 1 on one perturbed element", "check", model, *good,
                           "--expect", e0, "--expect", pe, status=1)
        coords = "[%s]" % ", ".join(str(i) for i in idx)
        t.result("MISMATCH" in r[1] and coords in r[1],
                 "check names the output and the worst element %s" % coords, r[1])
        t.result(r[1].count("MISMATCH") == 1, "check reports only the perturbed output as mismatching", r[1])
        # errors
        self.expect_error("check: a missing input: exit 2 naming it", "check", model, "--input", "x=" + x,
                          "--expect", e0, "--expect", e1, has=("y",))
        wrong_shape = os.path.join(self.work, "x_shape.npy")
        np.save(wrong_shape, np.load(x).reshape(-1))
        self.expect_error("check: an input of the wrong shape: exit 2 naming it", "check", model,
                          "--input", "x=" + wrong_shape, "--input", "y=" + y, "--expect", e0,
                          "--expect", e1, has=("'x'",))
        wrong_dtype = os.path.join(self.work, "x_dtype.npy")
        np.save(wrong_dtype, np.load(x).astype(np.float64))
        self.expect_error("check: an input of the wrong dtype: exit 2 naming it", "check", model,
                          "--input", "x=" + wrong_dtype, "--input", "y=" + y, "--expect", e0,
                          "--expect", e1, has=("'x'", "float64"))
        self.expect_error("check: too few --expect files: exit 2", "check", model, *good, "--expect", e0)
        self.expect_error("check: too many --expect files: exit 2", "check", model, *good,
                          "--expect", e0, "--expect", e1, "--expect", e1)
        self.expect_error("check: no --expect: exit 2", "check", model, *good)
        self.expect_error("check: an expected file of the wrong shape: exit 2", "check", model, *good,
                          "--expect", e1, "--expect", e0, has=(e1,))
        self.expect_error("check: an unknown input name: exit 2 naming it", "check", model, *good,
                          "--input", "zz=" + x, "--expect", e0, "--expect", e1, has=("zz",))
        self.expect_error("check: an input given twice: exit 2", "check", model, *good, "--input", "x=" + x,
                          "--expect", e0, "--expect", e1, has=("x",))
        nofile = os.path.join(self.work, "nothere.npy")
        self.expect_error("check: a missing input file: exit 2 naming it", "check", model,
                          "--input", "x=" + nofile, "--input", "y=" + y, "--expect", e0, "--expect", e1,
                          has=(nofile,))
        notnpy = os.path.join(self.work, "notnpy.npy")
        with open(notnpy, "wb") as f:
            f.write(b"this is not an npy file")
        self.expect_error("check: an input file that is not .npy: exit 2 naming it", "check", model,
                          "--input", "x=" + notnpy, "--input", "y=" + y, "--expect", e0, "--expect", e1,
                          has=(notnpy,))
        self.expect_error("check: --input without '=': exit 2", "check", model, "--input", x,
                          "--expect", e0, "--expect", e1)
        # an input file whose path holds '=' (NAME=FILE splits at the first '=' that ends a
        # known input name; a path like runs/seed=1/x.npy is common)
        eqdir = os.path.join(self.work, "seed=1")
        os.makedirs(eqdir)
        shutil.copy(x, eqdir)
        self.expect_ok("check: an input path containing '='", "check", model,
                       "--input", "x=" + os.path.join(eqdir, "input_x.npy"), "--input", "y=" + y,
                       "--expect", e0, "--expect", e1)
        # run -o into a missing directory: created, with its parents
        out = os.path.join(self.work, "missing_dir", "sub")
        self.expect_ok("run: -o a missing directory is created with its parents", "run", model, *good,
                       "-o", out)
        t.result(os.path.isfile(os.path.join(out, "output_1.npy")), "... and holds output_1.npy")

    def cc(self):
        """--cc: the code built by an external compiler and loaded with dlopen. Each command
        runs with TMPDIR pointing at a fresh directory, which must be empty afterwards."""
        t = self.t
        d = os.path.join(self.fx, "lenet-0.18.0")
        model = os.path.join(d, "model.json")
        io = ["--input", "data=" + os.path.join(d, "input_data.npy")]
        expected = os.path.join(d, "expected_0.npy")   # from PyTorch

        def tmpenv(name):
            tmp = self.tmpdir("tmp_" + name)
            return tmp, dict(os.environ, TMPDIR=tmp)

        def left_nothing(desc, tmp):
            t.result(not os.listdir(tmp), desc + ": nothing left in TMPDIR", str(os.listdir(tmp)))

        compilers = ["gcc", "gcc -O3"]
        if shutil.which("clang"):
            compilers.append("clang -O3")
        else:
            t.result(True, "--cc clang # SKIP clang is not installed")
        for k, comp in enumerate(compilers):
            tmp, env = tmpenv("check%d" % k)
            self.expect_ok("check --cc '%s' matches the PyTorch reference" % comp, "check", model, *io,
                           "--expect", expected, "--cc", comp, stdout_has=("output 0: ok",), env=env)
            left_nothing("check --cc '%s'" % comp, tmp)
            out = self.tmpdir("cc_run%d" % k)
            tmp, env = tmpenv("run%d" % k)
            self.expect_ok("run --cc '%s' exits 0" % comp, "run", model, *io, "-o", out, "--cc", comp,
                           env=env)
            left_nothing("run --cc '%s'" % comp, tmp)
            path = os.path.join(out, "output_0.npy")
            if os.path.exists(path):
                got, want = np.load(path), np.load(expected)
                good = got.shape == want.shape and bool(np.all(np.abs(got - want) <=
                                                               1e-5 + 1e-4 * np.abs(want)))
                t.result(good, "run --cc '%s': output_0.npy matches the PyTorch reference" % comp,
                         "got %s\nexpected %s" % (got, want))
            else:
                t.result(False, "run --cc '%s' writes output_0.npy" % comp, str(os.listdir(out)))
        self.cc_target(model, io, expected)
        # errors: one line, exit 2, no outputs, nothing left in TMPDIR
        bad = [("a missing compiler", "/nonexistent/cc", ("--cc: cannot run '/nonexistent/cc'",)),
               ("a compiler that fails silently", "false", ("did not compile with 'false'",
                                                            "exit status 1")),
               ("a compile error", "gcc -include no_such_header.h",
                ("did not compile with 'gcc -include no_such_header.h'", "no_such_header.h",
                 "error")),
               ("a compiler that writes no library", "true", ("does not load",))]
        for k, (what, comp, has) in enumerate(bad):
            out = self.tmpdir("cc_bad%d" % k)
            tmp, env = tmpenv("bad%d" % k)
            self.expect_error("run --cc: %s: exit 2, one line" % what, "run", model, *io, "-o", out,
                              "--cc", comp, has=has, empty_dir=out,
                              prefix="relayc: error: %s: " % model, env=env)
            left_nothing("run --cc: %s" % what, tmp)
            tmp, env = tmpenv("badcheck%d" % k)
            self.expect_error("check --cc: %s: exit 2, one line" % what, "check", model, *io,
                              "--expect", expected, "--cc", comp, has=has, env=env)
            left_nothing("check --cc: %s" % what, tmp)
        self.expect_error("--cc ' ': exit 2", "run", model, *io, "--cc", " ", has=("--cc",))
        self.expect_error("compile --cc: exit 2 (an option of run and check)", "compile", model,
                          "--cc", "gcc", has=("--cc",))
        self.expect_error("--cc with --reference: exit 2", "check", model, *io, "--expect", expected,
                          "--cc", "gcc", "--reference", has=("--cc", "--reference"))
        # SIGTERM while the compiler runs: the compiler's process group is killed, the
        # directory removed, and relayc dies of the signal
        slow = os.path.join(self.work, "slow-cc")
        with open(slow, "w") as f:
            f.write('#!/bin/sh\necho $$ > "$TMPDIR/pid"\nexec sleep 60\n')
        os.chmod(slow, 0o755)
        tmp, env = tmpenv("signal")
        out = self.tmpdir("cc_signal")
        cmd = WRAPPER + [self.relayc, "run", model] + io + ["-o", out, "--cc", slow]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        pidfile, deadline = None, time.time() + 60
        while not pidfile and time.time() < deadline and p.poll() is None:
            for sub in os.listdir(tmp):
                f = os.path.join(tmp, sub, "pid")
                if os.path.exists(f) and os.path.getsize(f) > 0:
                    pidfile = f
            time.sleep(0.05)
        sleeper = None
        if pidfile:
            with open(pidfile) as f:
                sleeper = int(f.read())
        p.send_signal(signal.SIGTERM)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        alive = False
        if sleeper:
            try:
                with open("/proc/%d/stat" % sleeper) as f:
                    alive = f.read().split(") ")[-1][:1] != "Z"
            except OSError:
                alive = False
        t.result(pidfile is not None and p.returncode == -signal.SIGTERM and not alive,
                 "SIGTERM while --cc compiles: relayc dies of it and the compiler with it",
                 "compiler started: %s, exit status %s, compiler still running: %s\n%s"
                 % (pidfile is not None, p.returncode, alive, err.decode("utf-8", "replace")))
        left_nothing("SIGTERM while --cc compiles", tmp)
        t.result(not os.listdir(out), "SIGTERM while --cc compiles: no output", str(os.listdir(out)))

    def cc_target(self, model, io, expected):
        """run / check --cc without --target: the kernels are tuned for what the compiler
        compiles for (its predefined macros), printed as 'target: T'; --target overrides
        it; libtcc keeps generic."""
        t = self.t

        def host(cc):
            """The target a compiler command's macros call for, read here from cc -dM -E."""
            r = subprocess.run(cc.split() + ["-dM", "-E", "-x", "c", "/dev/null"],
                               capture_output=True, text=True)
            m = set(r.stdout.split("\n"))
            if "#define __AVX512F__ 1" in m:
                return "x86-64-avx512"
            if "#define __AVX2__ 1" in m and "#define __FMA__ 1" in m:
                return "x86-64-avx2"
            return "generic"

        def tiles(out):
            return re.findall(r"tile=\S+ \d+x\d+", out)

        native = "gcc -O3 -march=native"
        if "valgrind" in os.environ.get("RELAYC_WRAPPER", "") and host(native) == "x86-64-avx512":
            # valgrind runs no AVX-512 instruction (SIGILL in the loaded model): under it, an
            # AVX2 core's flags, which it runs, on an AVX-512 host
            native = "gcc -O3 -march=x86-64-v3"
        for comp in ("gcc", native):
            want = "target: %s (what '%s' compiles for; --target to choose)" % (host(comp), comp)
            self.expect_ok("check --cc '%s' without --target: %s" % (comp, want), "check", model, *io,
                           "--expect", expected, "--cc", comp, stdout_has=(want, "output 0: ok"))
        r = self.expect_ok("check without --cc: no target line (libtcc: generic)", "check", model,
                           *io, "--expect", expected)
        t.result("target:" not in r[1], "... and prints no 'target:' line", r[1])
        r = self.expect_ok("check --cc -q: nothing printed", "check", model, *io, "--expect", expected,
                           "--cc", "gcc", "-q")
        t.result(r[1] == "", "... stdout empty", r[1])
        # a compiler whose macros say AVX-512 (the code itself is built without it, so that
        # it runs on any core): the x86-64-avx512 blocks, as --target x86-64-avx512 picks
        # them; --target generic overrides the compiler's
        fake = os.path.join(self.work, "avx512-cc")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\nfor a; do [ "$a" = -dM ] && { echo "#define __AVX512F__ 1"; '
                    'exit 0; }; done\nexec gcc "$@"\n')
        os.chmod(fake, 0o755)
        ref = {}
        for tg in ("generic", "x86-64-avx512"):
            _, r = self.rc("info", model, "--target", tg, "--dump-after", "pack")
            ref[tg] = tiles(r[1])
        t.result(ref["generic"] != ref["x86-64-avx512"] and len(ref["generic"]) > 0,
                 "the generic and x86-64-avx512 blocks of LeNet differ (what the next checks tell apart)",
                 str(ref))
        out = self.tmpdir("cc_target")
        r = self.expect_ok("run --cc (AVX-512 macros) without --target", "run", model, *io, "-o", out,
                           "--cc", fake, "--dump-after", "pack",
                           stdout_has=("target: x86-64-avx512 (what '%s' compiles for" % fake,))
        t.result(tiles(r[1]) == ref["x86-64-avx512"], "... runs the x86-64-avx512 blocks",
                 "%s\nvs %s" % (tiles(r[1]), ref["x86-64-avx512"]))
        got, want = np.load(os.path.join(out, "output_0.npy")), np.load(expected)
        t.result(bool(np.all(np.abs(got - want) <= 1e-5 + 1e-4 * np.abs(want))),
                 "... and its output matches the PyTorch reference", "got %s\nexpected %s" % (got, want))
        r = self.expect_ok("run --cc (AVX-512 macros) --target generic", "run", model, *io, "-o", out,
                           "--cc", fake, "--target", "generic", "--dump-after", "pack")
        t.result(tiles(r[1]) == ref["generic"] and "target:" not in r[1],
                 "... runs the generic blocks, no 'target:' line", r[1])

    def compile(self):
        t = self.t
        src = self.fixture("mlp-0.8.0")
        d = self.tmpdir("names")
        model = os.path.join(d, "my-model.v1.json")
        shutil.copy(src, model)
        out = self.tmpdir("names_out")
        self.expect_ok("compile my-model.v1.json", "compile", model, "-o", out)
        files = sorted(os.listdir(out))
        want = ["my_model_v1.c", "my_model_v1.h", "my_model_v1_constants.c"]
        t.result(files == want, "the default name is the file stem made a C identifier", str(files))
        if files == want:
            with open(os.path.join(out, "my_model_v1.h")) as f:
                h = f.read()
            t.result("int my_model_v1_run(" in h and "#define MY_MODEL_V1_WORKSPACE_SIZE" in h,
                     "the header uses the default name (my_model_v1_run, MY_MODEL_V1_...)", h[:1500])
            cmd = ["gcc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-c", "my_model_v1.c",
                   "my_model_v1_constants.c"]
            r = run(cmd, cwd=out)
            t.result(r[0] == 0, "the default-named library compiles", describe(cmd, r))
        for bad in ("1abc", "a-b", "", "a" * 65, "caf\u00e9", "a b"):
            out = self.tmpdir("badname_%d" % len(os.listdir(self.work)))
            self.expect_error("--name %r: exit 2, nothing written" % bad, "compile", src, "-o", out,
                              "--name", bad, empty_dir=out)
        out = self.tmpdir("okname")
        self.expect_ok("--name of 64 characters is accepted", "compile", src, "-o", out, "--name", "a" * 64)
        missing = os.path.join(self.work, "no", "such", "dir")
        self.expect_ok("-o a missing directory: created with its parents", "compile", src, "-o", missing)
        t.result(os.path.isfile(os.path.join(missing, "model.h")), "... and holds model.h")
        # the example of compile --help, on a fresh tree
        fresh = self.tmpdir("fresh")
        shutil.copy(self.fixture("lenet-0.18.0"), os.path.join(fresh, "lenet.json"))
        self.expect_ok("compile --help's example works on a fresh tree", "compile", "lenet.json",
                       "--constants", "bin", "-o", "gen", "--depfile", "gen/lenet.d", cwd=fresh)
        t.result(sorted(os.listdir(os.path.join(fresh, "gen"))) == ["lenet.bin", "lenet.c", "lenet.d",
                                                                     "lenet.h"],
                 "... writing gen/lenet.{h,c,bin,d}", str(os.listdir(fresh)))
        failing = os.path.join(self.work, "budget_dir")
        self.expect_error("-o a missing directory and a failing budget: exit 3, nothing created",
                          "compile", src, "-o", failing, "--max-workspace", "16", status=3)
        t.result(not os.path.exists(failing), "... the directory is not created")
        afile = os.path.join(self.work, "a_file")
        with open(afile, "w") as f:
            f.write("x")
        self.expect_error("-o a regular file: exit 2", "compile", src, "-o", afile, has=(afile,))
        out = self.tmpdir("limits")
        self.expect_error("--max-workspace over the plan: exit 3, nothing written", "compile", src, "-o",
                          out, "--max-workspace", "16", has=("--max-workspace",), empty_dir=out, status=3)
        self.expect_error("--max-constants over the model: exit 3, nothing written", "compile", src,
                          "-o", out, "--max-constants", "1K", has=("--max-constants",), empty_dir=out,
                          status=3)
        # params model: -o . default, and --params missing
        p = os.path.join(self.fx, "mlp-0.8.0-params")
        out = self.tmpdir("params_cwd")
        self.expect_ok("compile without -o writes into the current directory", "compile",
                       os.path.join(p, "model.json"), "--params", os.path.join(p, "model.params"),
                       "--name", "cwd_net", cwd=out)
        t.result(sorted(os.listdir(out)) == ["cwd_net.c", "cwd_net.h", "cwd_net_constants.c"],
                 "... exactly NAME.h, NAME.c, NAME_constants.c", str(os.listdir(out)))
        nop = os.path.join(self.work, "nothere.params")
        self.expect_error("a missing params file: exit 2 naming it", "info",
                          os.path.join(p, "model.json"), "--params", nop, has=(nop,))
        # two libraries in one program: nothing clashes
        both = self.tmpdir("two_models")
        self.expect_ok("compile lenet as net_a (c)", "compile", self.fixture("lenet-0.18.0"), "-o", both,
                       "--name", "net_a")
        self.expect_ok("compile mlp as net_b (bin)", "compile", src, "-o", both, "--name", "net_b",
                       "--constants", "bin")
        with open(os.path.join(both, "main.c"), "w") as f:
            f.write('#include "net_a.h"\n#include "net_b.h"\n#include "net_a.h"\n'
                    'int main(void)\n{\n'
                    '    return net_a_run_generic(0, 0, 0, 0) == NET_A_ERR_NULL &&\n'
                    '           net_b_run_generic(0, 0, 0, 0) == NET_B_ERR_NULL ? 0 : 1;\n}\n')
        cmd = ["gcc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "main.c", "net_a.c",
               "net_a_constants.c", "net_b.c", "-lm", "-o", "both"]
        r = run(cmd, cwd=both)
        if t.result(r[0] == 0, "two models link into one program", describe(cmd, r)):
            r = run(["./both"], cwd=both)
            t.result(r[0] == 0, "... and both return ERR_NULL for NULL arguments", describe(["./both"], r))

    # ---- --profile: the time of each kernel call ----

    PROFILE_ROW = re.compile(r"^ +(\d+) +(\d+) +(\d+\.\d) +(\d+\.\d\d)  (.+?) +(\w+ \[[\d, ]*\]) +(.+)$")

    @staticmethod
    def run_calls(source, name):
        """The kernel calls NAME_run makes, from NAME.c: (node, Relay calls) of each "/* nK: ...
        -> TYPE SHAPE */" comment in NAME_run followed by its NAME_PROF(k, 0) mark (not by
        "a view: no code" or "no code: its operands were written in place")."""
        body = source.split("\nint %s_run(" % name, 1)[1].split("\n}\n", 1)[0]
        lines = body.split("\n")
        calls = []
        for i, line in enumerate(lines):
            m = re.match(r"^    /\* n(\d+): (.*) -> (\w+ \[[\d, ]*\]) \*/$", line)
            if m and re.match(r"^    %s_PROF\(\d+, 0\);$" % name.upper(), lines[i + 1]):
                calls.append((int(m.group(1)), m.group(2), m.group(3)))
        return calls

    def profile_rows(self, desc, text, calls):
        """Checks run --profile's table against the calls of NAME_run; returns its rows."""
        t = self.t
        rows = [m.groups() for m in map(self.PROFILE_ROW.match, text.split("\n")) if m]
        t.result(len(rows) == len(calls) and len(calls) > 0,
                 "%s: a row per kernel call of the emitted run function (%d)" % (desc, len(calls)),
                 text[-3000:])
        got = [(int(r[1]), r[6], r[5]) for r in rows]
        t.result([int(r[0]) for r in rows] == list(range(len(rows))) and got == calls,
                 "%s: the rows in call order, each with its node, Relay calls and output" % desc,
                 "got %s\nwant %s" % (got[:5], calls[:5]))
        us = [float(r[2]) for r in rows]
        pct = sum(float(r[3]) for r in rows)
        t.result(all(x >= 0 for x in us) and abs(pct - 100) <= 0.005 * len(rows) + 1e-9,
                 "%s: times are not negative, the percentages sum to 100 (%.2f)" % (desc, pct),
                 text[-2000:])
        by_op = text.split("by operator", 1)[-1]
        t.result("by operator" in text and "nn.conv2d" in by_op, "%s: then the totals by operator" % desc,
                 text[-1000:])
        return rows

    def workspace_type(self):
        """NAME_workspace has NAME_WORKSPACE_SIZE bytes at NAME_WORKSPACE_ALIGN, whichever
        branch of its #if a compiler takes: checked at compile time (a member placed after
        a char lands on a multiple of the alignment) and at run time (NAME_run accepts it,
        next to static buffers of odd sizes that would misplace an 8-aligned one)."""
        t = self.t
        d = self.tmpdir("workspace_type")
        self.expect_ok("compile mlp-0.8.0 --name m", "compile", self.fixture("mlp-0.8.0"), "-o", d,
                       "--name", "m")
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write(r"""#include <stddef.h>
#include <string.h>
#include "m.h"
struct probe { char c; m_workspace w; };
typedef char aligned_enough[offsetof(struct probe, w) % M_WORKSPACE_ALIGN == 0 ? 1 : -1];
typedef char big_enough[sizeof(m_workspace) >= M_WORKSPACE_SIZE ? 1 : -1];
static char pad1[3];
static m_workspace ws1;
static char pad2[5];
static m_workspace ws2;
static float in[M_INPUT0_SIZE], out[M_OUTPUT0_SIZE];
int main(void)
{
    aligned_enough *a = NULL;
    big_enough *b = NULL;
    memset(pad1, 1, sizeof pad1);
    memset(pad2, 1, sizeof pad2);
    return (a != NULL) + (b != NULL) + (m_run(in, out, ws1.bytes) != M_OK) * 4
           + (m_run(in, out, ws2.bytes) != M_OK) * 8;
}
""")
        strict = ["-Wall", "-Wextra", "-pedantic", "-Werror"]
        builds = [["gcc", "-std=c99"] + strict, ["gcc", "-std=c11"] + strict]
        if shutil.which("clang"):
            builds += [["clang", "-std=c99"] + strict, ["clang", "-std=c11"] + strict]
        if shutil.which("tcc"):
            builds.append(["tcc", "-Wall"])
        for cc in builds:
            cmd = cc + ["main.c", "m.c", "m_constants.c", "-lm", "-o", "ws"]
            r = run(cmd, cwd=d)
            if t.result(r[0] == 0 and not r[2].strip(), "%s: m_workspace is %d-aligned and "
                        "M_WORKSPACE_SIZE long (compile-time check, no warning)"
                        % (" ".join(cc[:2]), 16), describe(cmd, r)):
                r = run(["./ws"], cwd=d)
                t.result(r[0] == 0, "%s: m_run accepts static m_workspace buffers"
                         % " ".join(cc[:2]), describe(["./ws"], r))
        if shutil.which("g++"):
            with open(os.path.join(d, "main.cc"), "w") as f:
                f.write('#include "m.h"\nstatic m_workspace ws;\n'
                        'static_assert(alignof(m_workspace) >= M_WORKSPACE_ALIGN, "align");\n'
                        'int main() { return ws.bytes[0]; }\n')
            cmd = ["g++", "-std=c++11"] + strict + ["-c", "main.cc", "-o", "main_cc.o"]
            r = run(cmd, cwd=d)
            t.result(r[0] == 0 and not r[2].strip(), "g++ -std=c++11: m.h declares an aligned "
                     "m_workspace in C++ too", describe(cmd, r))

    def profile(self):
        t = self.t
        sq = os.path.join(self.tvm, "testing_squeezenet")
        ref = self.tmpdir("profile_lib")
        self.expect_ok("compile testing_squeezenet", "compile", sq, "-o", ref, "--name", "sq")
        with open(os.path.join(ref, "sq.c")) as f:
            calls = self.run_calls(f.read(), "sq")
        plain = self.tmpdir("profile_plain")
        self.expect_ok("run testing_squeezenet", "run", sq, "-o", plain)
        out = self.tmpdir("profile_run")
        r = self.expect_ok("run --profile exits 0", "run", sq, "-o", out, "--profile",
                           stdout_has=("profile: %d kernel calls, libtcc, 1 run:" % len(calls),))
        rows = self.profile_rows("run --profile (libtcc)", r[1], calls)
        cat = os.path.join(HERE, "models", "cases", "concat_not_in_place")
        rc = self.expect_ok("run --profile of concatenates that copy", "run", cat, "-o",
                            self.tmpdir("profile_cat"), "--profile")
        t.result(any(m.group(5) == "rk_copy x2" and "concatenate" in m.group(7)
                     for m in map(self.PROFILE_ROW.match, rc[1].split("\n")) if m),
                 "... a concatenate's copies are one call, 'rk_copy x2'", rc[1][-3000:])
        with open(os.path.join(plain, "output_0.npy"), "rb") as f, \
                open(os.path.join(out, "output_0.npy"), "rb") as g:
            t.result(f.read() == g.read(), "run --profile writes the same output_0.npy as run")
        self.expect_ok("check --profile: the output matches TVM's", "check", sq, "--profile", "-q",
                       stdout_has=("profile: ",))
        # --cc, --repeat, and the report of check --json
        cmd, r = self.rc("check", sq, "--cc", "gcc", "--profile", "--repeat", "3", "--json", "-")
        try:
            rep = json.loads(r[1])
        except ValueError:
            rep = {}
        prof = rep.get("profile", {})
        pc = prof.get("calls", [])
        t.result(r[0] == 0 and rep.get("status") == "match" and prof.get("runs") == 3 and
                 prof.get("compiler") == "gcc" and
                 [(c["node"], c["relay"], c["output"]) for c in pc] == calls and
                 all(c["us"] >= 0 for c in pc) and abs(sum(c["percent"] for c in pc) - 100) < 1e-6 and
                 abs(sum(c["us"] for c in pc) - prof.get("kernels_us", -1)) < 1e-3,
                 "check --cc gcc --profile --repeat 3 --json -: the profile of every call, only JSON "
                 "on stdout", describe(cmd, r))
        r = self.expect_ok("run --cc gcc --profile --repeat 3 -q: the table only", "run", sq, "-o", out,
                           "--cc", "gcc", "--profile", "--repeat", "3", "-q",
                           stdout_has=("profile: %d kernel calls, gcc, median of 3 runs:" % len(calls),))
        self.profile_rows("run --cc gcc --profile --repeat 3", r[1], calls)
        t.result(not r[1].startswith(out), "... -q: no output paths", r[1][:200])
        # what is refused
        self.expect_error("compile --profile: refused naming compile", "compile", sq, "--profile",
                          has=("compile does not take --profile",))
        self.expect_error("info --repeat: refused naming info", "info", sq, "--repeat", "2",
                          has=("info does not take --repeat",))
        self.expect_error("run --repeat without --profile: exit 2", "run", sq, "--repeat", "2",
                          has=("--repeat N needs --profile",))
        for bad in ("0", "-1", "x", "2.5", ""):
            self.expect_error("--repeat %r: exit 2" % bad, "run", sq, "--profile", "--repeat", bad,
                              has=("--repeat",))
        self.expect_error("--profile --reference: exit 2", "check", sq, "--profile", "--reference",
                          has=("--profile", "--reference"))
        self.profile_library(ref, calls)

    def profile_library(self, d, calls):
        """The emitted library built with -DSQ_PROFILE: warning-free, the hook called around
        each kernel call in order, the outputs those of sq_run; without it, the same object
        code as the library with every profiling line taken out."""
        t = self.t
        with open(os.path.join(d, "sq.c")) as f:
            src = f.read()
        # the library without its profiling code: the #ifdef SQ_PROFILE blocks and the marks
        bare, state = [], None      # state: in an #ifdef SQ_PROFILE block, or in its #else
        for line in src.split("\n"):
            if line.startswith("#ifdef SQ_PROFILE"):
                state = "ifdef"
            elif state and line == "#else":
                state = "else"
            elif state and line == "#endif":
                state = None
            elif state != "ifdef" and not re.match(r"^    SQ_PROF\(\d+, [01]\);$", line):
                bare.append(line)
        os.makedirs(os.path.join(d, "bare"))
        with open(os.path.join(d, "bare", "sq.c"), "w") as f:
            f.write("\n".join(bare))
        objs = []
        for where in (d, os.path.join(d, "bare")):
            cmd = ["gcc", "-std=c99", "-O2", "-I", d, "-c", "sq.c", "-o", "sq.o"]
            r = run(cmd, cwd=where)
            t.result(r[0] == 0, "gcc -c %s" % os.path.join(where, "sq.c"), describe(cmd, r))
            cmd = ["objdump", "-d", "-j", ".text", "sq.o"]
            objs.append(run(cmd, cwd=where)[1].split("\n", 3)[-1])
        t.result(objs[0] == objs[1] and len(objs[0]) > 1000,
                 "without SQ_PROFILE the code is that of the library without its profiling lines")
        with open(os.path.join(d, "main.c"), "w") as f:
            f.write(r'''#include "sq.h"
#include <stdio.h>
#include <string.h>
typedef struct { int next, bad, open; } Ctx;
static void hook(void *ctx, const sq_profile_call *c, int end)
{
    Ctx *x = ctx;
    if (c != &sq_profile_calls[x->next] || c->index != x->next || end != x->open)
        x->bad = 1;
    if (end)
        x->next++;
    x->open = !end;
}
static sq_workspace ws;
static float in[SQ_INPUT0_SIZE], a[SQ_OUTPUT0_SIZE], b[SQ_OUTPUT0_SIZE];
int main(void)
{
    Ctx x = { 0, 0, 0 };
    int i;
    for (i = 0; i < SQ_INPUT0_SIZE; i++)
        in[i] = (float)(i % 13) / 13.0f - 0.5f;
    if (sq_run(in, a, ws.bytes) || sq_run_profiled(in, b, ws.bytes, hook, &x) || memcmp(a, b, sizeof a))
        return 1;
    for (i = 0; i < SQ_PROFILE_CALLS; i++)
        printf("%d %d %s|%s|%s\n", sq_profile_calls[i].index, sq_profile_calls[i].node,
               sq_profile_calls[i].kernel, sq_profile_calls[i].relay, sq_profile_calls[i].output);
    return x.bad || x.next != SQ_PROFILE_CALLS || x.open ? 2 : 0;
}
''')
        builds = [["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror"]]
        if shutil.which("clang"):
            builds.append(["clang", "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror"])
        if shutil.which("tcc"):
            builds.append(["tcc", "-Wall"])
        for cc in builds:
            cmd = cc + ["-DSQ_PROFILE", "main.c", "sq.c", "sq_constants.c", "-lm", "-o", "prof"]
            r = run(cmd, cwd=d)
            if not t.result(r[0] == 0 and not r[2].strip(), "%s -DSQ_PROFILE: builds without a warning"
                            % cc[0], describe(cmd, r)):
                continue
            r = run(["./prof"], cwd=d)
            listed = [(int(m.group(2)), m.group(3), m.group(4)) for m in
                      (re.match(r"^(\d+) (\d+) [^|]+\|([^|]*)\|(.*)$", line) for line in r[1].split("\n"))
                      if m]
            t.result(r[0] == 0 and listed == calls,
                     "%s: sq_run_profiled calls the hook before and after each call, in order, with "
                     "sq_profile_calls describing NAME_run's calls; its outputs are sq_run's" % cc[0],
                     describe(["./prof"], r))


# The sections, in two parts of about equal time under valgrind (meson runs them as two
# tests, side by side; there each relayc command takes about half a second): alone, part 1
# about 100 s and part 2 about 85 s.
PARTS = {
    "1": ["general", "grammar", "unbound", "nan_worst", "ci", "profile"],
    "2": ["special_outputs", "summary", "bad_input", "svg", "example_meson", "info", "check", "cc",
          "workspace_type", "compile"],
}


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] not in PARTS):
        print("usage: cli_test.py RELAYC FIXTURES_DIR [%s] (every section, or one part)"
              % "|".join(PARTS), file=sys.stderr)
        return 2
    parts = [sys.argv[3]] if len(sys.argv) == 4 else sorted(PARTS)
    with common.work_dir("relayc-cli-") as work:
        c = Cli(os.path.abspath(sys.argv[1]), sys.argv[2], work)
        for p in parts:
            for section in PARTS[p]:
                getattr(c, section)()
    return c.t.finish()


if __name__ == "__main__":
    sys.exit(main())
