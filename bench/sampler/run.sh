#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Sampler cost against turbostat on the same emulated machines (issue #4
# part 6). Needs root, hwpemu's FUSE emulation, strace, perf, cc and the
# kernel's turbostat (linux-cpupower), which runs with the project's cpuid
# shim as in internal/emu/tools_test.go (docs/hwpemu.md, "The kernel's tools"):
# internal/emu/cpuidshim answers CPUID from the emulated /dev/cpu/0/cpuid and lets
# setrlimit(RLIMIT_NOFILE) settle for the hard limit. Run from the
# repository root:
#
#	bench/sampler/run.sh [SAMPLES]
#
# For each machine it runs `hwpprobe watch` (and, where turbostat can run,
# turbostat with the same columns) under `hwpemu run` twice, with 1 and
# with 1+SAMPLES samples, and divides the difference by SAMPLES x CPUs, so
# that start-up (topology, probing) is left out:
#
#   syscalls/cpu/sample  every system call, from strace -c -f
#   pread/cpu/sample     pread64 only: MSR reads (and hwpprobe's powercap
#                        energy_uj re-reads)
#   read/cpu/sample      read: perf group reads, sysfs and /proc files
#   cpu_us/cpu/sample    task-clock (user + system time) from perf stat,
#                        over 1 and 1+SAMPLES samples at 20 ms (noisy for
#                        small SAMPLES: start-up varies by milliseconds)
#
# turbostat migrates itself to each CPU it reads, so it runs only on an
# emulated machine no larger than this VM (2 CPUs), where those
# sched_setaffinity calls are real and counted (internal/emu/tools_test.go's
# affinity shim, which turns them into no-ops, is not loaded): mtl-2cpu,
# a one-P-core cut of mtl-165u generated below. hwpprobe also runs on
# mtl-165u (14 CPUs) and on spr-2s variants with 128 and 512 CPUs.
#
# Last, both tools watch mtl-2cpu at the same time, with this VM's CPUs kept
# busy so that the emulated load is steady, and the script prints their
# PkgWatt, CorWatt and Bzy_MHz side by side. turbostat's Bzy_MHz is
# base_hz x APERF/MPERF (CPUID 0x16 base 1700 MHz from the emulated cpuid
# file), the emulated TSC also runs at 1700 MHz: both are TSC-free ratios.
set -eu
N=${1:-20}
T=$(mktemp -d /tmp/hwpprobe-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
ROOT=$(pwd)
# Pure-Go builds: a cgo hwpemu deadlocks in its own namespace (see the
# Makefile).
CGO_ENABLED=0 go build -o "$T/hwpprobe" ./cmd/hwpprobe
CGO_ENABLED=0 go build -o "$T/hwpemu" ./cmd/hwpemu
. bench/emu.sh
SHIM_ENV=$(turbostat_env "$T")

# Machines: mtl-2cpu (1 P-core, 2 threads); spr-2s cut to 128 and 512 CPUs.
mtl_2cpu "$T/mtl-2cpu.yaml"
sed -e 's/^name: spr-2s/name: spr-128/' -e 's/count: 56, threads: 2/count: 32, threads: 2/' \
    internal/emu/machines/spr-2s.yaml > "$T/spr-128.yaml"
sed -e 's/^name: spr-2s/name: spr-512/' -e 's/^packages: 2/packages: 4/' -e 's/count: 56, threads: 2/count: 64, threads: 2/' \
    internal/emu/machines/spr-2s.yaml > "$T/spr-512.yaml"

# Same columns for both tools (turbostat's names; hwpprobe adds the HWP
# request and EPB, which turbostat cannot show).
TS_COLS=Busy%,Bzy_MHz,TSC_MHz,CoreTmp,PkgTmp,PkgWatt,CorWatt
HP_COLS=$TS_COLS,HWPmin,HWPmax,HWPdes,EPP,EPB

# tool_cmd TOOL SAMPLES INTERVAL: the command line for one run.
tool_cmd() {
	case $1 in
	hwpprobe) echo "$T/hwpprobe watch -i ${3}s -n $2 --show $HP_COLS" ;;
	turbostat) echo "env $SHIM_ENV turbostat --quiet --interval $3 --num_iterations $2 --show $TS_COLS" ;;
	esac
}

# count MACHINE TOOL SAMPLES: prints "syscalls preads reads".
count() {
	cmd=$(tool_cmd "$2" "$3" 0.05)
	"$T/hwpemu" run "$1" -- sh -c "strace -f -c -o $T/strace.out $cmd >/dev/null 2>&1" >/dev/null 2>&1
	awk '$NF=="total"{t=$4} $NF=="pread64"{p=$4} $NF=="read"{r=$4} END{print t+0, p+0, r+0}' "$T/strace.out"
}

# cputime MACHINE TOOL SAMPLES: prints the task-clock in ms.
cputime() {
	cmd=$(tool_cmd "$2" "$3" 0.02)
	"$T/hwpemu" run "$1" -- sh -c "perf stat -x, -e task-clock -o $T/perf.out $cmd >/dev/null 2>&1" >/dev/null 2>&1
	awk -F, '/task-clock/{print $1}' "$T/perf.out"
}

printf '%-10s %-9s %5s %20s %17s %16s %17s\n' machine tool cpus syscalls/cpu/sample pread/cpu/sample read/cpu/sample cpu_us/cpu/sample
for spec in mtl-2cpu:$T/mtl-2cpu.yaml:2 mtl-165u:mtl-165u:14 spr-128:$T/spr-128.yaml:128 spr-512:$T/spr-512.yaml:512; do
	name=${spec%%:*} rest=${spec#*:}
	m=${rest%:*} cpus=${rest##*:}
	tools=hwpprobe
	[ "$cpus" -le "$(nproc)" ] && tools="hwpprobe turbostat"
	for tool in $tools; do
		set -- $(count "$m" "$tool" 1)
		s1=$1 p1=$2 r1=$3
		set -- $(count "$m" "$tool" $((N + 1)))
		s2=$1 p2=$2 r2=$3
		c1=$(cputime "$m" "$tool" 1)
		c2=$(cputime "$m" "$tool" $((N + 1)))
		awk -v n="$N" -v c="$cpus" -v s1="$s1" -v p1="$p1" -v r1="$r1" -v c1="$c1" -v s2="$s2" -v p2="$p2" -v r2="$r2" -v c2="$c2" \
		    -v name="$name" -v tool="$tool" 'BEGIN{d=n*c;
		    printf "%-10s %-9s %5d %20.2f %17.2f %16.2f %17.1f\n", name, tool, c, (s2-s1)/d, (p2-p1)/d, (r2-r1)/d, (c2-c1)*1000/d}'
	done
done

echo
echo "Same counters, same time (mtl-2cpu, both tools 3 x 1 s while this VM's CPUs are kept busy):"
i=0
while [ $i -lt "$(nproc)" ]; do timeout 8 sh -c 'while :; do :; done' & i=$((i + 1)); done
"$T/hwpemu" run "$T/mtl-2cpu.yaml" -- sh -c "
	$(tool_cmd turbostat 3 1) > $T/ts.out 2>$T/ts.err &
	$T/hwpprobe watch -i 1s -n 3 --show Bzy_MHz,PkgWatt,CorWatt > $T/hp.out
	wait" >/dev/null 2>&1
wait
# Both: the summary row follows each header; columns found by name.
summary() {
	awk -v who="$1" '
	/Bzy_MHz/ {for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1; next}
	hdr && (who == "turbostat" || $1 == "-") {b += $col["Bzy_MHz"]; p += $col["PkgWatt"]; c += $col["CorWatt"]; n++; hdr = 0}
	END {
		if (n == 0) {
			getline err < errf
			printf "%-10s could not read the emulated machine: no samples (%s)\n", who, err ? err : "no output"
			exit 1
		}
		printf "%-10s Bzy_MHz %7.1f  PkgWatt %7.3f  CorWatt %7.3f  (%d samples)\n", who, b/n, p/n, c/n, n}' errf="$3" "$2"
}
summary turbostat "$T/ts.out" "$T/ts.err" || status=1
summary hwpprobe "$T/hp.out" /dev/null || status=1
exit "${status:-0}"
