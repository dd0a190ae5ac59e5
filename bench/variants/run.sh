#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Issue 23's acceptance diffs (cmd/hwpprobe TestVariantsFound) in full:
# --runs auto instead of 5 runs per side, longer runs, and one warm-up run
# per side. Run as root from the repository root:
#
#	bench/variants/run.sh [UNITS [TIME_SCALE]]
#
# Under `hwpemu run mtl-165u --variant V --time-scale TIME_SCALE` (the
# closed loop, the default), for each variant, hwpprobe diff of the two
# sides the variant separates, or should not, with a workload of 4 equal
# CPU-bound jobs (`hwpprobe workload burn UNITS`, default 2400: about 3 s
# a run on the 2-CPU development VM), next to `hwpemu predict`'s work
# ratio for 4 busy CPUs (the time ratio B/A should be its inverse):
#
#	min-pins      performance      vs powersave:epp=0            (predicted 1 / 1.527)
#	none          performance      vs powersave:epp=0            (1)
#	epp-voltage   powersave:epp=0  vs powersave:epp=performance  (1 / 1.118)
#	epp-voltage   performance      vs powersave:epp=0            (1)
#
# TIME_SCALE (default 1000) divides the power limits' windows: PL1's 28 s
# becomes 28 ms, so that each run spends nearly all its time under PL1, as
# predict's steady state does. With 1, runs must last minutes for the same.
# The loop's group weight is raised (as the tests do) so that other work on
# the host does not take the time its quota grants. Prints one line per
# diff: variant, sides, runs per side, ratio B/A and its interval, p,
# verdict, predicted ratio, wall seconds.
set -eu
UNITS=${1:-2400}
SCALE=${2:-1000}
T=$(mktemp -d /tmp/hwpemu-variants.XXXXXX)
trap 'rm -rf "$T"' EXIT
CGO_ENABLED=0 go build -o "$T/" ./cmd/hwpemu ./cmd/hwpprobe
export PATH="$T:$PATH"
printf '%-12s %-44s %-5s %-26s %-8s %-7s %-9s %s\n' variant sides runs "ratio B/A [interval]" p verdict predicted seconds
n=0
for spec in "min-pins performance powersave:epp=0" "none performance powersave:epp=0" \
	"epp-voltage powersave:epp=0 powersave:epp=performance" "epp-voltage performance powersave:epp=0"; do
	set -- $spec
	v=$1 a=$2 b=$3 n=$((n + 1))
	pred=$(hwpemu predict mtl-165u --variant "$v" --busy-cpus 4 "$a" "$b" 2>/dev/null | awk -v b="$b" '$1 == b {print 1 / $NF}')
	t0=$(date +%s)
	hwpemu run --variant "$v" --time-scale "$SCALE" mtl-165u -- sh -c '
		g=$(sed -n "s/.*cgroup=v[12]:\([^, ]*\).*/\1/p" /sys/devices/system/cpu/hwpemu_loop)
		if [ -e "$g/cpu.shares" ]; then echo 262144 > "$g/cpu.shares"; else echo 10000 > "$g/cpu.weight"; fi
		hwpprobe diff "$1" "$2" --runs auto --warmup 1 -C 0 --json "$3.json" -o "$3.hwpr" -- \
			sh -c "for i in 1 2 3 4; do hwpprobe workload burn $4 & done; wait" > "$3.txt"' sh "$a" "$b" "$T/d$n" "$UNITS" 2>/dev/null
	t1=$(date +%s)
	python3 - "$T/d$n.json" "$v" "$a vs $b" "$pred" $((t1 - t0)) <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["figures"][0]
lo, hi = f.get("ratio_lo"), f.get("ratio_hi")
iv = "%.3f [%s, %s]" % (f["ratio"], "%.3f" % lo if lo is not None else "-inf", "%.3f" % hi if hi is not None else "inf")
print("%-12s %-44s %-5d %-26s %-8.4f %-7s %-9.3f %s" % (sys.argv[2], sys.argv[3], f["a"]["n"], iv, f["p"], f["delta"], float(sys.argv[4]), sys.argv[5]))
PY
done
