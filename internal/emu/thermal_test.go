// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"math"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// thermRead decodes a thermal status register of CPU n as hwpprobe does:
// the temperature TjMax - readout (MSR_TEMPERATURE_TARGET) and the bits.
func thermRead(t *testing.T, m *Machine, n int, addr uint32) (int, hwp.ThermStatus) {
	t.Helper()
	tj := hwp.DecodeTemperatureTarget(msr(t, m, n, hwp.MSR_TEMPERATURE_TARGET))
	s := hwp.DecodeThermStatus(msr(t, m, n, addr))
	return hwp.Temperature(tj.TjMax, s.Readout), s
}

// TestThermalRise runs mtl-165u at a light fixed load (below every
// limit, so the package power P is constant) and checks the first-order
// model C dT/dt = P - (T - 35)/R with R 2.5 K/W and C 10 J/K: the package
// starts at the idle steady state 35 + 2.5 x 0.8 = 37 C, is at
// T_amb + R x (P0 + (P - P0)(1 - 1/e)) after tau = 25 s, and at
// T_amb + R x P after ten tau; the cores read the package temperature
// less their type's offset (E 2 C, LP-E 5 C); no status bit is set.
func TestThermalRise(t *testing.T) {
	m, clk := load(t, "mtl-165u", 0.3)
	if got, _ := thermRead(t, m, 0, hwp.MSR_IA32_PACKAGE_THERM_STATUS); got != 37 {
		t.Errorf("package at start: %d C, want 37", got)
	}
	p := pkgWatts(m, clk, time.Millisecond)
	if p < 10 || p > 15 {
		t.Fatalf("package power %.3f W: want a load between 10 W and PL1", p)
	}
	const amb, r, idle = 35.0, 2.5, 0.8
	at := func(sec float64) float64 { return amb + r*(p+(idle-p)*math.Exp(-sec/25)) }
	clk.add(25*time.Second - time.Millisecond)
	if got, want := pkgTemp(t, m), at(25); math.Abs(float64(got)-want) > 0.5+1e-9 {
		t.Errorf("after tau: %d C, want %.2f rounded", got, want)
	}
	clk.add(225 * time.Second)
	want := amb + r*p
	for _, tt := range []struct {
		cpu    int
		offset float64
	}{{0, 0}, {4, 2}, {12, 5}} {
		got, s := thermRead(t, m, tt.cpu, hwp.MSR_IA32_THERM_STATUS)
		if math.Abs(float64(got)-(want-tt.offset)) > 0.5+1e-9 || !s.ReadingValid || s.Resolution != 1 {
			t.Errorf("cpu%d after 10 tau: %d C (valid %v, resolution %d), want %.2f rounded, valid, 1", tt.cpu, got, s.ReadingValid, s.Resolution, want-tt.offset)
		}
		if s.ThermalStatus || s.ThermalLog || s.PowerLimit || s.PowerLimitLog || s.PROCHOT {
			t.Errorf("cpu%d status bits %+v below every limit", tt.cpu, s)
		}
	}
	if got := pkgTemp(t, m); math.Abs(float64(got)-want) > 0.5+1e-9 {
		t.Errorf("package after 10 tau: %d C, want T_amb + R x P = %.2f rounded", got, want)
	}
	if r := msr(t, m, 0, 0x64f); r != 0 {
		t.Errorf("limit reasons %#x", r)
	}
}

func pkgTemp(t *testing.T, m *Machine) int {
	t.Helper()
	got, _ := thermRead(t, m, 0, hwp.MSR_IA32_PACKAGE_THERM_STATUS)
	return got
}

// loadTCC loads mtl-165u busy with MSR_TEMPERATURE_TARGET's TCC offset
// (bits 29:24) set to offset.
func loadTCC(t *testing.T, offset uint64, opts ...Option) (*Machine, *fakeClock) {
	t.Helper()
	data, err := builtin.ReadFile("machines/mtl-165u.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDescription(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.MSRs {
		if d.MSRs[i].Addr == hwp.MSR_TEMPERATURE_TARGET {
			d.MSRs[i].Value |= offset << 24
		}
	}
	clk := newClock()
	m, err := New(d, append([]Option{WithClock(clk.now), WithLoad(ConstLoad{1})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	allPerformance(t, m)
	return m, clk
}

// TestThermalLimit lowers the TCC activation temperature to 110 - 50 =
// 60 C, where the package can dissipate (60 - 35) / 2.5 = 10 W, below
// PL1 (15 W). Every CPU busy under performance holds PL2's 57 W first;
// the temperature reaches 60 C when its average of power, with tau 25 s,
// reaches 10 W: 25 s x ln((57 - 0.8) / (57 - 10)) = 4.47 s, before PL1's
// 8.15 s. From then the package is held at 10 W and 60 C; the thermal
// bits are set: MSR_CORE_PERF_LIMIT_REASONS bit 1 and its log bit 17
// (PL2's log 27 kept, PL1 never reached), Thermal Status and Log (bits
// 0, 1) and Power Limitation Status and Log (bits 10, 11) in
// IA32_PACKAGE_THERM_STATUS and every IA32_THERM_STATUS.
func TestThermalLimit(t *testing.T) {
	m, clk := loadTCC(t, 50)
	clk.add(4200 * time.Millisecond)
	if r := msr(t, m, 0, 0x64f); r != 1<<11|1<<27 {
		t.Errorf("limit reasons at 4.2 s %#x, want PL2 only (%#x)", r, 1<<11|1<<27)
	}
	if got, s := thermRead(t, m, 0, hwp.MSR_IA32_PACKAGE_THERM_STATUS); got >= 60 || s.ThermalStatus || s.ThermalLog {
		t.Errorf("package at 4.2 s: %d C, thermal status %v log %v: want below 60 C, neither", got, s.ThermalStatus, s.ThermalLog)
	}
	clk.add(300 * time.Millisecond)
	if w := pkgWatts(m, clk, 10*time.Second); math.Abs(w-10) > 1e-6 {
		t.Errorf("thermally limited: %.6f W, want 10", w)
	}
	if r := msr(t, m, 0, 0x64f); r != 1<<1|1<<17|1<<27 {
		t.Errorf("limit reasons %#x, want thermal status and log, PL2 log (%#x)", r, 1<<1|1<<17|1<<27)
	}
	want := hwp.ThermStatus{ThermalStatus: true, ThermalLog: true, PowerLimit: true, PowerLimitLog: true}
	if got, s := thermRead(t, m, 0, hwp.MSR_IA32_PACKAGE_THERM_STATUS); got != 60 || s != withReadout(want, 50) {
		t.Errorf("package: %d C, %+v; want 60 C, %+v", got, s, withReadout(want, 50))
	}
	want.ReadingValid, want.Resolution = true, 1
	for _, tt := range []struct{ cpu, temp int }{{0, 60}, {4, 58}, {12, 55}} {
		if got, s := thermRead(t, m, tt.cpu, hwp.MSR_IA32_THERM_STATUS); got != tt.temp || s != withReadout(want, uint8(110-tt.temp)) {
			t.Errorf("cpu%d: %d C, %+v; want %d C, %+v", tt.cpu, got, s, tt.temp, withReadout(want, uint8(110-tt.temp)))
		}
		if s := msr(t, m, tt.cpu, 0x777); s&4 == 0 {
			t.Errorf("cpu%d HWP_STATUS %#x: no excursion to minimum", tt.cpu, s)
		}
	}
}

func withReadout(s hwp.ThermStatus, r uint8) hwp.ThermStatus { s.Readout = r; return s }

// TestThermalDefaultOffset: with the machine's own TCC activation (110 C,
// room for 30 W) PL1 binds and the temperature settles at
// 35 + 2.5 x 15 = 72.5 C with no thermal bit; the time scale divides the
// thermal time constant too (tau 25 s / 25 = 1 s).
func TestThermalDefaultOffset(t *testing.T) {
	m, clk := loadTCC(t, 0, WithTimeScale(25))
	clk.add(20 * time.Second)
	if r := msr(t, m, 0, 0x64f); r&(1<<1|1<<17) != 0 || r&(1<<10) == 0 {
		t.Errorf("limit reasons %#x: want PL1, no thermal", r)
	}
	if got, s := thermRead(t, m, 0, hwp.MSR_IA32_PACKAGE_THERM_STATUS); got != 72 && got != 73 || s.ThermalLog || !s.PowerLimit {
		t.Errorf("package %d C, %+v: want 72.5 C rounded, power limitation, no thermal log", got, s)
	}
}

// TestThermalSPR: spr-2s models each package's temperature on its own
// (ambient 35 C, R 0.14 K/W, C 300 J/K, tau 42 s; TjMax 100 C). Idle,
// both packages sit at 35 + 0.14 x 70 = 44.8 C. With package 0's CPUs
// busy under performance and package 1's idle, package 0 is held at PL1
// (350 W, after PL2 420 W for its 1 s window) and settles at 35 + 0.14 x
// 350 = 84 C; the thermal limit, (100 - 35) / 0.14 = 464 W, never binds;
// package 1 stays at 44.8 C.
func TestThermalSPR(t *testing.T) {
	busy := make(ConstLoad, 224)
	for i := range 112 {
		busy[i] = 1
	}
	clk := newClock()
	m, err := Load("spr-2s", WithClock(clk.now), WithLoad(busy))
	if err != nil {
		t.Fatal(err)
	}
	for _, cpu := range []int{0, 112} {
		if got, _ := thermRead(t, m, cpu, hwp.MSR_IA32_PACKAGE_THERM_STATUS); got != 45 {
			t.Errorf("cpu%d's package at start: %d C, want 44.8 rounded", cpu, got)
		}
	}
	allPerformance(t, m)
	clk.add(420 * time.Second)
	for _, tt := range []struct{ cpu, temp int }{{0, 84}, {111, 84}, {112, 45}, {223, 45}} {
		if got, _ := thermRead(t, m, tt.cpu, hwp.MSR_IA32_PACKAGE_THERM_STATUS); got != tt.temp {
			t.Errorf("cpu%d's package after 10 tau: %d C, want %d", tt.cpu, got, tt.temp)
		}
		if got, _ := thermRead(t, m, tt.cpu, hwp.MSR_IA32_THERM_STATUS); got != tt.temp {
			t.Errorf("cpu%d after 10 tau: %d C, want %d", tt.cpu, got, tt.temp)
		}
	}
	if r := msr(t, m, 0, 0x64f); r != 1<<10|1<<26|1<<27 {
		t.Errorf("package 0 limit reasons %#x, want PL1 with both logs, no thermal bit", r)
	}
	if r := msr(t, m, 112, 0x64f); r != 0 {
		t.Errorf("package 1 limit reasons %#x, want none", r)
	}
}
