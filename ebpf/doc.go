// SPDX-License-Identifier: Apache-2.0

// Package ebpf traces what the kernel writes to the CPU's power-management
// registers, and the cpufreq drivers' tracepoints, with eBPF.
//
// Every MSR write the kernel makes (intel_pstate's IA32_HWP_REQUEST,
// intel_epb's IA32_ENERGY_PERF_BIAS, amd-pstate's MSR_AMD_CPPC_REQ, ...)
// fires the msr:write_msr tracepoint. A program attached there keeps only
// the wanted MSR numbers (a filter in the kernel: the numbers are written
// into the program as immediates before it is loaded, see consts.go, so a
// write of another register costs a load and a few compares and touches no
// other memory) and streams each kept write through a BPF ring buffer: time
// (CLOCK_MONOTONIC, the clock of ftrace's "mono" trace_clock), CPU, pid and
// comm of the task running there, MSR, value and whether the write faulted.
// Other tracepoints (PowerEvents: power:pstate_sample, power:cpu_frequency,
// power:cpu_frequency_limits, amd_cpu:amd_pstate_perf,
// amd_cpu:amd_pstate_epp_perf) are captured as raw records and decoded with
// the running kernel's format file, since their layouts differ by kernel.
//
// Wake-ups are batched: the kernel wakes the reader only when the unread
// data passes Options.WakeupBytes (looked at with bpf_ringbuf_query every
// 64th event per CPU), and the reader polls every Options.PollInterval, so
// an event waits at most that long and the per-event cost stays in the low
// hundreds of nanoseconds (docs/trace.md has the measurements). Events the
// ring buffer has no room for are counted per CPU in the kernel
// (Stats.Lost), hits the kernel skipped because another BPF program was
// running are read from the program's statistics (Stats.Missed): nothing is
// dropped silently. Tracer.Counts gives the in-kernel count per MSR and
// CPU, also in CountOnly mode.
//
// Use:
//
//	t, err := ebpf.Open(ebpf.Options{MSRs: []uint32{0x774, 0x1b0}})
//	if err != nil { ... }        // errors.Is: ErrPermission, ErrNoRingBuf, ErrTracepointMissing
//	defer t.Close()
//	err = t.Run(ctx, func(e *ebpf.Event) error { ...; return nil }) // until ctx is done
//	st, err := t.Stats()         // Matched, Delivered, Lost, Missed, ...
//	counts, err := t.Counts()    // per MSR and CPU
//
// Requirements: root, or CAP_BPF and CAP_PERFMON (Linux 5.8+); BPF ring
// buffers (Linux 5.8+); tracefs (mounted on /sys/kernel/tracing when it is
// not). Tracer.Inject (tests, benchmarks) needs BPF_PROG_TEST_RUN for raw
// tracepoints (Linux 5.10+).
//
// The programs are in msrtrace.c; bpf2go compiles them (go generate, see
// gen.go) into the committed msrtrace_bpfel.go and .o, so building needs no
// clang.
package ebpf
