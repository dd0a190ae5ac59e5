// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// na is printed for every value that could not be read.
const na = "n/a"

// WriteText writes the snapshot as readable text: machine and driver,
// per core type a table of CPUs (sysfs | registers), package facts,
// findings with their kernel rules, and the capability report.
func WriteText(w io.Writer, s *Snapshot) error {
	var b strings.Builder
	m := s.Machine
	fmt.Fprintf(&b, "hwpprobe snapshot: %s (%s %d:%d:%d, microcode %s)\n", orDash(m.ModelName), orDash(m.Vendor), m.Family, m.Model, m.Stepping, orDash(m.Microcode))
	if s.Emulated != "" {
		fmt.Fprintf(&b, "EMULATED machine %q: every figure below comes from hwpemu, not from hardware\n", s.Emulated)
	}
	fmt.Fprintf(&b, "cpuinfo flags: %s\n", orDash(strings.Join(m.Flags, " ")))
	b.WriteString("driver: ")
	switch d := s.Driver; {
	case d.IntelPstate != nil:
		p := d.IntelPstate
		fmt.Fprintf(&b, "intel_pstate status %s, no_turbo %s, min_perf_pct %s, max_perf_pct %s, hwp_dynamic_boost %s\n",
			str(p.Status), num(p.NoTurbo), num(p.MinPerfPct), num(p.MaxPerfPct), num(p.HWPDynamicBoost))
	case d.AMDPstate != nil:
		fmt.Fprintf(&b, "amd-pstate status %s, prefcore %s, boost %s\n", str(d.AMDPstate.Status), str(d.AMDPstate.Prefcore), num(d.Boost))
	default:
		b.WriteString("none (no intel_pstate or amd_pstate directory)\n")
	}
	if t := m.EPPTable; t != nil {
		fmt.Fprintf(&b, "EPP table: performance %d, balance_performance %d, balance_power %d, power %d (%s)\n", t.Performance, t.BalancePerformance, t.BalancePower, t.Power, t.Source)
	}
	fmt.Fprintf(&b, "CPUs: %s", s.SelectedCPUs)
	if s.OfflineCPUs != "" {
		fmt.Fprintf(&b, " (offline, not read: %s)", s.OfflineCPUs)
	}
	fmt.Fprintf(&b, "; core types: %s\n", s.CoreTypeSource)

	amd := m.Vendor == "AuthenticAMD" || m.Vendor == "HygonGenuine"
	for _, g := range s.Groups {
		fmt.Fprintf(&b, "\n%s (CPUs %s)\n", g.CoreType, g.CPUList)
		tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
		if amd {
			fmt.Fprintln(tw, "CPU\tdriver\tgovernor\tEPP\tmin kHz\tmax kHz\t|\tCPPC_REQ min\tmax\tdes\tepp\t|\tCAP1 high\tnom\tlownl\tlow")
		} else {
			fmt.Fprintln(tw, "CPU\tdriver\tgovernor\tEPP\tmin kHz\tmax kHz\tEPB\t|\tHWP_REQUEST min\tmax\tdes\tepp\twindow\t|\tHWP_CAP high\tguar\teff\tlow\t|\tEPB\ttemp C")
		}
		for _, c := range g.CPUs {
			sy, r := c.Sysfs, c.Registers
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t", c.CPU, str(sy.ScalingDriver), str(sy.ScalingGovernor), str(sy.EPP), num(sy.ScalingMinKHz), num(sy.ScalingMaxKHz))
			if amd {
				q, k := r.CPPCReq, r.CPPCCap1
				if q != nil {
					fmt.Fprintf(tw, "|\t%d\t%d\t%d\t%d\t", q.Min, q.Max, q.Desired, q.EPP)
				} else {
					fmt.Fprint(tw, "|\tn/a\tn/a\tn/a\tn/a\t")
				}
				if k != nil {
					fmt.Fprintf(tw, "|\t%d\t%d\t%d\t%d\n", k.Highest, k.Nominal, k.LowestNonlinear, k.Lowest)
				} else {
					fmt.Fprint(tw, "|\tn/a\tn/a\tn/a\tn/a\n")
				}
				continue
			}
			fmt.Fprintf(tw, "%s\t", num(sy.EPB))
			if q := r.HWPRequest; q != nil {
				fmt.Fprintf(tw, "|\t%d\t%d\t%d\t%d\t%d\t", q.Min, q.Max, q.Desired, q.EPP, q.ActivityWindowUS)
			} else {
				fmt.Fprint(tw, "|\tn/a\tn/a\tn/a\tn/a\tn/a\t")
			}
			if k := r.HWPCapabilities; k != nil {
				fmt.Fprintf(tw, "|\t%d\t%d\t%d\t%d\t", k.Highest, k.Guaranteed, k.MostEfficient, k.Lowest)
			} else {
				fmt.Fprint(tw, "|\tn/a\tn/a\tn/a\tn/a\t")
			}
			epb := na
			if r.EPB != nil {
				epb = strconv.Itoa(int(r.EPB.Value))
				if r.EPB.Name != "" {
					epb += " (" + r.EPB.Name + ")"
				}
			}
			fmt.Fprintf(tw, "|\t%s\t%s\n", epb, intp(r.TemperatureC))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		writeExcursions(&b, g)
		for _, c := range g.CPUs {
			for _, name := range sortedKeys(c.Unavailable) {
				fmt.Fprintf(&b, "  cpu%d %s n/a: %s\n", c.CPU, name, c.Unavailable[name])
			}
		}
	}

	for _, p := range s.Packages {
		fmt.Fprintf(&b, "\nPackage %d (read on cpu%d)\n", p.Package, p.ReadOnCPU)
		if p.BaseRatio != nil {
			fmt.Fprintf(&b, "  %d * 100.0 = %.1f MHz base frequency; %d * 100.0 = %.1f MHz max efficiency frequency\n", *p.BaseRatio, float64(*p.BaseRatio)*100, *p.MaxEfficiencyRatio, float64(*p.MaxEfficiencyRatio)*100)
		}
		if u := p.RAPLUnits; u != nil {
			fmt.Fprintf(&b, "  RAPL: %f Watts, %f Joules, %f sec. units\n", u.PowerUnitW, u.EnergyUnitJ, u.TimeUnitS)
		} else {
			b.WriteString("  RAPL units: n/a\n")
		}
		if p.TDPW != nil {
			fmt.Fprintf(&b, "  %.0f W TDP\n", *p.TDPW)
		}
		if l := p.PowerLimit; l != nil {
			fmt.Fprintf(&b, "  PKG Limit #1: %s (%.3f Watts, %f sec, clamp %s)\n", enabled(l.PL1Enabled), l.PL1W, l.PL1TimeS, enabled(l.PL1Clamp))
			fmt.Fprintf(&b, "  PKG Limit #2: %s (%.3f Watts, %f sec, clamp %s)%s\n", enabled(l.PL2Enabled), l.PL2W, l.PL2TimeS, enabled(l.PL2Clamp), locked(l.Locked))
		}
		if p.TjMaxC != nil {
			fmt.Fprintf(&b, "  TjMax %d C (TCC offset %d C), package temperature %s C\n", *p.TjMaxC, *p.TCCOffsetC, intp(p.TemperatureC))
		}
		writeLimitState(&b, p)
		if q := p.HWPRequestPkg; q != nil {
			fmt.Fprintf(&b, "  MSR_HWP_REQUEST_PKG: %#x (min %d max %d des %d epp %#x window %d us)\n", uint64(q.Raw), q.Min, q.Max, q.Desired, q.EPP, q.ActivityWindowUS)
		}
		for _, z := range p.Powercap {
			fmt.Fprintf(&b, "  powercap %s (%s):", z.Zone, z.Interface)
			if z.PL1W == nil && z.PL2W == nil {
				b.WriteString(" no power limit constraints (energy counter only)")
			}
			if z.PL1W != nil {
				fmt.Fprintf(&b, " PL1 %.3f Watts %s sec", *z.PL1W, secs(z.PL1TimeS))
			}
			if z.PL2W != nil {
				fmt.Fprintf(&b, ", PL2 %.3f Watts %s sec", *z.PL2W, secs(z.PL2TimeS))
			}
			fmt.Fprintf(&b, "%s\n", disabledZone(z.Enabled))
		}
		for _, t := range p.TurboRatios {
			fmt.Fprintf(&b, "  %d * 100.0 = %.1f MHz max turbo %d active cores\n", t.Ratio, float64(t.Ratio)*100, t.Cores)
		}
		for _, name := range sortedKeys(p.Unavailable) {
			fmt.Fprintf(&b, "  %s n/a: %s\n", name, p.Unavailable[name])
		}
	}

	b.WriteString("\nSysfs vs registers\n")
	if len(s.Findings) == 0 {
		b.WriteString("  no disagreement found")
		if !anyRegisters(s) {
			b.WriteString(" (no register could be read, so nothing was compared)")
		}
		b.WriteString("\n")
	}
	explained := map[string]bool{}
	for _, f := range s.Findings {
		mark := "DISAGREE"
		if f.Kind == KindNote {
			mark = "note"
		}
		fmt.Fprintf(&b, "  %s %s, CPUs %s: sysfs %s; register %s\n", mark, f.Check, f.CPUs, f.Sysfs, f.Register)
		if explained[f.Explanation] {
			fmt.Fprintf(&b, "    why: as above (%s)\n", f.Check)
			continue
		}
		explained[f.Explanation] = true
		fmt.Fprintf(&b, "    why: %s\n", f.Explanation)
	}

	b.WriteString("\nCapabilities\n")
	for _, c := range s.Capabilities {
		mark := "ok     "
		if !c.Available {
			mark = "MISSING"
		}
		fmt.Fprintf(&b, "  %s %-12s %s\n", mark, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(&b, "          %-12s fix: %s\n", "", c.Fix)
		}
	}
	if len(s.ReadErrors) > 0 {
		b.WriteString("\nRead errors\n")
		for _, e := range s.ReadErrors {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func anyRegisters(s *Snapshot) bool {
	for _, g := range s.Groups {
		for _, c := range g.CPUs {
			r := c.Registers
			if r.HWPRequest != nil || r.EPB != nil || r.CPPCReq != nil || r.TurboDisabled != nil {
				return true
			}
		}
	}
	return false
}

func str(s *string) string {
	if s == nil {
		return na
	}
	return *s
}

func num(n *int64) string {
	if n == nil {
		return na
	}
	return strconv.FormatInt(*n, 10)
}

func intp(n *int) string {
	if n == nil {
		return na
	}
	return strconv.Itoa(*n)
}

func orDash(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// enabled and locked use turbostat's words.
func enabled(b bool) string {
	if b {
		return "ENabled"
	}
	return "DISabled"
}

func locked(b bool) string {
	if b {
		return " LOCKed"
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func disabledZone(on *bool) string {
	if on != nil && !*on {
		return " (zone disabled)"
	}
	return ""
}

// secs formats a time window as turbostat does (%f).
func secs(p *float64) string {
	if p == nil {
		return na
	}
	return fmt.Sprintf("%f", *p)
}
