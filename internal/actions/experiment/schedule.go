// SPDX-License-Identifier: Apache-2.0

// Package experiment runs hwpprobe diff's experiment: the schedule of runs
// of 2 to MaxSides sides (warm-up runs, then measured runs in blocks that
// hold each side once, ordered by a Williams Latin square or shuffled with
// a seed, or adaptive ABBA pairs for two sides), each side's settings
// applied through package profile's Switcher under one journal, an
// optional untimed prepare command and cool-down before every run, and
// every run recorded (package recorder) into one experiment file with
// sides. Ctrl-C stops after restoring the settings and keeps the file
// readable.
package experiment

import (
	"math/rand/v2"
	"strings"
)

// Orders of the measured runs.
const (
	OrderABBA   = "abba" // Williams Latin square blocks; ABBA for two sides
	OrderRandom = "random"
)

// MaxSides is the most sides an experiment compares.
const MaxSides = 8

// Slot is one run of the schedule.
type Slot struct {
	Side   int // 0: A, 1: B, ...
	Warmup bool
}

// Schedule returns the runs of n sides: warmup runs of each side (in
// side order), then runs blocks of measured runs, each block holding
// every side once. With OrderABBA the blocks are the rows of a Williams
// Latin square in turn (Williams), A B B A ... for two sides; with
// OrderRandom each block is shuffled with the seed.
func Schedule(n, warmup, runs int, order string, seed uint64) []Slot {
	var s []Slot
	for range warmup {
		for side := range n {
			s = append(s, Slot{Side: side, Warmup: true})
		}
	}
	rows := Williams(n)
	rng := rand.New(rand.NewPCG(seed, 0x6870_7770))
	for b := range runs {
		block := make([]Slot, n)
		for i, side := range rows[b%len(rows)] {
			block[i] = Slot{Side: side}
		}
		if order == OrderRandom {
			rng.Shuffle(n, func(i, j int) { block[i], block[j] = block[j], block[i] })
		}
		s = append(s, block...)
	}
	return s
}

// Williams returns the rows of a Williams Latin square of n treatments
// (E. J. Williams, 1949): every row holds each treatment once, and in the
// rows read in turn (the last of one row not followed by the first of the
// next) each ordered pair of distinct treatments is adjacent equally
// often: once over the n rows for even n. For odd n one square cannot
// do that; the n rows of the square are followed by the same rows
// reversed (2n rows), in which each ordered pair is adjacent twice. The
// first row is 0, 1, n-1, 2, n-2, ...; row i adds i to it modulo n.
func Williams(n int) [][]int {
	if n < 1 {
		return nil
	}
	first := make([]int, n)
	for k, lo, hi := 1, 1, n-1; k < n; k++ {
		if k%2 == 1 {
			first[k], lo = lo, lo+1
		} else {
			first[k], hi = hi, hi-1
		}
	}
	rows := make([][]int, n)
	for i := range rows {
		rows[i] = make([]int, n)
		for k, v := range first {
			rows[i][k] = (v + i) % n
		}
	}
	if n%2 == 1 && n > 1 {
		for i := range n {
			rev := make([]int, n)
			for k := range n {
				rev[k] = rows[i][n-1-k]
			}
			rows = append(rows, rev)
		}
	}
	return rows
}

// String writes a schedule as "A(w) B(w) A B B A".
func String(s []Slot) string {
	var parts []string
	for _, x := range s {
		p := label(x.Side)
		if x.Warmup {
			p += "(w)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// pairSlots are the next two measured slots of an adaptive schedule after
// pairs pairs: ABBA blocks.
func pairSlots(pairs int) []Slot {
	if pairs%2 == 0 {
		return []Slot{{Side: 0}, {Side: 1}}
	}
	return []Slot{{Side: 1}, {Side: 0}}
}

// label names side i: A, B, C, ...
func label(i int) string { return string(rune('A' + i)) }
