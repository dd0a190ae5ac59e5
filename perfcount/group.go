// SPDX-License-Identifier: Apache-2.0

package perfcount

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	perf "github.com/hodgesds/perf-utils"
	"golang.org/x/sys/unix"
)

// Hardware returns a generic hardware event (PERF_TYPE_HARDWARE) by its
// perf name: "cycles", "instructions" or "ref-cycles". Whether the CPU
// counts it is known only when a Group opens it.
func Hardware(name string) (Event, error) {
	var a unix.PerfEventAttr
	switch name {
	case "cycles", "cpu-cycles":
		a = perf.CPUCyclesEventAttr()
	case "instructions":
		a = perf.CPUInstructionsEventAttr()
	case "ref-cycles":
		a = perf.CPURefCyclesEventAttr()
	default:
		return Event{}, fmt.Errorf("hardware event %q: %w", name, ErrUnsupported)
	}
	return Event{PMU: "cpu", Name: name, Type: a.Type, Config: a.Config, Scale: 1}, nil
}

// Software returns a software event (PERF_TYPE_SOFTWARE) by its perf
// name: "task-clock", "cpu-clock" (both in ns), "context-switches",
// "cpu-migrations" or "page-faults".
func Software(name string) (Event, error) {
	var a unix.PerfEventAttr
	unit := ""
	switch name {
	case "task-clock":
		a, unit = perf.CPUTaskClockEventAttr(), "ns"
	case "cpu-clock":
		a, unit = perf.CPUClockEventAttr(), "ns"
	case "context-switches", "cs":
		a = perf.ContextSwitchesEventAttr()
	case "cpu-migrations":
		a = perf.CPUMigrationsEventAttr()
	case "page-faults":
		a = perf.PageFaultsEventAttr()
	default:
		return Event{}, fmt.Errorf("software event %q: %w", name, ErrUnsupported)
	}
	return Event{PMU: "software", Name: name, Type: a.Type, Config: a.Config, Scale: 1, Unit: unit}, nil
}

// Skipped is an event a Group could not open, with the reason (wrapping
// ErrUnsupported, ErrPermission or the errno).
type Skipped struct {
	Event Event
	Err   error
}

// Group is a perf event group on one CPU (or one task), read atomically
// with a single read(2) of the leader into a preallocated buffer.
type Group struct {
	pid, cpu int
	fds      []int // fds[0] is the leader
	events   []Event
	ids      []uint64
	buf      []byte
	skipped  []Skipped
}

const readFormat = unix.PERF_FORMAT_GROUP | unix.PERF_FORMAT_TOTAL_TIME_ENABLED |
	unix.PERF_FORMAT_TOTAL_TIME_RUNNING | unix.PERF_FORMAT_ID

// OpenGroup opens events as one group counting on cpu for pid (pid -1 and
// cpu >= 0: every task on that CPU, as perf stat -a; needs root). Events
// the machine lacks are skipped and listed by Skipped; the first event
// that opens leads. OpenGroup fails only when no event opens, with the
// reasons joined (each wrapping ErrUnsupported, ErrPermission or the
// errno).
func OpenGroup(pid, cpu int, events []Event) (*Group, error) {
	g := &Group{pid: pid, cpu: cpu}
	for _, ev := range events {
		leader := -1
		if len(g.fds) > 0 {
			leader = g.fds[0]
		}
		fd, err := openEvent(ev, pid, cpu, leader, leader < 0)
		if err != nil {
			g.skipped = append(g.skipped, Skipped{ev, err})
			continue
		}
		var id uint64
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.PERF_EVENT_IOC_ID, uintptr(unsafe.Pointer(&id))); e != 0 {
			unix.Close(fd)
			g.Close()
			return nil, fmt.Errorf("%s on cpu%d: PERF_EVENT_IOC_ID: %w", ev, cpu, e)
		}
		g.fds = append(g.fds, fd)
		g.events = append(g.events, ev)
		g.ids = append(g.ids, id)
	}
	if len(g.fds) == 0 {
		errs := make([]error, len(g.skipped))
		for i, s := range g.skipped {
			errs[i] = s.Err
		}
		return nil, errors.Join(errs...)
	}
	// The leader was opened disabled and is enabled with its siblings
	// now, as perf stat does: a sibling added to a group that is already
	// counting is not scheduled until the group is, so per-CPU siblings
	// read 0 for ever (seen on these VMs; TestRealMSRPMU checks it).
	if err := unix.IoctlSetInt(g.fds[0], unix.PERF_EVENT_IOC_ENABLE, unix.PERF_IOC_FLAG_GROUP); err != nil {
		g.Close()
		return nil, fmt.Errorf("enable perf group on cpu%d: %w", cpu, err)
	}
	g.buf = make([]byte, 8*(3+2*len(g.fds)))
	return g, nil
}

// eventAttr returns the perf_event_attr that counts ev with read_format
// format and flag bits bits. It sets no exclude_* bits: the msr and power
// PMUs reject them (EINVAL), and system-wide counting wants kernel time too.
func eventAttr(ev Event, format, bits uint64) unix.PerfEventAttr {
	return unix.PerfEventAttr{
		Type:        ev.Type,
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Config:      ev.Config,
		Ext1:        ev.Config1,
		Ext2:        ev.Config2,
		Read_format: format,
		Bits:        bits,
	}
}

func openEvent(ev Event, pid, cpu, leader int, disabled bool) (int, error) {
	attr := eventAttr(ev, readFormat, 0)
	if disabled {
		attr.Bits = unix.PerfBitDisabled
	}
	fd, err := unix.PerfEventOpen(&attr, pid, cpu, leader, unix.PERF_FLAG_FD_CLOEXEC)
	if err == nil {
		return fd, nil
	}
	where := fmt.Sprintf("on cpu%d", cpu)
	if pid >= 0 {
		where = fmt.Sprintf("on pid %d", pid)
	}
	return -1, openError(ev, where, err)
}

// openError maps an error from perf_event_open of ev to ErrUnsupported or
// ErrPermission where it is one; where says whose counter it was ("on
// cpu3", "for pid 42").
func openError(ev Event, where string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV), errors.Is(err, unix.EINVAL):
		return fmt.Errorf("%s %s (%v): %w", ev, where, err, ErrUnsupported)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("%s %s: %w", ev, where, ErrPermission)
	}
	return fmt.Errorf("%s %s: perf_event_open: %w", ev, where, err)
}

// CPU returns the CPU the group counts on (-1: any).
func (g *Group) CPU() int { return g.cpu }

// Events returns the events that opened, in the order of Reading.Values.
func (g *Group) Events() []Event { return g.events }

// Index returns the position of the event called name in Events, or -1.
func (g *Group) Index(name string) int {
	for i, e := range g.events {
		if e.Name == name {
			return i
		}
	}
	return -1
}

// Skipped returns the events that could not be opened and why.
func (g *Group) Skipped() []Skipped { return g.skipped }

// Reading is one read of a group: cumulative counts since the group was
// opened, and how long the group was enabled and running on the PMU.
type Reading struct {
	Enabled uint64   // ns the group was enabled
	Running uint64   // ns the group was on the PMU (< Enabled: multiplexed)
	Values  []uint64 // raw cumulative counts, indexed as Group.Events
}

// NewReading returns a Reading sized for g.
func (g *Group) NewReading() Reading { return Reading{Values: make([]uint64, len(g.fds))} }

// Read reads every counter of the group with one read(2) of the leader.
// It does not allocate; r must come from NewReading.
func (g *Group) Read(r *Reading) error {
	n, err := unix.Read(g.fds[0], g.buf)
	if err != nil {
		return fmt.Errorf("read perf group on cpu%d: %w", g.cpu, err)
	}
	if n < 24 {
		return fmt.Errorf("read perf group on cpu%d: short read (%d bytes)", g.cpu, n)
	}
	le := binary.LittleEndian
	nr := int(le.Uint64(g.buf))
	if nr != len(g.fds) || n < 8*(3+2*nr) {
		return fmt.Errorf("read perf group on cpu%d: %d counters in %d bytes, want %d", g.cpu, nr, n, len(g.fds))
	}
	r.Enabled = le.Uint64(g.buf[8:])
	r.Running = le.Uint64(g.buf[16:])
	for k := 0; k < nr; k++ {
		off := 24 + 16*k
		v, id := le.Uint64(g.buf[off:]), le.Uint64(g.buf[off+8:])
		i := k
		if g.ids[i] != id { // the kernel lists siblings in opening order; check anyway
			if i = slices.Index(g.ids, id); i < 0 {
				return fmt.Errorf("read perf group on cpu%d: counter id %d is not one of the group's", g.cpu, id)
			}
		}
		r.Values[i] = v
	}
	return nil
}

// Close closes the group's descriptors.
func (g *Group) Close() error {
	var errs []error
	for i := len(g.fds) - 1; i >= 0; i-- {
		if err := unix.Close(g.fds[i]); err != nil {
			errs = append(errs, err)
		}
	}
	g.fds = nil
	return errors.Join(errs...)
}

// Count is an event's count over an interval.
type Count struct {
	// Value is the delta, scaled by the interval's
	// time_enabled/time_running when Multiplexed.
	Value uint64
	// Multiplexed is set when the group ran for only part of the
	// interval and Value is an estimate (perf stat's scaling).
	Multiplexed bool
	// NotCounted is set when the group never ran in the interval
	// (time_running did not advance): there is no count, not a zero.
	NotCounted bool
}

// Delta returns event i's count between two readings of the same group,
// scaled as perf stat does when the group was multiplexed:
// count x Δtime_enabled / Δtime_running.
func Delta(prev, cur *Reading, i int) Count {
	d := cur.Values[i] - prev.Values[i]
	de := cur.Enabled - prev.Enabled
	dr := cur.Running - prev.Running
	switch {
	case dr == 0 && de > 0:
		return Count{NotCounted: true}
	case dr >= de:
		return Count{Value: d}
	}
	return Count{Value: uint64(math.Round(float64(d) * float64(de) / float64(dr))), Multiplexed: true}
}
