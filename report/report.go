// Package report writes an analysed experiment (package analysis) as
// terminal text, as Markdown for a bug tracker and as JSON for CI
// (docs/diff.md describes the JSON schema). It formats only: every figure
// comes from analysis.Result.
package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/analysis"
	"github.com/hwpprobe/hwpprobe/topology"
)

// Info is what the report says about where the result came from.
type Info struct {
	Version string // hwpprobe's version
	// Emulated is the emulated machine's name, "" on real hardware.
	Emulated string
}

// fieldText is "48" or "48 (97%), 4 (3%)" for a field's values.
func fieldText(v []analysis.FieldCount) string {
	if len(v) == 0 {
		return "-"
	}
	total := 0
	for _, x := range v {
		total += x.Count
	}
	if len(v) == 1 {
		return fmt.Sprint(v[0].Value)
	}
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%d (%.0f%%)", x.Value, 100*float64(x.Count)/float64(total)))
	}
	return strings.Join(parts, ", ")
}

// requestText is "min 48 max 48 desired 0 epp 0 epb 0" for fields.
func requestText(f analysis.Fields) string {
	var parts []string
	for _, k := range []string{"min", "max", "desired", "epp", "epb"} {
		if v, ok := f[k]; ok {
			parts = append(parts, k+" "+fieldText(v))
		}
	}
	if len(parts) == 0 {
		return "not sampled"
	}
	return strings.Join(parts, "  ")
}

func num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// interval is "334.4 ± 2%" in benchstat's words.
func interval(s analysis.Summary) string {
	return fmt.Sprintf("%.4g ± %s", s.Median, s.PctRange())
}

func limitText(m map[string]float64) string {
	if len(m) == 0 {
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
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*m[k]))
	}
	return strings.Join(parts, ", ")
}

// excursionText words a side's share of CPU-samples whose sticky
// IA32_HWP_STATUS Excursion_To_Minimum bit was set, with each core type's
// share on a hybrid part.
func excursionText(s analysis.SideResult) string {
	if math.IsNaN(s.Excursions) {
		return "HWP_STATUS not sampled"
	}
	out := fmt.Sprintf("%.1f%% of CPU-samples", 100*s.Excursions)
	var types []string
	for _, ct := range s.CoreTypes {
		if ct.Type != topology.All && !math.IsNaN(ct.Excursions) {
			types = append(types, fmt.Sprintf("%s %.1f%%", ct.Type, 100*ct.Excursions))
		}
	}
	if len(types) > 0 {
		out += " (" + strings.Join(types, ", ") + ")"
	}
	return out
}

func settingsText(res *analysis.Result, i int) string {
	var parts []string
	for _, s := range res.Sides[i].Settings {
		parts = append(parts, s.Name+"="+s.Value)
	}
	if len(parts) == 0 {
		return "(as recorded)"
	}
	return strings.Join(parts, " ")
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
