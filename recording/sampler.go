package recording

import (
	"math"

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

// figureDecimals is how many decimals FromSampler keeps of each figure:
// finer than the figures are measured (1 kHz of a MHz figure, 0.0001% of
// Busy%, 0.1 mW where RAPL counts in 61 uJ units, 0.01 degree of a sensor
// that reads whole degrees), so that rounding loses nothing measured and
// the columnar encoding stores each value as a small integer.
var figureDecimals = map[string]int{
	"Avg_MHz": 3, "Busy%": 4, "Bzy_MHz": 3, "TSC_MHz": 3, "IPC": 4, "CoreTmp": 2,
	"PkgWatt": 4, "CorWatt": 4, "GFXWatt": 4, "RAMWatt": 4, "SysWatt": 4, "PkgTmp": 2,
}

// FigureDecimals returns the decimals FromSampler keeps of a figure, and
// false for a figure it does not know.
func FigureDecimals(figure string) (int, bool) {
	d, ok := figureDecimals[figure]
	return d, ok
}

// Round returns v rounded to decimals places (0 to 9); NA stays NA.
func (v Value) Round(decimals int) Value {
	if !v.Valid() {
		return v
	}
	p := pow10[decimals]
	return Value(math.Round(float64(v)*p) / p)
}

// FromSampler converts a sampler's Sample into the recorded form, with
// SamplerCPUColumns and SamplerPackageColumns, each figure rounded to its
// FigureDecimals. A figure that is absent or whose counter reads zero
// (sampler.Value.OK false) becomes NA. hwpReg is
// the MSR the sampler's HWPRequest came from (hwp.MSR_IA32_HWP_REQUEST, or
// hwp.MSR_AMD_CPPC_REQ on AMD).
func FromSampler(s *sampler.Sample, hwpReg uint32) Sample {
	out := Sample{TimeNs: s.Time.UnixNano(), IntervalNs: int64(s.Interval),
		CPUs: make([]CPURow, len(s.CPUs)), Packages: make([]PackageRow, len(s.Packages)),
		Summaries: make([]SummaryRow, len(s.Summaries))}
	for i := range s.CPUs {
		c := &s.CPUs[i]
		out.CPUs[i] = CPURow{CPU: c.CPU, Core: c.Core, Package: c.Package, CoreType: string(c.Type),
			Values: cpuValues(c.AvgMHz, c.BusyPct, c.BzyMHz, c.TSCMHz, c.IPC, c.CoreTmp),
			Regs:   regs(reg{hwpReg, c.HWPRequest}, reg{hwp.MSR_IA32_ENERGY_PERF_BIAS, c.EPB})}
	}
	for i := range s.Packages {
		p := &s.Packages[i]
		out.Packages[i] = PackageRow{Package: p.Package,
			Values: packageValues(p.PkgWatt, p.CorWatt, p.GFXWatt, p.RAMWatt, p.SysWatt, p.PkgTmp),
			Regs:   regs(reg{hwp.MSR_CORE_PERF_LIMIT_REASONS, p.LimitReasons}, reg{hwp.MSR_IA32_PACKAGE_THERM_STATUS, p.ThermStatus})}
	}
	for i := range s.Summaries {
		m := &s.Summaries[i]
		out.Summaries[i] = SummaryRow{Type: string(m.Type), CPUs: m.CPUs,
			Values:        cpuValues(m.AvgMHz, m.BusyPct, m.BzyMHz, m.TSCMHz, m.IPC, m.CoreTmp),
			PackageValues: packageValues(m.PkgWatt, m.CorWatt, m.GFXWatt, m.RAMWatt, m.SysWatt, m.PkgTmp)}
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

// cpuValues returns figures in SamplerCPUColumns order, rounded.
func cpuValues(v ...sampler.Value) []Value { return values(SamplerCPUColumns(), v) }

// packageValues returns figures in SamplerPackageColumns order, rounded.
func packageValues(v ...sampler.Value) []Value { return values(SamplerPackageColumns(), v) }

func values(cols []string, v []sampler.Value) []Value {
	out := make([]Value, len(v))
	for i, x := range v {
		out[i] = NA()
		if x.OK() {
			out[i] = Value(x.V).Round(figureDecimals[cols[i]])
		}
	}
	return out
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
