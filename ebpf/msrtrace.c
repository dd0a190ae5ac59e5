//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
//
// eBPF programs of hwpprobe's MSR tracer (package ebpf). Built with bpf2go;
// see gen.go for the exact, pinned command line.
//
// write_msr runs on every msr:write_msr tracepoint hit (every WRMSR the
// kernel makes through the paravirt/native helpers, including
// wrmsrq_on_cpu), keeps only the wanted MSR numbers (immediates, see CONST)
// and, in streaming mode, copies each matching write into a BPF ring
// buffer; write_msr_seen is the same that also counts every hit.
// test_write_msr is the same handler
// behind a raw tracepoint entry so that tests and benchmarks can feed it
// synthetic writes with BPF_PROG_TEST_RUN. tp_record attaches to any other
// tracepoint (power:*, amd_cpu:*) and copies its record's first bytes, which
// user space decodes with the tracepoint's format file.

#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

// The kernel lets a program call GPL-only helpers (bpf_probe_read_kernel
// here) only when its licence string is one that license_is_gpl_compatible
// accepts; "Dual MIT/GPL" is, and matches this file's SPDX line. The rest
// of hwpprobe is Apache-2.0 (LICENSE), which the kernel does not accept.
char __license[] SEC("license") = "Dual MIT/GPL";

#define MAX_MSRS 16
#define MAX_CPU_WORDS 16 /* 1024 CPUs */
#define RAW_BYTES 64

// Indexes of the per-CPU counters in the stats map.
enum stat {
	STAT_SEEN = 0,     // write_msr hits (every MSR), by write_msr_seen
	STAT_LOST = 1,     // matched writes not delivered: ring buffer full
	STAT_RAW = 2,      // other tracepoint hits
	STAT_RAW_LOST = 3, // of those, not delivered: ring buffer full
	STAT_MSR0 = 4,     // STAT_MSR0 + i: matched writes of the i-th wanted MSR
	STAT_MAX = STAT_MSR0 + MAX_MSRS,
};

// Load-time settings. The hot path of write_msr (a write of an MSR nobody
// asked for, i.e. nearly every write) must not touch memory beyond its
// context: a cold cache line costs more than the rest of the program. So
// the MSR numbers and flags are immediates: each CONST(k) compiles to one
// ld_imm64 of a marker (CONST_MAGIC + k) that the loader (consts.go)
// replaces with the value before loading; the verifier then sees constants
// and drops the code they rule out. Only the CPU mask, used after a match,
// stays in the frozen .rodata map.
#define CONST_MAGIC 0x7ead0000ULL
#define CONST(k)                                                              \
	({                                                                    \
		__u64 __v;                                                    \
		asm volatile("%0 = %1 ll" : "=r"(__v) : "i"(CONST_MAGIC + (k))); \
		__v;                                                          \
	})
#define K_MSR0 0            // K_MSR0 + i: the i-th wanted MSR (unused: 1 << 32, matches none)
#define K_NR_MSRS MAX_MSRS  // how many MSR slots are used
#define K_STREAM (MAX_MSRS + 1)       // 0: count only, nothing to user space
#define K_FILTER_CPUS (MAX_MSRS + 2)  // 1: keep only the CPUs in cpu_mask
#define K_WAKEUP_BYTES (MAX_MSRS + 3) // wake the reader when this much is unread

volatile const __u64 cpu_mask[MAX_CPU_WORDS] = {};

// msr_event is one matched MSR write as user space receives it.
struct msr_event {
	__u64 time_ns; // bpf_ktime_get_ns: CLOCK_MONOTONIC
	__u64 value;
	__u32 msr;
	__u32 cpu;
	__u32 pid; // thread group id of current
	__s32 failed;
	char comm[16];
};

// tp_event is one hit of another tracepoint: its record's first RAW_BYTES
// bytes (common_type at offset 0 names the event).
struct tp_event {
	__u64 time_ns;
	__u32 cpu;
	__u32 pid;
	char comm[16];
	__u8 data[RAW_BYTES] __attribute__((aligned(8)));
};

// write_msr_ctx is the msr:write_msr record as
// /sys/kernel/tracing/events/msr/write_msr/format describes it (kernel 4.2+,
// include/trace/events/msr.h); a test compares these offsets with the file.
struct write_msr_ctx {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u32 msr;   // offset 8
	__u32 __pad; // offset 12
	__u64 val;   // offset 16
	__s32 failed; // offset 24
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

// Referenced so that the types reach BTF and bpf2go emits their Go
// declarations (the pattern cilium/ebpf's examples use).
const struct msr_event *unused_msr_event __attribute__((unused));
const struct tp_event *unused_tp_event __attribute__((unused));

// count increments a per-CPU counter and returns its new value.
static __always_inline __u64 count(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&stats, &idx);
	if (!c)
		return 0;
	*c += 1;
	return *c;
}

// WAKEUP_CHECK_EVERY: how often (in events per CPU) to look at the unread
// data. Looking costs a cache miss on the consumer position, which the
// reader moves as it reads (measured: ~80 ns per event at 150,000
// events/s); a burst can thus pass the wake-up level by at most this many
// events per CPU before the reader is woken.
#define WAKEUP_CHECK_EVERY 64

static __always_inline __u64 wakeup_flag(__u64 n)
{
	// Batch wake-ups: the reader polls on a timer and is woken early only
	// when the unread data crosses wakeup_bytes (bpf_ringbuf_query, 5.8+).
	__u64 wakeup_bytes = CONST(K_WAKEUP_BYTES);
	if (wakeup_bytes && n % WAKEUP_CHECK_EVERY == 0 &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline int wanted_cpu(__u32 cpu)
{
	if (!CONST(K_FILTER_CPUS))
		return 1;
	if (cpu >= MAX_CPU_WORDS * 64)
		return 0;
	return (cpu_mask[cpu / 64] >> (cpu % 64)) & 1;
}

// wanted returns 1 + the slot of msr among the MSRs asked for, 0 if it is
// not one of them. It reads nothing but immediates.
static __always_inline int wanted(__u32 msr)
{
	__u32 i;

	__u64 nr = CONST(K_NR_MSRS);
#pragma unroll
	for (i = 0; i < MAX_MSRS; i++) {
		if (i >= nr)
			return 0;
		if (msr == CONST(K_MSR0 + i))
			return i + 1;
	}
	return 0;
}

// handle_match streams one write of a wanted MSR.
static __always_inline int handle_match(int slot, __u32 msr, __u64 val, __s32 failed)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (!wanted_cpu(cpu))
		return 0;
	__u64 n = count(STAT_MSR0 + slot);
	if (!CONST(K_STREAM))
		return 0;
	struct msr_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(STAT_LOST);
		return 0;
	}
	e->time_ns = bpf_ktime_get_ns();
	e->value = val;
	e->msr = msr;
	e->cpu = cpu;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->failed = failed;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, wakeup_flag(n));
	return 0;
}

// write_msr_match takes the context, so that write_msr keeps nothing in
// callee-saved registers on its filtered-out path.
static __noinline int write_msr_match(struct write_msr_ctx *ctx, int slot)
{
	return handle_match(slot, ctx->msr, ctx->val, ctx->failed);
}

SEC("tracepoint/msr/write_msr")
int write_msr(struct write_msr_ctx *ctx)
{
	int w = wanted(ctx->msr);
	if (!w)
		return 0;
	return write_msr_match(ctx, w - 1);
}

// write_msr_seen is write_msr that also counts every hit (STAT_SEEN); the
// loader attaches it instead of write_msr when asked to count them.
SEC("tracepoint/msr/write_msr")
int write_msr_seen(struct write_msr_ctx *ctx)
{
	count(STAT_SEEN);
	int w = wanted(ctx->msr);
	if (!w)
		return 0;
	return write_msr_match(ctx, w - 1);
}

// test_write_msr takes the tracepoint's arguments
// (TP_PROTO(unsigned msr, u64 val, int failed)); it is loaded for
// BPF_PROG_TEST_RUN (kernel 5.10+ for raw tracepoints) and never attached.
SEC("raw_tracepoint/write_msr")
int test_write_msr(struct bpf_raw_tracepoint_args *ctx)
{
	int w = wanted((__u32)ctx->args[0]);
	if (!w)
		return 0;
	return handle_match(w - 1, (__u32)ctx->args[0], ctx->args[1], (__s32)ctx->args[2]);
}

SEC("tracepoint/raw")
int tp_record(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (!wanted_cpu(cpu))
		return 0;
	__u64 n = count(STAT_RAW);
	struct tp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(STAT_RAW_LOST);
		return 0;
	}
	e->time_ns = bpf_ktime_get_ns();
	e->cpu = cpu;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	// Direct context loads cannot reach the common_* header (offsets 0-7),
	// whose common_type tells user space which tracepoint this is; copy the
	// record with bpf_probe_read_kernel (5.5+) instead. Bytes past the
	// record's end (within the per-CPU perf trace buffer) are ignored by
	// user space.
	if (bpf_probe_read_kernel(e->data, RAW_BYTES, ctx))
		__builtin_memset(e->data, 0, RAW_BYTES);
	bpf_ringbuf_submit(e, wakeup_flag(n));
	return 0;
}
