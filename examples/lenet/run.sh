#!/bin/sh
# Compiles the example model to C with relayc, builds a program with it, runs it.
# Usage: examples/lenet/run.sh [RELAYC]   (default: build/relayc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
relayc=${1:-build/relayc}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$relayc" compile "$here/lenet.json" --params "$here/lenet.params" -o "$out"
cc -std=c99 -O2 -Wall -Wextra -pedantic -I"$out" "$here/main.c" "$out/lenet.c" \
    "$out/lenet_constants.c" -o "$out/lenet" -lm
"$out/lenet"
