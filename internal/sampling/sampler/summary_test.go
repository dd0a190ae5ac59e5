// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// TestSummaryIdleCPU: a CPU idle for the whole interval (MPERF did not
// advance) counts in its rows' divisor as in turbostat's sum_counters()
// and compute_average(); a CPU whose counters could not be read counts in
// neither. Interval 1 s, TSC 2000 MHz on every CPU.
func TestSummaryIdleCPU(t *testing.T) {
	setup := &Setup{
		CPUs:     []Topo{{CPU: 0, Type: topology.PCore}, {CPU: 1, Type: topology.PCore}, {CPU: 2, Type: topology.PCore}},
		Counters: SrcMSR, TSC: SrcMSR,
	}
	steps := []Raw{
		{CPU: []RawCPU{{}, {}, {}}},
		{CPU: []RawCPU{
			{APERF: 1.5e9, MPERF: 1e9, TSC: 2e9}, // half busy at 3000 MHz
			{APERF: 0, MPERF: 0, TSC: 2e9},       // idle
			{APERF: 9, MPERF: 9, TSC: 9, Bad: BadCounters},
		}},
	}
	got := firstSample(t, &seqReader{setup: setup, steps: steps})
	m := func(v float64) Value { return Value{V: v, Src: SrcMSR} }
	// Sums over CPUs 0 and 1: APERF 1.5e9, MPERF 1e9, TSC 4e9; n = 2.
	// Avg_MHz = 1.5e9/2/1e6 = 750; TSC_MHz = 4e9/2/1e6 = 2000;
	// Busy% = 100*1e9/4e9 = 25; Bzy_MHz = 2000 * 1.5e9/1e9 = 3000.
	want := Summary{Type: topology.All, CPUs: 3, AvgMHz: m(750), TSCMHz: m(2000), BusyPct: m(25), BzyMHz: m(3000)}
	if d := cmp.Diff(want, *got.Summary(topology.All), approx); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
}

// TestSummaryWithinTypes is a property over random hybrid machines with
// busy, idle and unreadable CPUs: every row's TSC_MHz is the TSC rate all
// CPUs share, and the "all" row's Avg_MHz, Busy%, Bzy_MHz and TSC_MHz lie
// within the range of the per-type rows' values.
func TestSummaryWithinTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	for trial := range 200 {
		setup, steps := randomMachine(rng)
		got := firstSample(t, &seqReader{setup: setup, steps: steps})
		if err := checkWithinTypes(&got); err != nil {
			t.Fatalf("trial %d: %v\nsetup %+v\nreadings %+v\nsummaries %+v", trial, err, setup.CPUs, steps[1].CPU, got.Summaries)
		}
	}
}

// randomMachine returns 2 to 16 CPUs of random types, each busy (random
// fraction and APERF/MPERF ratio), idle (MPERF did not advance) or
// unreadable, over 1 s with a 2000 MHz TSC.
func randomMachine(rng *rand.Rand) (*Setup, []Raw) {
	const tsc = 2e9
	types := []topology.CoreType{topology.PCore, topology.ECore, topology.LPECore}
	n := 2 + rng.IntN(15)
	setup := &Setup{Counters: SrcMSR, TSC: SrcMSR}
	prev, cur := make([]RawCPU, n), make([]RawCPU, n)
	for i := range n {
		setup.CPUs = append(setup.CPUs, Topo{CPU: i, Type: types[rng.IntN(len(types))]})
		c := RawCPU{TSC: tsc}
		switch p := rng.Float64(); {
		case p < 0.3: // idle
		case p < 0.4:
			c.Bad = BadCounters
		default:
			c.MPERF = uint64(tsc * (0.01 + 0.99*rng.Float64()))
			c.APERF = uint64(float64(c.MPERF) * (0.3 + 2.2*rng.Float64()))
		}
		cur[i] = c
	}
	return setup, []Raw{{CPU: prev}, {CPU: cur}}
}

func checkWithinTypes(s *Sample) error {
	const tol = 1e-9
	figures := map[string]func(*Summary) Value{
		"Avg_MHz": func(r *Summary) Value { return r.AvgMHz },
		"Busy%":   func(r *Summary) Value { return r.BusyPct },
		"Bzy_MHz": func(r *Summary) Value { return r.BzyMHz },
		"TSC_MHz": func(r *Summary) Value { return r.TSCMHz },
	}
	all := s.Summary(topology.All)
	for i := range s.Summaries {
		if v := s.Summaries[i].TSCMHz; v.OK() && (v.V < 2000*(1-tol) || v.V > 2000*(1+tol)) {
			return fmt.Errorf("%s row TSC_MHz %v, want 2000", s.Summaries[i].Type, v.V)
		}
	}
	for name, get := range figures {
		lo, hi, any := 0.0, 0.0, false
		for i := range s.Summaries {
			r := &s.Summaries[i]
			if v := get(r); r.Type != topology.All && v.OK() {
				if !any || v.V < lo {
					lo = v.V
				}
				if !any || v.V > hi {
					hi = v.V
				}
				any = true
			}
		}
		v := get(all)
		if !any || !v.OK() {
			if any != v.OK() {
				return fmt.Errorf("%s: all row present %v, type rows present %v", name, v.OK(), any)
			}
			continue
		}
		if v.V < lo*(1-tol) || v.V > hi*(1+tol) {
			return fmt.Errorf("%s: all row %v outside the type rows' range [%v, %v]", name, v.V, lo, hi)
		}
	}
	return nil
}
