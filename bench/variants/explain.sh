#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Issue 23's explain criterion under the model variants: explain
# performance powersave:epp=performance, whose sides differ in min and EPP
# at once, run under `hwpemu run mtl-165u --variant V --time-scale
# TIME_SCALE` (the closed loop) with 4 equal CPU-bound jobs, should
# attribute the time to min under min-pins, to EPP under epp-voltage, and
# to neither under none. Run as root from the repository root:
#
#	bench/variants/explain.sh [RUNS [UNITS [TIME_SCALE]]] [VARIANT...]
#
# RUNS per side (default 6) after one warm-up run; UNITS of work per job
# (default 800); TIME_SCALE as in run.sh (default 1000). Prints, per
# variant, each step of explain's time attribution: the field it changes,
# the ratio with its interval and the verdict, and the wall seconds.
set -eu
RUNS=${1:-6}
UNITS=${2:-800}
SCALE=${3:-1000}
shift $(($# < 3 ? $# : 3))
VARIANTS=${*:-min-pins epp-voltage none}
T=$(mktemp -d /tmp/hwpemu-explain.XXXXXX)
trap 'rm -rf "$T"' EXIT
CGO_ENABLED=0 go build -o "$T/" ./cmd/hwpemu ./cmd/hwpprobe
export PATH="$T:$PATH"
for v in $VARIANTS; do
	t0=$(date +%s)
	hwpemu run --variant "$v" --time-scale "$SCALE" mtl-165u -- sh -c '
		g=$(sed -n "s/.*cgroup=v[12]:\([^, ]*\).*/\1/p" /sys/devices/system/cpu/hwpemu_loop)
		if [ -e "$g/cpu.shares" ]; then echo 262144 > "$g/cpu.shares"; else echo 10000 > "$g/cpu.weight"; fi
		hwpprobe explain performance powersave:epp=performance --runs "$2" --warmup 1 -C 0 --json "$1.json" -o "$1.hwpr" -- \
			sh -c "for i in 1 2 3 4; do hwpprobe workload burn $3 & done; wait" > "$1.txt"' sh "$T/$v" "$RUNS" "$UNITS" 2>/dev/null
	t1=$(date +%s)
	python3 - "$T/$v.json" "$v" $((t1 - t0)) <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for e in j["explain"]:
    if e["figure"] != "time":
        continue
    for s in e["steps"]:
        lo, hi = s.get("ratio_lo"), s.get("ratio_hi")
        f = ",".join(s["fields"]) or "(twin)"
        print("%-12s %-7s ratio %.3f [%s, %s] %s" % (sys.argv[2], f, 2.718281828459045 ** s["log_ratio"],
              "%.3f" % lo if lo is not None else "0", "%.3f" % hi if hi is not None else "inf", s["verdict"]))
    i = e.get("interaction")
    if i:
        print("%-12s %-7s ratio %.3f %s" % (sys.argv[2], "inter.", 2.718281828459045 ** i["log_ratio"], i["verdict"]))
print("%-12s %s s" % (sys.argv[2], sys.argv[3]))
PY
done
