#!/bin/sh
# Cost per scrape of `hwpprobe exporter` next to node_exporter's cpufreq
# and rapl collectors (Debian's prometheus-node-exporter) on the same
# emulated machine in the same run (issue 15 item 2). Needs root, hwpemu's
# FUSE emulation, curl and prometheus-node-exporter. Run from the
# repository root:
#
#	bench/exporter/run.sh [SCRAPES]
#
# For mtl-165u (14 CPUs) and spr-2s (224 CPUs), inside one `hwpemu run`,
# both exporters start, get 3 warm-up scrapes, then SCRAPES (default 50)
# sequential scrapes each, 50 ms apart; hwpprobe runs with
# --min-interval 10ms so that every scrape refreshes its figures. From the
# process's /proc/PID/io and /proc/PID/stat before and after (every
# thread):
#
#   reads/scrape   read-type system calls (read, pread64, readv; the HTTP
#                  request's own 1-2 socket reads included)
#   cpu_ms/scrape  user + system time (clock ticks)
#   ms/scrape      curl's wall time for the scrape
set -eu
N=${1:-50}
T=$(mktemp -d /tmp/hwpprobe-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
# Pure-Go builds: a cgo hwpemu deadlocks in its own namespace (see the
# Makefile).
CGO_ENABLED=0 go build -o "$T/hwpprobe" ./cmd/hwpprobe
CGO_ENABLED=0 go build -o "$T/hwpemu" ./cmd/hwpemu

# The part that runs inside the emulated machine: measure NAME PID PORT.
cat > "$T/inside.sh" <<'INSIDE'
set -eu
N=$1 T=$2 MACHINE=$3
HZ=$(getconf CLK_TCK)
io() { awk '$1=="syscr:"{print $2}' /proc/$1/io; }
ticks() { awk '{print $14+$15}' /proc/$1/stat; }
wait_up() {
	i=0
	until curl -sf -o /dev/null "http://127.0.0.1:$1/metrics"; do
		i=$((i+1)); [ $i -lt 200 ] || { echo "port $1 did not come up" >&2; exit 1; }
		sleep 0.1
	done
}
measure() {
	name=$1 pid=$2 port=$3
	wait_up "$port"
	for _ in 1 2 3; do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics"; sleep 0.05; done
	r0=$(io "$pid") c0=$(ticks "$pid") w=0
	i=0
	while [ $i -lt "$N" ]; do
		t=$(curl -sf -o "$T/$name.prom" -w '%{time_total}' "http://127.0.0.1:$port/metrics")
		w=$(echo "$w $t" | awk '{print $1+$2}')
		i=$((i+1)); sleep 0.05
	done
	r1=$(io "$pid") c1=$(ticks "$pid")
	series=$(grep -vc '^#' "$T/$name.prom")
	echo "$MACHINE $name $N $r0 $r1 $c0 $c1 $HZ $w $series" | awk '{printf "%-9s %-14s reads/scrape %8.1f  cpu_ms/scrape %7.2f  ms/scrape %7.2f  series %d\n", $1, $2, ($5-$4)/$3, ($7-$6)*1000/$8/$3, $9*1000/$3, $10}'
}
"$T/hwpprobe" exporter --listen 127.0.0.1:19977 --min-interval 10ms >"$T/hwpprobe.log" 2>&1 &
HP=$!
prometheus-node-exporter --collector.disable-defaults --collector.cpufreq --collector.rapl \
	--web.listen-address=127.0.0.1:19100 >"$T/node.log" 2>&1 &
NE=$!
measure hwpprobe $HP 19977
measure node_exporter $NE 19100
kill $HP $NE
wait $HP $NE 2>/dev/null || true
INSIDE

echo "$N scrapes each, $(nproc) host CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for m in mtl-165u spr-2s; do
	timeout 600 "$T/hwpemu" run "$m" -- sh "$T/inside.sh" "$N" "$T" "$m"
done
