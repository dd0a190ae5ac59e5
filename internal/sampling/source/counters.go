// SPDX-License-Identifier: Apache-2.0

package source

import (
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/perfcount"
)

// probeCounters picks the APERF/MPERF/TSC source and opens the per-CPU
// perf groups.
func (s *Set) probeCounters(cfg Config) {
	st := &s.setup
	var evs []perfcount.Event
	perfHas := map[string]bool{}
	var noPMU error // the msr PMU is not there: said in the Avg_MHz note
	if cfg.Perf {
		if pmu, err := perfcount.ProbePMU(cfg.Root, "msr"); err == nil {
			for _, n := range []string{"aperf", "mperf", "tsc"} {
				if e, err := pmu.Event(n); err == nil {
					evs = append(evs, e)
					perfHas[n] = true
				}
			}
		} else {
			noPMU = err
		}
		for _, n := range []string{"instructions", "cycles", "ref-cycles"} {
			e, _ := perfcount.Hardware(n)
			evs = append(evs, e)
		}
	}
	perfCounters := perfHas["aperf"] && perfHas["mperf"] && perfHas["tsc"]
	if !perfCounters {
		// Keep the perf TSC only if the MSRs cannot give all three.
		if s.msrCounters() {
			evs = dropEvents(evs, "aperf", "mperf", "tsc")
		} else {
			evs = dropEvents(evs, "aperf", "mperf")
		}
	}
	opened := map[string]int{}
	var skipped []perfcount.Skipped
	if len(evs) > 0 {
		for i, c := range st.CPUs {
			cs := &s.cpus[i]
			cs.cpu = c.CPU
			cs.aperf, cs.mperf, cs.tsc, cs.instr, cs.cycles, cs.ref = -1, -1, -1, -1, -1, -1
			g, err := perfcount.OpenGroup(-1, c.CPU, evs)
			if err != nil {
				if i == 0 {
					// Without the group the hardware events are
					// what is lost (the TSC's note is Avg_MHz's).
					s.note("IPC", "no perf events open on cpu%d: %v", c.CPU, err)
				}
				continue
			}
			cs.group, cs.rd = g, g.NewReading()
			cs.aperf, cs.mperf, cs.tsc = g.Index("aperf"), g.Index("mperf"), g.Index("tsc")
			cs.instr, cs.cycles, cs.ref = g.Index("instructions"), g.Index("cycles"), g.Index("ref-cycles")
			for _, e := range g.Events() {
				opened[e.Name]++
			}
			if i == 0 {
				skipped = g.Skipped()
			}
			s.closers = append(s.closers, g.Close)
		}
	} else {
		for i, c := range st.CPUs {
			s.cpus[i] = cpuSrc{cpu: c.CPU, aperf: -1, mperf: -1, tsc: -1, instr: -1, cycles: -1, ref: -1}
		}
	}
	all := func(n string) bool { return opened[n] == len(st.CPUs) }
	switch {
	case perfCounters && all("aperf") && all("mperf") && all("tsc"):
		st.Counters, st.TSC = sampler.SrcPerf, sampler.SrcPerf
	case st.Counters == sampler.SrcMSR:
		// set by msrCounters
	case all("tsc"):
		st.TSC = sampler.SrcPerf
		s.note("Avg_MHz", "no APERF/MPERF: %s; Avg_MHz, Busy%% and Bzy_MHz are not available", s.noCountersWhy(cfg, perfHas, noPMU))
	default:
		s.note("Avg_MHz", "no APERF/MPERF/TSC: %s; Avg_MHz, Busy%%, Bzy_MHz and TSC_MHz are not available", s.noCountersWhy(cfg, perfHas, noPMU))
	}
	if all("instructions") {
		st.Instructions = sampler.SrcPerf
	}
	if all("cycles") {
		st.Cycles = sampler.SrcPerf
	}
	if all("ref-cycles") {
		st.RefCycles = sampler.SrcPerf
	}
	for _, sk := range skipped {
		if sk.Event.Name == "instructions" {
			s.note("IPC", "perf %v", sk.Err)
		}
	}
	if !cfg.Perf {
		s.note("IPC", "perf events not used (emulated machine: perf counts the real one)")
	}
}

// noCountersWhy explains the absence of APERF/MPERF; noPMU is why the
// perf msr PMU could not be probed, nil when it was.
func (s *Set) noCountersWhy(cfg Config, perfHas map[string]bool, noPMU error) string {
	var parts []string
	switch {
	case cfg.Perf && noPMU != nil:
		parts = append(parts, noPMU.Error())
	case cfg.Perf:
		var miss []string
		for _, n := range []string{"aperf", "mperf"} {
			if !perfHas[n] {
				miss = append(miss, n)
			}
		}
		if len(miss) > 0 {
			parts = append(parts, "the perf msr PMU has no "+strings.Join(miss, "/")+" event")
		}
	}
	_, err := s.msr.ReadMSR(s.setup.CPUs[0].CPU, hwp.MSR_IA32_APERF)
	if err != nil {
		parts = append(parts, msrReason("IA32_APERF (0xE8)", err))
	}
	return strings.Join(parts, "; ")
}

// msrCounters probes APERF, MPERF and the TSC in the MSRs; on success it
// sets the Setup's Counters and TSC sources.
func (s *Set) msrCounters() bool {
	st := &s.setup
	c0 := st.CPUs[0].CPU
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_APERF); err != nil {
		return false
	}
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_MPERF); err != nil {
		return false
	}
	st.Counters = sampler.SrcMSR
	if _, err := s.probeMSR(c0, msrTSC); err == nil {
		st.TSC = sampler.SrcMSR
		return true
	}
	// The TSC runs at the base frequency on parts with an invariant TSC:
	// MSR_PLATFORM_INFO bits 15:8 (Maximum Non-Turbo Ratio) x 100 MHz.
	if v, err := s.probeMSR(c0, hwp.MSR_PLATFORM_INFO); err == nil && hwp.DecodePlatformInfo(v).MaxNonTurboRatio != 0 {
		s.tscHz = float64(hwp.DecodePlatformInfo(v).MaxNonTurboRatio) * 100e6
		st.TSC = sampler.SrcClock
		s.note("TSC_MHz", "IA32_TIME_STAMP_COUNTER unreadable: TSC taken as the clock x %.0f MHz (MSR_PLATFORM_INFO base ratio)", s.tscHz/1e6)
		return true
	}
	st.Counters = sampler.SrcNone
	return false
}

func dropEvents(evs []perfcount.Event, names ...string) []perfcount.Event {
	out := evs[:0:0]
	for _, e := range evs {
		keep := true
		for _, n := range names {
			if e.PMU == "msr" && e.Name == n {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}
