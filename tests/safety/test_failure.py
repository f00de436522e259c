#!/usr/bin/python3
"""Failure safety of relayc's outputs. TAP.

Usage: /usr/bin/python3 tests/safety/test_failure.py RELAYC FIXTURES_DIR ENOSPC_SHIM.so

A command that fails part-way must leave no partial output file and no temporary file,
and must never replace a good earlier output: compile writes NAME.h, NAME.c and the
constants (and --report/--depfile files), run writes output_K.npy, and either all of
them are replaced or none is. A full disk is simulated with an LD_PRELOAD shim that makes
write() fail with ENOSPC after N bytes (enospc_shim.c), at every interesting N; an error
after the emitted files are written (a --depfile in a missing directory) and a SIGTERM
while a file is being written are checked too. RELAYC_WRAPPER (the meson test setup
'valgrind') is put before each relayc command.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402
from common import WRAPPER  # noqa: E402

TAP = common.Tap(diag_lines=30)
result = TAP.result


def env_with(shim=None, **kw):
    env = dict(os.environ)
    if shim:
        # the shim goes after the sanitizer runtime; ASan must not insist on coming first
        env["LD_PRELOAD"] = (env.get("LD_PRELOAD", "") + " " + shim).strip()
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":")
    for k, v in kw.items():
        env[k] = str(v)
    return env


def run(args, env=None):
    """A relayc command, args[0] being relayc, under RELAYC_WRAPPER."""
    return common.run(WRAPPER + args, env=env)


def snapshot(d):
    """name -> (sha256, mtime_ns) of every file in d."""
    out = {}
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        with open(p, "rb") as f:
            out[n] = (hashlib.sha256(f.read()).hexdigest(), os.stat(p).st_mtime_ns)
    return out


def snapshot_tree(d):
    """Like snapshot, directories included (as names)."""
    out = {}
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        out[n] = "dir" if os.path.isdir(p) else snapshot_file(p)
    return out


def snapshot_file(p):
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def diff(a, b):
    lines = []
    for n in sorted(set(a) | set(b)):
        if a.get(n) != b.get(n):
            lines.append("%s: %s -> %s" % (n, a.get(n, "absent"), b.get(n, "absent")))
    return "\n".join(lines) or "(same)"


def one_error_line(err):
    lines = [l for l in err.split("\n") if l.strip()]
    return len(lines) == 1 and lines[0].startswith("relayc: error: ")


def main():
    relayc, fixtures, shim = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    with common.work_dir("relayc_failure_") as work:
        src = os.path.join(fixtures, "misc-0.18.0")
        old_model = os.path.join(work, "old.json")
        new_model = os.path.join(work, "new.json")
        shutil.copy(os.path.join(src, "model.json"), old_model)
        # the new model differs in every emitted file: an input renamed (header and
        # source), a constant changed (constants)
        with open(old_model) as f:
            doc = json.load(f)
        for n in doc["nodes"]:
            if n.get("type_key") == "runtime.String" and n.get("repr_str") == "y":
                n["repr_str"] = "y_renamed"
        b = doc["b64ndarrays"][0]
        doc["b64ndarrays"][0] = b[:-8] + ("AAAA" if b[-8:-4] != "AAAA" else "BBBB") + b[-4:]
        with open(new_model, "w") as f:
            json.dump(doc, f)

        for mode in ("c", "bin"):
            out = os.path.join(work, "out_" + mode)
            os.mkdir(out)
            base = ["compile", "-o", out, "--name", "m", "--constants", mode]
            r = run([relayc] + base + [old_model])
            if not result(r[0] == 0, "%s: the first compile succeeds" % mode, r[2]):
                continue
            good = snapshot(out)
            # how many bytes the new compile writes: from a compile elsewhere
            probe = os.path.join(work, "probe_" + mode)
            os.mkdir(probe)
            r = run([relayc, "compile", "-o", probe, "--name", "m", "--constants", mode, new_model])
            sizes = [os.path.getsize(os.path.join(probe, n))
                     for n in ("m.bin" if mode == "bin" else "m_constants.c", "m.c", "m.h")]
            total = sum(sizes)
            budgets = sorted({0, 1, 100, sizes[0] - 1, sizes[0], sizes[0] + 1,
                              sizes[0] + sizes[1] // 2, sizes[0] + sizes[1], total - 1})
            for n in budgets:
                if n < 0 or n >= total:
                    continue
                r = run([relayc] + base + [new_model],
                        env=env_with(shim, RELAYC_SHIM_ENOSPC_AFTER=n))
                now = snapshot(out)
                result(r[0] == 2 and one_error_line(r[2]) and "No space left" in r[2],
                       "%s: disk full after %d of %d bytes: exit 2, one error line" % (mode, n, total),
                       "exit %d\n%s" % (r[0], r[2]))
                result(now == good, "%s: disk full after %d bytes: the earlier output is intact, "
                       "no temporaries" % (mode, n), diff(good, now))
            r = run([relayc] + base + [new_model])
            now = snapshot(out)
            result(r[0] == 0 and sorted(now) == sorted(good) and
                   all(now[k][0] != good[k][0] for k in good),
                   "%s: with room on the disk every file is replaced" % mode,
                   r[2] + diff(good, now))

        # an error after the emitted files are staged: nothing is replaced
        out = os.path.join(work, "out_c")
        good = snapshot(out)
        r = run([relayc, "compile", "--help"])
        if "--depfile" in r[1]:
            r = run([relayc, "compile", "-o", out, "--name", "m", old_model, "--depfile",
                     os.path.join(work, "missing", "m.d")])
            now = snapshot(out)
            result(r[0] == 2 and one_error_line(r[2]) and now == good,
                   "an unwritable --depfile: exit 2, the emitted files are not replaced",
                   "exit %d\n%s\n%s" % (r[0], r[2], diff(good, now)))
        else:
            result(True, "# SKIP compile has no --depfile")

        # the commit itself fails half-way (the 2nd rename): the 1st file is put back
        good = snapshot(out)
        for k in (1, 2, 3):
            r = run([relayc, "compile", "-o", out, "--name", "m", "--constants", "c", old_model],
                    env=env_with(shim, RELAYC_SHIM_FAIL_RENAME=k))
            now = snapshot(out)
            result(r[0] == 2 and one_error_line(r[2]) and
                   {n: v[0] for n, v in now.items()} == {n: v[0] for n, v in good.items()},
                   "rename %d of 3 fails: exit 2, every file as it was, no temporaries" % k,
                   "exit %d\n%s\n%s" % (r[0], r[2], diff(good, now)))
        # NAME.h is a directory: nothing is replaced
        hd = os.path.join(work, "out_dir")
        shutil.copytree(out, hd)
        os.unlink(os.path.join(hd, "m.h"))
        os.mkdir(os.path.join(hd, "m.h"))
        before = snapshot_tree(hd)
        r = run([relayc, "compile", "-o", hd, "--name", "m", "--constants", "c", old_model])
        result(r[0] == 2 and one_error_line(r[2]) and snapshot_tree(hd) == before,
               "m.h is a directory: exit 2, m.c and m_constants.c not replaced",
               "exit %d\n%s" % (r[0], r[2]))

        # SIGTERM while the second file is being written: temporaries are removed
        r0 = os.path.getsize(os.path.join(out, "m_constants.c"))
        p = subprocess.Popen(WRAPPER + [relayc, "compile", "-o", out, "--name", "m", new_model],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env_with(shim, RELAYC_SHIM_STALL_AFTER=r0 + 10))
        t0 = time.time()
        while time.time() - t0 < 120 and not any(".tmp" in n for n in os.listdir(out)):
            time.sleep(0.05)
        staged = [n for n in os.listdir(out) if ".tmp" in n]
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        try:
            p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        now = snapshot(out)
        result(len(staged) >= 1 and p.returncode != 0 and now == good,
               "SIGTERM while writing: the earlier output is intact, no temporaries",
               "temporaries seen: %s; exit %s\n%s" % (staged, p.returncode, diff(good, now)))

        # run: output_K.npy are written all or none
        rout = os.path.join(work, "run_out")
        os.mkdir(rout)
        inputs = ["--input", "x=" + os.path.join(src, "input_x.npy"),
                  "--input", "y=" + os.path.join(src, "input_y.npy")]
        r = run([relayc, "run", old_model, "-o", rout] + inputs)
        if result(r[0] == 0 and len(os.listdir(rout)) == 2, "run writes output_0.npy and output_1.npy",
                  r[2]):
            good = snapshot(rout)
            # other inputs give other outputs
            import numpy as np
            inputs2 = []
            for name in ("x", "y"):
                path = os.path.join(work, "%s2.npy" % name)
                np.save(path, np.load(os.path.join(src, "input_%s.npy" % name)) * 2 + 1)
                inputs2 += ["--input", "%s=%s" % (name, path)]
            probe = os.path.join(work, "run_probe")
            os.mkdir(probe)
            run([relayc, "run", old_model, "-o", probe] + inputs2)
            changed = [n for n in sorted(good) if os.path.exists(os.path.join(probe, n)) and
                       snapshot(probe)[n][0] != good[n][0]]
            if len(changed) < 2:
                result(True, "# SKIP the outputs do not both change")
            else:
                budget = os.path.getsize(os.path.join(probe, changed[0])) + 10
                r = run([relayc, "run", old_model, "-o", rout] + inputs2,
                        env=env_with(shim, RELAYC_SHIM_ENOSPC_AFTER=budget))
                now = snapshot(rout)
                result(r[0] == 2 and now == good,
                       "run: disk full while writing %s: exit 2, no output replaced" % changed[1],
                       "exit %d\n%s\n%s" % (r[0], r[2], diff(good, now)))
    return TAP.finish()


if __name__ == "__main__":
    sys.exit(main())
