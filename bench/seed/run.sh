#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Issue 23's bug report, replayed on the emulated Core Ultra 7 165U: a
# kernel build (make mrproper, make tinyconfig, then make -jN with N the
# emulated CPUs, 14) ran faster under powersave with EPP performance than
# under the performance governor. For each model variant, under `hwpemu
# run mtl-165u --variant V` in the closed loop (the default: the build's
# CPU time follows the model's delivered frequencies):
#
#	hwpprobe explain performance powersave:epp=performance \
#		--prepare 'make mrproper && make tinyconfig' -- make -jN
#
# on the kernel tree of Debian's linux-source package
# (/usr/src/linux-source-6.1.tar.xz: apt-get install linux-source flex
# bison bc libelf-dev; nothing is downloaded). Run as root from the
# repository root:
#
#	bench/seed/run.sh [VARIANT...]     (default: none min-pins epp-voltage platform-pl1)
#
# Environment: RUNS (measured runs per side, default 5), WARMUP (warm-up
# runs per side, default 1), OUT (where each variant's experiment, its
# text report and its Markdown report are kept, default
# /var/tmp/hwpemu-seed). A benchmark, not a test: on the 2-CPU development
# VM each build runs 5.49x slower than the model (hwpemu's banner says
# why), 11 to 17 minutes a run (docs/emulator.md). Prints, per variant, explain's verdict
# lines and the wall time. docs/emulator.md ("Model variants") shows what
# each variant gave.
set -eu
TARBALL=/usr/src/linux-source-6.1.tar.xz
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-1}
OUT=${OUT:-/var/tmp/hwpemu-seed}
[ $# -gt 0 ] || set -- none min-pins epp-voltage platform-pl1
if [ ! -r "$TARBALL" ]; then
	echo "bench/seed: $TARBALL missing: apt-get install linux-source flex bison bc libelf-dev" >&2
	exit 2
fi
mkdir -p "$OUT"
T=$(mktemp -d /var/tmp/hwpemu-seed-tree.XXXXXX)
trap 'rm -rf "$T"' EXIT
CGO_ENABLED=0 go build -o "$T/" ./cmd/hwpemu ./cmd/hwpprobe
export PATH="$T:$PATH"
tar -xJf "$TARBALL" -C "$T"
SRC=$(find "$T" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*')
# The emulated CPUs: getconf reads the emulated /sys/devices/system/cpu/online.
N=$(hwpemu run --open-loop mtl-165u -- getconf _NPROCESSORS_ONLN 2>/dev/null)
for v in "$@"; do
	t0=$(date +%s)
	hwpemu run --variant "$v" mtl-165u -- sh -c 'cd "$1" && hwpprobe explain performance powersave:epp=performance \
		--runs "$2" --warmup "$3" --prepare "make mrproper >/dev/null && make tinyconfig >/dev/null" \
		-o "$4/$5.hwpr" --force --markdown "$4/$5.md" -- make -j"$6"' sh "$SRC" "$RUNS" "$WARMUP" "$OUT" "$v" "$N" \
		> "$OUT/$v.txt" 2>&1 || echo "bench/seed: variant $v: hwpemu run exited $?" >&2
	t1=$(date +%s)
	echo "== variant $v: make -j$N, $RUNS runs per side, $((t1 - t0)) s"
	grep -E '^(verdict|hwpemu: model variant|hwpemu: closed loop)|^  (hwpemu|time)' "$OUT/$v.txt" || tail -5 "$OUT/$v.txt"
done
