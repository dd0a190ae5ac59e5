// SPDX-License-Identifier: Apache-2.0

package source

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// mtl165uTopo places the 14 CPUs of emu/machines/mtl-165u.yaml as its
// comment numbers them: P-core threads 0-3 (SMT pairs), E-cores 4-11,
// LP E-cores 12-13.
func mtl165uTopo() []sampler.Topo {
	var t []sampler.Topo
	for c := 0; c < 14; c++ {
		switch {
		case c < 4:
			t = append(t, sampler.Topo{CPU: c, Core: c / 2, Type: topology.PCore})
		case c < 12:
			t = append(t, sampler.Topo{CPU: c, Core: c - 2, Type: topology.ECore})
		default:
			t = append(t, sampler.Topo{CPU: c, Core: c - 2, Type: topology.LPECore})
		}
	}
	return t
}

// TestEmulatedMTL165U samples the emulated Meteor Lake laptop in process
// (its ReadMSR is an msr.Reader) with every CPU 50% busy for one second of
// a fake clock. The expected figures are worked from the machine
// description (emu/machines/mtl-165u.yaml) and the emulator's documented
// model, not from this code:
//
//   - TSC 1700 MHz (tsc_mhz); Busy% = busy = 50.
//   - Delivered MHz: intel_pstate powersave writes EPP 64
//     (balance_performance for model 0xAA); with Desired 0 the model runs
//     at highest - round((highest - most_efficient) x EPP / 255):
//     P caps 0x0105163e: 62 - round(57 x 64/255) = 48 -> x 80 MHz = 3840;
//     E caps 0x01040c26: 38 - round(34 x 64/255) = 29 -> x 100 MHz = 2900;
//     LP-E caps 0x01040715: 21 - round(17 x 64/255) = 17 -> 1700.
//     Avg_MHz = Busy x Bzy_MHz.
//   - CorWatt = sum of busy x active_w x (MHz / (guaranteed x unit))^2:
//     4 x 0.5 x 1.0 x (3840/1760)^2 + 8 x 0.5 x 0.4 x (2900/1200)^2
//   - 2 x 0.5 x 0.15 x (1700/700)^2 = 9.52066 + 9.34444 + 0.88469
//     = 19.74979 W; PkgWatt = idle 0.8 + uncore 2.0 x 0.5 + CorWatt
//     = 21.54979 W; SysWatt (psys) = PkgWatt + platform 3.0 = 24.54979 W.
//   - PkgTmp: the thermal model (ambient 35 C, R 2.5 K/W, tau 25 s) from
//     the idle 0.8 W: 35 + 2.5 x (21.54979 - 20.74979 x e^-0.04) =
//     39.03 C, readout 110 - 39 = 71 in 0x1B1 (TjMax 110, 0x1A2 =
//     0x6e0000); CoreTmp = PkgTmp less the core type's offset: P 39,
//     E 37, LP-E 34.
//
// Energy starts 2 J below the 32-bit wrap of the 2^-14 J counters
// (2^32 x 2^-14 J = 262144 J), so the package counter wraps in the
// interval.
func TestEmulatedMTL165U(t *testing.T) {
	clk := &clock{time.Unix(1_000_000, 0)}
	m, err := emu.Load("mtl-165u", emu.WithClock(clk.now), emu.WithLoad(emu.ConstLoad{0.5}), emu.WithEnergyStart(262144-2))
	if err != nil {
		t.Fatal(err)
	}
	set, err := Open(Config{Root: t.TempDir(), CPUs: mtl165uTopo(), MSR: m, Emulated: "mtl-165u", Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	s, err := sampler.New(set, sampler.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(time.Second)
	var smp sampler.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Type                     topology.CoreType
		Avg, Busy, Bzy, TSC, Tmp float64
	}
	var got []row
	for _, sm := range smp.Summaries[:3] {
		got = append(got, row{sm.Type, sm.AvgMHz.V, sm.BusyPct.V, sm.BzyMHz.V, sm.TSCMHz.V, sm.CoreTmp.V})
	}
	want := []row{
		{topology.PCore, 1920, 50, 3840, 1700, 39},
		{topology.ECore, 1450, 50, 2900, 1700, 37},
		{topology.LPECore, 850, 50, 1700, 1700, 34},
	}
	// The emulator's counters are float64 truncated to integers: allow
	// 1e-6 relative.
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(1e-6, 0)); d != "" {
		t.Errorf("summaries (-want +got):\n%s", d)
	}
	pk := smp.Packages[0]
	type watts struct{ Pkg, Cor, Sys, PkgTmp float64 }
	// 2^-14 J quantisation over 1 s: 1e-4 relative is ample.
	if d := cmp.Diff(watts{21.54979, 19.74979, 24.54979, 39}, watts{pk.PkgWatt.V, pk.CorWatt.V, pk.SysWatt.V, pk.PkgTmp.V}, cmpopts.EquateApprox(1e-4, 0)); d != "" {
		t.Errorf("package (-want +got):\n%s", d)
	}
	if pk.PkgWatt.Src != sampler.SrcMSR || pk.PkgWatt.Flags&sampler.FlagWrapped == 0 {
		t.Errorf("PkgWatt %+v: want from the MSR, wrapped", pk.PkgWatt)
	}
	// MSR_DRAM_ENERGY_STATUS exists on this model but stays 0.
	if pk.RAMWatt.Src != sampler.SrcMSR || pk.RAMWatt.Flags&sampler.FlagReadsZero == 0 {
		t.Errorf("RAMWatt %+v: want reads-zero", pk.RAMWatt)
	}
	if c := smp.CPUs[0]; c.HWPRequest.Raw>>24&0xff != 64 || c.EPB.Raw != 6 {
		t.Errorf("cpu0 HWP_REQUEST %#x EPB %d, want EPP 64, EPB 6", c.HWPRequest.Raw, c.EPB.Raw)
	}
}
