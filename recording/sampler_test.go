package recording

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/sampler"
)

func TestFromSampler(t *testing.T) {
	v := func(x float64) sampler.Value { return sampler.Value{V: x, Src: sampler.SrcMSR} }
	at := time.Unix(1_800_000_000, 5)
	s := &sampler.Sample{Time: at, Interval: 100 * time.Millisecond,
		CPUs: []sampler.CPU{{CPU: 3, Package: 0, Core: 1, Type: sampler.CoreEfficient,
			AvgMHz: v(800), BusyPct: v(25), BzyMHz: v(3200), TSCMHz: v(1700), CoreTmp: v(50),
			HWPRequest: sampler.Reg{Raw: 0x80002e17, Src: sampler.SrcMSR}}},
		Packages: []sampler.Package{{Package: 0, PkgWatt: v(6.5),
			// energy-psys reading 0 in a VM: not a measured 0.
			SysWatt:      sampler.Value{V: 0, Src: sampler.SrcPerf, Flags: sampler.FlagReadsZero},
			LimitReasons: sampler.Reg{Raw: 0x1c000000, Src: sampler.SrcMSR}}},
		Summaries: []sampler.Summary{{Type: sampler.SummaryAll, CPUs: 1, AvgMHz: v(800), PkgWatt: v(6.5)}},
	}
	got := FromSampler(s, 0x774)
	want := Sample{TimeNs: at.UnixNano(), IntervalNs: 100e6,
		CPUs: []CPURow{{CPU: 3, Core: 1, Package: 0, CoreType: "E", Values: []Value{800, 25, 3200, 1700, NA(), 50},
			Regs: []Reg{{0x774, 0x80002e17}}}},
		Packages: []PackageRow{{Package: 0, Values: []Value{6.5, NA(), NA(), NA(), NA(), NA()}, Regs: []Reg{{0x64F, 0x1c000000}}}},
		Summaries: []SummaryRow{{Type: "all", CPUs: 1, Values: []Value{800, NA(), NA(), NA(), NA(), NA()},
			PackageValues: []Value{6.5, NA(), NA(), NA(), NA(), NA()}}},
	}
	if diff := cmp.Diff(want, got, valueCmp); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(want.CPUs[0].Values) != len(SamplerCPUColumns()) || len(want.Packages[0].Values) != len(SamplerPackageColumns()) {
		t.Error("columns and values disagree")
	}
}

// TestFromSamplerRounds: figures keep FigureDecimals decimals.
func TestFromSamplerRounds(t *testing.T) {
	v := func(x float64) sampler.Value { return sampler.Value{V: x, Src: sampler.SrcMSR} }
	s := &sampler.Sample{CPUs: []sampler.CPU{{AvgMHz: v(2400.123456789), BusyPct: v(37.123456789), IPC: v(1.23456789)}},
		Packages: []sampler.Package{{PkgWatt: v(12.3456789)}}}
	got := FromSampler(s, 0x774)
	want := []Value{2400.123, 37.1235, 1.2346, 12.3457}
	g := []Value{got.CPUs[0].Values[0], got.CPUs[0].Values[1], got.CPUs[0].Values[4], got.Packages[0].Values[0]}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
