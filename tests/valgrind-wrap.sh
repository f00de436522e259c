#!/bin/sh
# exe_wrapper of the meson test setup 'valgrind' (meson test --setup valgrind): a test
# that is a compiled program runs under valgrind; a Python test runs as it is, with
# RELAYC_WRAPPER set so that it runs each relayc command under valgrind. valgrind's own
# report goes to $RELAYC_VALGRIND_LOGS/PID.log (stderr stays relayc's), and any error,
# definite or indirect leak makes the command exit 99 (not 1: relayc's exit 1 means a
# check mismatch or an unsupported operator). Origins of uninitialised values are not
# tracked (--track-origins=yes finds the same errors and costs CI a third more time; add it
# by hand to see where such a value came from).
logs=${RELAYC_VALGRIND_LOGS:-/tmp/relayc-valgrind}
mkdir -p "$logs"
vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --log-file=$logs/%p.log"
case $(basename "$1") in
python*)
    RELAYC_WRAPPER=$vg
    export RELAYC_WRAPPER
    exec "$@" ;;
*)
    # shellcheck disable=SC2086
    exec $vg "$@" ;;
esac
