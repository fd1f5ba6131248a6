#!/usr/bin/env bash
# Start the device library's bare-metal port on an emulated Cortex-M3 (QEMU's mps2-an385).
#
#   firmware/qemu.sh [-- EXTRA QEMU ARGUMENTS]
#
# Builds firmware/build-mps2-an385/tfw.elf if needed (`make -C firmware arm`; QUEUE=N and
# ARM_BUILD=DIR in the environment choose another event queue and build folder), starts the
# board and prints two lines:
#   1. the pty of the table's UART (UART0: the link; open it as tablectl's device),
#   2. the pty of the harness UART (UART1: type `press 0 0x20`, `take 1 40`, `reset`,
#      `show`, `stats`, one per line, as the person at the table would act),
# then stays in the foreground until the board stops; SIGTERM (or SIGINT) stops it.
# Extra arguments after `--` go to QEMU (e.g. `-icount shift=0` for instruction counts).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
QUEUE="${QUEUE:-32}"
ARM_BUILD="${ARM_BUILD:-build-mps2-an385}"
case "$ARM_BUILD" in
    build-*) ;;
    *) echo "qemu.sh: ARM_BUILD must name a build-* folder, not '$ARM_BUILD'" >&2; exit 2 ;;
esac
if [ "${1:-}" = "--" ]; then
    shift
elif [ $# -gt 0 ]; then
    echo "qemu.sh: unknown argument '$1'; usage: qemu.sh [-- QEMU ARGUMENTS]" >&2
    exit 2
fi
for tool in arm-none-eabi-gcc qemu-system-arm make; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "qemu.sh: $tool not found (apt-get install -y gcc-arm-none-eabi" \
            "libnewlib-arm-none-eabi qemu-system-arm make)" >&2
        exit 2
    fi
done

# Builds of one folder, one at a time (tests start boards in parallel).
exec 9>>"$here/.qemu-build.lock"
flock 9
if ! make -s -C "$here" arm QUEUE="$QUEUE" ARM_BUILD="$ARM_BUILD" >/dev/null; then
    echo "qemu.sh: make -C firmware arm failed" >&2
    exit 1
fi
flock -u 9
exec 9>&-

# A random seed for the cold boot's boot id and dice, written into RAM before the first
# instruction (the board has no entropy source of its own).
seed="$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
log="$(mktemp -t tfw-qemu.XXXXXX)"
qemu-system-arm -M mps2-an385 -nographic -monitor none \
    -kernel "$here/$ARM_BUILD/tfw.elf" \
    -device "loader,addr=0x20000000,data=$seed,data-len=4" \
    -serial pty -serial pty "$@" >"$log" 2>&1 &
qemu=$!
stop() {
    kill -TERM "$qemu" 2>/dev/null || true
    wait "$qemu" 2>/dev/null || true
    rm -f "$log"
    exit 0
}
trap stop TERM INT HUP

# QEMU names each pty on a line of its own, UART0's first.
ptys=()
for _ in $(seq 100); do
    mapfile -t ptys < <(grep -o '/dev/pts/[0-9]*' "$log" || true)
    if [ "${#ptys[@]}" -ge 2 ] || ! kill -0 "$qemu" 2>/dev/null; then
        break
    fi
    sleep 0.05
done
if [ "${#ptys[@]}" -lt 2 ]; then
    echo "qemu.sh: the board did not start: $(tr '\n' ' ' <"$log")" >&2
    kill -TERM "$qemu" 2>/dev/null || true
    rm -f "$log"
    exit 1
fi
echo "qemu.sh: table UART ${ptys[0]}"
echo "qemu.sh: harness UART ${ptys[1]}"
wait "$qemu" || true
rm -f "$log"
