#!/bin/sh
# CI step for the fuzz targets (tests/fuzz/README.md): builds them with clang (libFuzzer,
# ASan, UBSan) in build-fuzz, runs each for SECONDS (default 60, both at once) on a
# scratch copy of the corpus, then replays the stored corpus and every regression input.
# Exit 1 on any crash, leak, timeout or out-of-memory. Usage: tests/fuzz/run.sh [SECONDS]
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
        -Db_lundef=false -Dbuildtype=debugoptimized \
        -Dc_args=-fno-sanitize-recover=all -Dc_link_args=-fno-sanitize-recover=all
fi
ninja -C build-fuzz tests/fuzz/fuzz_model tests/fuzz/fuzz_tensor_io
art="$root/build-fuzz/fuzz-artifacts"
mkdir -p "$art"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT INT TERM
status=0
# the targets fuzz side by side (one process each), then each replays its corpus
fuzz() {
    t=$1
    dict=""
    [ "$t" = model ] && dict="-dict=tests/fuzz/relay.dict"
    mkdir -p "$scratch/$t"
    # shellcheck disable=SC2086
    build-fuzz/tests/fuzz/fuzz_$t $dict -max_total_time="$secs" -timeout=20 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/$t-" \
        "$scratch/$t" "tests/fuzz/corpus/$t" > "$art/fuzz_$t.log" 2>&1
}
echo "# fuzz_model and fuzz_tensor_io: $secs s each"
fuzz model & model_pid=$!
fuzz tensor_io & tensor_io_pid=$!
for t in model tensor_io; do
    eval "pid=\$${t}_pid"
    if ! wait "$pid"; then
        echo "# fuzz_$t FAILED (log: $art/fuzz_$t.log)"
        grep -E "ERROR|runtime error|Test unit written" "$art/fuzz_$t.log" | head -5
        status=1
    fi
    grep -E "^stat::number_of_executed_units|cov: " "$art/fuzz_$t.log" | tail -2
    echo "# fuzz_$t: replay of the corpus and the regressions"
    if ! build-fuzz/tests/fuzz/fuzz_$t -runs=0 -timeout=20 -rss_limit_mb=2048 \
            "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" > "$art/replay_$t.log" 2>&1; then
        echo "# replay of $t FAILED (log: $art/replay_$t.log)"
        status=1
    fi
done
[ $status -eq 0 ] && echo "# fuzz: all passed" || echo "# fuzz: FAILED"
exit $status
