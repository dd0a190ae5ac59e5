// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	cebpf "github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// Limits of the in-kernel filters (msrtrace.c).
const (
	MaxMSRs  = 16   // MSR numbers one Tracer can watch
	MaxCPUs  = 1024 // highest CPU number + 1 the CPU filter covers
	RawBytes = 64   // bytes of another tracepoint's record that are captured
)

// Defaults of Options.
const (
	DefaultRingBytes    = 4 << 20
	DefaultPollInterval = 100 * time.Millisecond
)

// Options configures a Tracer. The zero value is not useful: set MSRs,
// Events or both.
type Options struct {
	// MSRs are the MSR numbers whose writes are kept (at most MaxMSRs); the
	// filter runs in the kernel. Empty: msr:write_msr is not traced.
	MSRs []uint32
	// CPUs keeps only events on these CPUs (in the kernel); empty: all.
	CPUs []int
	// Events are other tracepoints to trace, as "group:name" (see
	// PowerEvents). Each must exist (ReadFormat tells).
	Events []string
	// CountSeen counts every msr:write_msr hit (Stats.Seen). It costs a
	// write to a per-CPU counter on every hit, including the writes the
	// filter drops, so it is off unless asked for.
	CountSeen bool
	// CountOnly counts matched writes in the kernel (Stats.Matched) and
	// delivers no events: the cheapest way to know how often a register is
	// written.
	CountOnly bool
	// TraceFS is the tracefs directory; "" finds (or mounts) it under "/".
	TraceFS string
	// RingBytes is the ring buffer's size: a power of two, at least a page;
	// 0 means DefaultRingBytes.
	RingBytes int
	// WakeupBytes: the kernel wakes the reader when this much data is
	// unread; below it the reader finds the data on its periodic poll.
	// 0 means RingBytes/4.
	WakeupBytes int
	// PollInterval bounds how long an event waits in the ring buffer when
	// the wake-up level is not reached; 0 means DefaultPollInterval.
	PollInterval time.Duration
}

// Event is one traced kernel event: an MSR write (Tracepoint == nil) or a
// hit of another tracepoint.
type Event struct {
	TimeNs uint64 // bpf_ktime_get_ns: CLOCK_MONOTONIC, ftrace's "mono" clock
	CPU    uint32 // CPU the event happened on (for MSR writes: whose MSR was written)
	PID    uint32 // process (thread group) running on that CPU at the time
	Comm   string // its command name
	MSR    uint32
	Value  uint64
	Failed bool // the write faulted (#GP)
	// Emulated marks a write an emulated machine's model made (from an
	// EmulatedLog, not the kernel): PID and Comm are then the process
	// whose sysfs write caused it, and Old is the register's value before
	// the write.
	Emulated bool
	Old      uint64
	// Tracepoint is the format of the tracepoint for events of
	// Options.Events, nil for MSR writes; Raw holds the record's first
	// RawBytes bytes, which Tracepoint.Decode reads.
	Tracepoint *Format
	Raw        [RawBytes]byte
}

// Fields decodes a tracepoint event's record (nil for MSR writes).
func (e *Event) Fields() []FieldValue {
	if e.Tracepoint == nil {
		return nil
	}
	return e.Tracepoint.Decode(e.Raw[:])
}

// Stats are the tracer's counters. Lost events are counted, never dropped
// silently.
type Stats struct {
	Seen           uint64 `json:"seen"`            // msr:write_msr hits, every MSR and CPU (with Options.CountSeen)
	Matched        uint64 `json:"matched"`         // MSR writes that passed the MSR and CPU filters
	TracepointHits uint64 `json:"tracepoint_hits"` // hits of Options.Events that passed the CPU filter
	Lost           uint64 `json:"lost"`            // events dropped in the kernel: ring buffer full
	// Missed counts tracepoint hits the kernel did not run the programs
	// for because another BPF program was running on that CPU (an
	// interrupt in the middle of one: bpf_prog_active; the program's
	// recursion_misses, Linux 5.12+; 0 before).
	Missed    uint64 `json:"missed"`
	Delivered uint64 `json:"delivered"` // events handed to Run's callback
	// Emulated counts the delivered (in CountOnly mode: matched) writes
	// that came from an emulated machine's log (Event.Emulated); they are
	// also in Matched and Delivered.
	Emulated uint64 `json:"emulated,omitempty"`
}

// Tracer traces the kernel's MSR writes and other tracepoints with eBPF.
// Run must be called from one goroutine at a time; Stats and Close may be
// called from any.
type Tracer struct {
	objs      msrtraceObjects
	links     []link.Link
	rd        *ringbuf.Reader
	formats   map[uint16]*Format
	msrs      []uint32 // Options.MSRs: slot i of the filter is msrs[i]
	poll      time.Duration
	delivered atomic.Uint64
	closed    atomic.Bool

	rec   ringbuf.Record
	comms map[[16]byte]string
}

// Record sizes (msrtrace.c: struct msr_event and struct tp_event); the
// reader tells records apart by their size.
const (
	msrEventSize = int(unsafe.Sizeof(msrtraceMsrEvent{}))
	tpEventSize  = int(unsafe.Sizeof(msrtraceTpEvent{}))
)

// Open checks the kernel, loads the programs and attaches them. It needs
// root (or CAP_BPF and CAP_PERFMON, Linux 5.8+), BPF ring buffers (Linux
// 5.8+) and the tracepoints asked for; errors wrap ErrPermission,
// ErrNoRingBuf and ErrTracepointMissing. On kernels before 5.11, which
// charge BPF memory to RLIMIT_MEMLOCK, it lifts that limit for the process.
// Close the Tracer when done.
func Open(opts Options) (*Tracer, error) {
	if len(opts.MSRs) == 0 && len(opts.Events) == 0 {
		return nil, fmt.Errorf("ebpf: nothing to trace: no MSRs and no tracepoints: %w", ErrBadOptions)
	}
	if len(opts.MSRs) > MaxMSRs {
		return nil, fmt.Errorf("ebpf: %d MSRs, the in-kernel filter holds %d: %w", len(opts.MSRs), MaxMSRs, ErrTooManyMSRs)
	}
	var mask [MaxCPUs / 64]uint64
	for _, c := range opts.CPUs {
		if c < 0 || c >= MaxCPUs {
			return nil, fmt.Errorf("ebpf: CPU %d out of range 0-%d: %w", c, MaxCPUs-1, ErrBadOptions)
		}
		mask[c/64] |= 1 << (c % 64)
	}
	ring := opts.RingBytes
	if ring == 0 {
		ring = DefaultRingBytes
	}
	if ring < os.Getpagesize() || ring&(ring-1) != 0 {
		return nil, fmt.Errorf("ebpf: ring buffer size %d: want a power of two of at least %d: %w", ring, os.Getpagesize(), ErrBadOptions)
	}
	wake := opts.WakeupBytes
	if wake == 0 {
		wake = ring / 4
	}
	poll := opts.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}

	tracefs := opts.TraceFS
	if tracefs == "" {
		var err error
		if tracefs, err = FindTraceFS("/"); err != nil {
			return nil, fmt.Errorf("ebpf: %w", err)
		}
	}
	if len(opts.MSRs) > 0 {
		f, err := ReadFormat(tracefs, WriteMSR)
		if err != nil {
			return nil, fmt.Errorf("ebpf: %w", err)
		}
		if err := CheckWriteMSRFormat(f); err != nil {
			return nil, fmt.Errorf("ebpf: %w", err)
		}
	}
	formats := make(map[uint16]*Format)
	var events []string // opts.Events without duplicates
	for _, ev := range opts.Events {
		f, err := ReadFormat(tracefs, ev)
		if err != nil {
			return nil, fmt.Errorf("ebpf: %w", err)
		}
		if formats[f.ID] == nil {
			formats[f.ID] = f
			events = append(events, ev)
		}
	}

	if err := checkKernel(); err != nil {
		return nil, err
	}
	spec, err := loadMsrtrace()
	if err != nil {
		return nil, fmt.Errorf("ebpf: %w", err)
	}
	consts := constValues(opts.MSRs, !opts.CountOnly, len(opts.CPUs) > 0, uint64(wake))
	if err := patchConsts(spec, consts); err != nil {
		return nil, fmt.Errorf("ebpf: %w", err)
	}
	if err := spec.Variables[msrtraceVarCpuMask].Set(mask); err != nil {
		return nil, fmt.Errorf("ebpf: set %s: %w", msrtraceVarCpuMask, err)
	}
	spec.Maps[msrtraceMapEvents].MaxEntries = uint32(ring)

	t := &Tracer{formats: formats, poll: poll, comms: make(map[[16]byte]string), msrs: slices.Clone(opts.MSRs)}
	if err := spec.LoadAndAssign(&t.objs, nil); err != nil {
		return nil, fmt.Errorf("ebpf: load programs: %w", permission(err))
	}
	if len(opts.MSRs) > 0 {
		prog := t.objs.WriteMsr
		if opts.CountSeen {
			prog = t.objs.WriteMsrSeen
		}
		if err := t.attach(WriteMSR, prog); err != nil {
			t.Close()
			return nil, err
		}
	}
	for _, ev := range events {
		if err := t.attach(ev, t.objs.TpRecord); err != nil {
			t.Close()
			return nil, err
		}
	}
	if t.rd, err = ringbuf.NewReader(t.objs.Events); err != nil {
		t.Close()
		return nil, fmt.Errorf("ebpf: ring buffer reader: %w", err)
	}
	return t, nil
}

// checkKernel probes for BPF ring buffers (5.8+) and lifts RLIMIT_MEMLOCK,
// which kernels before 5.11 charge BPF memory to.
func checkKernel() error {
	if err := features.HaveMapType(cebpf.RingBuf); err != nil {
		if errors.Is(err, cebpf.ErrNotSupported) {
			return fmt.Errorf("ebpf: %w", ErrNoRingBuf)
		}
		return fmt.Errorf("ebpf: probe BPF ring buffer support: %w", permission(err))
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		return fmt.Errorf("ebpf: %w", permission(err))
	}
	return nil
}

// permission turns EPERM into ErrPermission, keeping the cause. (EACCES
// is the verifier rejecting a program, not a missing privilege.)
func permission(err error) error {
	if errors.Is(err, unix.EPERM) {
		return fmt.Errorf("%w (%v)", ErrPermission, err)
	}
	return err
}

func (t *Tracer) attach(event string, prog *cebpf.Program) error {
	group, name, err := SplitEvent(event)
	if err != nil {
		return fmt.Errorf("ebpf: %w", err)
	}
	l, err := link.Tracepoint(group, name, prog, nil)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("ebpf: attach %s: %w", event, ErrTracepointMissing)
	}
	if err != nil {
		return fmt.Errorf("ebpf: attach %s: %w", event, permission(err))
	}
	t.links = append(t.links, l)
	return nil
}

// Run reads events and calls fn for each until ctx is done; then it stops
// tracing (detaches the programs, so Stats stay final and Matched =
// Delivered + Lost), delivers what is left in the ring buffer and returns
// nil. An error from fn stops Run and is returned. The Event passed to fn
// is reused: copy what must outlive the call. Events reach fn at most
// PollInterval after they happened, sooner when the ring buffer fills past
// the wake-up level. Run is meant to be called once.
func (t *Tracer) Run(ctx context.Context, fn func(*Event) error) error {
	return t.RunFlush(ctx, fn, nil)
}

// RunFlush is Run that also calls flush, when it is not nil, each time it
// has delivered everything in the ring buffer: the moment to flush
// buffered output.
func (t *Tracer) RunFlush(ctx context.Context, fn func(*Event) error, flush func() error) error {
	if t.rd == nil || t.closed.Load() {
		return ErrClosed
	}
	stop := context.AfterFunc(ctx, func() { _ = t.rd.Flush() })
	defer stop()
	var ev Event
	stopping := false
	t.rd.SetDeadline(time.Now().Add(t.poll))
	for {
		err := t.rd.ReadInto(&t.rec)
		switch {
		case err == nil:
			if !t.decode(t.rec.RawSample, &ev) {
				continue
			}
			t.delivered.Add(1)
			if err := fn(&ev); err != nil {
				return err
			}
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ringbuf.ErrFlushed):
			// The ring buffer was drained.
			if flush != nil {
				if err := flush(); err != nil {
					return err
				}
			}
			if stopping {
				return nil
			}
			if ctx.Err() != nil {
				// Detach, then read what the programs wrote until then.
				if err := t.detach(); err != nil {
					return err
				}
				stopping = true
				t.rd.SetDeadline(time.Unix(1, 0))
				continue
			}
			t.rd.SetDeadline(time.Now().Add(t.poll))
		case errors.Is(err, os.ErrClosed):
			return ErrClosed
		default:
			return fmt.Errorf("ebpf: read ring buffer: %w", err)
		}
	}
}

// detach closes the tracepoint links: the programs stop running.
func (t *Tracer) detach() error {
	var errs []error
	for _, l := range t.links {
		errs = append(errs, l.Close())
	}
	t.links = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ebpf: detach: %w", err)
	}
	return nil
}

// decode fills ev from one ring buffer record; false for a record of an
// unknown size or tracepoint (which cannot happen with msrtrace.c).
func (t *Tracer) decode(b []byte, ev *Event) bool {
	le := binary.LittleEndian
	switch len(b) {
	case msrEventSize:
		// struct msr_event: time_ns 0, value 8, msr 16, cpu 20, pid 24, failed 28, comm 32.
		ev.TimeNs = le.Uint64(b[0:])
		ev.Value = le.Uint64(b[8:])
		ev.MSR = le.Uint32(b[16:])
		ev.CPU = le.Uint32(b[20:])
		ev.PID = le.Uint32(b[24:])
		ev.Failed = le.Uint32(b[28:]) != 0
		ev.Comm = t.comm(b[32:48])
		ev.Tracepoint = nil
		return true
	case tpEventSize:
		// struct tp_event: time_ns 0, cpu 8, pid 12, comm 16, data 32.
		ev.TimeNs = le.Uint64(b[0:])
		ev.CPU = le.Uint32(b[8:])
		ev.PID = le.Uint32(b[12:])
		ev.Comm = t.comm(b[16:32])
		copy(ev.Raw[:], b[32:])
		ev.MSR, ev.Value, ev.Failed = 0, 0, false
		ev.Tracepoint = t.formats[le.Uint16(ev.Raw[0:])]
		return ev.Tracepoint != nil
	}
	return false
}

// comm returns the NUL-terminated command name, interned so that the
// reader does not allocate per event.
func (t *Tracer) comm(b []byte) string {
	var key [16]byte
	copy(key[:], b)
	if s, ok := t.comms[key]; ok {
		return s
	}
	n := 0
	for n < len(key) && key[n] != 0 {
		n++
	}
	s := string(key[:n])
	if len(t.comms) >= 4096 {
		clear(t.comms)
	}
	t.comms[key] = s
	return s
}

// Stats returns the counters so far.
func (t *Tracer) Stats() (Stats, error) {
	var s Stats
	if t.closed.Load() {
		return s, ErrClosed
	}
	for idx, dst := range map[uint32]*uint64{
		statSeen: &s.Seen, statLost: &s.Lost,
		statRaw: &s.TracepointHits, statRawLost: &s.Lost,
	} {
		var perCPU []uint64
		if err := t.objs.Stats.Lookup(idx, &perCPU); err != nil {
			return s, fmt.Errorf("ebpf: read counters: %w", err)
		}
		for _, v := range perCPU {
			*dst += v
		}
	}
	for i := range t.msrs {
		var perCPU []uint64
		if err := t.objs.Stats.Lookup(uint32(statMSR0+i), &perCPU); err != nil {
			return s, fmt.Errorf("ebpf: read counters: %w", err)
		}
		for _, v := range perCPU {
			s.Matched += v
		}
	}
	for _, p := range []*cebpf.Program{t.objs.WriteMsr, t.objs.WriteMsrSeen, t.objs.TpRecord} {
		ps, err := p.Stats()
		if err != nil {
			return s, fmt.Errorf("ebpf: program statistics: %w", err)
		}
		s.Missed += ps.RecursionMisses
	}
	s.Delivered = t.delivered.Load()
	return s, nil
}

// Indexes of the stats map (msrtrace.c: enum stat).
const (
	statSeen    = 0
	statLost    = 1
	statRaw     = 2
	statRawLost = 3
	statMSR0    = 4 // statMSR0 + i: writes of Options.MSRs[i]
)

// MSRCount is how many writes of one MSR on one CPU passed the filters.
type MSRCount struct {
	MSR      uint32
	CPU      int
	Writes   uint64
	Emulated bool // counted by an EmulatedLog: writes of the emulated machine's model
}

// Counts returns the in-kernel count of matched writes per MSR and CPU
// (non-zero ones, in Options.MSRs order, then by CPU). It is exact in
// CountOnly mode too, where no events are delivered.
func (t *Tracer) Counts() ([]MSRCount, error) {
	if t.closed.Load() {
		return nil, ErrClosed
	}
	var out []MSRCount
	for i, msr := range t.msrs {
		var perCPU []uint64
		if err := t.objs.Stats.Lookup(uint32(statMSR0+i), &perCPU); err != nil {
			return nil, fmt.Errorf("ebpf: read counters: %w", err)
		}
		for cpu, v := range perCPU {
			if v > 0 {
				out = append(out, MSRCount{MSR: msr, CPU: cpu, Writes: v})
			}
		}
	}
	return out, nil
}

// Inject runs the MSR-write handler once, in the kernel, as if the kernel
// had written value to msr (BPF_PROG_TEST_RUN on a raw tracepoint program,
// Linux 5.10+). With cpu < 0 it runs on the calling thread's CPU and the
// event's pid and comm are the caller's; with cpu >= 0 it runs on that CPU
// (through an IPI when the caller is elsewhere, and then the pid and comm
// are those of the task interrupted there). The event goes through the same
// filters and ring buffer as real writes. For tests and for measuring the
// reader at rates the kernel does not produce.
func (t *Tracer) Inject(cpu int, msr uint32, value uint64, failed bool) error {
	if t.closed.Load() {
		return ErrClosed
	}
	f := int64(0)
	if failed {
		f = 1
	}
	args := [3]uint64{uint64(msr), value, uint64(f)}
	opts := cebpf.RunOptions{Context: args[:]}
	if cpu >= 0 {
		opts.CPU, opts.Flags = uint32(cpu), unix.BPF_F_TEST_RUN_ON_CPU
	}
	if _, err := t.objs.TestWriteMsr.Run(&opts); err != nil {
		return fmt.Errorf("ebpf: inject write of MSR %#x on CPU %d: %w", msr, cpu, permission(err))
	}
	return nil
}

// Close detaches and unloads the programs; Run returns ErrClosed.
func (t *Tracer) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	var errs []error
	if t.rd != nil {
		errs = append(errs, t.rd.Close())
	}
	errs = append(errs, t.detach(), t.objs.Close())
	return errors.Join(errs...)
}
