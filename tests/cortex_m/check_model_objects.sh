#!/bin/sh
# check_model_objects.sh [--stack-limit BYTES] OBJ...
#
# Firmware rules for a relayc-compiled model's object files (NAME.o,
# NAME_constants.o), each compiled with -fstack-usage so that its .su file
# sits beside it:
#   1. no model data in RAM: no symbol of type data/bss/common, and no
#      allocated writable section (.data*, .bss*, or a user-named one) of
#      non-zero size. Constants belong in .rodata (or a read-only named
#      section); the only RAM a model gets is the caller's workspace.
#   2. every function uses less than BYTES of stack (default 256), and none
#      has an unbounded (dynamic) frame: see the .su files.
#   3. nothing from libc beyond <math.h>: every undefined symbol is a <math.h>
#      function, a compiler runtime helper (__aeabi_*, __gnu_*), one of the
#      memcpy/memset/memmove/memcmp calls GCC may generate even freestanding,
#      or the model's own (NAME_*, with --name NAME). No malloc, no stdio.
# It also notes (without failing) calls to double-precision routines, which
# are slow on a single-precision FPU.
# Exit status: 0 all good, 1 a rule is broken, 2 usage or tool error.
set -u
CROSS=${CROSS:-arm-none-eabi-}
limit=256
model=
while [ $# -gt 0 ]; do
    case $1 in
    --stack-limit) limit=${2:?--stack-limit needs a number}; shift 2 ;;
    --name) model=${2:?--name needs the model name}; shift 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: check_model_objects.sh [--stack-limit BYTES] [--name NAME] OBJ..." >&2; exit 2; }
# C99 <math.h> functions (float, double and long double forms).
math_re='(acos|asin|atan|atan2|cos|sin|tan|acosh|asinh|atanh|cosh|sinh|tanh|exp|exp2|expm1|frexp|ilogb|ldexp|log|log10|log1p|log2|logb|modf|scalbn|scalbln|cbrt|fabs|hypot|pow|sqrt|erf|erfc|lgamma|tgamma|ceil|floor|nearbyint|rint|lrint|llrint|round|lround|llround|trunc|fmod|remainder|remquo|copysign|nan|nextafter|nexttoward|fdim|fmax|fmin|fma)[fl]?'

bad=0
for obj in "$@"; do
    [ -f "$obj" ] || { echo "check: no such object: $obj" >&2; exit 2; }
    name=$(basename "$obj")

    # 1a. symbols in data, bss, common or small-data sections.
    syms=$("${CROSS}nm" "$obj") || exit 2
    data_syms=$(printf '%s\n' "$syms" | awk '$(NF-1) ~ /^[bBdDCgGsS]$/ { print "    " $0 }')
    if [ -n "$data_syms" ]; then
        echo "FAIL $name: model symbols in writable memory (.data/.bss/common):"
        printf '%s\n' "$data_syms"
        bad=1
    fi
    # 1b. allocated, writable sections of non-zero size (whatever their name).
    wsecs=$("${CROSS}readelf" -S -W "$obj" | sed -n 's/^ *\[ *[0-9]*\] //p' |
        awk 'NF >= 10 && $7 ~ /W/ && $7 ~ /A/ && $5 !~ /^0+$/ { print "    " $1 " (0x" $5 " bytes)" }')
    if [ -n "$wsecs" ]; then
        echo "FAIL $name: writable allocated sections:"
        printf '%s\n' "$wsecs"
        bad=1
    fi

    # 2. stack usage from the .su file beside the object.
    su=${obj%.o}.su
    if [ ! -f "$su" ]; then
        echo "FAIL $name: no $su (compile with -fstack-usage)"
        bad=1
    else
        over=$(awk -F'\t' -v lim="$limit" '
            NF >= 3 && ($2 + 0 >= lim || ($3 ~ /dynamic/ && $3 !~ /bounded/)) {
                n = split($1, p, ":"); print "    " p[n] ": " $2 " bytes (" $3 ")" }' "$su")
        if [ -n "$over" ]; then
            echo "FAIL $name: functions with a stack frame of $limit bytes or more, or unbounded:"
            printf '%s\n' "$over"
            bad=1
        fi
        max=$(awk -F'\t' 'NF >= 3 && $2 + 0 > m { m = $2 + 0; f = $1 } END { n = split(f, p, ":"); if (m) print m " bytes (" p[n] ")"; else print "0 bytes" }' "$su")
    fi

    # 3. nothing from libc beyond <math.h> (and the compiler's own helpers).
    undef=$("${CROSS}nm" -u "$obj" | awk '{ print $NF }')
    own='^$'
    [ -n "$model" ] && own="^${model}_"
    forbidden=$(printf '%s\n' "$undef" | grep -v -E -x "$math_re|__aeabi_[A-Za-z0-9_]+|__gnu_[A-Za-z0-9_]+|memcpy|memset|memmove|memcmp" |
        grep -v -E "$own" | grep -v '^$' || true)
    if [ -n "$forbidden" ]; then
        echo "FAIL $name: needs more than <math.h> from libc:" "$(printf "%s\n" "$forbidden" | tr "\n" " ")"
        bad=1
    fi
    doubles=$(printf '%s\n' "$undef" | grep -E -x '__aeabi_d[a-z0-9]*|__aeabi_f2d|__aeabi_[il]2d|__aeabi_ui2d|exp|log|tanh|erf|sqrt|pow|sin|cos|floor|ceil|fabs|round|fmax|fmin' || true)
    if [ -n "$doubles" ]; then
        echo "note $name: uses double precision (slow on a single-precision FPU):" "$(printf "%s\n" "$doubles" | tr "\n" " ")"
    fi
    if [ -n "${max:-}" ]; then
        echo "checked $name: largest stack frame ${max}"
    fi
    max=
done
exit $bad
