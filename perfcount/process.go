// SPDX-License-Identifier: Apache-2.0

package perfcount

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// ProcessEvents returns the events hwpprobe counts for a workload's process
// tree, in perf stat's default order: task-clock, cycles, instructions.
// The hardware ones may be unsupported (VMs without a PMU); Process then
// reports them as such, never as zero.
func ProcessEvents() []Event {
	tc, _ := Software("task-clock")
	cy, _ := Hardware("cycles")
	in, _ := Hardware("instructions")
	return []Event{tc, cy, in}
}

// Process counts events for one task and every task it creates
// afterwards (perf_event_attr.inherit), on any CPU, as `perf stat CMD`
// does: each event is its own counter (the kernel cannot read an inherited
// group as one), read once the tree has ended. Open it while the task is
// stopped before its first instruction (see package workload) so that the
// counts cover the whole command.
type Process struct {
	pid     int
	events  []Event
	fds     []int // -1 for events that did not open
	openErr []error
}

// ProcessCount is one event's total for a process tree.
type ProcessCount struct {
	Event Event
	// Value is the count, scaled by time_enabled/time_running when the
	// kernel multiplexed the counter (Multiplexed set); ns for task-clock.
	Value            uint64
	Enabled, Running uint64 // ns, PERF_FORMAT_TOTAL_TIME_*
	Multiplexed      bool
	// Err is why there is no count: the event did not open (wrapping
	// ErrUnsupported or ErrPermission) or could not be read. Value is
	// meaningless then.
	Err error
}

// OpenProcess opens events on pid with inherit set. An event that cannot
// be opened (the machine lacks it: ErrUnsupported; perf is not permitted:
// ErrPermission; the task is gone: ESRCH) is kept with its error, which
// Read reports as that event's Err, so that every event is accounted for.
// OpenProcess fails only when given no events.
func OpenProcess(pid int, events []Event) (*Process, error) {
	if len(events) == 0 {
		return nil, errors.New("perfcount: no events to count")
	}
	p := &Process{pid: pid, events: events}
	for _, ev := range events {
		fd, err := openInherited(ev, pid)
		p.fds = append(p.fds, fd)
		p.openErr = append(p.openErr, err)
	}
	return p, nil
}

// Counting reports whether at least one event opened.
func (p *Process) Counting() bool {
	for _, fd := range p.fds {
		if fd >= 0 {
			return true
		}
	}
	return false
}

func openInherited(ev Event, pid int) (int, error) {
	attr := eventAttr(ev, unix.PERF_FORMAT_TOTAL_TIME_ENABLED|unix.PERF_FORMAT_TOTAL_TIME_RUNNING, unix.PerfBitInherit)
	fd, err := unix.PerfEventOpen(&attr, pid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err == nil {
		return fd, nil
	}
	return -1, openError(ev, fmt.Sprintf("for pid %d", pid), err)
}

// Pid returns the task counted.
func (p *Process) Pid() int { return p.pid }

// Read returns the counts so far, one per event in the order given to
// OpenProcess. Counts of child tasks are added when they exit, so read
// after the tree has been waited for to get its totals.
func (p *Process) Read() []ProcessCount {
	out := make([]ProcessCount, len(p.events))
	var buf [24]byte
	for i, ev := range p.events {
		out[i].Event = ev
		if p.fds[i] < 0 {
			out[i].Err = p.openErr[i]
			continue
		}
		n, err := unix.Read(p.fds[i], buf[:])
		if err != nil || n != len(buf) {
			if err == nil {
				err = fmt.Errorf("short read of %d bytes", n)
			}
			out[i].Err = fmt.Errorf("read %s for pid %d: %w", ev, p.pid, err)
			continue
		}
		v := binary.NativeEndian.Uint64(buf[0:])
		out[i].Enabled = binary.NativeEndian.Uint64(buf[8:])
		out[i].Running = binary.NativeEndian.Uint64(buf[16:])
		if out[i].Running > 0 && out[i].Running < out[i].Enabled {
			v = uint64(math.Round(float64(v) * float64(out[i].Enabled) / float64(out[i].Running)))
			out[i].Multiplexed = true
		}
		out[i].Value = v
	}
	return out
}

// Close releases the counters.
func (p *Process) Close() error {
	var errs []error
	for i, fd := range p.fds {
		if fd >= 0 {
			if err := unix.Close(fd); err != nil {
				errs = append(errs, err)
			}
			p.fds[i] = -1
		}
	}
	return errors.Join(errs...)
}
