// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"slices"
	"sync"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// VarLoad is a LoadSource whose busy fractions another goroutine sets:
// hwpemu's closed loop (emu/closedloop) measures what a command uses and
// sets it here. Until the first Set every CPU is idle. It is safe for
// concurrent use.
type VarLoad struct {
	mu   sync.Mutex
	busy []float64
}

// Set makes busy[n] emulated CPU n's busy fraction from now on (the
// Machine reads it when it next advances, at most every 10 ms). The slice
// is copied.
func (v *VarLoad) Set(busy []float64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.busy = slices.Clone(busy)
}

// Busy implements LoadSource.
func (v *VarLoad) Busy() []float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.busy == nil {
		return []float64{0}
	}
	return slices.Clone(v.busy)
}

// CPUFreq is one emulated CPU's frequencies.
type CPUFreq struct {
	CPU    int
	Online bool
	// MHz is the frequency the model delivers now: what scaling_cur_freq
	// and /proc/cpuinfo show (power limits included).
	MHz float64
	// MaxMHz is the highest it can deliver: HWP Highest_Performance
	// (AMD: CPPC highest) times the performance unit; the TSC rate
	// without a driver.
	MaxMHz float64
}

// Frequencies advances the machine to its clock's present and returns
// every CPU's delivered and highest frequency, in CPU order.
func (m *Machine) Frequencies() []CPUFreq {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance()
	out := make([]CPUFreq, len(m.cpus))
	for i, c := range m.cpus {
		out[i] = CPUFreq{CPU: c.n, Online: c.online, MHz: c.lastMHz, MaxMHz: m.highestMHz(c)}
	}
	return out
}

// highestMHz is the highest frequency c can deliver (see CPUFreq.MaxMHz).
func (m *Machine) highestMHz(c *cpu) float64 {
	switch m.desc.Driver.Name {
	case "intel_pstate":
		v, _ := m.constMSR(c, msrHWPCapabilities)
		return float64(hwp.DecodeCapabilities(v).Highest) * float64(c.ct.PerfKHz) / 1000
	case "amd-pstate-epp":
		return float64(m.amdPerfToFreq(c, m.amdCaps(c).highest)) / 1000
	}
	return float64(m.desc.TSCMHz)
}

// ModelsFrequency reports whether the machine models a delivered
// frequency that follows its requests: it has a cpufreq driver (a
// captured machine, or one without a driver, runs at its TSC rate).
func (m *Machine) ModelsFrequency() bool { return m.desc.Driver.Name != "" }

// LoopPath is where, in the tree, the closed loop's state is served
// (sysfs.EmulatedLoop).
const LoopPath = sysfs.EmulatedLoop

// WithLoopInfo serves info's text at LoopPath: whether the command under
// hwpemu runs in a closed loop (docs/emulator.md, "Closed loop"). Without
// it the file reads "open", as under hwpemu serve.
func WithLoopInfo(info func() string) Option { return func(m *Machine) { m.loopInfo = info } }

// loopText is the content of LoopPath.
func (m *Machine) loopText() []byte {
	if m.loopInfo == nil {
		return []byte("open\n")
	}
	return []byte(m.loopInfo() + "\n")
}

// loopFile is the file at LoopPath.
func (m *Machine) loopFile() *vfs.File {
	return &vfs.File{Mode: 0o444, Read: func() ([]byte, error) { return m.loopText(), nil }}
}
