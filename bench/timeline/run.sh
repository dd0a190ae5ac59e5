#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Cost of building a timeline (package internal/analysis/timeline, issue #14). Run
# from the repository root:
#
#	bench/timeline/run.sh [CPUS [SECONDS]]
#
# Generates one synthetic recording of CPUS x SECONDS (default 512 x 3600)
# at 10 Hz with the checked-in generator (bench/recording/gen, package
# internal/synth), then measures, one after the other in this run, the
# wall time and peak RSS (GNU time's %e and %M) of:
#
#   scan       gen -scan FILE: every record decoded by recording.ScanFile
#              and dropped (the reader's raw decode, no work)
#   timeline   build FILE > /dev/null: the timeline built and written as
#              JSON (per core type, 2000 points a series)
#   per-cpu    build -per-cpu FILE > /dev/null: with series per CPU too
#
# each twice, alternating, so that the host's load falls on both.
# Results: docs/report.md, "Timelines and decimation".
set -eu
CPUS=${1:-512}
SECS=${2:-3600}
T=$(mktemp -d /tmp/hwpprobe-tlbench.XXXXXX)
trap 'rm -rf "$T"' EXIT
go build -o "$T/" ./bench/recording/gen ./bench/timeline/build
measure() { # label command...
	label=$1
	shift
	/usr/bin/time -f "%e %U %M" -o "$T/time" "$@" > /dev/null 2> "$T/err" || { cat "$T/err" "$T/time" >&2; exit 1; }
	read -r secs user kib < "$T/time"
	printf '  %-9s %7.2f s wall %7.2f s user %8.1f MiB  %s\n' "$label" "$secs" "$user" "$(echo "$kib / 1024" | bc -l)" "$(cat "$T/err")"
}
f="$T/r.rec"
"$T/gen" -cpus "$CPUS" -seconds "$SECS" -o "$f"
printf '%d CPUs x %d s at 10 Hz: %d bytes\n' "$CPUS" "$SECS" "$(stat -c %s "$f")"
for i in 1 2; do
	measure scan "$T/gen" -scan "$f"
	measure timeline "$T/build" "$f"
	measure per-cpu "$T/build" -per-cpu "$f"
done
