// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// WriteLogLen is how many register writes the machine keeps: the oldest
// is dropped when a new one would exceed it. A reader notices the loss as
// a gap in the sequence numbers.
const WriteLogLen = 4096

// WriteLogPath is where, in the tree, the register writes are served: one
// line per write, oldest first (MSRWrite.String).
const WriteLogPath = sysfs.EmulatedWrites

// MSRWrite is one write the model made to a register as the kernel's
// driver would (intel_pstate's HWP_REQUEST and PERF_CTL, intel_epb's EPB,
// amd-pstate's CPPC_REQ, intel_rapl's MSR_PKG_POWER_LIMIT), caused by a
// write to a sysfs file.
type MSRWrite struct {
	Seq    uint64 // 1 for the machine's first logged write, then +1 per write
	TimeNs uint64 // CLOCK_MONOTONIC, the clock of the kernel's msr:write_msr timestamps
	CPU    int    // whose register (package registers: the package's first CPU)
	MSR    uint32
	Old    uint64 // the register before the write
	New    uint64 // the value written
	PID    int    // the process whose sysfs write caused it (thread group id; 0: unknown)
	Comm   string // its command name ("" unknown)
}

// String formats w as a line of the log file: "seq time_ns cpu msr old new
// pid comm", the register numbers and values in hex with 0x, the command
// name last ("-" when unknown; it may hold spaces).
func (w MSRWrite) String() string {
	comm := strings.ReplaceAll(w.Comm, "\n", "?") // one line per write
	if comm == "" {
		comm = "-"
	}
	return fmt.Sprintf("%d %d %d %#x %#x %#x %d %s", w.Seq, w.TimeNs, w.CPU, w.MSR, w.Old, w.New, w.PID, comm)
}

// writeLog holds the recent writes and who is writing now.
type writeLog struct {
	on      bool // false while the driver starts: nothing can read them yet
	seq     uint64
	entries []MSRWrite // ring of WriteLogLen, next at seq % WriteLogLen
	writer  vfs.Caller // the process whose sysfs write is being applied
	ago     uint64     // how long before the present the write being applied was made, ns (platform.go)
	mono    func() uint64
}

// monoNow returns CLOCK_MONOTONIC in nanoseconds.
func monoNow() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Nano())
}

// wrmsr is the model's wrmsr: it sets c's register addr to v and logs the
// write with the process applying a sysfs write. Every write is logged,
// also one that leaves the value unchanged, as the kernel's drivers write
// (and msr:write_msr fires) unconditionally. Caller holds m.mu.
func (m *Machine) wrmsr(c *cpu, addr uint32, v uint64) {
	old := c.regs[addr]
	c.regs[addr] = v
	l := &m.writes
	if !l.on {
		return
	}
	if l.entries == nil {
		l.entries = make([]MSRWrite, WriteLogLen)
	}
	l.seq++
	l.entries[l.seq%WriteLogLen] = MSRWrite{Seq: l.seq, TimeNs: l.mono() - l.ago, CPU: c.n, MSR: addr,
		Old: old, New: v, PID: l.writer.PID, Comm: l.writer.Comm}
}

// wrmsrIfChanged is wrmsr for drivers that skip a write of the value the
// register already holds (amd-pstate's msr_update_perf() and
// msr_set_epp(): "if (value == prev) return 0").
func (m *Machine) wrmsrIfChanged(c *cpu, addr uint32, v uint64) {
	if c.regs[addr] != v {
		m.wrmsr(c, addr, v)
	}
}

// MSRWrites returns the logged writes, oldest first (at most WriteLogLen).
func (m *Machine) MSRWrites() []MSRWrite {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.msrWrites()
}

func (m *Machine) msrWrites() []MSRWrite {
	l := &m.writes
	first := uint64(1)
	if l.seq > WriteLogLen {
		first = l.seq - WriteLogLen + 1
	}
	out := make([]MSRWrite, 0, l.seq-first+1)
	for s := first; s <= l.seq; s++ {
		out = append(out, l.entries[s%WriteLogLen])
	}
	return out
}

// writeLogText is the log file's content.
func (m *Machine) writeLogText() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for _, w := range m.msrWrites() {
		b.WriteString(w.String())
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
