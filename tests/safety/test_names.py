#!/usr/bin/python3
"""Output safety of names: --name, the model file's name and names taken from the model.
TAP.

Usage: /usr/bin/python3 tests/safety/test_names.py RELAYC FIXTURES_DIR

Names from the model (Relay var names, the function name, tvm_version) end up in comments
and string literals of the emitted C; --name and the model file's stem end up in file
names and identifiers. Whatever they hold, the files stay inside -o DIR and the C compiles
warning-free with gcc and clang at -std=c99 -Wall -Wextra -pedantic -Werror (trigraphs
on), and NAME_inputs[k].name holds the Relay name byte for byte. The models are the
fixtures misc-0.18.0 and misc-0.6.0-function with their names replaced: quotes, */ and /*,
??/ trigraphs, backslashes, newlines, tabs, non-ASCII UTF-8, a raw 0xFF byte, and a name
of 4000 bytes (a name over RC_MAX_NAME, 4096 bytes, is an error). RELAYC_WRAPPER (the
meson test setup 'valgrind') is put before each relayc command.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402
from common import WRAPPER, run  # noqa: E402

STRICT = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]
TAP = common.Tap(diag_lines=30)
result = TAP.result

# names with every kind of trouble; "\udcff" is the raw byte 0xFF (surrogateescape)
NASTY_X = 'q"uo\'te */ end /* c ??/\n??= ??( back\\slash\\\nnew\nline\ttab \u00e9\u4e2d \udcff ?'
NASTY_Y = "A" * 3990 + '"*/??/\\'
NASTY_FN = 'ma"in*/ /* ??/\n\\ \u00e9'
NASTY_VERSION = "0.18.0*/ #error injected /* ??/"


def nbytes(s):
    return s.encode("utf-8", "surrogateescape")


def write_json(path, doc):
    with open(path, "wb") as f:
        f.write(json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8", "surrogateescape"))


def rename_vars(doc, names):
    """Gives the Relay vars new names: {old: new}. Handles String refs and 0.6 inline names."""
    nodes = doc["nodes"]
    for n in nodes:
        if n.get("type_key") not in ("relay.Id", "Id"):
            continue
        hint = n["attrs"].get("name_hint")
        if hint is None:
            continue
        if doc["attrs"]["tvm_version"].startswith("0.6"):
            if hint in names:
                n["attrs"]["name_hint"] = names[hint]
        else:
            s = nodes[int(hint)]
            if s.get("repr_str") in names:
                s["repr_str"] = names[s["repr_str"]]


def listing(top):
    out = []
    for root, dirs, files in os.walk(top):
        for f in files:
            out.append(os.path.relpath(os.path.join(root, f), top))
    return sorted(out)


def compilers():
    return [c for c in ("gcc", "clang") if shutil.which(c)]


def check_c(out, name, mode, expect_names, desc, work):
    """Compiles the emitted files strictly, plus a program that prints the input names."""
    srcs = [os.path.join(out, name + ".c")]
    if mode == "c":
        srcs.append(os.path.join(out, name + "_constants.c"))
    prog = os.path.join(work, "names_%s.c" % name)
    with open(prog, "w") as f:
        f.write('#include "%s.h"\n#include <stdio.h>\nint main(void)\n{\n'
                '    int i;\n    const char *s;\n'
                '    for (i = 0; i < %s_NUM_INPUTS; i++) {\n'
                '        for (s = %s_inputs[i].name; *s; s++)\n'
                '            printf("%%02x", (unsigned)(unsigned char)*s);\n'
                '        printf("\\n");\n    }\n    return 0;\n}\n' % (name, name.upper(), name))
    for cc in compilers():
        exe = os.path.join(work, "names_%s_%s" % (name, cc))
        r = run([cc] + STRICT + ["-I", out, "-o", exe, prog] + srcs + ["-lm"])
        if not result(r[0] == 0, "%s: %s %s compiles without a warning" % (desc, cc, " ".join(STRICT)),
                      r[2]):
            continue
        r = run([exe])
        got = r[1].split()
        want = [nbytes(n).hex() for n in expect_names]
        result(got == want, "%s: %s: %s_inputs[k].name holds the Relay names byte for byte" %
               (desc, cc, name), "got  %s\nwant %s" % ([g[:80] for g in got], [w[:80] for w in want]))


def main():
    relayc, fixtures = sys.argv[1], sys.argv[2]
    with common.work_dir("relayc_names_") as work:
        # 1. var names, the function name and tvm_version from the model (0.18 dialect)
        with open(os.path.join(fixtures, "misc-0.18.0", "model.json")) as f:
            doc = json.load(f)
        rename_vars(doc, {"x": NASTY_X, "y": NASTY_Y})
        doc["attrs"]["tvm_version"] = NASTY_VERSION
        root = doc["nodes"][doc["root"]]
        gvmap = doc["nodes"][int(root["attrs"]["global_var_map_"])]
        gv = doc["nodes"][gvmap["data"][0]]
        doc["nodes"][int(gv["attrs"]["name_hint"])]["repr_str"] = NASTY_FN
        gvmap["keys"] = [NASTY_FN]
        model = os.path.join(work, "model.json")
        write_json(model, doc)
        for mode in ("c", "bin"):
            out = os.path.join(work, "out_" + mode)
            os.mkdir(out)
            r = run(WRAPPER + [relayc, "compile", model, "-o", out, "--name", "m",
                               "--constants", mode, "--function", NASTY_FN])
            want = ["m.h", "m.c", "m.bin" if mode == "bin" else "m_constants.c"]
            if not result(r[0] == 0 and sorted(os.listdir(out)) == sorted(want),
                          "0.18, %s: nasty var, function and version names compile to m.*" % mode,
                          "exit %d\n%s\nfiles %s" % (r[0], r[2], os.listdir(out))):
                continue
            check_c(out, "m", mode, [NASTY_X, NASTY_Y], "0.18, " + mode, work)

        # 2. the 0.6 dialect: names inline in the node, not String refs
        with open(os.path.join(fixtures, "misc-0.6.0-function", "model.json")) as f:
            doc6 = json.load(f)
        rename_vars(doc6, {"x": NASTY_Y, "y": NASTY_X})
        model6 = os.path.join(work, "model6.json")
        write_json(model6, doc6)
        out = os.path.join(work, "out6")
        os.mkdir(out)
        r = run(WRAPPER + [relayc, "compile", model6, "-o", out, "--name", "m6"])
        if result(r[0] == 0, "0.6: nasty inline var names compile", r[2]):
            check_c(out, "m6", "c", [NASTY_Y, NASTY_X], "0.6", work)

        # 3. a name over the limit is an error naming it; nothing is written
        rename_vars(doc, {NASTY_X: "B" * 5000})
        big = os.path.join(work, "big.json")
        write_json(big, doc)
        out = os.path.join(work, "out_big")
        os.mkdir(out)
        r = run(WRAPPER + [relayc, "compile", big, "-o", out, "--function", NASTY_FN])
        result(r[0] == 2 and "4096" in r[2] and r[2].count("\n") == 1 and not os.listdir(out),
               "a 5000-byte name: exit 2, one line naming the 4096-byte limit, nothing written",
               "exit %d\n%s" % (r[0], r[2][:300]))

        # 4. --name never leaves -o DIR and is always a usable identifier
        plain = os.path.join(fixtures, "misc-0.18.0", "model.json")
        sub = os.path.join(work, "sub")
        out = os.path.join(sub, "out")
        os.makedirs(out)
        before = listing(work)
        for bad in ["../evil", "a/b", "/tmp/evil", "..", ".", "", "9lives", "_stdint", "__x",
                    "a.b", "a-b", "a b", "caf\u00e9", "x" * 65, "m\n", "m*/", "m??/", "stdint",
                    "STDINT", "Math", "stddef"]:
            r = run(WRAPPER + [relayc, "compile", plain, "-o", out, "--name", bad])
            result(r[0] == 2 and "relayc: error:" in r[2] and listing(work) == before,
                   "--name %r: refused, nothing written anywhere" % bad[:20],
                   "exit %d\n%s\n%s" % (r[0], r[2], sorted(set(listing(work)) - set(before))))
        for good in ["x" * 64, "int", "main", "NULL", "errno_", "m_c0", "stdint_h", "INT64"]:
            o2 = os.path.join(work, "good_" + good[:8])
            os.mkdir(o2)
            r = run(WRAPPER + [relayc, "compile", plain, "-o", o2, "--name", good])
            if result(r[0] == 0 and sorted(os.listdir(o2)) ==
                      sorted([good + ".h", good + ".c", good + "_constants.c"]),
                      "--name %s: three files in -o DIR" % good[:20], r[2]):
                check_c(o2, good, "c", ["x", "y"], "--name " + good[:20], work)

        # 5. the default name comes from the model file's stem, whatever it is called
        for stem in ["9 lives", "we*ird??\\name*", "-dash", "_under", "caf\u00e9\udcff", "..x",
                     "a" * 100, ".json"]:
            d = os.path.join(work, "stem_%d" % len(os.listdir(work)))
            os.mkdir(d)
            path = os.path.join(d, stem if stem.endswith(".json") else stem + ".json")
            shutil.copy(plain, path)
            out = os.path.join(d, "out")
            os.mkdir(out)
            r = run(WRAPPER + [relayc, "compile", path, "-o", out])
            files = os.listdir(out)
            hs = [f for f in files if f.endswith(".h")]
            ok = (r[0] == 0 and len(files) == 3 and len(hs) == 1 and sorted(os.listdir(d)) ==
                  sorted([os.path.basename(path), "out"]))
            if result(ok, "model file %r: the default name is an identifier, files in -o DIR"
                      % stem[:24], "exit %d\n%s\n%s" % (r[0], r[2], files)):
                check_c(out, hs[0][:-2], "c", ["x", "y"], "stem %r" % stem[:24], work)
    return TAP.finish()


if __name__ == "__main__":
    sys.exit(main())
