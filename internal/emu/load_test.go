// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestHWPTarget works the frequency model of docs/emulator.md ("Delivered
// frequency") by hand for mtl-165u's P-core capabilities (lowest 1, most
// efficient 5, highest 62): with a = EPP/255 and u = min(1, busy/0.5),
// target = 62 - round(57 x EPP/255 + 57 x a x (1 - a) x (1 - u)),
// clamped to the request's [min, max].
func TestHWPTarget(t *testing.T) {
	checkHWPTarget(t, []hwpTargetCase{
		{"performance idle", 62, 62, 0, 0, 0, 62},
		{"EPP 0 light load", 5, 62, 0, 0, 0.1, 62},
		{"EPP 64 full load", 5, 62, 0, 64, 1, 48},               // 62 - round(14.31)
		{"EPP 64 at the full-load busy", 5, 62, 0, 64, 0.5, 48}, // u = 1
		{"EPP 64 quarter busy", 5, 62, 0, 64, 0.25, 42},         // 62 - round(14.31 + 10.72 x 0.5)
		{"EPP 64 idle", 5, 62, 0, 64, 0, 37},                    // 62 - round(14.31 + 10.72)
		{"EPP 128 full load", 5, 62, 0, 128, 1, 33},             // 62 - round(28.61)
		{"EPP 128 idle", 5, 62, 0, 128, 0, 19},                  // 62 - round(28.61 + 14.25)
		{"EPP 255 full load", 5, 62, 0, 255, 1, 5},
		{"EPP 255 idle", 5, 62, 0, 255, 0, 5},
		{"EPP 255 above min", 10, 62, 0, 255, 1, 10},
		{"desired wins over EPP and load", 5, 62, 30, 255, 0, 30},
		{"max caps EPP 0", 5, 40, 0, 0, 1, 40},
		{"busy above 1 is full load", 5, 62, 0, 64, 7, 48},
	})
}

// hwpTargetCase is a request (min, max, desired, EPP) and busy fraction,
// and the level hwpTarget should select for it.
type hwpTargetCase struct {
	name               string
	min, max, des, epp uint8
	busy               float64
	want               int
}

// checkHWPTarget runs hwpTarget on each case with mtl-165u's P-core
// capabilities (lowest 1, most efficient 5, highest 62).
func checkHWPTarget(t *testing.T, cases []hwpTargetCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := hwpTarget(tc.min, tc.max, tc.des, tc.epp, 1, 5, 62, tc.busy); got != tc.want {
				t.Errorf("hwpTarget(min %d, max %d, des %d, EPP %d, busy %g) = %d, want %d", tc.min, tc.max, tc.des, tc.epp, tc.busy, got, tc.want)
			}
		})
	}
}

// TestLoadFrequency runs mtl-165u with a different fixed load per CPU
// and checks the delivered frequency (TSC rate x dAPERF/dMPERF, as
// turbostat's Bzy_MHz) and that an idle CPU counts no cycles:
//   - powersave, EPP 64: P-cores 3840 MHz busy 1 (48 units), 3360 busy
//     0.25 (42 units); E-core (highest 38, efficient 4, 100 MHz units) busy
//     0.25: 38 - round(34 x 64/255 + 34 x a x (1 - a) x 0.5) = 38 -
//     round(8.53 + 3.20) = 26 units = 2600 MHz;
//   - performance (EPP 0, min = max = highest): 4960 MHz whatever the
//     load;
//   - powersave with EPP 255 ("power"): the most efficient level, 5 x 80
//     = 400 MHz, whatever the load.
//
// The loads are light enough (every CPU idle or at most a quarter busy
// but one) that no power limit binds.
func TestLoadFrequency(t *testing.T) {
	clk := newClock()
	busy := ConstLoad{1, 0.25, 0, 0.25, 0.25, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	m, err := Load("mtl-165u", WithClock(clk.now), WithLoad(busy))
	if err != nil {
		t.Fatal(err)
	}
	check := func(stage string, want map[int]float64) {
		t.Helper()
		for cpu, w := range want {
			if got := delivered(t, m, clk, cpu, time.Second); math.Abs(got-w) > 0.01 {
				t.Errorf("%s: cpu%d (busy %g) delivered %.2f MHz, want %g", stage, cpu, busy[cpu], got, w)
			}
		}
		a, mp := msr(t, m, 2, 0xe8), msr(t, m, 2, 0xe7)
		clk.add(time.Second)
		if da, dm := msr(t, m, 2, 0xe8)-a, msr(t, m, 2, 0xe7)-mp; da != 0 || dm != 0 {
			t.Errorf("%s: idle cpu2 counted APERF %d, MPERF %d in a second, want none", stage, da, dm)
		}
	}
	check("powersave EPP 64", map[int]float64{0: 3840, 1: 3360, 3: 3360, 4: 2600})
	for n := range m.NumCPUs() {
		if err := write(m, fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/energy_performance_preference", n), "power"); err != nil {
			t.Fatal(err)
		}
	}
	check("powersave EPP 255", map[int]float64{0: 400, 1: 400})
	allPerformance(t, m)
	check("performance", map[int]float64{0: 4960, 1: 4960, 3: 4960})
	if r := msr(t, m, 0, 0x64f); r != 0 {
		t.Errorf("limit reasons %#x: want no limit at this load", r)
	}
}

// TestOperatingPointKept: a CPU's operating point is computed again only
// when the load the model takes from its busy fraction changes: busy 0.6
// and 0.9 are both full load (the point is kept), 0.25 is not (mtl-165u
// CPU 0 at EPP 64: 3360 MHz, as TestCounters).
func TestOperatingPointKept(t *testing.T) {
	m, _ := load(t, "mtl-165u", 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cpus[0]
	if got := m.operatingPoint(c, 0.6).mhz; got != 3840 {
		t.Errorf("busy 0.6: %v MHz, want 3840", got)
	}
	c.op.mhz = -1 // marks the kept point
	if got := m.operatingPoint(c, 0.9).mhz; got != -1 {
		t.Errorf("busy 0.9 after 0.6: computed again (%v MHz), want the kept point", got)
	}
	if got := m.operatingPoint(c, 0.25).mhz; got != 3360 {
		t.Errorf("busy 0.25: %v MHz, want 3360", got)
	}
}
