#!/bin/sh
# test_standin.sh: end-to-end test of the Cortex-M harness (examples/cortex-m)
# with the hand-written stand-in models in standin/ (a dense 4->3 + relu named
# "tiny", in both constants modes, and "pair"), run under QEMU.
#
# Cases: each mode passes (-O2, and -Os for bin); so does "pair" (two inputs,
# two outputs, libm); a wrong expected value exits 1;
# a model that overruns its workspace exits 1; one that faults exits 3; the object
# checker rejects model data in RAM and a large stack frame.
# Prints one line per case and "N passed, N failed" last; exits 1 if any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
runner=$here/run_qemu_test.sh
standin=$here/standin

PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
    for p in /usr/bin/python3 python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PYTHON=$p; break; fi
    done
fi
[ -n "$PYTHON" ] || { echo "test_standin.sh: needs python3 with numpy (apt-get install python3-numpy)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cortex-m-standin.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

"$PYTHON" "$standin/make_data.py" "$work/data" || exit 2
d=$work/data

# The bin-mode model directory: the stand-in's sources plus the generated blob.
mkdir -p "$work/bin" && cp "$standin/bin/tiny.h" "$standin/bin/tiny.c" "$d/tiny.bin" "$work/bin/"

# Broken variants.
mkdir -p "$work/overrun" "$work/fault" "$work/baddata"
cp "$standin/c/"* "$work/overrun/"
sed 's/^#define TINY_WORKSPACE_SIZE 16$/#define TINY_WORKSPACE_SIZE 4/' "$standin/c/tiny.h" >"$work/overrun/tiny.h"
cp "$standin/c/"* "$work/fault/"
sed 's/^    return 0;$/    return *(volatile const int *)0x30000000u;  \/* nothing there on MPS2: BusFault *\//' \
    "$standin/c/tiny.c" >"$work/fault/tiny.c"
cp "$standin/c/"* "$work/baddata/"
cat >>"$work/baddata/tiny.c" <<'EOF'

float tiny_state[4];                       /* model data in .bss: not allowed */
int tiny_big_frame(const float *x);
int tiny_big_frame(const float *x)         /* a 400-byte frame: over the limit */
{
    volatile float t[100];
    int i;
    for (i = 0; i < 100; i++)
        t[i] = x[i % 4];
    tiny_state[0] = t[7];
    return (int)t[99];
}
EOF

passed=0 failed=0
# case NAME WANT_STATUS RUNNER_ARGS...
case_() {
    cname=$1 want=$2
    shift 2
    log=$work/$(echo "$cname" | tr -c 'A-Za-z0-9\n' '_').log
    "$runner" "$@" >"$log" 2>&1
    got=$?
    if [ "$got" -eq "$want" ]; then
        passed=$((passed + 1))
        echo "ok     $cname (exit $got)"
    else
        failed=$((failed + 1))
        echo "FAILED $cname: exit $got, want $want"
        sed 's/^/    | /' "$log"
    fi
    last_log=$log
}

case_ "c mode passes" 0 "$standin/c" tiny c "$d/in0.npy" -- "$d/expected.npy"
cat "$last_log"
case_ "bin mode passes" 0 "$work/bin" tiny bin "$d/in0.npy" -- "$d/expected.npy"
cat "$last_log"
case_ "bin mode at -Os passes" 0 --opt -Os "$work/bin" tiny bin "$d/in0.npy" -- "$d/expected.npy"
case_ "two inputs, two outputs, libm (c mode)" 0 "$standin/pair" pair c \
    "$d/pair_in0.npy" "$d/pair_in1.npy" -- "$d/pair_out0.npy" "$d/pair_out1.npy"
grep -E '^output|^instructions' "$last_log" | sed 's/^/    /'
case_ "c mode, wrong expected value fails" 1 "$standin/c" tiny c "$d/in0.npy" -- "$d/expected_wrong.npy"
grep -E 'mismatch|RESULT' "$last_log" | sed 's/^/    /'
case_ "bin mode, wrong expected value fails" 1 "$work/bin" tiny bin "$d/in0.npy" -- "$d/expected_wrong.npy"
case_ "workspace overrun is caught" 1 "$work/overrun" tiny c "$d/in0.npy" -- "$d/expected.npy"
grep -E 'wrote past' "$last_log" | head -1 | sed 's/^/    /'
case_ "a fault exits 3" 3 "$work/fault" tiny c "$d/in0.npy" -- "$d/expected.npy"
grep -E 'FAULT' "$last_log" | sed 's/^/    /'
case_ "data in RAM and a big stack frame fail the object check" 1 \
    "$work/baddata" tiny c "$d/in0.npy" -- "$d/expected.npy"
grep -E '^FAIL|^    ' "$last_log" | grep -v -E '^    \|' | head -8 | sed 's/^/    /'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
