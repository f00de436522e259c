#!/usr/bin/python3
"""Runs one model case through every relayc path and prints TAP.

Usage: /usr/bin/python3 tests/models/run_case.py RELAYC CASE_DIR [--tmp DIR]

CASE_DIR holds model.json, optional model.params, input_<name>.npy, expected_<k>.npy and
meta.json (inputs, outputs, ops, optional constants, tolerance): the layout of the shared
fixtures and of tests/golden. Checks:

  info     `relayc info --json` reports meta's inputs, outputs, ops (and constants when meta
           has them); the workspace is within 10% of the peak of live intermediates; when
           meta has "elided" ({relay op: count}), `compile --report` names that many kernels
           whose data the memory plan wrote in place (no code).
  check    `relayc check` (libtcc) and `relayc check --reference` pass with meta's tolerance;
           `relayc run -o DIR` writes output_<k>.npy that match in numpy.
  compile  --constants c and bin: the sources compile with gcc and clang (-std=c99 -Wall
           -Wextra -pedantic -Werror -O2) and tcc (no diagnostics); the header compiles alone
           (gcc, clang, g++) and links from C++; the header's macros agree with meta;
           tests/models/harness.c, linked with the library, runs it with guarded, canary-
           filled buffers, twice, checks the status codes (NULL, misalignment, corrupted
           blob), and its outputs match. A golden case builds one constants mode (by its
           name) and, of a model's dialects, only the newest TVM version's builds and runs
           the emitted C (the others' C differs in the node indices its strings quote).
  repeat   two compiles give byte-identical files; compiling again into the same directory
           leaves every file alone (same inode and mtime).

A failed comparison names the output, the worst element's coordinates, got, expected and
the tolerance. Use --tmp DIR to keep the work files (DIR/<case>/).
"""
import argparse
import functools
import zlib
import json
import os
import re
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
from common import SANITIZER_MARKS, WRAPPER, describe, sanitizer_report  # noqa: E402

HARNESS_C = os.path.join(HERE, "harness.c")
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2"]
TIMEOUT = 120
run = functools.partial(common.run, timeout=TIMEOUT)


def compare(got, want, rtol, atol, label):
    """None when got matches want (|got-want| <= atol + rtol*|want|, NaN only equals NaN,
    infinities exactly), else a message naming the worst element."""
    if tuple(got.shape) != tuple(want.shape):
        return "%s: shape %s, expected %s" % (label, list(got.shape), list(want.shape))
    if got.dtype != want.dtype:
        return "%s: dtype %s, expected %s" % (label, got.dtype, want.dtype)
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(g - w)
        bound = atol + rtol * np.abs(w)
        gn, wn = np.isnan(g), np.isnan(w)
        good = (gn & wn) | (~gn & ~wn & ((g == w) | (diff <= bound)))
        if good.all():
            return None
        bad = ~good
        ratio = np.where(bad, diff / bound, -1.0)
        ratio[bad & np.isnan(ratio)] = np.inf
    idx = np.unravel_index(int(np.argmax(ratio)), g.shape) if g.ndim else ()
    return ("%s: %d of %d elements differ; worst at %s: got %r, expected %r, |diff| %.4g "
            "over tolerance %.4g (rtol %g, atol %g)"
            % (label, int(bad.sum()), g.size, list(int(i) for i in idx), float(g[idx]),
               float(w[idx]), float(diff[idx]), float(bound[idx]), rtol, atol))


class Case:
    def __init__(self, relayc, case_dir, work):
        self.relayc = relayc
        self.dir = case_dir
        self.work = work
        with open(os.path.join(case_dir, "meta.json")) as f:
            self.meta = json.load(f)
        self.model = os.path.join(case_dir, "model.json")
        params = os.path.join(case_dir, "model.params")
        self.params = ["--params", params] if os.path.exists(params) else []
        tol = self.meta.get("tolerance", {})
        self.rtol = float(tol.get("rtol", 1e-4))
        self.atol = float(tol.get("atol", 1e-5))
        self.inputs = self.meta["inputs"]
        self.outputs = self.meta["outputs"]
        self.input_files = [os.path.join(case_dir, "input_%s.npy" % i["name"]) for i in self.inputs]
        self.expected_files = [os.path.join(case_dir, "expected_%d.npy" % k)
                               for k in range(len(self.outputs))]
        self.expected = [np.load(f) for f in self.expected_files]
        self.info = None
        self.tap = common.Tap(diag_lines=60)

    # ---- relayc ----

    def relayc_cmd(self, cmd, *args):
        return WRAPPER + [self.relayc, cmd, self.model] + self.params + list(args)

    def relayc_ok(self, desc, cmd):
        """Runs a relayc command that must exit 0 without a sanitizer report."""
        r = run(cmd)
        good = r[0] == 0 and not sanitizer_report(r[2])
        self.tap.result(good, desc, None if good else describe(cmd, r))
        return r if good else None

    def io_args(self):
        # the inputs under plain names: a case's file names hold the input names, which may
        # contain '=' (the separator of --input; cli_test.py tests such paths on their own)
        d = os.path.join(self.work, "inputs")
        os.makedirs(d, exist_ok=True)
        a = []
        for k, (i, f) in enumerate(zip(self.inputs, self.input_files)):
            plain = os.path.join(d, "in%d.npy" % k)
            shutil.copyfile(f, plain)
            a += ["--input", "%s=%s" % (i["name"], plain)]
        for f in self.expected_files:
            a += ["--expect", f]
        return a + ["--rtol", repr(self.rtol), "--atol", repr(self.atol)]

    # ---- a. info ----

    def check_info(self):
        t = self.tap
        r = self.relayc_ok("info --json exits 0", self.relayc_cmd("info", "--json"))
        if not r:
            return
        try:
            info = json.loads(r[1])
        except ValueError as e:
            t.result(False, "info --json prints JSON", "%s\n%s" % (e, r[1][:2000]))
            return
        self.info = info
        got_in = [{"name": i.get("name"), "shape": i.get("shape"), "dtype": i.get("dtype")}
                  for i in info.get("inputs", [])]
        want_in = [{"name": i["name"], "shape": i["shape"], "dtype": i["dtype"]} for i in self.inputs]
        t.result(got_in == want_in, "info: inputs (name, shape, dtype, in order)",
                 "got      %s\nexpected %s" % (json.dumps(got_in), json.dumps(want_in)))
        got_out = [{"shape": o.get("shape"), "dtype": o.get("dtype")} for o in info.get("outputs", [])]
        want_out = [{"shape": o["shape"], "dtype": o["dtype"]} for o in self.outputs]
        t.result(got_out == want_out, "info: outputs (shape, dtype)",
                 "got      %s\nexpected %s" % (json.dumps(got_out), json.dumps(want_out)))
        got_ops = info.get("ops", {})
        want_ops = self.meta.get("ops", {})
        diff = sorted(set(got_ops.items()) ^ set(want_ops.items()))
        t.result(got_ops == want_ops, "info: ops (name -> count)",
                 "differences (op, count): %s\ngot      %s\nexpected %s"
                 % (diff, json.dumps(got_ops, sort_keys=True), json.dumps(want_ops, sort_keys=True)))
        mc = self.meta.get("constants")
        if isinstance(mc, dict) and "count" in mc and "bytes" in mc:
            gc = info.get("constants", {})
            good = gc.get("count") == mc["count"] and gc.get("bytes") == mc["bytes"]
            t.result(good, "info: constants count and bytes",
                     "got count %s bytes %s, expected count %s bytes %s"
                     % (gc.get("count"), gc.get("bytes"), mc["count"], mc["bytes"]))
        else:
            t.skip("info: constants count and bytes", "meta.json has none")
        t.result(info.get("unsupported") == [], "info: nothing unsupported",
                 "unsupported: %s" % info.get("unsupported"))
        mem = info.get("memory")
        if not isinstance(mem, dict):
            t.result(False, "info: memory", "no memory object in %s" % r[1][:1000])
            return
        ws, peak = mem.get("workspace", -1), mem.get("peak_live", -1)
        t.result(isinstance(ws, (int, float)) and 0 <= ws <= 1.10 * peak,
                 "info: workspace <= 1.10 * peak_live",
                 "workspace %s bytes, peak_live %s bytes (ratio %s)"
                 % (ws, peak, "%.3f" % (ws / peak) if peak else "inf"))
        cmd = self.relayc_cmd("info")
        self.relayc_ok("info (text) exits 0", cmd)
        if isinstance(self.meta.get("elided"), dict):
            self.check_elided(self.meta["elided"])

    def check_elided(self, want):
        """meta "elided" {relay op: count}: the kernels (views aside) that `compile --report`
        says need no code, as the memory plan wrote their data in place."""
        r = self.relayc_ok("compile --report - exits 0",
                           self.relayc_cmd("compile", "-q", "-o", os.path.join(self.work, "elided"),
                                           "--report", "-"))
        if not r:
            return
        got = {}
        for k in json.loads(r[1]).get("kernels", []):
            if k.get("elided") and k.get("op") != "reshape":
                got[k["relay_op"]] = got.get(k["relay_op"], 0) + 1
        self.tap.result(got == want, "report: kernels with no code (data written in place)",
                        "got %s, expected %s" % (json.dumps(got, sort_keys=True),
                                                 json.dumps(want, sort_keys=True)))

    # ---- b, c. check, run, check --reference ----

    def check_runs(self):
        t = self.tap
        args = self.io_args()
        self.relayc_ok("check (libtcc) passes", self.relayc_cmd("check", *args))
        self.relayc_ok("check --reference passes", self.relayc_cmd("check", *args, "--reference"))
        out = os.path.join(self.work, "run")
        os.makedirs(out)
        run_args = [a for a in args[:2 * len(self.inputs)]]
        r = self.relayc_ok("run -o DIR exits 0", self.relayc_cmd("run", *run_args, "-o", out))
        if not r:
            return
        want_files = sorted("output_%d.npy" % k for k in range(len(self.outputs)))
        got_files = sorted(os.listdir(out))
        t.result(got_files == want_files, "run writes exactly output_<k>.npy",
                 "files: %s, expected %s" % (got_files, want_files))
        problems = []
        for k, want in enumerate(self.expected):
            path = os.path.join(out, "output_%d.npy" % k)
            if not os.path.exists(path):
                problems.append("output %d: %s missing" % (k, path))
                continue
            msg = compare(np.load(path), want, self.rtol, self.atol, "output %d" % k)
            if msg:
                problems.append(msg)
        t.result(not problems, "run: output_<k>.npy match expected_<k>.npy (numpy)",
                 "\n".join(problems))

    # ---- d, e. compile ----

    def header_macros(self, text):
        return dict(re.findall(r"^#define\s+(\w+)\s+(\S+)", text, re.M))

    def check_header(self, mode, name, upper, hdr):
        t = self.tap
        m = self.header_macros(hdr)
        want = {
            upper + "_NUM_INPUTS": str(len(self.inputs)),
            upper + "_NUM_OUTPUTS": str(len(self.outputs)),
            upper + "_OK": "0", upper + "_ERR_NULL": "1", upper + "_ERR_ALIGN": "2",
        }
        for k, i in enumerate(self.inputs):
            want["%s_INPUT%d_SIZE" % (upper, k)] = str(int(np.prod(i["shape"], dtype=np.int64)))
        for k, o in enumerate(self.outputs):
            want["%s_OUTPUT%d_SIZE" % (upper, k)] = str(int(np.prod(o["shape"], dtype=np.int64)))
        if self.info and isinstance(self.info.get("memory"), dict):
            want[upper + "_WORKSPACE_SIZE"] = str(self.info["memory"]["workspace"])
        if mode == "bin":
            want[upper + "_ERR_CONSTANTS"] = "3"
            want[upper + "_ERR_CHECKSUM"] = "4"
        bad = ["%s is %s, expected %s" % (k, m.get(k, "(not defined)"), v)
               for k, v in sorted(want.items()) if m.get(k) != v]
        align = m.get(upper + "_WORKSPACE_ALIGN", "")
        if not (align.isdigit() and int(align) >= 16 and int(align) & (int(align) - 1) == 0):
            bad.append("%s_WORKSPACE_ALIGN is %s, expected a power of two >= 16" % (upper, align))
        if mode == "bin" and (upper + "_CONSTANTS_SIZE") not in m:
            bad.append("%s_CONSTANTS_SIZE not defined" % upper)
        if mode == "c" and (upper + "_CONSTANTS_SIZE") in m:
            bad.append("%s_CONSTANTS_SIZE defined in c mode" % upper)
        # the run signature: in0.., out0.., workspace[, constants]
        sig = re.search(r"^int %s_run\(([^)]*)\);" % re.escape(name), hdr, re.M)
        if not sig:
            bad.append("no 'int %s_run(...);' declaration" % name)
        else:
            params = [p.strip() for p in sig.group(1).split(",")]
            names = [re.split(r"[\s*]+", p)[-1] for p in params]
            want_names = (["in%d" % k for k in range(len(self.inputs))] +
                          ["out%d" % k for k in range(len(self.outputs))] + ["workspace"] +
                          (["constants"] if mode == "bin" else []))
            if names != want_names:
                bad.append("%s_run parameters %s, expected %s" % (name, names, want_names))
            for p, n in zip(params, names):
                if n.startswith("in") and not p.startswith("const "):
                    bad.append("%s_run parameter %s is not const" % (name, p))
        for sym in ("_run_generic(", "_inputs[", "_outputs[", "_tensor_info;"):
            if name + sym not in hdr:
                bad.append("%s%s not declared" % (name, sym.rstrip("[(;")))
        t.result(not bad, "%s: header macros and declarations agree with meta" % mode, "\n".join(bad))
        return m

    def cc(self, desc, cmd, cwd, quiet=False):
        """A compiler run that must succeed; with quiet, also without any diagnostic."""
        r = run(cmd, cwd=cwd)
        good = r[0] == 0 and (not quiet or not (r[1].strip() or r[2].strip()))
        self.tap.result(good, desc, None if good else describe(cmd, r))
        return good

    def compile_mode(self, mode, build=True):
        t = self.tap
        name = "model" if mode == "c" else "net_bin"   # c: the default name from model.json
        upper = name.upper()
        d = os.path.join(self.work, mode + "_a")
        os.makedirs(d)
        opts = ["--constants", mode, "-o", d] + ([] if mode == "c" else ["--name", name])
        cmd = self.relayc_cmd("compile", *opts)
        r = self.relayc_ok("%s: compile exits 0" % mode, cmd)
        if not r:
            return
        const_file = name + "_constants.c" if mode == "c" else name + ".bin"
        files = sorted([name + ".h", name + ".c", const_file])
        got = sorted(os.listdir(d))
        if not t.result(got == files, "%s: compile writes exactly %s" % (mode, ", ".join(files)),
                        "directory holds %s" % got):
            return
        t.result(r[1].startswith(name + ": "), "%s: compile prints a summary naming the library" % mode,
                 "stdout: %r" % r[1])
        with open(os.path.join(d, name + ".h")) as f:
            hdr = f.read()
        macros = self.check_header(mode, name, upper, hdr)
        if mode == "bin":
            size = os.path.getsize(os.path.join(d, const_file))
            t.result(macros.get(upper + "_CONSTANTS_SIZE") == str(size),
                     "bin: CONSTANTS_SIZE is the size of %s" % const_file,
                     "%s_CONSTANTS_SIZE %s, file %d bytes" % (upper, macros.get(upper + "_CONSTANTS_SIZE"), size))
        if not build:
            return d, name, opts, files
        srcs = [name + ".c"] + ([const_file] if mode == "c" else [])
        # build in a copy, so the compile directory keeps only relayc's files
        out_dir, d = d, os.path.join(self.work, mode + "_build")
        os.makedirs(d)
        for f in files:
            shutil.copy(os.path.join(out_dir, f), d)
        objs = {}
        for compiler in ("gcc", "clang"):
            objs[compiler] = []
            for s in srcs:
                o = "%s.%s.o" % (s[:-2], compiler)
                if self.cc("%s: %s %s" % (mode, compiler, s),
                           [compiler] + CFLAGS + ["-c", s, "-o", o], d):
                    objs[compiler].append(o)
                elif run([compiler] + [f for f in CFLAGS if f != "-Werror"] +
                         ["-c", s, "-o", o], cwd=d)[0] == 0:
                    objs[compiler].append(o)  # warnings only: still test what it computes
        objs["tcc"] = []
        for s in srcs:
            o = "%s.tcc.o" % s[:-2]
            if self.cc("%s: tcc -c %s (no warnings)" % (mode, s), ["tcc", "-Wall", "-c", s, "-o", o],
                       d, quiet=True):
                objs["tcc"].append(o)
        # the header alone (twice: the include guard), in C and C++
        with open(os.path.join(d, "header_only.c"), "w") as f:
            f.write('#include "%s.h"\n#include "%s.h"\n' % (name, name))
        for compiler in ("gcc", "clang"):
            self.cc("%s: %s.h alone with %s" % (mode, name, compiler),
                    [compiler, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror",
                     "-fsyntax-only", "header_only.c"], d)
        self.cc("%s: %s.h alone with g++" % (mode, name),
                ["g++", "-x", "c++", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                 "header_only.c"], d)
        if mode == "c" and len(objs["gcc"]) == len(srcs):
            # extern "C": a C++ caller links against the C objects
            with open(os.path.join(d, "cxx_main.cpp"), "w") as f:
                f.write('#include "%s.h"\nint main() {\n'
                        '    return %s_run_generic(0, 0, 0, 0) == %s_ERR_NULL && '
                        '%s_outputs[0].rank >= 0 ? 0 : 1;\n}\n' % (name, name, upper, name))
            if self.cc("c: a C++ program links against the library (extern \"C\")",
                       ["g++", "-Wall", "-Wextra", "-Werror", "cxx_main.cpp"] + objs["gcc"] +
                       ["-lm", "-o", "cxx_main"], d):
                r = run(["./cxx_main"], cwd=d)
                t.result(r[0] == 0, "c: the C++ program gets ERR_NULL from NULL arguments",
                         describe(["./cxx_main"], r))
        # the harness: c mode with gcc (and the tcc objects), bin mode with clang and ASan+UBSan
        # (the library compiled again with them: reads past a buffer show too)
        builds = [("gcc", "gcc")] if mode == "c" else [("clang", "clang-asan")]
        if mode == "c":
            builds.append(("gcc", "tcc"))
        objs["clang-asan"] = srcs if len(objs["clang"]) == len(srcs) else []
        for linker, objset in builds:
            if len(objs[objset]) != len(srcs):
                t.skip("%s: harness with %s objects" % (mode, objset), "the library did not compile")
                continue
            self.run_harness(mode, name, upper, d, linker, objset, objs[objset])
        return out_dir, name, opts, files

    def run_harness(self, mode, name, upper, d, linker, objset, objs):
        t = self.tap
        label = "%s: harness (%s objects)" % (mode, objset)
        exe = "harness_%s" % objset
        defs = ["-DMODEL_HEADER=\"%s.h\"" % name, "-DMODEL=%s" % name]
        sufs = ["WORKSPACE_SIZE", "WORKSPACE_ALIGN", "NUM_INPUTS", "NUM_OUTPUTS", "OK",
                "ERR_NULL", "ERR_ALIGN"]
        if mode == "bin":
            defs.append("-DMODEL_BIN")
            sufs += ["CONSTANTS_SIZE", "ERR_CONSTANTS", "ERR_CHECKSUM"]
        defs += ["-DH_%s=%s_%s" % (s, upper, s) for s in sufs]
        # at -O0: harness.c is the test's own code, and the sanitized build of the library's
        # sources makes the same checks (every access the C makes) in a tenth of the compile
        # time of -O2 (the suite's longest step); the optimized builds of the library are
        # the gcc, clang and tcc objects above
        flags, san = [f for f in CFLAGS if f != "-O2"] + ["-O0"], []
        if objset.endswith("-asan"):
            san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                   "-fno-omit-frame-pointer", "-DHARNESS_SANITIZE"]
        cmd = ([linker] + flags + san + ["-I.", "-I" + d] + defs + [HARNESS_C] + objs +
               ["-lm", "-o", exe])
        if not self.cc("%s builds" % label, cmd, d):
            return
        io = os.path.join(d, "io_" + objset)
        os.makedirs(io)
        for k, f in enumerate(self.input_files):
            a = np.load(f)
            np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tofile(
                os.path.join(io, "in%d.raw" % k))
        cmd = ["./" + exe, io] + ([name + ".bin"] if mode == "bin" else [])
        env = None
        if san:
            env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
                       UBSAN_OPTIONS="print_stacktrace=1")
        r = run(cmd, cwd=d, env=env)
        lines = r[1].split("\n")
        fails = [l for l in lines if l.startswith("FAIL ")]
        fails += [l for l in r[2].split("\n") if any(m in l for m in SANITIZER_MARKS)]
        t.result(r[0] == 0 and not fails, "%s runs: guards, canaries, two runs, status codes" % label,
                 "\n".join(fails) + "\n" + describe(cmd, r) if fails else describe(cmd, r))
        # the descriptors
        want = []
        for k, i in enumerate(self.inputs):
            want.append(("input", k, i["name"], i["dtype"], i["shape"]))
        for k, o in enumerate(self.outputs):
            want.append(("output", k, "", o["dtype"], o["shape"]))
        got = []
        for l in lines:
            f = l.split(" ")
            if len(f) == 7 and f[0] in ("input", "output"):
                nm = "" if f[2] == "-" else bytes.fromhex(f[2]).decode("utf-8", "replace")
                rank = int(f[4])
                dims = [int(x) for x in f[5].split(",")]
                shape = dims[:rank]
                size = {"float32": 4, "float64": 8, "int32": 4, "int64": 8}.get(f[3], 1)
                if int(f[6]) != int(np.prod(shape, dtype=np.int64)) * size or any(dims[rank:]):
                    shape = ("bad bytes or padding", dims, f[6])
                got.append((f[0], int(f[1]), nm, f[3], shape))
        if objset != "tcc":
            t.result(got == want, "%s: descriptors NAME_inputs / NAME_outputs agree with meta" % mode,
                     "got      %s\nexpected %s" % (got, want))
        if r[0] not in (0, 1):
            return
        problems = []
        for k, (o, e) in enumerate(zip(self.outputs, self.expected)):
            path = os.path.join(io, "out%d.raw" % k)
            if not os.path.exists(path):
                problems.append("output %d: not written" % k)
                continue
            raw = np.fromfile(path, dtype=e.dtype.newbyteorder("<"))
            if raw.size != e.size:
                problems.append("output %d: %d elements, expected %d" % (k, raw.size, e.size))
                continue
            msg = compare(raw.reshape(e.shape).astype(e.dtype), e, self.rtol, self.atol, "output %d" % k)
            if msg:
                problems.append(msg)
        t.result(not problems, "%s outputs match expected" % label, "\n".join(problems))

    def check_repeat(self, mode, d, name, opts, files):
        t = self.tap
        d2 = os.path.join(self.work, mode + "_b")
        os.makedirs(d2)
        opts2 = [x if x != d else d2 for x in opts]
        cmd = self.relayc_cmd("compile", *opts2)
        if not self.relayc_ok("%s: second compile exits 0" % mode, cmd):
            return
        differ = []
        for f in files:
            p2 = os.path.join(d2, f)
            if not os.path.exists(p2):
                differ.append("%s: missing in the second directory" % f)
                continue
            with open(os.path.join(d, f), "rb") as a, open(p2, "rb") as b:
                x, y = a.read(), b.read()
            if x != y:
                at = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), min(len(x), len(y)))
                differ.append("%s differs at byte %d (%d vs %d bytes)" % (f, at, len(x), len(y)))
        extra = sorted(set(os.listdir(d2)) - set(files))
        if extra:
            differ.append("second directory also holds %s" % extra)
        t.result(not differ, "%s: two compiles are byte-identical" % mode, "\n".join(differ))
        before = {f: os.stat(os.path.join(d, f)) for f in files}
        if not self.relayc_ok("%s: compile again into the same directory" % mode,
                              self.relayc_cmd("compile", *opts)):
            return
        changed = []
        for f in files:
            s = os.stat(os.path.join(d, f))
            b = before[f]
            if (s.st_ino, s.st_mtime_ns, s.st_size) != (b.st_ino, b.st_mtime_ns, b.st_size):
                changed.append("%s: inode %d -> %d, mtime %d -> %d" % (f, b.st_ino, s.st_ino,
                                                                    b.st_mtime_ns, s.st_mtime_ns))
        t.result(not changed, "%s: recompiling leaves the files untouched (mtime, inode)" % mode,
                 "\n".join(changed))

    def run_all(self):
        missing = [f for f in [self.model] + self.input_files + self.expected_files
                   if not os.path.exists(f)]
        if missing:
            self.tap.result(False, "case files present", "missing: %s" % missing)
            return self.tap.finish()
        self.check_info()
        self.check_runs()
        if os.environ.get("RELAYC_TEST_QUICK"):
            # the sanitizer run: relayc itself is what is checked there; the C compilers
            # and harness runs of the emitted code are the normal run's job
            print("# RELAYC_TEST_QUICK: emitted-code compiles left to the normal run")
            return self.tap.finish()
        modes = ("c", "bin")
        name = os.path.basename(self.dir.rstrip("/"))
        build = True
        if os.path.basename(os.path.dirname(self.dir.rstrip("/"))) == "golden":
            # the golden cases (hundreds, one per operator and dialect) take one constants
            # mode each, alternating by name; the fixtures and stress cases take both
            modes = (modes[zlib.crc32(name.encode()) % 2],)
            print("# golden case: constants mode %s (the other golden cases cover the other)" % modes[0])
            newest = newest_dialect(self.dir)
            if newest != name:
                # the dialects of one model differ in what relayc reads, checked above
                # (info, check, run); the C it emits differs only in the node indices
                # its comments and profile names quote, so the C compilers and the
                # harness take the newest dialect's case alone
                build = False
                print("# golden case: the emitted C built and run in %s" % newest)
        for mode in modes:
            res = self.compile_mode(mode, build)
            if res:
                self.check_repeat(mode, *res)
        return self.tap.finish()


GOLDEN_NAME = re.compile(r"(.*)-(\d+)\.(\d+)\.(\d+)(-.*)?$")


def newest_dialect(case_dir):
    """Of the golden cases of case_dir's model (the folders beside it named
    MODEL-VERSION[-fn][-params]), the name of the newest TVM version's (the first of
    its suffixes in sorted order)."""
    case_dir = case_dir.rstrip("/")
    name = os.path.basename(case_dir)
    m = GOLDEN_NAME.match(name)
    if not m:
        return name
    best = None
    for sib in sorted(os.listdir(os.path.dirname(case_dir))):
        s = GOLDEN_NAME.match(sib)
        if s and s.group(1) == m.group(1):
            key = (-int(s.group(2)), -int(s.group(3)), -int(s.group(4)), sib)
            if best is None or key < best[0]:
                best = (key, sib)
    return best[1] if best else name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("relayc")
    ap.add_argument("case_dir")
    ap.add_argument("--tmp", help="keep the work files in TMP/<case>")
    a = ap.parse_args()
    case_dir = os.path.abspath(a.case_dir)
    relayc = os.path.abspath(a.relayc)
    print("# case %s" % case_dir)
    keep = None
    if a.tmp:
        keep = os.path.join(os.path.abspath(a.tmp), os.path.basename(case_dir.rstrip("/")))
        shutil.rmtree(keep, ignore_errors=True)
    with common.work_dir("relayc-case-", keep) as work:
        return Case(relayc, case_dir, work).run_all()


if __name__ == "__main__":
    sys.exit(main())
