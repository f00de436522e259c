#!/usr/bin/env python3
"""Embeds runtime/kernels.c into relayc as a byte array: relayc_kernels_text[]."""
import sys

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read() + b"\0"
lines = ["/* Generated from runtime/kernels.c at build time. Do not edit. */",
         "extern const char relayc_kernels_text[];",
         "const char relayc_kernels_text[] = {"]
for i in range(0, len(data), 16):
    lines.append("    " + ", ".join(str(b) for b in data[i:i + 16]) + ",")
lines.append("};")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
