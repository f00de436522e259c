#!/usr/bin/env python3
"""The build-system examples, built and run as a user would.

  meson: examples/meson, a custom_target running relayc, linked into a program;
  cmake: examples/cmake, an add_custom_command doing the same (Ninja and Unix Makefiles).

For each: the bundled LeNet (examples/lenet, the default) builds and its test passes;
then a fixture model given through the options (a copy, so that it can be touched)
builds and its test passes; a second build has no work to do; and (ninja) touching the
model reruns relayc, whose unchanged outputs rebuild nothing downstream.

    test_examples.py --relayc build/relayc --fixtures DIR --system meson|cmake
"""
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwtest  # noqa: E402

FIXTURE = "mlp-0.8.0-params"     # a model with a params file, through the options


def clean_env():
    """The example is a separate project: drop the outer meson test's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MESON")}
    env.pop("DESTDIR", None)
    return env


def main():
    ap = fwtest.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--system", choices=("meson", "cmake"), required=True)
    a = ap.parse_args()
    tap = fwtest.Tap()
    relayc = os.path.abspath(a.relayc)
    env = clean_env()
    if a.system == "meson":
        fwtest.need_tools(tap, "meson", "ninja", "cc")
        variants = [("ninja", None)]
    else:
        fwtest.need_tools(tap, "cmake", "ctest", "ninja", "make", "cc")
        variants = [("ninja", "Ninja"), ("make", "Unix Makefiles")]
    src = os.path.join(fwtest.SOURCE_ROOT, "examples", a.system)
    work = fwtest.tempdir("relayc-example-%s." % a.system)
    try:
        fx = fwtest.fixture(a.fixtures, FIXTURE)
        mdir = os.path.join(work, "model")
        os.makedirs(mdir)
        model, params = os.path.join(mdir, "mlp.json"), os.path.join(mdir, "mlp.params")
        shutil.copy(fx["model"], model)
        shutil.copy(fx["params"], params)

        for tool, generator in variants:
            for which in ("bundled", "fixture"):
                b = os.path.join(work, "build-%s-%s" % (tool, which))
                what = "%s%s, %s model" % (a.system, " (%s)" % generator if generator else "",
                                           "the bundled LeNet" if which == "bundled" else FIXTURE)
                if a.system == "meson":
                    opts = ["-Drelayc=" + relayc]
                    if which == "fixture":
                        opts += ["-Dmodel=" + model, "-Dparams=" + params, "-Dname=mlp",
                                 "-Dinput=" + fx["inputs"][0], "-Dexpected=" + fx["expected"][0]]
                    setup = ["meson", "setup", b, src] + opts
                    build = ["ninja", "-C", b]
                    test = ["meson", "test", "-C", b, "--print-errorlogs", "-v"]
                else:
                    opts = ["-DRELAYC=" + relayc]
                    if which == "fixture":
                        opts += ["-DRELAYC_MODEL=" + model, "-DRELAYC_PARAMS=" + params,
                                 "-DMODEL_NAME=mlp", "-DMODEL_INPUT=" + fx["inputs"][0],
                                 "-DMODEL_EXPECTED=" + fx["expected"][0]]
                    setup = ["cmake", "-S", src, "-B", b, "-G", generator] + opts
                    build = ["cmake", "--build", b]
                    test = ["ctest", "--test-dir", b, "--output-on-failure", "-V"]
                st, log = fwtest.run(setup, env=env)
                if not tap.ok(st == 0, "%s: configures" % what, log):
                    continue
                st, log = fwtest.run(build, env=env)
                if not tap.ok(st == 0 and "relayc" in log.lower(), "%s: builds (relayc runs as a build step)"
                              % what, log):
                    continue
                st, log = fwtest.run(test, env=env)
                tap.ok(st == 0 and "ok: every output matches" in log,
                       "%s: the program runs the model and every output matches" % what, log)
                st, log = fwtest.run(build, env=env)
                quiet = ("no work to do" in log) if tool == "ninja" else ("Building C object" not in log
                                                                          and "relayc:" not in log)
                tap.ok(st == 0 and quiet, "%s: a second build has nothing to do" % what, log)
                if which == "fixture" and tool == "ninja":
                    later = time.time() + 5
                    os.utime(model, (later, later))
                    st, log = fwtest.run(build + (["-d", "explain"] if a.system == "meson" else
                                                  ["--", "-d", "explain"]), env=env)
                    reran = "mlp: workspace" in log
                    recompiled = [ln for ln in log.splitlines()
                                  if ("Compiling C object" in ln or "Building C object" in ln or "Linking" in ln)]
                    tap.ok(st == 0 and reran and not recompiled,
                           "%s: touching the model reruns relayc; its unchanged outputs rebuild nothing" % what,
                           log)
                    os.utime(model, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
