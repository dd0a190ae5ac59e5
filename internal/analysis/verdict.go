// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// Difference is a setting, a register field or a figure that differs
// between the sides.
type Difference struct {
	// Kind is DiffSetting, DiffRegister or DiffFigure.
	Kind     string  `json:"kind"`
	What     string  `json:"what"`
	A        string  `json:"a"`
	B        string  `json:"b"`
	Relative float64 `json:"relative"` // |A - B| / max(|A|, |B|), for ordering; 0 for a setting
	// Note says, for a figure, that its ratio B/A and its medians' change
	// point opposite ways (Comparison's note), so that the two values
	// shown are not read as the direction of the difference.
	Note string `json:"note,omitempty"`
}

// Kinds of Difference.
const (
	DiffSetting  = "setting"  // a setting the experiment applied
	DiffRegister = "register" // a request field or EPB a core type held most of the time
	DiffFigure   = "figure"   // a measured figure whose test is significant
)

// differences lists what differs between the two sides: first the
// settings, then the request fields and EPB each core type held most of
// the time (largest relative difference first; levels with their MHz),
// then the measured figures whose difference is significant (largest
// first). It also returns how many measured figures differ in their
// medians without a significant test, left out of the list.
func differences(res *Result) ([]Difference, int) {
	var out, regs, figs []Difference
	a, b := res.Sides[0], res.Sides[1]
	for _, n := range settingNames(a.Settings, b.Settings) {
		va, vb := settingValue(a.Settings, n), settingValue(b.Settings, n)
		if va != vb {
			out = append(out, Difference{Kind: DiffSetting, What: n, A: va, B: vb})
		}
	}
	relative := func(x, y float64) float64 { return math.Abs(x-y) / math.Max(math.Abs(x), math.Abs(y)) }
	for i, ta := range a.CoreTypes {
		if i >= len(b.CoreTypes) {
			break
		}
		tb := b.CoreTypes[i]
		for _, f := range append(slices.Clone(requestFields), "epb") {
			va, oka := mode(ta.Held[f])
			vb, okb := mode(tb.Held[f])
			if oka && okb && va != vb {
				regs = append(regs, Difference{Kind: DiffRegister, What: fmt.Sprintf("%s held %s", f, ta.Type),
					A: ta.LevelText(f, va), B: tb.LevelText(f, vb), Relative: relative(float64(va), float64(vb))})
			}
		}
	}
	hidden := 0
	for _, f := range res.AllFigures() {
		c := f.Comparison
		x, y := c.A.Median, c.B.Median
		switch {
		case x == y || math.IsNaN(x) || math.IsNaN(y):
		case !c.Significant:
			hidden++
		default:
			d := Difference{Kind: DiffFigure, What: f.Name, A: fmtValue(x, f.Unit), B: fmtValue(y, f.Unit), Relative: relative(x, y)}
			if n := c.directionNote(); len(n) > 0 {
				d.Note = n[0]
			}
			figs = append(figs, d)
		}
	}
	byRelative := func(a, b Difference) int { return cmp.Compare(b.Relative, a.Relative) }
	slices.SortStableFunc(regs, byRelative)
	slices.SortStableFunc(figs, byRelative)
	return append(append(out, regs...), figs...), hidden
}

// settingNames are the names of the settings of either side, A's first in
// their order, then B's others.
func settingNames(a, b []recording.Setting) []string {
	var out []string
	for _, s := range append(slices.Clone(a), b...) {
		if !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// settingValue is the value a side set for a setting, "-" when it set
// none.
func settingValue(s []recording.Setting, name string) string {
	for _, x := range s {
		if x.Name == name {
			return x.Value
		}
	}
	return "-"
}

func mode(v []FieldCount) (uint64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	return v[0].Value, true
}

func fmtValue(v float64, unit string) string {
	return strconv.FormatFloat(v, 'g', 5, 64) + " " + unit
}

// AllFigures are the compared figures: time first, then the others.
func (res *Result) AllFigures() []Figure {
	return append([]Figure{res.Time}, res.Figures...)
}

// Notes are hwpprobe's notes on a two-side experiment's figures, each
// prefixed with its figure ("time: p = 2/20 ..."), then the note on
// multiple comparisons when several figures are tested.
func (res *Result) Notes() []string {
	figs := res.AllFigures()
	var out []string
	for _, f := range figs {
		for _, n := range f.Comparison.Notes {
			out = append(out, f.Name+": "+n)
		}
	}
	if n := FamilyNote(len(figs), res.Options.Alpha); n != "" {
		out = append(out, n)
	}
	return out
}

// Verdict says in words what the time comparison shows.
func (res *Result) Verdict() string {
	if len(res.Multi) > 0 {
		return strings.Join(res.Multi[0].Multi.Verdicts("time", res.Labels(), "faster", "slower"), "; ")
	}
	return Wording{What: "time", Ratio: "B/A", A: res.Sides[0].Label, B: res.Sides[1].Label,
		Less: "faster", More: "slower"}.Verdict(res.Time.Comparison)
}

// Wording names what a verdict compares: the figure, the ratio, the sides
// and the words for B below and above A.
type Wording struct {
	What       string // "time"
	Ratio      string // "B/A"
	A, B       string // the sides' labels, A the reference
	Less, More string // "faster", "slower"
	// Adjusted, when set, follows the p-value: "Holm p=0.086".
	Adjusted string
}

// Verdict says in words what the comparison of B with A shows: "~ no
// significant difference in time between A and B (...)" or "B is 21.8%
// faster than A (...)", with the p-value and the ratio's interval.
func (w Wording) Verdict(c Comparison) string {
	ci := fmt.Sprintf("ratio %s %.3f, %.0f%% interval [%.3f, %.3f]", w.Ratio, c.Ratio, 100*c.RatioConfidence, c.RatioLo, c.RatioHi)
	p := c.PString()
	if w.Adjusted != "" {
		p += ", " + w.Adjusted
	}
	if !c.Significant {
		return fmt.Sprintf("~ no significant difference in %s between %s and %s (%s; %s)", w.What, w.A, w.B, p, ci)
	}
	word := w.Less
	if c.Ratio > 1 {
		word = w.More
	}
	return fmt.Sprintf("%s is %.1f%% %s than %s (%s; %s)", w.B, 100*math.Abs(c.Ratio-1), word, w.A, p, ci)
}

// Threshold is a --fail-if condition: "B slower than A by 5%".
type Threshold struct {
	Text    string
	Subject int // 0: A, 1: B
	Slower  bool
	Percent float64
}

// ErrThreshold reports an unparsable --fail-if.
var ErrThreshold = errors.New("bad --fail-if")

var thresholdRE = regexp.MustCompile(`^\s*([AB])\s+(slower|faster)\s+than\s+([AB])\s+by\s+([0-9]+(?:\.[0-9]+)?)\s*%\s*$`)

// ParseThreshold parses "B slower than A by 5%" (A or B, slower or
// faster, a percentage).
func ParseThreshold(s string) (Threshold, error) {
	m := thresholdRE.FindStringSubmatch(s)
	if m == nil || m[1] == m[3] {
		return Threshold{}, fmt.Errorf("%w %q: want e.g. 'B slower than A by 5%%'", ErrThreshold, s)
	}
	p, _ := strconv.ParseFloat(m[4], 64)
	return Threshold{Text: strings.TrimSpace(s), Subject: int(m[1][0] - 'A'), Slower: m[2] == "slower", Percent: p}, nil
}

// Crossed reports whether the result crosses the threshold: the time
// difference is significant and the subject's time, relative to the
// other's (the Hodges-Lehmann ratio), is beyond the percentage in the
// named direction.
func (t Threshold) Crossed(res *Result) bool {
	c := res.Time.Comparison
	if !c.Significant {
		return false
	}
	r := c.Ratio // B/A
	if t.Subject == 0 {
		r = 1 / r
	}
	if t.Slower {
		return r > 1+t.Percent/100
	}
	return r < 1-t.Percent/100
}

// Limit says in words where the threshold lies: "B/A above 1.050", "A/B
// below 0.900".
func (t Threshold) Limit() string {
	ratio := "B/A"
	if t.Subject == 0 {
		ratio = "A/B"
	}
	if t.Slower {
		return fmt.Sprintf("%s above %.3f", ratio, 1+t.Percent/100)
	}
	return fmt.Sprintf("%s below %.3f", ratio, 1-t.Percent/100)
}

// ThresholdCases are the thresholds' verdicts (diff --fail-if with
// --ktap or --junit): a case "fail-if" holding one leaf per threshold,
// named by its text, failed when crossed, with the verdict and the limit
// as diagnostic lines.
func ThresholdCases(res *Result, thresholds []Threshold) *verdict.Case {
	top := &verdict.Case{Name: "fail-if"}
	for _, t := range thresholds {
		c := verdict.Passf(t.Text)
		if t.Crossed(res) {
			c = verdict.Failf(t.Text, "crossed: the difference is significant and %s", t.Limit())
		}
		c.Diag = []string{res.Verdict(), fmt.Sprintf("crossed when the time difference is significant (p <= %v) and %s", res.Time.Comparison.Alpha, t.Limit())}
		top.Cases = append(top.Cases, c)
	}
	return top
}

// Labels are the sides' labels.
func (res *Result) Labels() []string {
	out := make([]string, len(res.Sides))
	for i, s := range res.Sides {
		out[i] = s.Label
	}
	return out
}
