#!/bin/bash
# bench/dot_count.sh [BUILD_DIR]: which int8 loops become integer dot products. Writes
# bench/run's int8 shapes (gen.py) with --target x86-64-avx512, compiles each with gcc -O3
# for a core with AVX-512 VNNI (-march=sapphirerapids; compiled only, nothing runs, so any
# x86 machine will do) and with --target x86-64-avx2 for this machine's -march=native, and
# prints per shape the innermost loops (bench/vec_count.py) and the dot-product instructions
# in them (vpdpbusd, vpdpwssd, vpmaddwd, vpmaddubsw), and the whole file's vpdpbusd count.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
ninja -C "$BUILD" relayc >/dev/null
printf '%-26s %-14s %6s %8s %8s\n' shape target loops int_dot vpdpbusd
for spec in "x86-64-avx512 -march=sapphirerapids" "x86-64-avx2 -march=native"; do
    set -- $spec
    mkdir -p "$OUT/$1"
    $PY "$ROOT/bench/gen.py" "$OUT/$1" "$BUILD/relayc" "$ROOT/../shared/fixtures/relay-json" \
        --target "$1" --case _ >/dev/null
    for s in "$OUT/$1"/src/q_*.c; do
        case $s in *_g.c|*_constants.c) continue ;; esac
        n=$(basename "$s" .c)
        gcc -O3 "$2" -S "$s" -o "$OUT/$n.s"
        $PY - "$ROOT/bench" "$OUT/$n.s" "$n" "$1" <<'PYEOF'
import re, sys
sys.path.insert(0, sys.argv[1])
import vec_count
r = vec_count.count(sys.argv[2])
total = sum(1 for line in open(sys.argv[2]) if re.match(r"\s+vpdpbusds?\s", line))
print("%-26s %-14s %6d %8d %8d" % (sys.argv[3], sys.argv[4], r["loops"], r["int_dot"], total))
PYEOF
    done
done
