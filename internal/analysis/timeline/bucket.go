// SPDX-License-Identifier: Apache-2.0

package timeline

import "math"

// clock is the bucket grid every series of one run shares: bucket i holds
// the samples whose time (ns from the run's start, negative clamped to 0)
// falls in [i*width, (i+1)*width). It starts at the sampling interval and
// doubles whenever a sample falls at or past the last of limit buckets,
// each accumulator then merging its buckets pairwise (2i and 2i+1 into
// i), so that a run of any length ends with at most limit buckets per
// series, built in one pass without knowing the length in advance.
// Because the width is an integer number of nanoseconds that only
// doubles, floor(d / 2w) = floor(floor(d / w) / 2) and the merged buckets
// are exactly those a single pass at the final width would give.
type clock struct {
	start int64 // the run's start, Unix ns
	width int64 // bucket width, ns
	limit int   // at most this many buckets
	accs  []*acc
}

func newClock(start, width int64, limit int) *clock {
	return &clock{start: start, width: max(width, 1), limit: max(limit, 1)}
}

// index returns the bucket of Unix time t, widening the buckets first when
// t lies past the last one.
func (c *clock) index(t int64) int {
	d := max(t-c.start, 0)
	for d/c.width >= int64(c.limit) {
		c.width *= 2
		for _, a := range c.accs {
			a.halve()
		}
	}
	return int(d / c.width)
}

// newAcc returns an accumulator on this clock's grid.
func (c *clock) newAcc() *acc {
	a := &acc{}
	c.accs = append(c.accs, a)
	return a
}

// bucket is what one bucket keeps of its samples.
type bucket struct {
	min, max, sum float64
	n             int
}

func (b *bucket) merge(o bucket) {
	switch {
	case o.n == 0:
	case b.n == 0:
		*b = o
	default:
		b.min, b.max = math.Min(b.min, o.min), math.Max(b.max, o.max)
		b.sum += o.sum
		b.n += o.n
	}
}

// acc is one series' buckets; a bucket past the end is empty.
type acc struct{ b []bucket }

// add puts a sample into bucket i: lo and hi are its extremes (equal for
// a single figure; a core type's CPUs for a register field) and v what
// its mean adds up.
func (a *acc) add(i int, lo, hi, v float64) {
	if i >= len(a.b) {
		a.b = append(a.b, make([]bucket, i+1-len(a.b))...)
	}
	a.b[i].merge(bucket{min: lo, max: hi, sum: v, n: 1})
}

// halve merges buckets 2i and 2i+1 into bucket i.
func (a *acc) halve() {
	n := (len(a.b) + 1) / 2
	for i := range n {
		b := a.b[2*i]
		if 2*i+1 < len(a.b) {
			b.merge(a.b[2*i+1])
		}
		a.b[i] = b
	}
	clear(a.b[n:])
	a.b = a.b[:n]
}
