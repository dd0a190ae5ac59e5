// SPDX-License-Identifier: Apache-2.0

// Package words holds the phrases that the text, Markdown and HTML
// reports share, so that every format words a figure the same way.
package words

import (
	"fmt"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
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

// Settings is a side's settings as "scaling_governor=performance epp=0",
// or "(as recorded)" when it set none.
func Settings(s []recording.Setting) string {
	if len(s) == 0 {
		return "(as recorded)"
	}
	return recording.SettingsText(s)
}
