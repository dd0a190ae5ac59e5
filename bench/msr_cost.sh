#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# In-kernel cost per msr:write_msr event of hwpprobe's eBPF program next to
# bpftrace's, attached at the same time (so both see exactly the same
# events), from the kernel's BPF run-time statistics
# (kernel.bpf_stats_enabled), under timerload: MSR 0x6E0 written ~15,000
# times a second (timerload.c). Then hwpprobe's delivered
# and lost events at that rate. Needs root, bpftool, bpftrace, cc.
#
# Usage: bench/msr_cost.sh [SECONDS]    (run from the repository root)
# Cases (hwpprobe | bpftrace):
#   filtered  --msr 0x774 --count-only     | /args->msr == 0x774/ { @[cpu] = count(); }   (never matches here)
#   count     --msr 0x6e0 --count-only     | /args->msr == 0x6e0/ { @[cpu] = count(); }
#   stream    --msr 0x6e0 --json >/dev/null | /args->msr == 0x6e0/ { printf(...) } >/dev/null
# CASES="filtered count" runs only those. Then the Go benchmarks: the
# user-space reader per event, and events delivered/lost at ~80x and 10x
# timerload's rate with synthetic writes (BPF_PROG_TEST_RUN).
set -euo pipefail
secs=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'sysctl -qw kernel.bpf_stats_enabled=0; kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/hwpprobe" "$root/cmd/hwpprobe"
cc -O2 -o "$work/timerload" "$root/bench/timerload.c"
sysctl -qw kernel.bpf_stats_enabled=1

max_id() { bpftool prog show 2>/dev/null | { grep -oE '^[0-9]+:' || echo 0:; } | tr -d : | sort -n | tail -1; }

# prog_cost MIN MAX: "ns/event events" of the tracepoint programs named
# write_msr (hwpprobe's and bpftrace's have that name) with MIN < id <= MAX.
prog_cost() {
	bpftool prog show 2>/dev/null | awk -v min="$1" -v max="$2" '
	  /^[0-9]+:/ { id = $1 + 0; name = ""; rt = 0; rc = 0
	               for (i = 1; i <= NF; i++) { if ($i == "name") name = $(i+1); if ($i == "run_time_ns") rt = $(i+1); if ($i == "run_cnt") rc = $(i+1) }
	               if (id > min && id <= max && $2 == "tracepoint" && name == "write_msr") { RT += rt; RC += rc } }
	  END { if (RC > 0) printf "%.1f %d\n", RT / RC, RC; else print "- 0" }'
}

run_case() { # NAME HWPPROBE_ARGS BPFTRACE_PROGRAM
	local name=$1 hargs=$2 bprog=$3
	local id0 id1 id2
	id0=$(max_id)
	# Each tracer's programs are told apart by their ids: the first
	# started gets ids in (id0, id1], the second in (id1, id2].
	# BPFTRACE_FIRST=1 swaps the attach order (the kernel runs the
	# programs in attach order; it makes no measurable difference here).
	local h b
	if [ -z "${BPFTRACE_FIRST:-}" ]; then
		"$work/hwpprobe" trace $hargs --events none --json >"$work/$name.jsonl" 2>"$work/$name.err" &
		h=$!
	else
		bpftrace -e "$bprog" >/dev/null 2>&1 &
		b=$!
	fi
	sleep 2
	id1=$(max_id)
	if [ -z "${BPFTRACE_FIRST:-}" ]; then
		bpftrace -e "$bprog" >/dev/null 2>&1 &
		b=$!
	else
		"$work/hwpprobe" trace $hargs --events none --json >"$work/$name.jsonl" 2>"$work/$name.err" &
		h=$!
	fi
	sleep 2
	id2=$(max_id)
	local rate
	rate=$("$work/timerload" "$secs" | awk '{print $1}')
	local hc bc
	if [ -z "${BPFTRACE_FIRST:-}" ]; then
		hc=$(prog_cost "$id0" "$id1")
		bc=$(prog_cost "$id1" "$id2")
	else
		bc=$(prog_cost "$id0" "$id1")
		hc=$(prog_cost "$id1" "$id2")
	fi
	kill -INT "$h" "$b"
	wait "$h" || true
	wait "$b" 2>/dev/null || true
	local summary
	summary=$(tail -1 "$work/$name.jsonl")
	printf '%-9s %6s sleeps/s | hwpprobe %7s ns/event (%s events) | bpftrace %7s ns/event (%s events)\n' \
		"$name" "$rate" ${hc% *} ${hc#* } ${bc% *} ${bc#* }
	echo "$summary" | python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]; c = s["counters"]; d = s["duration_ns"] / 1e9
print("          hwpprobe over %.1f s: %.0f matched/s, %.0f delivered/s, %d lost, %d missed" % (d, c["matched"] / d, c["delivered"] / d, c["lost"], c["missed"]))'
}

echo "kernel $(uname -r), $(nproc) CPUs, bpftrace $(bpftrace --version | awk '{print $2}'), ${secs}s of timerload per case"
want() { [[ " ${CASES:-filtered count stream} " == *" $1 "* ]]; }
want filtered && run_case filtered "--msr 0x774 --count-only" 'tracepoint:msr:write_msr /args->msr == 0x774/ { @[cpu] = count(); }'
want count && run_case count "--msr 0x6e0 --count-only" 'tracepoint:msr:write_msr /args->msr == 0x6e0/ { @[cpu] = count(); }'
want stream && run_case stream "--msr 0x6e0" 'tracepoint:msr:write_msr /args->msr == 0x6e0/ { printf("%d %d %s %x %llx %d\n", cpu, pid, comm, args->msr, args->val, args->failed); }'

echo "synthetic writes (BPF_PROG_TEST_RUN), 1,000,000 per benchmark:"
(cd "$root" && go test -run '^$' -bench . -benchtime 1000000x ./ebpf/ | grep ^Benchmark)
