"""What test_tuned.py and test_qtuned.py share: the targets, the command line, the
comparison of outputs, and building and running a harness (tuned_harness.c or
qtuned_harness.c, with tuned_common.h) over every compiled model. And what the suites
that compile their cases one by one to read the C share (test_frames.py,
test_contract.py, test_vectorise.py, test_inline.py): compile_case and run_suite.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import relaywriter as rw  # noqa: E402
TARGETS = ["generic", "x86-64-avx2", "x86-64-avx512", "cortex-m"]
# tcc too: relayc run and check build with libtcc, and firmware may use any C99 compiler.
# --target generic's blocks of Tile.sub run whole where RC_SIMD is 1 (a core with vector
# registers: gcc and clang here) and in passes where it is 0 (tcc): the sanitized build
# forces the passes and tcc the whole blocks, so each side is built by two compilers.
# The sanitized build is at -O0 without -g: the same checks, and its compiles a fifth of
# what -O1 -g cost (the suite's longest builds); --keep and -g by hand for a line number.
# clang at -march=native: the clang-only code of the emitted C (the x86-64-avx512 tuning
# attribute where the host has AVX-512, the x86-64-avx2 blocks' clang loops) built and run.
DEFAULT_CCS = ["gcc -O0 -fsanitize=address,undefined -fno-sanitize-recover=all -DRC_SIMD=0",
               "gcc -O3 -march=native", "clang -O2 -march=native", "tcc -DRC_SIMD=1"]


def parse_args(argv, doc, only=False):
    """RELAYC [--cc CC ...] [--keep DIR] (and [--only SUBSTR] when only): returns
    (relayc, keep, ccs, only), ccs the installed ones of DEFAULT_CCS when no --cc is given;
    None after printing what is wrong."""
    if not argv:
        print(doc)
        return None
    relayc = os.path.abspath(argv[0])
    keep, sub, ccs = None, None, []
    names = ("--keep", "--cc", "--only") if only else ("--keep", "--cc")
    i = 1
    while i < len(argv):
        if argv[i] in names and i + 1 < len(argv):
            if argv[i] == "--keep":
                keep = argv[i + 1]
            elif argv[i] == "--cc":
                ccs.append(argv[i + 1])
            else:
                sub = argv[i + 1]
            i += 2
        else:
            print("unknown argument " + argv[i])
            return None
    if not ccs:
        ccs = [c for c in DEFAULT_CCS if shutil.which(c.split()[0])]
        tccs = [c for c in ccs if c.split()[0] == "tcc"]
        if os.environ.get("RELAYC_TEST_QUICK") and tccs:
            # the sanitizer run: relayc itself (every case and target compiled, the
            # reference interpreter) is what is checked there; the emitted code is built
            # with tcc alone, the other compilers are the normal run's job
            print("# RELAYC_TEST_QUICK: the emitted code built with tcc only")
            ccs = tccs
    return relayc, keep, ccs, sub


def work_subdirs(work):
    """WORK/src (the emitted C) and WORK/io (the harness's inputs and outputs), made."""
    src = os.path.join(work, "src")
    io = os.path.join(work, "io")
    os.makedirs(src, exist_ok=True)
    os.makedirs(io, exist_ok=True)
    return src, io


def compare(got, want, tolerance=None):
    """None when got matches want, both flattened, else a description. With tolerance
    (atol, rtol): |got - want| <= atol + rtol * |want| in float64 (NaN matches nothing);
    without: the same dtype and every element equal."""
    if tolerance:
        atol, rtol = tolerance
        got = np.asarray(got, np.float64).ravel()
        want = np.asarray(want, np.float64).ravel()
        if got.shape != want.shape:
            return "shape %s vs %s" % (got.shape, want.shape)
        bad = ~(np.abs(got - want) <= atol + rtol * np.abs(want))
    else:
        got = np.asarray(got).ravel()
        want = np.asarray(want).ravel()
        if got.shape != want.shape or got.dtype != want.dtype:
            return "shape/dtype %s %s vs %s %s" % (got.shape, got.dtype, want.shape, want.dtype)
        bad = got != want
    if bad.any():
        i = int(np.argmax(bad))
        return "%d of %d differ; first at %d: got %r, want %r" % (
            int(bad.sum()), got.size, i, got[i], want[i])
    return None


def write_models_c(path, table):
    """The table of models for the harness (tuned_common.h): one row per (ci, target, name,
    input sizes in bytes, output size in bytes), then a row of NULLs."""
    with open(path, "w") as f:
        f.write('#include "tuned_common.h"\n')
        for _, _, name, _, _ in table:
            f.write("int %s_run_generic(const void *const *, void *const *, void *, "
                    "const void *);\n" % name)
        for _, _, name, _, _ in table:
            f.write('#include "src/%s.h"\n' % name)
        f.write("const TunedModel tuned_models[] = {\n")
        for _, _, name, ins, outn in table:
            f.write('    { "%s", %s_run_generic, %s_WORKSPACE_SIZE, %d, 1, { %s }, { %d } },\n' % (
                name, name, name.upper(), len(ins), ", ".join(str(s) for s in ins), outn))
        f.write("    { NULL, NULL, 0, 0, 0, { 0 }, { 0 } }\n};\n")
        f.write("const int tuned_model_count = %d;\n" % len(table))


def check_harness(tap, harness, work, io, sources, table, ccs, cases, what, check):
    """Builds the harness (a file of this folder) with each of ccs (-std=c99 -Wall -Wextra
    -pedantic -Werror) over sources (the emitted C) and the table (write_models_c), runs it
    on io, and gives one TAP result per model of the table and compiler, '<case> <target>
    [<cc>]: <what>': a pass when the harness says ok and check(ci, name) returns None, else
    its diagnostic. A build that fails is one failed '... : build' result per model."""
    models_c = os.path.join(work, "models.c")
    write_models_c(models_c, table)
    harness = os.path.join(HERE, harness)
    # the constants files (NAME_constants.c: arrays only, half the sources) are compiled by
    # the first compiler without sanitizers and their objects linked by the others without;
    # a sanitized build compiles its own (ASan's redzones around each array)
    shared = {}
    for k, cc in enumerate(ccs):
        exe = os.path.join(work, "harness_%d" % k)
        flags = cc.split() + ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror",
                              "-D_POSIX_C_SOURCE=200809L", "-I", work]
        sanitized = any(f.startswith("-fsanitize") for f in cc.split())
        reuse = {} if sanitized else shared
        objs = [reuse.get(s) or os.path.join(work, "o%d_%d.o" % (k, j))
                for j, s in enumerate(sources)]
        todo = [(s, o) for s, o in zip(sources, objs) if s not in reuse]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            results = list(pool.map(
                lambda so: subprocess.run(flags + ["-c", so[0], "-o", so[1]], capture_output=True,
                                          text=True), todo))
        r = next((x for x in results if x.returncode), None)
        if r is None and not sanitized:
            for s, o in todo:
                if s.endswith("_constants.c"):
                    shared[s] = o
        if r is None:
            r = subprocess.run(flags + ["-I", HERE, "-o", exe, harness, models_c] + objs + ["-lm"],
                               capture_output=True, text=True)
        if r.returncode:
            for ci, t, name, _, _ in table:
                tap.result(False, "%s %s [%s]: build" % (cases[ci].name, t, cc), r.stderr[:3000])
            continue
        r = subprocess.run([exe, io], capture_output=True, text=True)
        status = {}
        for line in r.stdout.splitlines():
            nm, _, rest = line.partition(" ")
            status[nm] = rest
        for ci, t, name, _, _ in table:
            desc = "%s %s [%s]: %s" % (cases[ci].name, t, cc, what)
            st = status.get(name)
            if st != "ok":
                tap.result(False, desc, (st or "no result") + "\n" + r.stderr[-2000:])
                continue
            bad = check(ci, name)
            tap.result(bad is None, desc, bad)


def compile_case(relayc, case, target, work, tap, report=False):
    """Writes case's model (TVM 0.18's dialect) to WORK/NAME/model.json, NAME being the
    case's and the target's names, and compiles it there with relayc --target target
    --name NAME (and --report WORK/NAME/report.json): (the directory, NAME), or None after
    a failed TAP result."""
    name = re.sub(r"\W", "_", "%s_%s" % (case.name, target))
    cdir = os.path.join(work, name)
    os.makedirs(cdir, exist_ok=True)
    model = os.path.join(cdir, "model.json")
    with open(model, "w") as f:
        f.write(rw.save_json(rw.Module({"main": case.func}), version="0.18.0"))
    cmd = common.WRAPPER + [relayc, "compile", model, "--target", target, "--name", name,
                            "-o", cdir]
    if report:
        cmd += ["--report", os.path.join(cdir, "report.json")]
    r = common.run(cmd)
    if not tap.ok(r[0] == 0, "%s: relayc compile" % name, common.describe(cmd, r)):
        return None
    return cdir, name


def run_suite(argv, doc, prefix, cases, targets, results, check):
    """The main of such a suite (argv: RELAYC [--keep DIR]): check(relayc, case, target,
    work, tap) for every (case, target) of cases (a list of cases or tuples starting with
    one) and targets, each printing `results` TAP results; returns the exit status."""
    if not argv:
        print(doc)
        return 2
    relayc = os.path.abspath(argv[0])
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    tap = common.Tap()
    tap.plan(len(cases) * len(targets) * results)
    with common.work_dir(prefix, keep) as work:
        for case in cases:
            for t in targets:
                check(relayc, case, t, work, tap)
    return tap.finish()
