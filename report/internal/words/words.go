// SPDX-License-Identifier: Apache-2.0

// Package words holds the phrases that the text, Markdown and HTML
// reports share, so that every format words a figure the same way.
package words

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/analysis"
	"github.com/hwpprobe/hwpprobe/recording"
	"github.com/hwpprobe/hwpprobe/topology"
)

// FieldCounts is "48" or "48 (97%), 4 (3%)" for a field's values, and
// "-" for none.
func FieldCounts(v []analysis.FieldCount) string {
	if len(v) == 0 {
		return "-"
	}
	if len(v) == 1 {
		return fmt.Sprint(v[0].Value)
	}
	total := 0
	for _, x := range v {
		total += x.Count
	}
	parts := make([]string, 0, len(v))
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%d (%.0f%%)", x.Value, 100*float64(x.Count)/float64(total)))
	}
	return strings.Join(parts, ", ")
}

// Interval is "334.4 ± 2%" in benchstat's words.
func Interval(s analysis.Summary) string {
	return fmt.Sprintf("%.4g ± %s", s.Median, s.PctRange())
}

// LimitShares lists the limit reasons by their share of samples, the
// largest first: "PkgPwrL1 97%, PkgPwrL2 3%", or "not sampled".
func LimitShares(m map[string]float64) string {
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
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*m[k]))
	}
	return strings.Join(parts, ", ")
}

// Excursions words a side's share of CPU-samples whose sticky
// IA32_HWP_STATUS Excursion_To_Minimum bit was set, with each core type's
// share on a hybrid part: "12.5% of CPU-samples (P 20.0%, E 0.0%)".
func Excursions(s analysis.SideResult) string {
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

// Settings is a side's settings as "scaling_governor=performance epp=0",
// or "(as recorded)" when it set none.
func Settings(s []recording.Setting) string {
	if len(s) == 0 {
		return "(as recorded)"
	}
	return recording.SettingsText(s)
}
