// SPDX-License-Identifier: Apache-2.0

package ebpf

import "errors"

// Errors the tracer returns, wrapped with context; test with errors.Is.
var (
	// ErrTracepointMissing: the running kernel lacks the tracepoint (not
	// built in, or the driver that defines it is absent). The message names
	// the tracepoint.
	ErrTracepointMissing = errors.New("tracepoint not available in this kernel")
	// ErrNoRingBuf: the kernel has no BPF ring buffer (BPF_MAP_TYPE_RINGBUF
	// needs Linux 5.8+).
	ErrNoRingBuf = errors.New("kernel too old: BPF ring buffers need Linux 5.8 or later")
	// ErrPermission: loading BPF programs needs root, or CAP_BPF and
	// CAP_PERFMON (Linux 5.8+; CAP_SYS_ADMIN before).
	ErrPermission = errors.New("permission denied: run as root (or with CAP_BPF and CAP_PERFMON)")
	// ErrNoTraceFS: tracefs is neither mounted nor mountable.
	ErrNoTraceFS = errors.New("tracefs not available")
	// ErrBadEvent: a tracepoint name that is not group:name.
	ErrBadEvent = errors.New("bad tracepoint name")
	// ErrBadFormat: a tracepoint format file this package cannot parse.
	ErrBadFormat = errors.New("unparsable tracepoint format")
	// ErrTooManyMSRs: more MSR numbers than the in-kernel filter holds.
	ErrTooManyMSRs = errors.New("too many MSRs")
	// ErrBadOptions: Options that cannot work (nothing to trace, a CPU out
	// of range, a ring buffer size that is not a power of two).
	ErrBadOptions = errors.New("bad tracer options")
	// ErrClosed: the Tracer was closed.
	ErrClosed = errors.New("tracer closed")
)
