// SPDX-License-Identifier: Apache-2.0

package words

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// RunFacts is a run's evidence (analysis.RunFacts) in words, one phrase
// per kind, in the order the reports show them.
type RunFacts struct {
	Excursions string // "+2 (P 2)", "none", "HWP_STATUS not read"
	Limits     string // "PkgPwrL1 12.0 s, PkgPwrL2 3.0 s of 45.0 s"
	PL2        string // "8.0 s (18%)"
	Power      string // "pkg 15.2 = cores 9.1 + rest 6.1; psys 20.3"
	Parallel   string // "12.0 s: P 3100, E 2500"
	Serial     string
	PowerLimit string // "before MSR 15/57 W (28 s), intel-rapl:0 15/57 W; write +3.50 s MSR 10/57 W; after as before"
}

// Facts words a run's evidence.
func Facts(f analysis.RunFacts) RunFacts {
	return RunFacts{Excursions: NewExcursions(f.ExcursionEdges, -1), Limits: LimitSeconds(f.LimitSeconds, f.SampledSeconds),
		PL2: pl2(f.PL2Seconds, f.PL2Share), Power: power(f.Power), Parallel: phase(f.Parallel), Serial: phase(f.Serial),
		PowerLimit: powerLimits(f.Limits)}
}

// NewExcursions words newly set excursion bits per core type: "+3 (P 2,
// E 1)", with "in 2 runs" when runs >= 0; "none"; "HWP_STATUS not read"
// for nil.
func NewExcursions(m map[string]int, runs int) string {
	if m == nil {
		return "HWP_STATUS not read"
	}
	total := 0
	var parts []string
	for _, t := range slices.SortedFunc(maps.Keys(m), topology.CompareTypes) {
		total += m[t]
		if m[t] > 0 && t != string(topology.All) {
			parts = append(parts, fmt.Sprintf("%s %d", t, m[t]))
		}
	}
	if total == 0 {
		return "none"
	}
	out := fmt.Sprintf("+%d", total)
	if len(parts) > 0 {
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	if runs >= 0 {
		out += fmt.Sprintf(" in %d runs", runs)
	}
	return out
}

// LimitSeconds words seconds under each limit reason, the longest first:
// "PkgPwrL1 12.0 s, PkgPwrL2 3.0 s", with " of 45.0 s" when of > 0;
// "none" when no reason was active; "not sampled" for nil.
func LimitSeconds(m map[string]float64, of float64) string {
	if m == nil {
		return "not sampled"
	}
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int {
		switch {
		case m[a] > m[b]:
			return -1
		case m[a] < m[b]:
			return 1
		}
		return 0
	})
	var parts []string
	for _, k := range keys {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f s", k, m[k]))
		}
	}
	out := "none"
	if len(parts) > 0 {
		out = strings.Join(parts, ", ")
	}
	if of > 0 {
		out += fmt.Sprintf(" of %.1f s", of)
	}
	return out
}

func pl2(s, share float64) string {
	if math.IsNaN(s) {
		return "not known (no PL1 or package power)"
	}
	return fmt.Sprintf("%.1f s (%.0f%%)", s, 100*share)
}

// PL2Share words a side's median share of time in the PL2 window.
func PL2Share(share float64) string {
	if math.IsNaN(share) {
		return "not known (no PL1 or package power)"
	}
	return fmt.Sprintf("%.0f%% of the time", 100*share)
}

func watts(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func power(p analysis.Power) string {
	if math.IsNaN(p.Package) {
		return "package power not measured"
	}
	out := "package " + watts(p.Package) + " W"
	if !math.IsNaN(p.Cores) {
		out += " = cores " + watts(p.Cores)
		if !math.IsNaN(p.Graphics) {
			out += " + graphics " + watts(p.Graphics)
		}
		out += " + rest " + watts(p.Rest)
	}
	if !math.IsNaN(p.Psys) {
		out += "; psys " + watts(p.Psys) + " W"
	}
	return out
}

func phase(p analysis.Phase) string {
	if p.Seconds == 0 {
		return "no such samples"
	}
	out := fmt.Sprintf("%.1f s", p.Seconds)
	var parts []string
	types := slices.SortedFunc(maps.Keys(p.BzyMHz), topology.CompareTypes)
	if len(types) > 1 {
		types = slices.DeleteFunc(types, func(t string) bool { return t == string(topology.All) })
	}
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("%s %.0f", t, p.BzyMHz[t]))
	}
	if len(parts) > 0 {
		out += ": " + strings.Join(parts, ", ") + " MHz"
	}
	return out
}

// powerLimits words the power limits in force: the snapshot before's,
// each write, the snapshot after's ("as before" when it read the same).
func powerLimits(steps []analysis.LimitStep) string {
	if len(steps) == 0 {
		return "not read"
	}
	var groups []string
	var before, after []string
	for _, s := range steps {
		pl := fmt.Sprintf("%s %s/%s W", limitSource(s.Source), watts0(s.PL1W), watts0(s.PL2W))
		if !math.IsNaN(s.PL1TimeS) && s.PL1TimeS > 0 {
			pl += fmt.Sprintf(" (%.3gs)", s.PL1TimeS)
		}
		switch s.How {
		case "before":
			before = append(before, pl)
		case "after":
			after = append(after, pl)
		default: // a write, or a sampled change
			groups = append(groups, fmt.Sprintf("%s %+.2fs %s", s.How, s.T, pl))
		}
	}
	var out []string
	if len(before) > 0 {
		out = append(out, "before "+strings.Join(before, ", "))
	}
	out = append(out, groups...)
	switch {
	case len(after) > 0 && slices.Equal(after, before):
		out = append(out, "after as before")
	case len(after) > 0:
		out = append(out, "after "+strings.Join(after, ", "))
	}
	return strings.Join(out, "; ")
}

func limitSource(s string) string {
	if s == "MSR_PKG_POWER_LIMIT" {
		return "MSR"
	}
	return s
}

func watts0(v float64) string {
	if math.IsNaN(v) {
		return "?"
	}
	return fmt.Sprintf("%g", math.Round(v*100)/100)
}

// DiffersHidden is the line under "what differs" counting the measured
// figures left out of it: "and 9 measured figures whose medians differ
// without a significant test (statistics above)"; "" for none.
func DiffersHidden(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "and 1 measured figure whose medians differ without a significant test (statistics above)"
	}
	return fmt.Sprintf("and %d measured figures whose medians differ without a significant test (statistics above)", n)
}

// DifferenceNote is a difference's note in parentheses, "" without one.
func DifferenceNote(d analysis.Difference) string {
	if d.Note == "" {
		return ""
	}
	return " (note: " + d.Note + ")"
}
