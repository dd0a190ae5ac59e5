// SPDX-License-Identifier: Apache-2.0

package conform

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
)

// measured is one core type's delivery under the load.
type measured struct {
	ok     bool
	why    string     // why not ok
	bzy    float64    // Bzy_MHz over both halves
	halves [2]float64 // Bzy_MHz per half
	noise  float64    // |halves[0] - halves[1]|
	busy   float64    // Busy% over both halves
	limits []string   // limit reasons active in either half
}

// measure runs the fixed load (one spinning thread per online CPU) for
// the warm-up and two halves, and returns per core type (the snapshot's
// groups) the Bzy_MHz over the halves, and the register writes traced
// while it ran.
func measure(cfg Config, set *source.Set, tr *trace, s *snapshot.Snapshot) (map[string]measured, []ebpf.Event, error) {
	typeOf := map[int]string{}
	for _, g := range s.Groups {
		for _, c := range g.CPUs {
			typeOf[c.CPU] = g.CoreType
		}
	}
	stop := make(chan struct{})
	var end uint64
	writes, _ := tr.collect(stop, &end)
	// One thread per CPU this process may run on: every online CPU on a
	// real machine; under an emulated machine, which is busy as its host
	// is, no more threads than the host runs (more would starve its FUSE
	// server).
	halt, err := spin(cfg.Exe, min(len(typeOf), runtime.NumCPU()))
	if err != nil {
		end = monotonic()
		close(stop)
		<-writes
		return nil, nil, fmt.Errorf("start the load: %w", err)
	}
	time.Sleep(cfg.Warmup)
	smp, err := sampler.New(set)
	if err != nil {
		halt()
		end = monotonic()
		close(stop)
		<-writes
		return nil, nil, fmt.Errorf("sample the counters: %w", err)
	}
	var sums [2]map[string]*sum
	var reasons [2][]string
	var smpl sampler.Sample
	for h := range 2 {
		time.Sleep(cfg.Half)
		if err = smp.Sample(&smpl); err != nil {
			break
		}
		sums[h] = map[string]*sum{}
		for _, c := range smpl.CPUs {
			t, ok := typeOf[c.CPU]
			if !ok || !c.BzyMHz.OK() {
				continue
			}
			if sums[h][t] == nil {
				sums[h][t] = &sum{}
			}
			sums[h][t].add(c)
		}
		for _, p := range smpl.Packages {
			if p.LimitReasons.OK() {
				active, _ := hwp.LimitReasonNames(p.LimitReasons.Raw, smp.Setup().LimitTable)
				reasons[h] = append(reasons[h], active...)
			}
		}
	}
	halt()
	end = monotonic()
	close(stop)
	ws := <-writes
	if err != nil {
		return nil, nil, fmt.Errorf("sample the counters: %w", err)
	}
	out := map[string]measured{}
	for _, t := range typeOf {
		a, b := sums[0][t], sums[1][t]
		if a == nil || b == nil || a.mperf == 0 || b.mperf == 0 {
			out[t] = measured{why: "APERF/MPERF did not count (no busy cycles, or no counters)"}
			continue
		}
		var all sum
		all.merge(a)
		all.merge(b)
		m := measured{ok: true, bzy: all.bzy(), halves: [2]float64{a.bzy(), b.bzy()}, busy: all.busyPct()}
		m.noise = math.Abs(m.halves[0] - m.halves[1])
		for _, r := range append(reasons[0], reasons[1]...) {
			if !slices.Contains(m.limits, r) {
				m.limits = append(m.limits, r)
			}
		}
		out[t] = m
	}
	return out, ws, nil
}

// sum adds up CPUs' counter deltas as turbostat's summary row does:
// Bzy_MHz = TSC_MHz x ΣAPERF / ΣMPERF.
type sum struct {
	aperf, mperf, tsc float64
	tscMHz            float64
	n                 int
}

func (s *sum) add(c sampler.CPU) {
	s.aperf += float64(c.Counts.APERF)
	s.mperf += float64(c.Counts.MPERF)
	s.tsc += float64(c.Counts.TSC)
	s.tscMHz += c.TSCMHz.V
	s.n++
}

func (s *sum) merge(o *sum) {
	s.aperf, s.mperf, s.tsc, s.tscMHz, s.n = s.aperf+o.aperf, s.mperf+o.mperf, s.tsc+o.tsc, s.tscMHz+o.tscMHz, s.n+o.n
}

func (s *sum) bzy() float64 { return s.tscMHz / float64(s.n) * s.aperf / s.mperf }

func (s *sum) busyPct() float64 {
	if s.tsc == 0 {
		return 0
	}
	return 100 * s.mperf / s.tsc
}

// spinUnits is the work each load process is given: far more than a
// check lasts (a unit is about half a millisecond of one core); halt ends
// them.
const spinUnits = 1 << 40

// spin starts n processes that keep a CPU each busy, `exe workload burn`
// (hwpprobe's own built-in workload step), through package workload as
// diff starts its workload: under hwpemu's closed loop they join the
// loop's group (workload.SetGroup), so each is one busy emulated CPU,
// while hwpprobe observes from outside it (internal/emu/emuloop). It returns
// the function that kills and reaps them.
func spin(exe string, n int) (halt func(), err error) {
	var procs []*workload.Process
	halt = func() {
		for _, p := range procs {
			p.Signal(syscall.SIGKILL)
		}
		for _, p := range procs {
			p.Wait(nil)
		}
	}
	for range n {
		p, err := workload.Start(workload.Spec{Argv: []string{exe, "workload", "burn", strconv.Itoa(spinUnits)}}, nil)
		if err != nil {
			halt()
			return nil, err
		}
		procs = append(procs, p)
	}
	return halt, nil
}
