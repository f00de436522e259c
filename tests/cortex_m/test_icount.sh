#!/bin/sh
# test_icount.sh: the Cortex-M harness counts instructions exactly under QEMU.
#
# Builds examples/cortex-m/calib.c (functions of known length: a loop of
# 2 n + 1 instructions for n = 1..64 and up to 10^8 instructions, a call with
# stack arguments) and runs it under QEMU mps2-an386 with -icount shift=7: every
# count must equal the instructions the function executes. Then runs the same
# image with shift=6, where the timer no longer counts 3.2 ticks per
# instruction, and requires the check to fail (it can tell a wrong count).
set -u
here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../../examples/cortex-m" && pwd)
MAKE=${MAKE:-make}
for t in arm-none-eabi-gcc qemu-system-arm timeout "$MAKE"; do
    command -v "$t" >/dev/null 2>&1 || { echo "test_icount.sh: missing $t" >&2; exit 2; }
done
build=$(mktemp -d "${TMPDIR:-/tmp}/cortex-m-calib.XXXXXX") || exit 2
trap 'rm -rf "$build"' EXIT

"$MAKE" --no-print-directory -f "$harness/Makefile" CALIB_BUILD="$build" ICOUNT_SHIFT=7 \
    "$build/calib.elf" >"$build/build.log" 2>&1 || { cat "$build/build.log"; exit 2; }

status=0
"$harness/run_qemu.sh" "$build/calib.elf" an386 120 7 >"$build/run7.log" 2>&1
rc=$?
sed 's/^/    /' "$build/run7.log"
if [ $rc -ne 0 ] || ! grep -q '^74 of 74 counts exact: PASS$' "$build/run7.log"; then
    echo "FAIL: counts under -icount shift=7 are not exact (exit $rc)"
    status=1
else
    echo "ok: 74 of 74 counts exact under -icount shift=7"
fi

"$harness/run_qemu.sh" "$build/calib.elf" an386 120 6 >"$build/run6.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^WRONG ' "$build/run6.log"; then
    echo "ok: under shift=6 (not what the image was built for) the check fails, as it must"
else
    sed 's/^/    /' "$build/run6.log"
    echo "FAIL: under shift=6 the check did not report wrong counts (exit $rc)"
    status=1
fi
exit $status
