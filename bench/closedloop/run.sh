#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# hwpemu's closed loop (docs/emulator.md, "Closed loop"), measured. Run as
# root from the repository root:
#
#	bench/closedloop/run.sh [UNITS]
#
# 1. A CPU-bound loop (hwpprobe workload burn UNITS, default 1200: one busy
#    thread) under `hwpemu run mtl-165u`, with every CPU's scaling_max_freq
#    at 400000, 1700000 and 4900000 kHz in turn. The loop's CPU time W is
#    measured in the same run (GNU time %U + %S: on a VM whose host steals
#    time the same work's CPU time varies from run to run). The model's
#    prediction of its wall time is W x ref_mhz / f, f the delivered
#    frequency of CPU 0 (where the closed loop places the only busy
#    process) read from scaling_cur_freq while the loop runs, ref_mhz from
#    hwpemu_loop. The group's weight is raised (as the tests do) so that
#    other work on the host does not take the time the quota grants.
# 2. The control loop's own host CPU cost: CPU time (user + system, GNU
#    time, hwpemu and everything it waited for) of `hwpemu run mtl-165u --
#    CMD` for 10 s, closed loop minus --open-loop, with CMD one sleeping
#    process and 20 sleeping processes.
set -eu
UNITS=${1:-1200}
T=$(mktemp -d /tmp/hwpemu-loopbench.XXXXXX)
trap 'rm -rf "$T"' EXIT
CGO_ENABLED=0 go build -o "$T/" ./cmd/hwpemu ./cmd/hwpprobe
export PATH="$T:$PATH"
printf '%-12s %-13s %-10s %-12s %-12s %s\n' scaling_max delivered_MHz CPU_s predicted_s measured_s measured/predicted
for max in 400000 1700000 4900000; do
	hwpemu run --closed-loop mtl-165u -- sh -c '
		g=$(sed -n "s/.*cgroup=v[12]:\([^, ]*\).*/\1/p" /sys/devices/system/cpu/hwpemu_loop)
		if [ -e "$g/cpu.shares" ]; then echo 262144 > "$g/cpu.shares"; else echo 10000 > "$g/cpu.weight"; fi
		for f in /sys/devices/system/cpu/cpu*/cpufreq/scaling_max_freq; do echo '"$max"' > $f; done
		sleep 0.3
		t0=$(date +%s%N)
		/usr/bin/time -o /dev/fd/3 -f "%U %S" hwpprobe workload burn '"$UNITS"' 3>&1 >/dev/null | awk "{print \$1 + \$2}" > /tmp/hwpemu-loopbench-w.$$ & p=$!
		sleep 0.5; cur=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq)
		wait $p; t1=$(date +%s%N)
		ref=$(sed -n "s/.*ref_mhz=\([0-9.]*\).*/\1/p" /sys/devices/system/cpu/hwpemu_loop)
		echo '"$max"' $cur $ref $((t1 - t0)) $(cat /tmp/hwpemu-loopbench-w.$$); rm -f /tmp/hwpemu-loopbench-w.$$' 2>/dev/null |
	awk '{mhz = $2 / 1000; pred = $5 * $3 / mhz; meas = $4 / 1e9
		printf "%-12s %-13.0f %-10.2f %-12.3f %-12.3f %.2f\n", $1, mhz, $5, pred, meas, meas / pred}'
done
cpu() { /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'; }
for n in 1 20; do
	cmd="for i in \$(seq $n); do sleep 10 & done; wait"
	closed=$(cpu hwpemu run --closed-loop mtl-165u -- sh -c "$cmd")
	open=$(cpu hwpemu run --open-loop mtl-165u -- sh -c "$cmd")
	echo "$n sleeping process(es), 10 s: closed loop ${closed} s CPU, open loop ${open} s CPU"
done
