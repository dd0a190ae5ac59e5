// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"fmt"
	"path"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/msr"
)

// reference is what a side's settings left right after hwpprobe applied
// them: the text of every sysfs file the side writes, and the request
// registers (analysis.RequestMSRs) of the sampled CPUs. A run's settings
// held when the check just before its command starts finds the same text
// and, in the registers, the same bits the settings fix
// (analysis.SettingBits); docs/diff.md.
type reference struct {
	files []fileText
	regs  map[[2]uint64]uint64 // (cpu, msr) -> value
}

// fileText is one sysfs file a side writes and its text, "" when it could
// not be read.
type fileText struct {
	w    profile.Write
	text string
}

// unreadable stands for a file that could not be read.
const unreadable = "(unreadable)"

// checker reads what a side's settings fix: the sysfs files through fs,
// the registers of cpus through dev.
type checker struct {
	fs     sysfs.FS
	cpus   cpus.List
	dev    msr.Reader
	driver string // the cpufreq driver (analysis.SettingBits)
}

// reference reads what the side's plan left. That reading is also a
// check that finds nothing changed, returned for a run that starts before
// anything could change them (no --prepare, no cool-down).
func (c *checker) reference(plan *profile.Plan) (*reference, recording.Held) {
	h := recording.Held{TimeNs: time.Now().UnixNano()}
	ref := &reference{regs: map[[2]uint64]uint64{}}
	for _, w := range plan.Writes {
		ref.files = append(ref.files, fileText{w, c.readFile(w.Path)})
	}
	h.Regs = c.readRegs()
	for _, g := range h.Regs {
		ref.regs[[2]uint64{uint64(g.CPU), uint64(g.MSR)}] = g.Value
	}
	return ref, h
}

// check reads the side's files and the registers now and lists what
// differs from ref: a file's text, a register's bits that the settings
// fix.
func (c *checker) check(ref *reference) recording.Held {
	h := recording.Held{TimeNs: time.Now().UnixNano()}
	for _, f := range ref.files {
		if now := c.readFile(f.w.Path); now != f.text {
			h.Unheld = append(h.Unheld, recording.Unheld{CPU: f.w.CPU, Name: path.Base(f.w.Path), Want: orUnreadable(f.text), Got: orUnreadable(now)})
		}
	}
	h.Regs = c.readRegs()
	for _, g := range h.Regs {
		old, ok := ref.regs[[2]uint64{uint64(g.CPU), uint64(g.MSR)}]
		if ok && analysis.SettingBits(g.MSR, old, c.driver) != analysis.SettingBits(g.MSR, g.Value, c.driver) {
			h.Unheld = append(h.Unheld, recording.Unheld{CPU: g.CPU, Name: summary.RegName(g.MSR),
				Want: fmt.Sprintf("%#x", old), Got: fmt.Sprintf("%#x", g.Value)})
		}
	}
	return h
}

// readFile returns a sysfs file's text, "" when it cannot be read.
func (c *checker) readFile(p string) string {
	v, err := c.fs.ReadString(p)
	if err != nil {
		return ""
	}
	return v
}

// readRegs reads the request registers of the sampled CPUs; a register a
// CPU does not answer (or no msr device) is left out.
func (c *checker) readRegs() []recording.HeldReg {
	var out []recording.HeldReg
	regs := analysis.RequestMSRs()
	for _, cpu := range c.cpus {
		for _, reg := range regs {
			if v, err := c.dev.ReadMSR(cpu, reg); err == nil {
				out = append(out, recording.HeldReg{CPU: cpu, Reg: recording.Reg{MSR: reg, Value: v}})
			}
		}
	}
	return out
}

func orUnreadable(s string) string {
	if s == "" {
		return unreadable
	}
	return s
}
