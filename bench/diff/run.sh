#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Offline diff of two long recordings (issue 13 item 8: streaming
# analysis). Run from the repository root:
#
#	bench/diff/run.sh [CPUS [SECONDS]]
#
# Generates two synthetic recordings of CPUS (default 512) x SECONDS
# (default 600) at 10 Hz with the checked-in generator (bench/recording/gen,
# package internal/synth: seeds 1 and 2, 20 kernel MSR writes a second),
# then measures, one after the other in this run, the wall time, CPU time
# (user + system) and peak RSS (GNU time's %e, %U + %S, %M) of:
#
#   scan     gen -scan FILE, once per file: every record decoded by
#            recording.ScanFile, nothing done with it (the reader's raw
#            decode, the floor for any analysis); the two runs summed,
#            the larger RSS
#   diff     hwpprobe diff --keep-disturbed A B > /dev/null: the whole
#            offline analysis and its text report (the generator's EPP
#            flips disturb every run, hence --keep-disturbed)
#   zstd     gen -inflate FILE, once per file: the zstd payloads alone
#
# then diff's time as a multiple of scan's. go test -bench Diff ./internal/analysis/
# gives the same comparison per sample for 60-second files.
set -eu
CPUS=${1:-512}
SECS=${2:-600}
T=$(mktemp -d /tmp/hwpprobe-diffbench.XXXXXX)
trap 'rm -rf "$T"' EXIT
go build -o "$T/" ./cmd/hwpprobe ./bench/recording/gen
"$T/gen" -cpus "$CPUS" -seconds "$SECS" -seed 1 -o "$T/a.hwpr"
"$T/gen" -cpus "$CPUS" -seconds "$SECS" -seed 2 -o "$T/b.hwpr"
printf '%d CPUs x %d s, two files: %d + %d bytes\n' "$CPUS" "$SECS" \
	"$(stat -c %s "$T/a.hwpr")" "$(stat -c %s "$T/b.hwpr")"
# run LABEL COMMAND...: appends "wall cpu kib" to $T/LABEL
run() {
	label=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$T/time" "$@" > /dev/null
	read -r wall user sys kib < "$T/time"
	echo "$wall $(echo "$user + $sys" | bc -l) $kib" >> "$T/$label"
}
run scan "$T/gen" -scan "$T/a.hwpr"
run scan "$T/gen" -scan "$T/b.hwpr"
run diff "$T/hwpprobe" diff --keep-disturbed "$T/a.hwpr" "$T/b.hwpr"
run zstd "$T/gen" -inflate "$T/a.hwpr"
run zstd "$T/gen" -inflate "$T/b.hwpr"
for label in scan diff zstd; do
	awk -v l="$label" '{w += $1; c += $2; if ($3 > m) m = $3}
		END {printf "  %-5s %7.2f s wall %7.2f s CPU %8.1f MiB peak RSS\n", l, w, c, m / 1024}' "$T/$label"
done
awk 'FNR == 1 {f++} f == 1 {sw += $1; sc += $2} f == 2 {dw += $1; dc += $2}
	END {printf "  diff / scan: %.2fx wall, %.2fx CPU\n", dw / sw, dc / sc}' "$T/scan" "$T/diff"
