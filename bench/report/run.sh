#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Size and render time of hwpprobe report's page (issue #14). Run from the
# repository root:
#
#	bench/report/run.sh [CPUS [SECONDS]]
#
# Generates synthetic recordings at 10 Hz with the checked-in generator
# (bench/recording/gen, package internal/synth): one of CPUS x SECONDS
# (default 512 x 3600) and a second one, seed 2, of the same size; then
#
#   record page   hwpprobe report r1.rec -o record.html
#   diff page     hwpprobe report r1.rec r2.rec -o diff.html (two
#                 recordings compared, two columns of timelines)
#
# each timed (GNU time: wall, user CPU, peak RSS), and opens a blank page
# and both pages in one headless Chromium, three rounds, alternating
# (bench/report/render): the time from navigation to the page's
# self-check marker, and the time its script took to draw the charts.
# Results: docs/report.md, "Scale".
set -eu
CPUS=${1:-512}
SECS=${2:-3600}
T=$(mktemp -d /tmp/hwpprobe-reportbench.XXXXXX)
trap 'rm -rf "$T"' EXIT
go build -o "$T/" ./bench/recording/gen ./bench/report/render ./cmd/hwpprobe
measure() { # label command...
	label=$1
	shift
	/usr/bin/time -f "%e %U %M" -o "$T/time" "$@" > /dev/null 2> "$T/err" || { cat "$T/err" "$T/time" >&2; exit 1; }
	read -r secs user kib < "$T/time"
	printf '  %-12s %7.2f s wall %7.2f s user %8.1f MiB peak RSS\n' "$label" "$secs" "$user" "$(echo "$kib / 1024" | bc -l)"
}
"$T/gen" -cpus "$CPUS" -seconds "$SECS" -o "$T/r1.rec"
"$T/gen" -cpus "$CPUS" -seconds "$SECS" -seed 2 -o "$T/r2.rec"
printf '%d CPUs x %d s at 10 Hz: %d bytes each\n' "$CPUS" "$SECS" "$(stat -c %s "$T/r1.rec")"
measure scan "$T/gen" -scan "$T/r1.rec"
measure record-page "$T/hwpprobe" report "$T/r1.rec" -o "$T/record.html"
measure diff-page "$T/hwpprobe" report --keep-disturbed "$T/r1.rec" "$T/r2.rec" -o "$T/diff.html"
printf 'pages: record %d bytes, diff %d bytes\n' "$(stat -c %s "$T/record.html")" "$(stat -c %s "$T/diff.html")"
"$T/render" -n 3 "$T/record.html" "$T/diff.html"
