#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the build and the tests need on a fresh Debian machine:
# Go (1.26 via the module proxy's toolchain if the system one is older),
# clang + libbpf headers (eBPF objects), fuse3 (emulated machines),
# linux-cpupower (the kernel's x86_energy_perf_policy and turbostat, peers
# in tests), prometheus (a real server scrapes the exporter in its test),
# binutils (objdump: the CPUID library's sites are checked against it),
# chromium (hwpprobe report's pages are opened in headless Chromium),
# bpftool, bpftrace and linux-perf (benchmarks), node and npm (the tests of
# internal/files/recording/export read Parquet files with DuckDB from the npm registry),
# man-db, systemd, bash-completion and rpm (make package-test installs the
# .deb in a throwaway root, renders its man pages, completes through its
# completion script, verifies its unit and lists the .rpm), linux-source
# (the kernel's KTAP parser tools/testing/kunit, which the conform tests
# extract once, and the tree bench/seed builds with flex, bison, bc and
# libelf-dev) and python3-junitparser (reads conform's JUnit).
set -euo pipefail
need=()
for p in clang llvm libbpf-dev fuse3 linux-cpupower binutils bpftool bpftrace linux-perf prometheus chromium man-db systemd bash-completion rpm linux-source flex bison bc libelf-dev python3-junitparser; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if ! command -v npm >/dev/null; then
	need+=(nodejs npm)
fi
# make puts /usr/local/go/bin on PATH when no other go is there (sudo's
# secure_path drops it); run alone, this script does the same.
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
	PATH=/usr/local/go/bin:$PATH
fi
if ! command -v go >/dev/null; then
	need+=(golang-go)
fi
if [ ${#need[@]} -gt 0 ]; then
	SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# go.mod names go 1.26: an older go fetches that toolchain (GOTOOLCHAIN=auto).
go version
