// SPDX-License-Identifier: Apache-2.0

package summary

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// maxValues is how many distinct values of a register the text lists.
const maxValues = 4

// WriteHeader prints the file-level lines: the machine and whether the
// figures are emulated. problem is the reader's Recording.Problem.
func WriteHeader(w io.Writer, m recording.Meta, end *recording.End, problem error) error {
	p := &printer{w: w}
	h := m.Host
	p.f("machine:  %s (%s family %d model %#x stepping %d, microcode %s), CPUs %s\n",
		orNA(h.CPUModel), orNA(h.Vendor), h.Family, h.Model, h.Stepping, orNA(h.Microcode), orNA(h.OnlineCPU))
	p.f("kernel:   %s %s, cpufreq driver %s\n", orNA(h.Kernel), h.Arch, orNA(h.Driver))
	if m.Emulated != "" {
		p.f("EMULATED: machine %q (hwpemu): every figure in this recording is emulated, not measured\n", m.Emulated)
		if c := m.Context; c != nil && c.Emulator != nil {
			p.f("EMULATED: model variant %s; loop %s\n", factText(c.Emulator.Variant), factText(c.Emulator.Loop))
		}
	}
	p.f("recorded: %s by %s %s: %s\n", stamp(m.TimeNs), orNA(m.Tool), orNA(m.ToolVersion), quoteArgs(m.CommandLine))
	switch {
	case problem != nil:
		p.f("file:     incomplete: %v\n", problem)
	case end == nil:
		p.f("file:     incomplete: no end record (hwpprobe was killed or the disk filled up); every whole record was read\n")
	default:
		p.f("file:     %s\n", end.Status)
	}
	return p.err
}

// WriteText prints the summary of one run.
func (s Summary) WriteText(w io.Writer) error {
	p := &printer{w: w}
	side := ""
	if s.Start.Side != "" {
		side = " side " + s.Start.Side
		if s.Start.Warmup {
			side += " (warm-up)"
		}
	}
	p.f("run %d%s: %s\n", s.Start.Run, side, quoteArgs(s.Start.Command))
	p.f("  user:      uid %d gid %d, pid %d\n", s.Start.UID, s.Start.GID, s.Start.PID)
	p.f("  started:   %s\n", stamp(s.Start.TimeNs))
	p.f("  elapsed:   %.3f s\n", s.Duration.Seconds())
	if s.End == nil {
		p.f("  exit:      unknown: the recording was cut during the run\n")
	} else {
		p.f("  exit:      %s\n", exitText(s.End))
		if s.End.UserNs+s.End.SysNs > 0 {
			p.f("  CPU time:  %.3f s user, %.3f s sys, max RSS %d KiB\n",
				float64(s.End.UserNs)/1e9, float64(s.End.SysNs)/1e9, s.End.MaxRSSKiB)
		}
	}
	for _, set := range s.Start.Settings {
		p.f("  applied:   %s=%s\n", set.Name, set.Value)
	}
	for _, set := range s.Start.Observed {
		p.f("  setting:   %s=%s\n", set.Name, set.Value)
	}
	if s.Samples == 0 {
		p.f("  samples:   none\n")
	} else {
		p.f("  samples:   %d, every %s (median), CPUs %s\n", s.Samples, s.Interval.Round(time.Millisecond), orNA(s.Meta.CPUs))
		s.writeRows(p)
	}
	if s.Start.Figures != nil {
		for _, n := range s.Start.Figures.Notes {
			p.f("  n/a:       %s: %s\n", n.Figure, n.Reason)
		}
	}
	s.writeTrace(p)
	if len(s.Changes) > 0 {
		p.f("  register changes seen in samples:\n")
		for _, c := range s.Changes {
			p.f("    cpu%d %s:\n", c.CPU, c.Name)
			for i, v := range c.Values {
				arrow := "  "
				if i > 0 {
					arrow = "->"
				}
				text := ""
				if d := RegText(c.MSR, v); d != "" {
					text = " (" + d + ")"
				}
				p.f("      %s 0x%08x%s\n", arrow, v, text)
			}
		}
	}
	for _, pr := range s.Process {
		s.writeProcess(p, pr)
	}
	for _, n := range s.Notes {
		p.f("  note:      %s\n", n.Text)
	}
	return p.err
}

func (s Summary) writeRows(p *printer) {
	tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  \tCPUs\tAvg_MHz\tBusy%%\tBzy_MHz\tTSC_MHz\tIPC\tCoreTmp\tPkgTmp\tPkgWatt\tPkg_J\tCorWatt\tRAMWatt\t\n")
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Type, r.CPUs,
			num(r.AvgMHz, 0), num(r.BusyPct, 2), num(r.BzyMHz, 0), num(r.TSCMHz, 0), num(r.IPC, 2),
			num(r.CoreTmp, 0), num(r.PkgTmp, 0), num(r.Watt("PkgWatt"), 2), num(r.Joule("PkgWatt"), 2),
			num(r.Watt("CorWatt"), 2), num(r.Watt("RAMWatt"), 2))
	}
	tw.Flush()
}

func (s Summary) writeTrace(p *printer) {
	if s.TraceN == 0 && s.Lost == 0 {
		p.f("  kernel MSR writes: none recorded\n")
		return
	}
	if s.Emulated > 0 {
		p.f("  register writes: %d events (%d by the emulated machine's model, %d by the kernel), %d lost\n",
			s.TraceN, s.Emulated, s.TraceN-s.Emulated, s.Lost)
	} else {
		p.f("  kernel MSR writes: %d events, %d lost\n", s.TraceN, s.Lost)
	}
	for _, t := range s.Trace {
		failed := ""
		if t.Failed > 0 {
			failed = fmt.Sprintf(" (%d failed)", t.Failed)
		}
		name := t.Name
		if _, ok := regs.ByAddress(t.MSR); ok {
			name += " (" + hex(uint64(t.MSR)) + ")"
		}
		if t.Emulated {
			name += " [emulated]"
		}
		p.f("    %s: %d writes%s on CPUs %s, %d distinct values\n", name, t.Writes, failed, t.CPUs, len(t.Values))
		for i, v := range t.Values {
			if i == maxValues {
				p.f("      ... %d more values\n", len(t.Values)-maxValues)
				break
			}
			text := ""
			if v.Text != "" {
				text = " (" + v.Text + ")"
			}
			p.f("      %6d x 0x%08x%s\n", v.Count, v.Raw, text)
		}
		writeWriters(p, t.Writers)
	}
}

// writeWriters prints "by sh (pid 4242) 14, kworker/0:1 (pid 40) 2",
// the first maxValues.
func writeWriters(p *printer, ws []Writer) {
	var parts []string
	for i, w := range ws {
		if i == maxValues {
			parts = append(parts, fmt.Sprintf("%d more", len(ws)-maxValues))
			break
		}
		comm := w.Comm
		if comm == "" {
			comm = "?"
		}
		parts = append(parts, fmt.Sprintf("%s (pid %d) %d", comm, w.PID, w.Writes))
	}
	if len(parts) > 0 {
		p.f("      by %s\n", strings.Join(parts, ", "))
	}
}

// writeProcess prints the counters as perf stat words them.
func (s Summary) writeProcess(p *printer, pr recording.Process) {
	p.f("  process tree of pid %d (perf stat counts, children included):\n", pr.PID)
	var cycles, instr *recording.Count
	for i := range pr.Counts {
		c := &pr.Counts[i]
		switch c.Event {
		case "cycles":
			cycles = c
		case "instructions":
			instr = c
		}
		if !c.Supported {
			// perf stat's words: <not supported> when the machine lacks
			// the event, <not counted> when it could not be counted.
			tag := "<not counted>"
			if strings.Contains(c.Error, "not supported") {
				tag = "<not supported>"
			}
			p.f("    %-14s %s  %s\n", c.Event, tag, cli.OneLine(c.Error))
			continue
		}
		extra := ""
		if c.RunningNs < c.EnabledNs && c.EnabledNs > 0 {
			extra = fmt.Sprintf("  (%.2f%% counted, scaled)", 100*float64(c.RunningNs)/float64(c.EnabledNs))
		}
		if c.Event == "task-clock" {
			util := ""
			if s.Duration > 0 {
				util = fmt.Sprintf("  # %.3f CPUs utilized", float64(c.Value)/float64(s.Duration))
			}
			p.f("    %-14s %.2f msec%s%s\n", c.Event, float64(c.Value)/1e6, util, extra)
			continue
		}
		p.f("    %-14s %d%s\n", c.Event, c.Value, extra)
	}
	if cycles != nil && instr != nil && cycles.Supported && instr.Supported && cycles.Value > 0 {
		p.f("    %-14s %.2f insn per cycle\n", "IPC", float64(instr.Value)/float64(cycles.Value))
	}
}

func exitText(e *recording.RunEnd) string {
	var s string
	switch {
	case e.Error != "":
		s = fmt.Sprintf("%s (status %d)", cli.OneLine(e.Error), e.ExitCode)
	case e.Signal != "":
		s = fmt.Sprintf("killed by signal: %s (status %d)", e.Signal, e.ExitCode)
	default:
		s = fmt.Sprintf("status %d", e.ExitCode)
	}
	if e.Interrupted {
		s += ", interrupted (hwpprobe received a signal and forwarded it)"
	}
	return s
}

func num(v recording.Value, prec int) string {
	if !v.Valid() {
		return "-"
	}
	return strconv.FormatFloat(float64(v), 'f', prec, 64)
}

func stamp(ns int64) string {
	if ns == 0 {
		return "n/a"
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// factText is a context fact's value, or "missing (why)".
func factText(f recording.Fact) string {
	if f.Value == "" {
		return "missing (" + orNA(f.Missing) + ")"
	}
	return f.Value
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func quoteArgs(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`|&;<>()*?[]#~") || strconv.Quote(s) != `"`+s+`"` {
			s = strconv.Quote(s)
		}
		q[i] = s
	}
	return strings.Join(q, " ")
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

// Write lets tabwriter write through the printer, keeping its first error.
func (p *printer) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}
