// SPDX-License-Identifier: Apache-2.0

package words

import (
	"fmt"
	"math"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
)

// Pct is a log-ratio as a signed percent change: "+3.2%".
func Pct(logRatio float64) string {
	return fmt.Sprintf("%+.1f%%", 100*(math.Exp(logRatio)-1))
}

// StepChanges names what a step changes: "min", or "nothing (register
// twins)".
func StepChanges(s analysis.StepEffect) string {
	if len(s.Fields) == 0 {
		return "nothing (register twins)"
	}
	return strings.Join(s.Fields, ", ")
}

// StepMeaning says what a step's verdict means.
func StepMeaning(s analysis.StepEffect, precision float64) string {
	within := fmt.Sprintf("within ±%s%%", TrimFloat(100*precision))
	if len(s.Fields) == 0 {
		switch s.Verdict {
		case analysis.Causes:
			return "the register twins differ: something other than the request registers and EPB differs between the two kernel paths (or a daemon acts on one)"
		case analysis.Equivalent:
			return "the register twins are equivalent " + within + ": the kernel path alone makes no difference"
		}
		return "undecided: the twins may or may not differ (more runs narrow the interval)"
	}
	f := strings.Join(s.Fields, ", ")
	switch s.Verdict {
	case analysis.Causes:
		return f + " causes a difference"
	case analysis.Equivalent:
		return f + " is shown not to matter: equivalent " + within
	}
	return f + ": undecided (more runs narrow the interval)"
}

// InteractionMeaning says what the interaction's verdict means.
func InteractionMeaning(in *analysis.Interaction, precision float64) string {
	switch in.Verdict {
	case analysis.Causes:
		return fmt.Sprintf("the effect of %s depends on %s: the two do not simply add up", in.Fields[1], in.Fields[0])
	case analysis.Equivalent:
		return fmt.Sprintf("no interaction within ±%s%%: the effects of %s and %s add up", TrimFloat(100*precision), in.Fields[0], in.Fields[1])
	}
	return "undecided (more runs narrow the interval)"
}

// Share is a step's part of the total change, "-" when there is none.
func Share(step, total float64) string {
	if total == 0 || math.IsNaN(total) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*step/total)
}

// AttributionHeader is the line above an attribution's steps.
func AttributionHeader(at analysis.Attribution) string {
	return fmt.Sprintf("explain %s: %s -> %s %s (ratio of medians %.4f), attributed to the steps; intervals simultaneous at %s%% (each at %s%%, Bonferroni), precision ±%s%%",
		at.Figure, at.A, at.B, Pct(at.Total), math.Exp(at.Total), TrimFloat(100*at.Confidence), TrimFloat(100*at.Level), TrimFloat(100*at.Precision))
}

// Bound is a ratio interval's upper bound: "∞" with too few runs.
func Bound(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.3f", v)
}

// TrimFloat is a level as a short decimal: 95, 98.33, 97.14.
func TrimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// StepRow is one step of an attribution (analysis.Attribution) in words,
// the cells every report shows.
type StepRow struct {
	Step, Changes, Change, Ratio, Share, Meaning string
}

// StepRows are an attribution's steps in words.
func StepRows(at analysis.Attribution) []StepRow {
	var rows []StepRow
	for _, s := range at.Steps {
		rows = append(rows, StepRow{Step: s.From + " -> " + s.To, Changes: StepChanges(s), Change: Pct(s.LogRatio),
			Ratio: fmt.Sprintf("%.4f [%.4f, %s]", math.Exp(s.LogRatio), s.Lo, Bound(s.Hi)),
			Share: Share(s.LogRatio, at.Total), Meaning: StepMeaning(s, at.Precision)})
	}
	return rows
}

// InteractionLine words an attribution's interaction: "interaction of
// min and epp: +1.2%, ratio 1.0120 [0.9900, 1.034]: ..."; "" without one.
func InteractionLine(at analysis.Attribution) string {
	in := at.Interaction
	if in == nil {
		return ""
	}
	return fmt.Sprintf("interaction of %s and %s: %s, ratio %.4f [%.4f, %s]: %s", in.Fields[0], in.Fields[1], Pct(in.LogRatio),
		math.Exp(in.LogRatio), in.Lo, Bound(in.Hi), InteractionMeaning(in, at.Precision))
}
