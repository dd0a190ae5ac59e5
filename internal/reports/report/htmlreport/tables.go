// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

// requestFields are the rows of the request table per core type.
var requestFields = []string{"min", "max", "desired", "epp", "epb"}

// requestRow is one field of one core type: per side what the registers
// held and what each writer wrote.
type requestRow struct {
	Type, Field string
	First       bool // the core type's first row
	Held        []string
	Written     []string
	Differs     bool // the sides held different values
}

// requestRows lays the sides' request fields and EPB out per core type
// and field, side by side; on a hybrid machine the "all" rows are left
// out (the core types say more).
func requestRows(sides []analysis.SideResult) []requestRow {
	var types []topology.CoreType
	for _, s := range sides {
		for _, ct := range s.CoreTypes {
			if !slices.Contains(types, ct.Type) {
				types = append(types, ct.Type)
			}
		}
	}
	if len(types) > 1 {
		types = slices.DeleteFunc(types, func(t topology.CoreType) bool { return t == topology.All })
	}
	var rows []requestRow
	for _, t := range types {
		first := true
		for _, f := range requestFields {
			r := requestRow{Type: string(t), Field: f}
			seen := false
			for _, s := range sides {
				held, written := "-", "-"
				if ct, ok := coreType(s, t); ok {
					held, written = words.FieldCounts(ct.Held[f]), writtenText(ct.Written, f)
				}
				seen = seen || held != "-" || written != "-"
				r.Held, r.Written = append(r.Held, held), append(r.Written, written)
			}
			if !seen {
				continue
			}
			r.First, first = first, false
			r.Differs = len(sides) > 1 && slices.ContainsFunc(r.Held, func(h string) bool { return h != r.Held[0] })
			rows = append(rows, r)
		}
	}
	return rows
}

func coreType(s analysis.SideResult, t topology.CoreType) (analysis.TypeEvidence, bool) {
	for _, ct := range s.CoreTypes {
		if ct.Type == t {
			return ct, true
		}
	}
	return analysis.TypeEvidence{}, false
}

// maxWriters is how many writers a cell of the request table names; the
// rest are counted.
const maxWriters = 4

// writtenText is "hwpprobe x12: 48; kworker/0:1 x3: 40" for one field,
// the writers with the most writes first.
func writtenText(ws []analysis.Writer, field string) string {
	var parts []string
	others, otherWrites := 0, 0
	for _, w := range ws {
		v, ok := w.Fields[field]
		switch {
		case !ok:
			continue
		case len(parts) == maxWriters:
			others, otherWrites = others+1, otherWrites+w.Writes
			continue
		}
		vals := make([]string, len(v))
		for i, x := range v {
			vals[i] = fmt.Sprint(x.Value)
		}
		parts = append(parts, fmt.Sprintf("%s x%d: %s", w.Comm, w.Writes, strings.Join(vals, ", ")))
	}
	if len(parts) == 0 {
		return "-"
	}
	if others > 0 {
		parts = append(parts, fmt.Sprintf("and %d more writers (%d writes)", others, otherWrites))
	}
	return strings.Join(parts, "; ")
}

// figureRow is one compared figure: both medians with benchstat's ±,
// the delta and the p-value.
type figureRow struct {
	Name, A, B, Delta, P string
	Significant          bool
}

func figureRows(res *analysis.Result) []figureRow {
	if len(res.Multi) > 0 {
		return nil // multiRows
	}
	var rows []figureRow
	for _, f := range res.AllFigures() {
		c := f.Comparison
		rows = append(rows, figureRow{Name: f.Name + " (" + f.Unit + ")", A: words.Interval(c.A), B: words.Interval(c.B), Delta: c.Delta(),
			P: c.PString(), Significant: c.Significant})
	}
	return rows
}

// multiRow is one side of an N-side comparison: its median with
// benchstat's ±, and against the reference the delta decided on the
// Holm-adjusted p and the ratio with its simultaneous interval.
type multiRow struct {
	Figure, Side, Median, Delta, P, Ratio string
	Reference, Significant                bool
}

func multiRows(res *analysis.Result) []multiRow {
	var rows []multiRow
	for _, mf := range res.Multi {
		mc := mf.Multi
		for i, label := range mc.Labels {
			r := multiRow{Figure: mf.Name + " (" + mf.Unit + ")", Side: label, Median: words.Interval(mc.Sides[i]), Reference: i == mc.Reference}
			for _, sc := range mc.Comparisons {
				if sc.Side == i {
					c := sc.Test
					r.Delta, r.P, r.Significant = sc.Delta(), sc.PString(), sc.Significant
					hi := fmtNum(c.RatioHi, "")
					if math.IsInf(c.RatioHi, 1) {
						hi = "∞" // too few runs for the level
					}
					r.Ratio = fmt.Sprintf("%.3f [%s, %s] at %.4g%%", c.Ratio, fmtNum(c.RatioLo, ""), hi, 100*c.RatioConfidence)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// runRow is one run in file order.
type runRow struct {
	Run, Order             string
	Side, Seconds, Joules  string
	Watts, Exit, Why, Cmd  string
	Counted, Warmup, Extra bool
}

func runRows(runs []analysis.RunResult) []runRow {
	var rows []runRow
	for _, r := range runs {
		side := r.Side
		if s := r.Summary().Start.Side; s != "" {
			side = s
		}
		row := runRow{Run: fmt.Sprint(r.Run), Order: "warm-up", Side: side, Seconds: fmt.Sprintf("%.3f", r.Seconds),
			Joules: fmtNum(r.Joules, ""), Watts: fmtNum(r.PkgWatts, ""), Exit: fmt.Sprint(r.ExitCode), Why: r.Excluded,
			Cmd: quoteArgs(r.Command), Counted: r.Counted(), Warmup: r.Warmup}
		if !r.Warmup {
			row.Order = fmt.Sprint(r.Order + 1)
		}
		if s := r.Summary(); s.End == nil {
			row.Exit = "-"
		}
		rows = append(rows, row)
	}
	return rows
}

// factRow is a run's evidence (analysis.RunFacts) in words.
type factRow struct {
	Run, Side string
	words.RunFacts
}

func factRows(runs []analysis.RunResult) []factRow {
	var rows []factRow
	for _, r := range runs {
		rows = append(rows, factRow{Run: fmt.Sprint(r.Run), Side: r.Side, RunFacts: words.Facts(r.Facts)})
	}
	return rows
}

// summaryRow is a core type's figures averaged over one run (as `show`).
type summaryRow struct {
	Run, Type, CPUs, AvgMHz, BusyPct, BzyMHz, IPC, CoreTmp, PkgTmp, PkgWatt, CorWatt, Joules string
}

func summaryRows(runs []analysis.RunResult) []summaryRow {
	var rows []summaryRow
	for _, r := range runs {
		for _, row := range r.Summary().Rows {
			rows = append(rows, summaryRow{Run: fmt.Sprint(r.Run), Type: row.Type, CPUs: fmt.Sprint(row.CPUs),
				AvgMHz: val(row.AvgMHz, 0), BusyPct: val(row.BusyPct, 2), BzyMHz: val(row.BzyMHz, 0), IPC: val(row.IPC, 2),
				CoreTmp: val(row.CoreTmp, 0), PkgTmp: val(row.PkgTmp, 0), PkgWatt: val(row.Watt("PkgWatt"), 2),
				CorWatt: val(row.Watt("CorWatt"), 2), Joules: val(row.Joule("PkgWatt"), 1)})
		}
	}
	return rows
}

func val(v recording.Value, prec int) string {
	if !v.Valid() {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, float64(v))
}

// traceRow summarises the kernel's writes to one register in one run.
type traceRow struct {
	Run, Register, Writes, CPUs, Values, Writers string
}

func traceRows(runs []analysis.RunResult) []traceRow {
	var rows []traceRow
	for _, r := range runs {
		for _, t := range r.Summary().Trace {
			name := t.Name
			if t.Emulated {
				name += " (emulated)"
			}
			var vals, who []string
			for i, v := range t.Values {
				if i == 4 {
					vals = append(vals, fmt.Sprintf("and %d more", len(t.Values)-4))
					break
				}
				s := fmt.Sprintf("%#x x%d", v.Raw, v.Count)
				if v.Text != "" {
					s += " (" + v.Text + ")"
				}
				vals = append(vals, s)
			}
			for _, w := range t.Writers {
				who = append(who, fmt.Sprintf("%s[%d] x%d", w.Comm, w.PID, w.Writes))
			}
			rows = append(rows, traceRow{Run: fmt.Sprint(r.Run), Register: name, Writes: fmt.Sprint(t.Writes),
				CPUs: t.CPUs.String(), Values: strings.Join(vals, "; "), Writers: strings.Join(who, ", ")})
		}
	}
	return rows
}

// kv is a labelled line of the machine table.
type kv struct{ Key, Value string }

func machineRows(m recording.Meta, sources []string, in Info) []kv {
	h := m.Host
	rows := []kv{
		{"CPU", fmt.Sprintf("%s (%s family %d model %#x stepping %d)", orNA(h.CPUModel), orNA(h.Vendor), h.Family, h.Model, h.Stepping)},
		{"microcode", orNA(h.Microcode)},
		{"CPUs online / sampled", orNA(h.OnlineCPU) + " / " + orNA(m.CPUs)},
		{"kernel", strings.TrimSpace(orNA(h.Kernel) + " " + h.KernelVer + " " + h.Arch)},
		{"cpufreq driver", orNA(h.Driver)},
		{"hostname", orNA(h.Hostname)},
		{"recorded", stamp(m.TimeNs) + " by " + orNA(m.Tool) + " " + orNA(m.ToolVersion) + ", sampling every " + time.Duration(m.IntervalNs).String()},
		{"recording command line", quoteArgs(m.CommandLine)},
		{"files", strings.Join(sources, ", ")},
		{"page made by", "hwpprobe " + orNA(in.Version)},
	}
	if m.Emulated != "" {
		rows = append(rows, kv{"emulated machine", m.Emulated})
	}
	return rows
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func stamp(ns int64) string {
	if ns == 0 {
		return "n/a"
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05 UTC")
}

// quoteArgs joins argv, quoting words with spaces.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// sideRow is one side's settings and package evidence.
type sideRow struct {
	Label, Settings, Counted, PkgTmp, Limits, Excursions, PL2, Color string
}

func sideRows(sides []analysis.SideResult) []sideRow {
	var rows []sideRow
	for i, s := range sides {
		rows = append(rows, sideRow{Label: s.Label, Settings: words.Settings(s.Settings), Counted: fmt.Sprint(s.Counted),
			PkgTmp: fmtNum(s.PkgTmp, "°C"), Limits: words.LimitSeconds(s.LimitSeconds, 0),
			Excursions: words.NewExcursions(s.NewExcursions, s.ExcursionRuns), PL2: words.PL2Share(s.PL2Share), Color: sideColor(i)})
	}
	return rows
}

// coreRow is a side's delivered figures for one core type.
type coreRow struct {
	Side, Type, CPUs, AvgMHz, BzyMHz, BusyPct, IPC, CoreTmp string
}

func coreRows(sides []analysis.SideResult) []coreRow {
	var rows []coreRow
	for _, s := range sides {
		for _, ct := range s.CoreTypes {
			rows = append(rows, coreRow{Side: s.Label, Type: string(ct.Type), CPUs: fmt.Sprint(ct.CPUs), AvgMHz: fmtNum(ct.AvgMHz, ""),
				BzyMHz: fmtNum(ct.BzyMHz, ""), BusyPct: fmtNum(ct.BusyPct, ""), IPC: fmtNum(ct.IPC, ""), CoreTmp: fmtNum(ct.CoreTmp, "")})
		}
	}
	return rows
}
