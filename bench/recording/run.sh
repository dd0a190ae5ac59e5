#!/bin/sh
# Recording read and write costs (issue #12 part 4). Run from the
# repository root:
#
#	bench/recording/run.sh [SECONDS_512]
#
# Generates synthetic recordings with the checked-in generator
# (bench/recording/gen, package recording/synth: 10 samples a second,
# figures rounded as record rounds them, 20 kernel MSR writes a second),
# then measures, one after the other in this run, the wall time and peak
# RSS (GNU time's %e and %M) of:
#
#   show     hwpprobe show FILE > /dev/null
#   export   hwpprobe export --csv FILE > /dev/null
#   zstd     gen -inflate FILE: the file's zstd payloads decompressed
#            alone, nothing decoded (the floor for reading it)
#
# for 14 CPUs x 3600 s, 224 CPUs x 600 s and 512 CPUs x SECONDS_512 s
# (default 600). File sizes and bytes per CPU-sample follow. go test -bench
# in recording/synth gives the per-sample costs (docs/recording-format.md,
# "Benchmarks").
set -eu
S512=${1:-600}
T=$(mktemp -d /tmp/hwpprobe-recbench.XXXXXX)
trap 'rm -rf "$T"' EXIT
go build -o "$T/" ./cmd/hwpprobe ./bench/recording/gen
measure() { # label command...
	label=$1
	shift
	/usr/bin/time -f "%e %M" -o "$T/time" "$@" > /dev/null
	read -r secs kib < "$T/time"
	printf '  %-7s %7.2f s %8.1f MiB\n' "$label" "$secs" "$(echo "$kib / 1024" | bc -l)"
}
for spec in 14:3600 224:600 512:$S512; do
	cpus=${spec%:*}
	secs=${spec#*:}
	f="$T/r$cpus.rec"
	"$T/gen" -cpus "$cpus" -seconds "$secs" -o "$f"
	size=$(stat -c %s "$f")
	printf '%d CPUs x %d s: %d bytes, %.1f bytes per CPU-sample\n' "$cpus" "$secs" "$size" \
		"$(echo "$size / ($cpus * $secs * 10)" | bc -l)"
	measure show "$T/hwpprobe" show "$f"
	measure export "$T/hwpprobe" export --csv "$f"
	measure zstd "$T/gen" -inflate "$f"
	rm -f "$f"
done
