#!/bin/sh
# run_qemu_test.sh [options] MODEL_DIR NAME MODE INPUT.npy... -- EXPECTED.npy...
#
# Builds one relayc-compiled model (MODEL_DIR/NAME.h, NAME.c, and NAME_constants.c
# for MODE c or NAME.bin for MODE bin) into a bare-metal Cortex-M image with
# examples/cortex-m, checks the model's objects (no data in RAM, stack frames under
# the limit, also when compiled at -Os), prints the image's section sizes, and runs
# it under QEMU, which compares every output with the expected .npy files.
#
# Options:
#   --atol X --rtol X   tolerance, |got - want| <= atol + rtol * |want| (1e-5, 1e-5)
#   --board B           an386 (Cortex-M4F, default), an500 (Cortex-M7), an385 (M3)
#   --opt FLAG          optimisation of the image that runs (default -O2); the
#                       model is also compiled at -Os for the object checks
#   --stack-limit N     largest stack frame allowed in the model (default 256)
#   --timeout S         seconds QEMU may run (default 600)
#   --build-dir DIR     keep the build there (default: a temporary directory,
#                       removed at exit)
#
# Exit status: 0 pass; 1 output mismatch, model error or a failed object check;
# 2 usage, tool or build error; 3 fault on the target; 124 timeout.
set -u

here=$(cd "$(dirname "$0")" && pwd)
harness=$(cd "$here/../../examples/cortex-m" && pwd)
CROSS=${CROSS:-arm-none-eabi-}
MAKE=${MAKE:-make}

atol=1e-5 rtol=1e-5 board=an386 opt=-O2 stack_limit=256 timeout_s=600 build=
usage() {
    sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//' >&2
    echo "see the header of $0 for the options" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --atol) atol=${2:?}; shift 2 ;;
    --rtol) rtol=${2:?}; shift 2 ;;
    --board) board=${2:?}; shift 2 ;;
    --opt) opt=${2:?}; shift 2 ;;
    --stack-limit) stack_limit=${2:?}; shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --build-dir) build=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    --*) echo "run_qemu_test.sh: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -ge 4 ] || usage
model_dir=$1 name=$2 mode=$3
shift 3
case $mode in c|bin) ;; *) echo "run_qemu_test.sh: MODE must be c or bin" >&2; exit 2 ;; esac

abspath() { (cd "$(dirname "$1")" 2>/dev/null && printf '%s/%s\n' "$(pwd)" "$(basename "$1")") || {
    echo "run_qemu_test.sh: no such path: $1" >&2; exit 2; }; }

inputs='' expected='' seen_sep=0
for f in "$@"; do
    if [ "$f" = "--" ]; then seen_sep=1; continue; fi
    [ -f "$f" ] || { echo "run_qemu_test.sh: no such file: $f" >&2; exit 2; }
    p=$(abspath "$f") || exit 2
    if [ $seen_sep = 0 ]; then inputs="$inputs $p"; else expected="$expected $p"; fi
done
if [ $seen_sep != 1 ] || [ -z "$expected" ]; then
    echo "run_qemu_test.sh: give the expected outputs after --" >&2; exit 2
fi
[ -d "$model_dir" ] || { echo "run_qemu_test.sh: no such directory: $model_dir" >&2; exit 2; }
model_dir=$(cd "$model_dir" && pwd)

# Tools (CI installs them with apt-get; see examples/cortex-m/README.md).
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
    for p in /usr/bin/python3 python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PYTHON=$p; break; fi
    done
fi
missing=
for t in "${CROSS}gcc" "${CROSS}size" "${CROSS}nm" "${CROSS}readelf" qemu-system-arm timeout "$MAKE"; do
    command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -n "$PYTHON" ] || missing="$missing python3-with-numpy"
if [ -n "$missing" ]; then
    echo "run_qemu_test.sh: missing:$missing" >&2
    echo "  apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm python3-numpy" >&2
    exit 2
fi

if [ -z "$build" ]; then
    build=$(mktemp -d "${TMPDIR:-/tmp}/cortex-m-test.XXXXXX") || exit 2
    trap 'rm -rf "$build"' EXIT
    trap 'exit 130' INT TERM
fi
mkdir -p "$build" && build=$(cd "$build" && pwd)

mk() {
    "$MAKE" --no-print-directory -f "$harness/Makefile" MODEL_DIR="$model_dir" NAME="$name" \
        MODE="$mode" INPUTS="$inputs" EXPECTED="$expected" ATOL="$atol" RTOL="$rtol" \
        BOARD="$board" PYTHON="$PYTHON" CROSS="$CROSS" "$@"
}

echo "== build $name ($mode constants, $board, $opt)"
mk BUILD="$build/image" OPT="$opt" all >"$build/build.log" 2>&1 || {
    cat "$build/build.log"; echo "run_qemu_test.sh: build failed" >&2; exit 2; }
echo "== compile $name at -Os"
mk BUILD="$build/os" OPT=-Os model-objs >"$build/build-os.log" 2>&1 || {
    cat "$build/build-os.log"; echo "run_qemu_test.sh: the model does not compile at -Os" >&2; exit 2; }

echo "== check the model's objects (no data in RAM, stack frames < $stack_limit bytes)"
checks=0
for dir in "$build/image/model" "$build/os/model"; do
    echo "-- $(basename "$(dirname "$dir")" | sed 's/image/'"$opt"'/; s/os/-Os/')"
    "$here/check_model_objects.sh" --stack-limit "$stack_limit" --name "$name" "$dir"/*.o || checks=1
done

elf=$build/image/image.elf
echo "== check the image: the model's data is in flash (${CROSS}objdump -t, ${CROSS}readelf -S)"
# Every object the model's files define (NAME_*) must sit in a read-only section;
# in bin mode the blob is its own read-only section, .model_constants, of the size
# NAME.h gives.
placed=$("${CROSS}objdump" -t "$elf" | awk -v p="${name}_" '
    $3 == "O" && index($NF, p) == 1 { print $NF, $4 }
    $2 == "O" && index($NF, p) == 1 { print $NF, $3 }')
sections=$("${CROSS}readelf" -S -W "$elf" | sed -n 's/^ *\[ *[0-9]*\] //p')
in_ram=$(printf '%s\n' "$placed" | while read -r sym sec; do
    [ -n "$sym" ] || continue
    flags=$(printf '%s\n' "$sections" | awk -v s="$sec" '$1 == s { print $7 }')
    case $sec:$flags in
    .data*|.bss*|*:*W*) echo "    $sym in $sec ($flags)" ;;
    esac
done)
if [ -n "$in_ram" ]; then
    echo "FAIL image: model data in writable memory:"
    printf '%s\n' "$in_ram"
    checks=1
else
    n_placed=$(printf '%s\n' "$placed" | grep -c .)
    if [ "$n_placed" -eq 0 ]; then
        echo "ok: no ${name}_ data object in the image outside the blob (unused ones were dropped by --gc-sections)"
    else
        echo "ok: $n_placed ${name}_ data objects, all read-only, in: $(printf '%s\n' "$placed" | awk '{ print $2 }' | sort -u | tr '\n' ' ')"
    fi
fi
if [ "$mode" = bin ]; then
    blob=$(printf '%s\n' "$sections" | awk '$1 == ".model_constants" { print $5, $7 }')
    want=$(sed -n 's/^#define '"$(echo "$name" | tr a-z A-Z)"'_CONSTANTS_SIZE \([0-9]*\).*/\1/p' "$model_dir/$name.h")
    set -- $blob
    if [ $# -ne 2 ] || [ $((0x$1)) -lt "${want:-1}" ] || [ "$2" != A ]; then
        echo "FAIL image: no read-only .model_constants section of $want bytes (got: ${blob:-none})"
        checks=1
    else
        echo "ok: .model_constants: $((0x$1)) bytes, read-only (NAME.bin is $want bytes)"
    fi
fi

echo "== size of the image ($board): ${CROSS}size -A"
"${CROSS}size" -A "$elf" | awk '
    NR > 2 && $1 ~ /^\./ && $1 !~ /^\.(debug|comment|ARM\.attributes)/ {
        ram_addr = ($3 + 0 >= 536870912)          # 0x20000000
        printf "  %-18s %10d  %s\n", $1, $2, (ram_addr ? "RAM" : "ROM")
        if (ram_addr) ram += $2; else rom += $2
        if ($1 == ".data") rom += $2               # its initial values sit in ROM
    }
    END { printf "  total: ROM %d bytes, RAM %d bytes (stack included)\n", rom, ram }'
echo "  the model's objects:"
for o in "$build/image/model"/*.o; do
    "${CROSS}size" -A "$o" | awk -v n="$(basename "$o")" '
        $1 ~ /^\.text/ { t += $2 } $1 ~ /^\.rodata/ { r += $2 }
        $1 ~ /^\.data/ { d += $2 } $1 ~ /^\.bss/ { b += $2 }
        END { printf "    %-24s .text %d  .rodata %d  .data %d  .bss %d\n", n, t, r, d, b }'
done
ws=$("${CROSS}nm" -S "$elf" | awk '$NF == "model_workspace" { print $2 }')
if [ -n "$ws" ]; then
    echo "  workspace buffer (the caller's, in .bss): $(printf '%d' "0x$ws") bytes, including a 64-byte guard band"
fi

echo "== run under qemu-system-arm (timeout ${timeout_s}s)"
"$harness/run_qemu.sh" "$elf" "$board" "$timeout_s" >"$build/run.log" 2>&1
status=$?
cat "$build/run.log"
if [ $status -eq 0 ] && ! grep -q '^RESULT: PASS' "$build/run.log"; then
    echo "run_qemu_test.sh: exit status 0 but no PASS line" >&2
    status=1
fi
if [ $status -eq 0 ] && [ $checks -ne 0 ]; then
    echo "run_qemu_test.sh: the run passed but the object checks failed" >&2
    status=1
fi
echo "== $name ($mode): $( [ $status -eq 0 ] && echo PASS || echo "FAIL (status $status)")"
exit $status
