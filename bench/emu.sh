# SPDX-License-Identifier: Apache-2.0
# Emulated machines and turbostat's environment shared by the benchmarks
# that compare hwpprobe with turbostat under hwpemu (bench/sampler/run.sh,
# bench/observer/run.sh): sourced, from the repository root.

# mtl_2cpu OUT: writes mtl-2cpu, a one-P-core (2 threads) cut of
# internal/emu/machines/mtl-165u.yaml. turbostat migrates itself to each CPU it
# reads, so it runs only on an emulated machine no larger than this VM.
mtl_2cpu() {
	sed -e 's/^name: mtl-165u/name: mtl-2cpu/' \
	    -e 's/  - {type: P, count: 2, threads: 2}/  - {type: P, count: 1, threads: 2}/' \
	    -e '/  - {type: E, count: 8, threads: 1}/d' -e '/  - {type: LPE, count: 2, threads: 1}/d' \
	    internal/emu/machines/mtl-165u.yaml > "$1"
}

# turbostat_env DIR: prints the environment under which turbostat runs
# with the project's CPUID library (built into DIR): on a host without
# CPUID faulting (AMD) the library patches turbostat's CPUID
# instructions, whose addresses cpuidenv finds; without them turbostat
# would see the host's vendor and read no Intel register
# (docs/hwpemu.md, "The kernel's tools").
turbostat_env() {
	go run ./internal/tools/cpuidenv "$1" turbostat | tr '\n' ' '
}
