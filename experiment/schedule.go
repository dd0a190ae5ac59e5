// Package experiment runs hwpprobe diff's experiment: the schedule of runs
// of two sides (warm-up runs, then interleaved measured runs, ABBA or
// seeded random order, or adaptive), each side's settings applied through
// package profile's Switcher under one journal, an optional untimed
// prepare command and cool-down before every run, and every run recorded
// (package recorder) into one experiment file with sides. Ctrl-C stops
// after restoring the settings and keeps the file readable.
package experiment

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Orders of the measured runs.
const (
	OrderABBA   = "abba"
	OrderRandom = "random"
)

// Slot is one run of the schedule.
type Slot struct {
	Side   int // 0: A, 1: B
	Warmup bool
}

// Schedule returns the runs: warmup runs of each side (A then B), then
// runs measured runs of each side, interleaved as ABBA blocks (A B B A
// A B B A ...) or shuffled with the seed.
func Schedule(warmup, runs int, order string, seed uint64) []Slot {
	var s []Slot
	for range warmup {
		s = append(s, Slot{0, true}, Slot{1, true})
	}
	var m []Slot
	for i := range runs {
		if i%2 == 0 {
			m = append(m, Slot{Side: 0}, Slot{Side: 1})
		} else {
			m = append(m, Slot{Side: 1}, Slot{Side: 0})
		}
	}
	if order == OrderRandom {
		rng := rand.New(rand.NewPCG(seed, 0x6870_7770))
		rng.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	}
	return append(s, m...)
}

// String writes a schedule as "A(w) B(w) A B B A".
func String(s []Slot) string {
	var parts []string
	for _, x := range s {
		p := string(rune('A' + x.Side))
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

// label names side i.
func label(i int) string { return fmt.Sprintf("%c", 'A'+i) }
