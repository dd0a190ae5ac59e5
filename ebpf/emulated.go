// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// ErrNotEmulated: the root holds no emulated machine's write log
// (sysfs.EmulatedWrites); it also wraps fs.ErrNotExist.
var ErrNotEmulated = errors.New("no emulated machine's register write log")

// ErrBadLog: a line of the write log that does not parse.
var ErrBadLog = errors.New("unparsable emulated write log")

// EmulatedLog reads the register writes an emulated machine's model makes
// (hwpemu serves them at sysfs.EmulatedWrites, one line per write: "seq
// time_ns cpu msr old new pid comm"). It polls the file, keeps the writes
// that pass the Options' MSR and CPU filters and delivers those made after
// it was opened, as Events with Emulated set: the time is CLOCK_MONOTONIC
// as the kernel's tracepoint has it, PID and Comm are the process whose
// sysfs write caused the register write, Old the register's value before
// it. Writes that rotated out of the emulator's bounded log before a poll
// read them are counted in Stats.Lost (a gap in the sequence numbers).
// Run must be called from one goroutine at a time; Stats, Counts and
// Close from any.
type EmulatedLog struct {
	path      string
	msrs      []uint32
	cpus      []int
	countSeen bool
	countOnly bool
	poll      time.Duration
	closed    atomic.Bool

	mu     sync.Mutex
	last   uint64 // sequence number of the last write read
	stats  Stats
	counts map[[2]uint64]uint64 // {msr, cpu} -> writes
}

// OpenEmulated opens the write log below root and notes where it ends:
// only later writes are delivered. Options.MSRs, CPUs, CountSeen,
// CountOnly and PollInterval apply; the ring-buffer and tracepoint
// options do not.
func OpenEmulated(root string, opts Options) (*EmulatedLog, error) {
	l := &EmulatedLog{
		path: filepath.Join(root, sysfs.EmulatedWrites), msrs: slices.Clone(opts.MSRs), cpus: slices.Clone(opts.CPUs),
		countSeen: opts.CountSeen, countOnly: opts.CountOnly, poll: opts.PollInterval,
		counts: map[[2]uint64]uint64{},
	}
	if l.poll <= 0 {
		l.poll = DefaultPollInterval
	}
	ws, err := l.read()
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("ebpf: %w: %w", ErrNotEmulated, err)
	}
	if err != nil {
		return nil, err
	}
	if len(ws) > 0 {
		l.last = ws[len(ws)-1].seq
	}
	return l, nil
}

// logLine is one parsed line of the write log.
type logLine struct {
	seq uint64
	ev  Event
}

func (l *EmulatedLog) read() ([]logLine, error) {
	b, err := os.ReadFile(l.path)
	if err != nil {
		return nil, fmt.Errorf("ebpf: read emulated writes: %w", err)
	}
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if sc.Text() == "" {
			continue
		}
		ln, err := parseLogLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("ebpf: %s: %w", l.path, err)
		}
		out = append(out, ln)
	}
	return out, nil
}

// parseLogLine parses "seq time_ns cpu msr old new pid comm" (decimal
// seq, time, cpu and pid; 0x-prefixed hex msr, old and new; comm the rest
// of the line, "-" for unknown).
func parseLogLine(s string) (logLine, error) {
	f := strings.SplitN(s, " ", 8)
	if len(f) != 8 {
		return logLine{}, fmt.Errorf("%w: %q: want 8 fields", ErrBadLog, s)
	}
	var (
		v   [7]uint64
		err error
	)
	for i, bits := range []int{64, 64, 32, 32, 64, 64, 32} {
		base := 10
		if i >= 3 && i <= 5 {
			base = 0 // 0x-prefixed hex
		}
		if v[i], err = strconv.ParseUint(f[i], base, bits); err != nil {
			return logLine{}, fmt.Errorf("%w: %q: field %d: %w", ErrBadLog, s, i+1, err)
		}
	}
	comm := f[7]
	if comm == "-" {
		comm = ""
	}
	return logLine{seq: v[0], ev: Event{TimeNs: v[1], CPU: uint32(v[2]), MSR: uint32(v[3]), Old: v[4], Value: v[5],
		PID: uint32(v[6]), Comm: comm, Emulated: true}}, nil
}

// Run delivers writes as Tracer.Run does: until ctx is done, then what is
// left; nil then.
func (l *EmulatedLog) Run(ctx context.Context, fn func(*Event) error) error {
	return l.RunFlush(ctx, fn, nil)
}

// RunFlush is Run that calls flush after each poll that delivered writes.
func (l *EmulatedLog) RunFlush(ctx context.Context, fn func(*Event) error, flush func() error) error {
	if l.closed.Load() {
		return ErrClosed
	}
	tick := time.NewTicker(l.poll)
	defer tick.Stop()
	for {
		done := ctx.Err() != nil // read once more after the end: writes made until then
		n, err := l.pollOnce(fn)
		if err != nil {
			return err
		}
		if n > 0 && flush != nil {
			if err := flush(); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		if l.closed.Load() {
			return ErrClosed
		}
	}
}

// pollOnce reads the log and delivers the new writes that pass the
// filters; it returns how many it delivered.
func (l *EmulatedLog) pollOnce(fn func(*Event) error) (int, error) {
	lines, err := l.read()
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range lines {
		ln := &lines[i]
		if ln.seq <= l.last {
			continue
		}
		keep := l.account(ln)
		if !keep || l.countOnly {
			continue
		}
		if err := fn(&ln.ev); err != nil {
			return n, err
		}
		n++
		l.mu.Lock()
		l.stats.Delivered++
		l.stats.Emulated++
		l.mu.Unlock()
	}
	return n, nil
}

// account counts one new write (lost ones before it, seen, matched) and
// reports whether it passes the filters.
func (l *EmulatedLog) account(ln *logLine) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ln.seq > l.last+1 {
		l.stats.Lost += ln.seq - l.last - 1
	}
	l.last = ln.seq
	if l.countSeen {
		l.stats.Seen++
	}
	if !slices.Contains(l.msrs, ln.ev.MSR) || (len(l.cpus) > 0 && !slices.Contains(l.cpus, int(ln.ev.CPU))) {
		return false
	}
	l.stats.Matched++
	if l.countOnly {
		l.stats.Emulated++
	}
	l.counts[[2]uint64{uint64(ln.ev.MSR), uint64(ln.ev.CPU)}]++
	return true
}

// Stats returns the counters so far. Lost counts writes the emulator's
// log dropped before they were read, whether or not they would have
// passed the filters.
func (l *EmulatedLog) Stats() (Stats, error) {
	if l.closed.Load() {
		return Stats{}, ErrClosed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats, nil
}

// Counts returns the matched writes per MSR (in Options.MSRs order) and
// CPU, marked Emulated.
func (l *EmulatedLog) Counts() ([]MSRCount, error) {
	if l.closed.Load() {
		return nil, ErrClosed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []MSRCount
	for _, msr := range l.msrs {
		var cpus []int
		for k := range l.counts {
			if uint32(k[0]) == msr {
				cpus = append(cpus, int(k[1]))
			}
		}
		slices.Sort(cpus)
		for _, c := range cpus {
			out = append(out, MSRCount{MSR: msr, CPU: c, Writes: l.counts[[2]uint64{uint64(msr), uint64(c)}], Emulated: true})
		}
	}
	return out, nil
}

// Close stops Run (ErrClosed at its next poll).
func (l *EmulatedLog) Close() error {
	l.closed.Store(true)
	return nil
}
