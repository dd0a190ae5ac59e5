// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	catalog "github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// FromSampler converts a sampler's Sample into the recorded form, with
// recording.SamplerCPUColumns and SamplerPackageColumns, each figure
// rounded to its recording.FigureDecimals. A figure that is absent or whose counter reads zero
// (sampler.Value.OK false) becomes NA. hwpReg is
// the MSR the sampler's HWPRequest came from (one of regs.Requests). The
// registers the sampler reads for the catalog (CPU.Regs, Package.Regs)
// follow the ones it has figures for.
func FromSampler(s *sampler.Sample, hwpReg uint32) recording.Sample {
	out := recording.Sample{TimeNs: s.Time.UnixNano(), IntervalNs: int64(s.Interval),
		CPUs: make([]recording.CPURow, len(s.CPUs)), Packages: make([]recording.PackageRow, len(s.Packages)),
		Summaries: make([]recording.SummaryRow, len(s.Summaries))}
	epb := catalog.EPB().Address
	for i := range s.CPUs {
		c := &s.CPUs[i]
		out.CPUs[i] = recording.CPURow{CPU: c.CPU, Core: c.Core, Package: c.Package, CoreType: string(c.Type),
			Values: cpuValues(c.AvgMHz, c.BusyPct, c.BzyMHz, c.TSCMHz, c.IPC, c.CoreTmp),
			Regs: regs(c.Regs, reg{hwpReg, c.HWPRequest}, reg{epb, c.EPB},
				reg{hwp.MSR_IA32_HWP_STATUS, c.HWPStatus})}
	}
	for i := range s.Packages {
		p := &s.Packages[i]
		out.Packages[i] = recording.PackageRow{Package: p.Package,
			Values: packageValues(p.PkgWatt, p.CorWatt, p.GFXWatt, p.RAMWatt, p.SysWatt, p.PkgTmp),
			Regs: regs(p.Regs, reg{hwp.MSR_CORE_PERF_LIMIT_REASONS, p.LimitReasons}, reg{hwp.MSR_IA32_PACKAGE_THERM_STATUS, p.ThermStatus},
				reg{rapl.MSR_PKG_POWER_LIMIT, p.PowerLimit})}
	}
	for i := range s.Summaries {
		m := &s.Summaries[i]
		out.Summaries[i] = recording.SummaryRow{Type: string(m.Type), CPUs: m.CPUs,
			Values:        cpuValues(m.AvgMHz, m.BusyPct, m.BzyMHz, m.TSCMHz, m.IPC, m.CoreTmp),
			PackageValues: packageValues(m.PkgWatt, m.CorWatt, m.GFXWatt, m.RAMWatt, m.SysWatt, m.PkgTmp)}
	}
	return out
}

// FiguresFromInfo records a sampler's sources and notes.
func FiguresFromInfo(in sampler.Info) *recording.Figures {
	f := &recording.Figures{Sources: map[string]string{}}
	for k, v := range in.Sources {
		f.Sources[k] = v.String()
	}
	for _, n := range in.Notes {
		f.Notes = append(f.Notes, recording.FigureNote{Figure: n.Figure, Reason: n.Reason})
	}
	return f
}

// cpuValues returns figures in SamplerCPUColumns order, rounded.
func cpuValues(v ...sampler.Value) []recording.Value {
	return values(recording.SamplerCPUColumns(), v)
}

// packageValues returns figures in SamplerPackageColumns order, rounded.
func packageValues(v ...sampler.Value) []recording.Value {
	return values(recording.SamplerPackageColumns(), v)
}

func values(cols []string, v []sampler.Value) []recording.Value {
	out := make([]recording.Value, len(v))
	for i, x := range v {
		out[i] = recording.NA()
		if x.OK() {
			d, _ := recording.FigureDecimals(cols[i])
			out[i] = recording.Value(x.V).Round(d)
		}
	}
	return out
}

type reg struct {
	msr uint32
	r   sampler.Reg
}

// regs returns the registers of rs that were read, then those of extra.
func regs(extra []sampler.AddrReg, rs ...reg) []recording.Reg {
	var out []recording.Reg
	for _, r := range rs {
		if r.r.OK() {
			out = append(out, recording.Reg{MSR: r.msr, Value: r.r.Raw})
		}
	}
	for _, g := range extra {
		out = append(out, recording.Reg{MSR: g.MSR, Value: g.Raw})
	}
	return out
}
