#!/bin/sh
# run_qemu.sh ELF [BOARD] [TIMEOUT_SECONDS] [ICOUNT_SHIFT]
#
# Runs a bare-metal image under QEMU with semihosting and returns its exit status
# (the status the program passed to SYS_EXIT_EXTENDED; 124 on timeout).
# BOARD: an386 (default, Cortex-M4F), an385 (Cortex-M3), an500 (Cortex-M7).
# -icount shift=S makes every guest instruction take 2^S ns of virtual time, so the
# program's timer readings count instructions exactly (see counter.h).
set -u
elf=${1:?usage: run_qemu.sh ELF [BOARD] [TIMEOUT] [ICOUNT_SHIFT]}
board=${2:-an386}
timeout_s=${3:-600}
shift_n=${4:-7}
QEMU=${QEMU:-qemu-system-arm}

case $board in
an385|an386|an500) machine=mps2-$board ;;
*) echo "run_qemu.sh: unknown board '$board' (an385, an386, an500)" >&2; exit 2 ;;
esac

# Semihosting output goes to a stdio chardev (stdout); without chardev= QEMU
# writes it to stderr. The UART and monitor are not used.
timeout "$timeout_s" "$QEMU" -M "$machine" -nographic -monitor none -serial none \
    -chardev stdio,id=semihost \
    -semihosting-config enable=on,target=native,chardev=semihost \
    -icount "shift=$shift_n,align=off,sleep=off" \
    -kernel "$elf" </dev/null
status=$?
if [ "$status" -eq 124 ]; then
    echo "run_qemu.sh: timed out after ${timeout_s}s" >&2
fi
exit "$status"
