#!/usr/bin/python3
"""The relayc command line: options, exit codes, messages, default names. TAP.

Usage: /usr/bin/python3 tests/cli_test.py RELAYC FIXTURES_DIR

Exit codes: 0 success, 1 'check' mismatch or 'info' on unsupported operators, 2 any error
(one line on stderr, 'relayc: error: ...'). Uses the fixtures lenet-0.18.0, mlp-0.8.0,
mlp-0.8.0-params and misc-0.18.0 (copied or edited in a temporary directory). The --cc
tests use gcc, and clang when it is installed.
"""
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

import common
from common import WRAPPER, sanitizer_report

run = functools.partial(common.run, timeout=120)
describe = functools.partial(common.describe, out_lines=15, err_lines=15)


class Cli:
    def __init__(self, relayc, fixtures, work):
        self.relayc = relayc
        self.fx = fixtures
        self.work = work
        self.t = common.Tap()

    def fixture(self, name, f="model.json"):
        return os.path.join(self.fx, name, f)

    def rc(self, *args, **kw):
        cmd = WRAPPER + [self.relayc] + list(args)
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
                     **kw):
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
        if r[1].strip():
            bad.append("something on stdout")
        if empty_dir is not None and os.listdir(empty_dir):
            bad.append("files written to %s: %s" % (empty_dir, os.listdir(empty_dir)))
        self.t.result(not bad, desc, "\n".join(bad) + "\n" + describe(cmd, r))
        return r

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

    def info(self):
        t = self.t
        model = self.fixture("lenet-0.18.0")
        self.expect_ok("info exits 0 on a supported model", "info", model, stdout_has=("nn.conv2d",))
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
        renames = {"nn.relu": "nn.lrn", "nn.max_pool2d": "nn.max_pool3d"}
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
                           stdout_has=("nn.lrn", "nn.max_pool3d"))
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
                              bad_model, "-o", out, has=("nn.lrn", "nn.max_pool3d"),
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
        d = os.path.join(self.fx, "misc-0.18.0")
        model = os.path.join(d, "model.json")
        x, y = os.path.join(d, "input_x.npy"), os.path.join(d, "input_y.npy")
        e0, e1 = os.path.join(d, "expected_0.npy"), os.path.join(d, "expected_1.npy")
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


def main():
    if len(sys.argv) != 3:
        print("usage: cli_test.py RELAYC FIXTURES_DIR", file=sys.stderr)
        return 2
    with common.work_dir("relayc-cli-") as work:
        c = Cli(os.path.abspath(sys.argv[1]), sys.argv[2], work)
        c.general()
        c.info()
        c.check()
        c.cc()
        c.compile()
    return c.t.finish()


if __name__ == "__main__":
    sys.exit(main())
