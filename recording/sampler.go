package recording

import (
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/sampler"
)

// SamplerCPUColumns returns the names of the CPU values FromSampler
// fills: turbostat's.
func SamplerCPUColumns() []string {
	return []string{"Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz", "IPC", "CoreTmp"}
}

// SamplerPackageColumns returns the names of the package values
// FromSampler fills: turbostat's.
func SamplerPackageColumns() []string {
	return []string{"PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "SysWatt", "PkgTmp"}
}

// FromSampler converts a sampler's Sample into the recorded form, with
// SamplerCPUColumns and SamplerPackageColumns. A figure that is absent or
// whose counter reads zero (sampler.Value.OK false) becomes NA. hwpReg is
// the MSR the sampler's HWPRequest came from (hwp.MSR_IA32_HWP_REQUEST, or
// hwp.MSR_AMD_CPPC_REQ on AMD).
func FromSampler(s *sampler.Sample, hwpReg uint32) Sample {
	out := Sample{TimeNs: s.Time.UnixNano(), IntervalNs: int64(s.Interval),
		CPUs: make([]CPURow, len(s.CPUs)), Packages: make([]PackageRow, len(s.Packages)),
		Summaries: make([]SummaryRow, len(s.Summaries))}
	for i := range s.CPUs {
		c := &s.CPUs[i]
		out.CPUs[i] = CPURow{CPU: c.CPU, Core: c.Core, Package: c.Package, CoreType: string(c.Type),
			Values: []Value{val(c.AvgMHz), val(c.BusyPct), val(c.BzyMHz), val(c.TSCMHz), val(c.IPC), val(c.CoreTmp)},
			Regs:   regs(reg{hwpReg, c.HWPRequest}, reg{hwp.MSR_IA32_ENERGY_PERF_BIAS, c.EPB})}
	}
	for i := range s.Packages {
		p := &s.Packages[i]
		out.Packages[i] = PackageRow{Package: p.Package,
			Values: []Value{val(p.PkgWatt), val(p.CorWatt), val(p.GFXWatt), val(p.RAMWatt), val(p.SysWatt), val(p.PkgTmp)},
			Regs:   regs(reg{hwp.MSR_CORE_PERF_LIMIT_REASONS, p.LimitReasons}, reg{hwp.MSR_IA32_PACKAGE_THERM_STATUS, p.ThermStatus})}
	}
	for i := range s.Summaries {
		m := &s.Summaries[i]
		out.Summaries[i] = SummaryRow{Type: string(m.Type), CPUs: m.CPUs,
			Values:        []Value{val(m.AvgMHz), val(m.BusyPct), val(m.BzyMHz), val(m.TSCMHz), val(m.IPC), val(m.CoreTmp)},
			PackageValues: []Value{val(m.PkgWatt), val(m.CorWatt), val(m.GFXWatt), val(m.RAMWatt), val(m.SysWatt), val(m.PkgTmp)}}
	}
	return out
}

// FiguresFromInfo records a sampler's sources and notes.
func FiguresFromInfo(in sampler.Info) *Figures {
	f := &Figures{Sources: map[string]string{}}
	for k, v := range in.Sources {
		f.Sources[k] = v.String()
	}
	for _, n := range in.Notes {
		f.Notes = append(f.Notes, FigureNote{Figure: n.Figure, Reason: n.Reason})
	}
	return f
}

func val(v sampler.Value) Value {
	if !v.OK() {
		return NA()
	}
	return Value(v.V)
}

type reg struct {
	msr uint32
	r   sampler.Reg
}

func regs(rs ...reg) []Reg {
	var out []Reg
	for _, r := range rs {
		if r.r.OK() {
			out = append(out, Reg{MSR: r.msr, Value: r.r.Raw})
		}
	}
	return out
}
