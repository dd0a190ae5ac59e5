// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
)

// registerNames are the registers written in any column.
func registerNames(cols []column) []string {
	var names []string
	for _, col := range cols {
		for _, w := range col.Run.Writes {
			if !slices.Contains(names, w.Register) {
				names = append(names, w.Register)
			}
		}
	}
	return names
}

// writesChart draws every traced register write as a point in its
// register's lane; hovering shows the write decoded and its writer.
func writesChart(regs []string) func(*Chart, column) {
	return func(c *Chart, col column) {
		c.Title, c.Lanes, c.Height = "Register writes (kernel, or the emulated machine's model)", regs, laneHeight(len(regs))
		ws := slices.Clone(col.Run.Writes)
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].T < ws[j].T })
		if len(ws) == 0 {
			c.EmptyText, c.X = "no register write traced during this run", Numbers{}
			if col.Run.WritesLost > 0 {
				c.EmptyText += fmt.Sprintf(" (%d lost)", col.Run.WritesLost)
			}
			return
		}
		for _, w := range ws {
			c.X = append(c.X, w.T)
		}
		for i, reg := range regs {
			s := Series{Label: reg, Color: palette[(i+3)%len(palette)], Kind: KindPoints, Size: 7, Values: make(Numbers, len(ws)),
				Text: make([]string, len(ws))}
			for k, w := range ws {
				s.Values[k] = NaN
				if w.Register == reg {
					s.Values[k], s.Text[k] = float64(i+1), writeText(w)
				}
			}
			c.Series = append(c.Series, s)
		}
		if col.Run.WritesDropped > 0 {
			c.Note += fmt.Sprintf("; the first %d writes drawn (to %+.1f s), %d more not kept", len(ws), ws[len(ws)-1].T, col.Run.WritesDropped)
		}
		if col.Run.WritesLost > 0 {
			c.Note += fmt.Sprintf("; %d writes lost by the tracer", col.Run.WritesLost)
		}
	}
}

// writeText is one write in a line: where, what changed, who.
func writeText(w timeline.Write) string {
	var b strings.Builder
	fmt.Fprintf(&b, "+%.3f s CPU %d", w.T, w.CPU)
	if w.CoreType != "" {
		fmt.Fprintf(&b, " (%s)", w.CoreType)
	}
	old := w.Old
	if old == "" {
		old = "?"
	}
	fmt.Fprintf(&b, ": %s -> %s", old, w.New)
	if ch := changedFields(w); ch != "" {
		b.WriteString(": " + ch)
	} else if w.Text != "" {
		b.WriteString(" (" + w.Text + ")")
	}
	fmt.Fprintf(&b, " by %s[%d]", w.Comm, w.PID)
	if w.Emulated {
		b.WriteString(" (emulated)")
	}
	if w.Failed {
		b.WriteString(" FAILED")
	}
	return b.String()
}

// changedFields is "epp 64 -> 255, min 5 -> 62" for the fields a write
// changed.
func changedFields(w timeline.Write) string {
	var parts []string
	for _, f := range w.Fields {
		if f.Changed {
			parts = append(parts, fmt.Sprintf("%s %v -> %v", f.Name, f.Old, f.New))
		}
	}
	return strings.Join(parts, ", ")
}

// writeRow is one write in the page's table.
type writeRow struct {
	Column, T, CPU, Type, Register, Old, New, Changed, Writer string
	Emulated, Failed                                          bool
}

// maxWriteRows bounds the table's rows per column; the chart has them
// all.
const maxWriteRows = 1000

func writeRows(cols []column) ([]writeRow, []string) {
	var rows []writeRow
	var notes []string
	for _, col := range cols {
		ws := slices.Clone(col.Run.Writes)
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].T < ws[j].T })
		if len(ws) > maxWriteRows {
			notes = append(notes, fmt.Sprintf("%s: the first %d of %d writes", col.Short, maxWriteRows, len(ws)))
			ws = ws[:maxWriteRows]
		}
		for _, w := range ws {
			changed := changedFields(w)
			if changed == "" {
				changed = w.Text
			}
			rows = append(rows, writeRow{Column: col.Short, T: fmt.Sprintf("%.3f", w.T), CPU: fmt.Sprint(w.CPU), Type: w.CoreType,
				Register: w.Register, Old: w.Old, New: w.New, Changed: changed, Writer: fmt.Sprintf("%s[%d]", w.Comm, w.PID),
				Emulated: w.Emulated, Failed: w.Failed})
		}
	}
	return rows, notes
}
