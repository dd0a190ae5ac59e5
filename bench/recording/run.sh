#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Recording read and write costs (issue #12 part 4). Run from the
# repository root:
#
#	bench/recording/run.sh [SECONDS_512]
#
# Generates synthetic recordings with the checked-in generator
# (bench/recording/gen, package internal/synth: 10 samples a second,
# figures rounded as record rounds them, 20 kernel MSR writes a second),
# then measures, one after the other in this run, the wall time, CPU time
# (user + system) and peak RSS (GNU time's %e, %U + %S and %M; the least
# times of five runs for show and zstd, of one for the others) of:
#
#   show     hwpprobe show FILE > /dev/null
#   export   hwpprobe export --csv FILE > /dev/null
#   zstd     gen -inflate FILE: the file's zstd payloads decompressed
#            alone, nothing decoded (the floor for reading it)
#
# and the ratio of show's and export's times to zstd's. The CSV export
# writes far more bytes than the file holds, so it is also measured next to
# a program that writes the same bytes from a compact form:
#
#   csv|wc   hwpprobe export --csv FILE | wc -c
#   zstd|wc  zstd -dc CSV.zst | wc -c, the same CSV compressed by zstd -1
#            beforehand (skipped without the zstd command)
#
# for 14 CPUs x 3600 s, 224 CPUs x 600 s and 512 CPUs x SECONDS_512 s
# (default 600; SPECS="CPUS:SECONDS ..." picks others). File sizes and
# bytes per CPU-sample come first. go test
# -bench in internal/synth gives the per-sample costs
# (docs/recording-format.md, "Benchmarks").
set -eu
S512=${1:-600}
T=$(mktemp -d /tmp/hwpprobe-recbench.XXXXXX)
trap 'rm -rf "$T"' EXIT
go build -o "$T/" ./cmd/hwpprobe ./bench/recording/gen
# measure N LABEL COMMAND...: runs COMMAND N times and prints the least
# wall time, the least CPU time and the largest peak RSS, keeping the two
# times in $T/LABEL.
measure() {
	n=$1
	label=$2
	shift 2
	best=
	for _ in $(seq "$n"); do
		/usr/bin/time -f "%e %U %S %M" -o "$T/time" "$@" > /dev/null
		read -r secs user sys kib < "$T/time"
		cpu=$(echo "$user + $sys" | bc -l)
		if [ -z "$best" ]; then
			best="$secs $cpu $kib"
		else
			best=$(echo "$best" | awk -v s="$secs" -v c="$cpu" -v k="$kib" \
				'{ print (s < $1 ? s : $1), (c < $2 ? c : $2), (k > $3 ? k : $3) }')
		fi
	done
	echo "$best" > "$T/$label"
	echo "$best" | awk -v l="$label" '{ printf "  %-8s %7.2f s wall %7.2f s CPU %8.1f MiB", l, $1, $2, $3 / 1024 }'
}
# ratio A B: A's wall and CPU times over B's.
ratio() {
	awk -v b="$2" 'NR == FNR { w = $1; c = $2; next }
		{ printf "%s wall, %s CPU of %s", ($1 > 0 ? sprintf("%.1fx", w / $1) : "-"), ($2 > 0 ? sprintf("%.1fx", c / $2) : "-"), b }' \
		"$T/$1" "$T/$2"
}
for spec in ${SPECS:-14:3600 224:600 512:$S512}; do
	cpus=${spec%:*}
	secs=${spec#*:}
	f="$T/r$cpus.rec"
	"$T/gen" -cpus "$cpus" -seconds "$secs" -o "$f"
	size=$(stat -c %s "$f")
	printf '%d CPUs x %d s: %d bytes, %.1f bytes per CPU-sample\n' "$cpus" "$secs" "$size" \
		"$(echo "$size / ($cpus * $secs * 10)" | bc -l)"
	measure 5 zstd "$T/gen" -inflate "$f"
	echo
	measure 5 show "$T/hwpprobe" show "$f"
	echo "   $(ratio show zstd)"
	measure 1 export "$T/hwpprobe" export --csv "$f"
	echo "   $(ratio export zstd)"
	if command -v zstd > /dev/null; then
		"$T/hwpprobe" export --csv "$f" | zstd -1 -q -c > "$T/csv.zst"
		measure 1 'zstd|wc' sh -c "zstd -dc '$T/csv.zst' | wc -c > '$T/csvsize'"
		printf '   (%d bytes of CSV)\n' "$(cat "$T/csvsize")"
		measure 1 'csv|wc' sh -c "'$T/hwpprobe' export --csv '$f' | wc -c > /dev/null"
		echo "   $(ratio 'csv|wc' 'zstd|wc')"
		rm -f "$T/csv.zst"
	else
		echo '  (no zstd command: the CSV reference is skipped)'
	fi
	rm -f "$f"
done
