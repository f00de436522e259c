#!/bin/sh
# Installs, from Debian 12's packages, everything relayc needs to build, run its
# tests, its firmware examples and its benchmark (bench/: OpenBLAS and oneDNN).
# Run as root (or through sudo).
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
    meson ninja-build pkg-config gcc g++ clang libclang-rt-14-dev \
    libcjson-dev libstb-dev libtcc-dev tcc \
    python3 python3-numpy python3-torch python3-torchvision \
    gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm \
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
    cmake make valgrind librsvg2-bin \
    libopenblas-dev libdnnl-dev >/dev/null
