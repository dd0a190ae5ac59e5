#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Observer cost (issue #25 item 6): what `hwpprobe record` costs the
# workload it observes. Needs root, hwpemu's FUSE emulation, perf, go and,
# for the turbostat rows, the kernel's turbostat (linux-cpupower). Run from
# the repository root, niced on a shared machine:
#
#	nice bench/observer/run.sh [PAIRS [UNITS]]
#
# HWPPROBE=BINARY measures that hwpprobe instead of building this tree's
# (e.g. an older build, for a before/after comparison).
#
# 1. Time ratio. A fixed CPU-bound workload (bench/observer/load: one
#    goroutine per CPU, each UNITS of buildlike.Burn's work, default 3000:
#    about 0.7 s of one core here) runs unobserved (A) and under
#    `hwpprobe record -i INTERVAL` (B), interleaved A B B A A B ... for
#    PAIRS pairs (default 10) after one warm-up of each, on this machine
#    and under `hwpemu run mtl-165u` (both sides inside the same emulated
#    machine), at 100ms and 1s. The workload times itself from the inside
#    (its own first instruction to its last), so record's start-up and
#    wind-down are not in its time. `hwpprobe stat` compares the times:
#    the ratio recorded / unrecorded with its interval, and the workload's
#    own CPU time the same way.
#
#    During each recorded run the workload also reads its parent's
#    (hwpprobe record's) CPU time from /proc/PPID/task/*/schedstat at its
#    start and end: the recorder's CPU time per second of the run, per
#    sampled CPU, and as a share of this machine's CPUs (what a workload
#    that keeps every CPU busy loses at most to the recorder).
#
# 2. Steady state: system calls and CPU time per sample per CPU. perf
#    stat attaches to the running tool 2 s after it started (start-up
#    left out) for 4 s at 100ms and 6 s at 1s, counting the
#    raw_syscalls:sys_enter, syscalls:sys_enter_pread64 and sys_enter_read
#    tracepoints and task-clock, divided by the window's samples x CPUs:
#    the per-second costs (the tracer's poll, the once-a-second flush, the
#    Go runtime's wake-ups) are in it, spread over the samples. hwpprobe's
#    samples in the window are W/INTERVAL (a ticker); turbostat's are the
#    headers it printed in the window (it sleeps INTERVAL between
#    samples, so its period is longer).
#    `hwpprobe record -- sleep` runs on this machine, on mtl-165u and on
#    mtl-2cpu (a one-P-core cut of mtl-165u); turbostat with the columns
#    of bench/sampler/run.sh on mtl-2cpu only (it migrates itself to each
#    CPU it reads; bench/emu.sh).
#
# PARTS (default "ratio calls") picks the parts to run.
set -eu
PAIRS=${1:-10}
UNITS=${2:-3000}
T=$(mktemp -d /tmp/hwpprobe-observer.XXXXXX)
trap 'rm -rf "$T"' EXIT
# Pure-Go builds: a cgo hwpemu deadlocks in its own namespace (see the
# Makefile).
if [ -n "${HWPPROBE:-}" ]; then
	cp "$HWPPROBE" "$T/hwpprobe"
else
	CGO_ENABLED=0 go build -o "$T/hwpprobe" ./cmd/hwpprobe
fi
CGO_ENABLED=0 go build -o "$T/hwpemu" ./cmd/hwpemu
CGO_ENABLED=0 go build -o "$T/load" ./bench/observer/load
. bench/emu.sh
SHIM_ENV=$(turbostat_env "$T")
mtl_2cpu "$T/mtl-2cpu.yaml"
HOSTCPUS=$(nproc)

# The interleaved runs of one case, as a script that runs the same on this
# machine and inside `hwpemu run`: ab.sh DIR INTERVAL PAIRS UNITS.
cat > "$T/ab.sh" <<EOS
set -eu
D=\$1 IV=\$2 N=\$3 U=\$4
mkdir -p "\$D"
a() { "$T/load" -units "\$U" -o "\$D/\$1unrecorded.txt" -cpu "\$D/\$1unrecorded-cpu.txt"; }
b() {
	"$T/hwpprobe" record -i "\$IV" -o "\$D/x.rec" --force -- \\
		"$T/load" -units "\$U" -o "\$D/\$1recorded.txt" -cpu "\$D/\$1recorded-cpu.txt" -parent "\$D/\$1observer.txt" 2>/dev/null
	rm -f "\$D/x.rec"
}
a warmup-; b warmup-
i=0
while [ \$i -lt "\$N" ]; do
	if [ \$((i % 2)) -eq 0 ]; then a ""; b ""; else b ""; a ""; fi
	i=\$((i + 1))
done
EOS

# verdict FILE_A FILE_B: hwpprobe stat's verdict line.
verdict() { "$T/hwpprobe" stat "$1" "$2" | sed -n 's/^verdict: /    /p'; }

case " ${PARTS:-ratio calls} " in *" ratio "*) ;; *) PAIRS=0 ;; esac
[ "$PAIRS" -gt 0 ] && echo "Time ratio, recorded / unrecorded: $PAIRS pairs, load -units $UNITS -jobs $HOSTCPUS"
for where in host mtl-165u; do
	[ "$PAIRS" -gt 0 ] || break
	for iv in 100ms 1s; do
		D=$T/$where-$iv
		case $where in
		host) sh "$T/ab.sh" "$D" $iv "$PAIRS" "$UNITS"; cpus=$HOSTCPUS ;;
		*) "$T/hwpemu" run $where -- sh "$T/ab.sh" "$D" $iv "$PAIRS" "$UNITS" >/dev/null 2>&1; cpus=14 ;;
		esac
		echo "$where, -i $iv ($cpus CPUs sampled):"
		echo "  wall time (s):"
		verdict "$D/unrecorded.txt" "$D/recorded.txt"
		echo "  workload CPU time (s):"
		verdict "$D/unrecorded-cpu.txt" "$D/recorded-cpu.txt"
		awk -v c="$cpus" -v h="$HOSTCPUS" '{cpu += $1; wall += $2} END {
			printf "  recorder CPU time: %.3f ms per s, %.3f ms per s per sampled CPU, %.3f%% of this machine'"'"'s %d CPUs\n",
				cpu / wall * 1000, cpu / wall * 1000 / c, cpu / wall / h * 100, h}' "$D/observer.txt"
	done
done

# window WHERE TOOL INTERVAL_S: prints "syscalls preads reads
# task_clock_ms samples" of TOOL in its steady state: perf stat attached
# to it for a window of W seconds, 2 s after it started (its start-up
# left out), W/INTERVAL samples. WHERE is host or a machine for hwpemu
# run.
window() {
	w=$(awk -v i="$3" 'BEGIN {print (i < 1 ? 4 : 6 * i)}')
	case $2 in
	hwpprobe) cmd="$T/hwpprobe record -i ${3}s -o $T/c.rec --force -- sleep $(awk -v w="$w" 'BEGIN {print w + 3}')" ;;
	turbostat) cmd="env $SHIM_ENV turbostat --quiet --interval $3 --num_iterations $(awk -v w="$w" -v i="$3" 'BEGIN {print int((w + 3) / i)}') --show Busy%,Bzy_MHz,TSC_MHz,CoreTmp,PkgTmp,PkgWatt,CorWatt" ;;
	esac
	# turbostat sleeps INTERVAL between samples, so it takes fewer than
	# W/INTERVAL: its samples are its headers printed in the window.
	cat > "$T/window.sh" <<EOS
$cmd >$T/tool.out 2>&1 &
sleep 2
h0=\$(grep -c Busy% $T/tool.out)
perf stat -x, -o $T/perf.out -e raw_syscalls:sys_enter,syscalls:sys_enter_pread64,syscalls:sys_enter_read,task-clock -p \$! -- sleep $w
echo \$((\$(grep -c Busy% $T/tool.out) - h0)) > $T/headers
wait
EOS
	case $1 in
	host) sh "$T/window.sh" >/dev/null 2>&1 ;;
	*) "$T/hwpemu" run "$1" -- sh "$T/window.sh" >/dev/null 2>&1 ;;
	esac
	rm -f "$T/c.rec"
	n=$(awk -v w="$w" -v i="$3" 'BEGIN {print w / i}')
	[ "$2" = turbostat ] && n=$(cat "$T/headers")
	awk -F, -v n="$n" '$3 == "raw_syscalls:sys_enter" {s = $1}
		$3 == "syscalls:sys_enter_pread64" {p = $1} $3 == "syscalls:sys_enter_read" {r = $1} $3 == "task-clock" {c = $1}
		END {print s + 0, p + 0, r + 0, c + 0, n}' "$T/perf.out"
}

case " ${PARTS:-ratio calls} " in *" calls "*) ;; *) exit 0 ;; esac
echo
echo "Steady state per sample per CPU (perf stat attached for 4 s at 0.1s, 6 s at 1s):"
printf '%-9s %-9s %-8s %4s %20s %17s %16s %17s\n' machine tool interval cpus syscalls/cpu/sample pread/cpu/sample read/cpu/sample cpu_us/cpu/sample
for spec in host:host:$HOSTCPUS mtl-165u:mtl-165u:14 mtl-2cpu:$T/mtl-2cpu.yaml:2; do
	name=${spec%%:*} rest=${spec#*:}
	m=${rest%:*} cpus=${rest##*:}
	tools=hwpprobe
	[ "$name" = mtl-2cpu ] && tools="hwpprobe turbostat"
	for tool in $tools; do
		for iv in 0.1 1; do
			set -- $(window "$m" "$tool" "$iv")
			awk -v c="$cpus" -v s="$1" -v p="$2" -v r="$3" -v t="$4" -v n="$5" -v name="$name" -v tool="$tool" -v iv="${iv}s" 'BEGIN {
				d = n * c
				if (s == 0) { printf "%-9s %-9s %-8s not counted\n", name, tool, iv; exit }
				printf "%-9s %-9s %-8s %4d %20.2f %17.2f %16.2f %17.1f\n", name, tool, iv, c, s/d, p/d, r/d, t*1000/d}'
		done
	done
done
