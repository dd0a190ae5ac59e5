// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"math"
	"slices"
)

// track is one series before alignment: its own x values and values.
// A held track (steps) keeps its last value until its next x; a bucket
// track has gaps where it has no value.
type track struct {
	s    Series
	t, v []float64
	hold bool
	// until extends a held track's last value to this x (the run's end).
	until float64
}

// align puts tracks on one x axis, the union of theirs, as uPlot wants
// its columns: c.X and c.Series.
func align(c *Chart, tracks []track) {
	var xs []float64
	for _, tr := range tracks {
		xs = append(xs, tr.t...)
		if tr.hold && len(tr.t) > 0 && tr.until > tr.t[len(tr.t)-1] {
			xs = append(xs, tr.until)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	c.X = xs
	for _, tr := range tracks {
		vals := make(Numbers, len(xs))
		j := 0
		last := math.NaN()
		for i, x := range xs {
			for j < len(tr.t) && tr.t[j] < x {
				last = tr.v[j]
				j++
			}
			switch {
			case j < len(tr.t) && tr.t[j] == x:
				vals[i], last = tr.v[j], tr.v[j]
			case tr.hold && j > 0 && (j < len(tr.t) || x <= tr.until):
				vals[i] = last
			default:
				vals[i] = math.NaN()
			}
		}
		s := tr.s
		s.Values = vals
		c.Series = append(c.Series, s)
	}
}
