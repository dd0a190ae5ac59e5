// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// valueCmp compares Values with NaN equal to NaN.
var valueCmp = cmp.Comparer(func(a, b recording.Value) bool {
	return a == b || (math.IsNaN(float64(a)) && math.IsNaN(float64(b)))
})

func TestFromSampler(t *testing.T) {
	v := func(x float64) sampler.Value { return sampler.Value{V: x, Src: sampler.SrcMSR} }
	at := time.Unix(1_800_000_000, 5)
	s := &sampler.Sample{Time: at, Interval: 100 * time.Millisecond,
		CPUs: []sampler.CPU{{CPU: 3, Package: 0, Core: 1, Type: topology.ECore,
			AvgMHz: v(800), BusyPct: v(25), BzyMHz: v(3200), TSCMHz: v(1700), CoreTmp: v(50),
			HWPRequest: sampler.Reg{Raw: 0x80002e17, Src: sampler.SrcMSR}}},
		Packages: []sampler.Package{{Package: 0, PkgWatt: v(6.5),
			// energy-psys reading 0 in a VM: not a measured 0.
			SysWatt:      sampler.Value{V: 0, Src: sampler.SrcPerf, Flags: sampler.FlagReadsZero},
			LimitReasons: sampler.Reg{Raw: 0x1c000000, Src: sampler.SrcMSR}}},
		Summaries: []sampler.Summary{{Type: topology.All, CPUs: 1, AvgMHz: v(800), PkgWatt: v(6.5)}},
	}
	got := FromSampler(s, 0x774)
	want := recording.Sample{TimeNs: at.UnixNano(), IntervalNs: 100e6,
		CPUs: []recording.CPURow{{CPU: 3, Core: 1, Package: 0, CoreType: "E", Values: []recording.Value{800, 25, 3200, 1700, recording.NA(), 50},
			Regs: []recording.Reg{{MSR: 0x774, Value: 0x80002e17}}}},
		Packages: []recording.PackageRow{{Package: 0, Values: []recording.Value{6.5, recording.NA(), recording.NA(), recording.NA(), recording.NA(), recording.NA()}, Regs: []recording.Reg{{MSR: 0x64F, Value: 0x1c000000}}}},
		Summaries: []recording.SummaryRow{{Type: "all", CPUs: 1, Values: []recording.Value{800, recording.NA(), recording.NA(), recording.NA(), recording.NA(), recording.NA()},
			PackageValues: []recording.Value{6.5, recording.NA(), recording.NA(), recording.NA(), recording.NA(), recording.NA()}}},
	}
	if diff := cmp.Diff(want, got, valueCmp); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(want.CPUs[0].Values) != len(recording.SamplerCPUColumns()) || len(want.Packages[0].Values) != len(recording.SamplerPackageColumns()) {
		t.Error("columns and values disagree")
	}
}

// TestFromSamplerRounds: figures keep recording.FigureDecimals decimals.
func TestFromSamplerRounds(t *testing.T) {
	v := func(x float64) sampler.Value { return sampler.Value{V: x, Src: sampler.SrcMSR} }
	s := &sampler.Sample{CPUs: []sampler.CPU{{AvgMHz: v(2400.123456789), BusyPct: v(37.123456789), IPC: v(1.23456789)}},
		Packages: []sampler.Package{{PkgWatt: v(12.3456789)}}}
	got := FromSampler(s, 0x774)
	want := []recording.Value{2400.123, 37.1235, 1.2346, 12.3457}
	g := []recording.Value{got.CPUs[0].Values[0], got.CPUs[0].Values[1], got.CPUs[0].Values[4], got.Packages[0].Values[0]}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
