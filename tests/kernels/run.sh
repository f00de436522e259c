#!/bin/sh
# Builds the kernel harness with gcc and clang (ASan + UBSan) and tcc, checks
# that tcc compiles runtime/kernels.c alone, and runs test_kernels.py against
# each harness. Usage: tests/kernels/run.sh   (from anywhere)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
strict="-std=c99 -Wall -Wextra -pedantic -Werror"
status=0
for cc in gcc clang; do
    command -v "$cc" >/dev/null 2>&1 || { echo "# $cc not found, skipped"; continue; }
    echo "# $cc -O1 -fsanitize=address,undefined"
    $cc $strict -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
        "$here/kernel_harness.c" -o "$tmp/harness_$cc" -lm
    "$py" "$here/test_kernels.py" "$tmp/harness_$cc" >"$tmp/tap_$cc" || status=1
    grep -v '^ok ' "$tmp/tap_$cc" || true
done
if command -v tcc >/dev/null 2>&1; then
    echo "# tcc -c runtime/kernels.c"
    tcc -c "$root/runtime/kernels.c" -o "$tmp/kernels_tcc.o" || status=1
    echo "# tcc harness"
    tcc "$here/kernel_harness.c" -o "$tmp/harness_tcc" -lm
    "$py" "$here/test_kernels.py" "$tmp/harness_tcc" >"$tmp/tap_tcc" || status=1
    grep -v '^ok ' "$tmp/tap_tcc" || true
fi
[ $status -eq 0 ] && echo "# all passed" || echo "# FAILED"
exit $status
