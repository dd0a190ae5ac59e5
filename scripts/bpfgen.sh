#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Generates and checks the committed eBPF object (ebpf/msrtrace_bpfel.o and
# its Go file) against its C source (docs/testing.md, "The eBPF object").
#
#   scripts/bpfgen.sh generate   rebuild with clang (go generate) and record
#                                the compiler and the source's SHA-256 in
#                                ebpf/msrtrace.gen
#   scripts/bpfgen.sh check      fail if msrtrace.c changed since the object
#                                was generated; with the recorded clang,
#                                regenerate and require identical bytes; with
#                                any other clang, compile into a temporary
#                                directory and require the same Go bindings
#                                and the same programs, maps, licence and
#                                event layouts (internal/tools/bpfcompare)
#
# $CLANG names the compiler (default: clang).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
CLANG=${CLANG:-clang}
rec=ebpf/msrtrace.gen
src=ebpf/msrtrace.c

compiler() { "$CLANG" --version | head -n 1; }
source_sum() { sha256sum "$src" | cut -d' ' -f1; }

# bpf2go_args prints gen.go's go:generate command with -cc $CLANG and
# -output-dir $1 inserted (the flags stay where they are written once).
bpf2go_args() {
	sed -n 's|^//go:generate go tool bpf2go ||p' ebpf/gen.go | sed "s|-cc clang |-cc $CLANG -output-dir $1 |"
}

case "${1:-}" in
generate)
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	args=$(bpf2go_args "$dir")
	(cd ebpf && eval "GOPACKAGE=ebpf $GO tool bpf2go $args")
	cp "$dir"/msrtrace_bpfel.go "$dir"/msrtrace_bpfel.o ebpf/
	printf '# Written by scripts/bpfgen.sh generate: what built msrtrace_bpfel.o.\ncompiler: %s\nsource-sha256: %s\n' \
		"$(compiler)" "$(source_sum)" >"$rec"
	;;
check)
	if [ ! -f "$rec" ]; then
		echo "$rec is missing: run make generate"
		exit 1
	fi
	want_sum=$(sed -n 's/^source-sha256: //p' "$rec")
	if [ "$(source_sum)" != "$want_sum" ]; then
		echo "$src changed since msrtrace_bpfel.o was generated (its SHA-256 differs from $rec): run make generate"
		exit 1
	fi
	want_cc=$(sed -n 's/^compiler: //p' "$rec")
	have_cc=$(compiler)
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	args=$(bpf2go_args "$dir")
	(cd ebpf && eval "GOPACKAGE=ebpf $GO tool bpf2go $args")
	if [ "$have_cc" = "$want_cc" ]; then
		for f in msrtrace_bpfel.go msrtrace_bpfel.o; do
			if ! cmp -s "$dir/$f" "ebpf/$f"; then
				echo "committed eBPF object ebpf/$f is stale ($have_cc gives other bytes): run make generate"
				exit 1
			fi
		done
		echo "bpfgen: ebpf/msrtrace_bpfel.{o,go} are what $have_cc makes of $src"
		exit 0
	fi
	echo "bpfgen: $have_cc is not the recorded $want_cc: comparing structure, not bytes"
	if ! diff -u ebpf/msrtrace_bpfel.go "$dir/msrtrace_bpfel.go"; then
		echo "the Go bindings $have_cc generates differ from ebpf/msrtrace_bpfel.go: run make generate"
		exit 1
	fi
	$GO run ./internal/tools/bpfcompare ebpf/msrtrace_bpfel.o "$dir/msrtrace_bpfel.o" msr_event tp_event write_msr_ctx
	;;
*)
	echo "usage: scripts/bpfgen.sh generate|check" >&2
	exit 2
	;;
esac
