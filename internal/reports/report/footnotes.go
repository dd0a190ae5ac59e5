// SPDX-License-Identifier: Apache-2.0

package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
)

// footnotes numbers benchstat's footnotes as benchstat prints them: a
// superscript number after the cell it is about, the text once below the
// table.
type footnotes []string

// mark returns the cell's superscripts (" ¹", " ¹ ²" or "") for msgs,
// numbering the messages not seen before.
func (f *footnotes) mark(msgs []string) string {
	var b strings.Builder
	for _, m := range msgs {
		i := slices.Index(*f, m)
		if i < 0 {
			*f = append(*f, m)
			i = len(*f) - 1
		}
		b.WriteString(" " + superscript(i+1))
	}
	return b.String()
}

// lines are the footnotes as printed below the table: "¹ need >= 6 ...".
func (f footnotes) lines() []string {
	out := make([]string, len(f))
	for i, m := range f {
		out[i] = superscript(i+1) + " " + m
	}
	return out
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, c := range strconv.Itoa(n) {
		d := []rune(digits)[c-'0']
		b.WriteRune(d)
	}
	return b.String()
}

// statCells are a comparison's cells with their footnote marks: A's and
// B's intervals and the delta with its p-value.
func statCells(fn *footnotes, c analysis.Comparison, interval func(analysis.Summary) string) (a, b, delta string) {
	return interval(c.A) + fn.mark(c.A.Warnings), interval(c.B) + fn.mark(c.B.Warnings),
		c.Delta() + " (" + c.PString() + ")" + fn.mark(c.Warnings)
}

// figureNotes are hwpprobe's notes on the figures (analysis.Result.Notes).
func figureNotes(res *analysis.Result) []string { return res.Notes() }

// warningsBesideFootnotes are the result's warnings less the time
// comparison's, which the text and Markdown reports print as footnotes
// of the statistics table (the JSON report keeps them in warnings too).
func warningsBesideFootnotes(res *analysis.Result) []string {
	foot := append(res.Time.Comparison.Footnotes(), multiWarnings(res)...)
	var out []string
	for _, w := range res.Warnings {
		if !slices.Contains(foot, w) {
			out = append(out, w)
		}
	}
	return out
}
