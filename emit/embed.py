#!/usr/bin/env python3
"""Embeds runtime/kernels.c into relayc as a byte array: relayc_kernels_text[] (or the
symbol named by a third argument: runtime/kernels_int8.c is relayc_kernels_int8_text[])."""
import os
import sys

src, out = sys.argv[1], sys.argv[2]
sym = sys.argv[3] if len(sys.argv) > 3 else "relayc_kernels_text"
data = open(src, "rb").read() + b"\0"
lines = ["/* Generated from runtime/%s at build time. Do not edit. */" % os.path.basename(src),
         "extern const char %s[];" % sym,
         "const char %s[] = {" % sym]
for i in range(0, len(data), 16):
    lines.append("    " + ", ".join(str(b) for b in data[i:i + 16]) + ",")
lines.append("};")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
