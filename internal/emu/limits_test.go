// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"
)

// allPerformance switches every CPU of m to the performance governor.
func allPerformance(t *testing.T, m *Machine) {
	t.Helper()
	for n := range m.NumCPUs() {
		if err := write(m, fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/scaling_governor", n), "performance"); err != nil {
			t.Fatal(err)
		}
	}
}

// pkgWatts is package 0's mean power over d from now, from the model's
// joules.
func pkgWatts(m *Machine, clk *fakeClock, d time.Duration) float64 {
	j0 := joules(m)
	clk.add(d)
	return (joules(m) - j0) / d.Seconds()
}

func joules(m *Machine) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance()
	return m.pkgs[0].joules["pkg"]
}

// delivered is CPU n's delivered frequency over d from now: TSC rate x
// dAPERF/dMPERF, as turbostat computes Bzy_MHz.
func delivered(t *testing.T, m *Machine, clk *fakeClock, n int, d time.Duration) float64 {
	a0, m0 := msr(t, m, n, 0xe8), msr(t, m, n, 0xe7)
	clk.add(d)
	a1, m1 := msr(t, m, n, 0xe8), msr(t, m, n, 0xe7)
	return 1700 * float64(a1-a0) / float64(m1-m0)
}

// TestPowerLimits runs every CPU of mtl-165u busy under the performance
// governor. Its request (min = max = highest on every core) would draw
// more than PL2 (57 W), so the package holds 57 W while PL2's average is
// at the limit, then 15 W (PL1) once PL1's average, with tau 28 s
// (emu/machines/mtl-165u.yaml: MSR_PKG_POWER_LIMIT 0x004281c800dd8078),
// reaches 15 W: from the idle 0.8 W at 57 W that takes 28 s x
// ln((57 - 0.8) / (57 - 15)) = 8.15 s. Delivered frequency falls below
// the request's minimum: HWP_STATUS bit 2 (excursion to minimum) is set;
// MSR_CORE_PERF_LIMIT_REASONS shows PL2 (bit 11) then PL1 (bit 10), with
// both logs (bits 27, 26) kept.
func TestPowerLimits(t *testing.T) {
	m, clk := load(t, "mtl-165u", 1)
	allPerformance(t, m)
	if w := pkgWatts(m, clk, 10*time.Millisecond); w < 57 {
		t.Fatalf("first 10 ms: %.2f W, want the demand above PL2 57 W first", w)
	}
	if w := pkgWatts(m, clk, time.Second); math.Abs(w-57) > 1e-6 {
		t.Errorf("PL2 phase: %.6f W, want 57", w)
	}
	reasons := msr(t, m, 0, 0x64f)
	if reasons != 1<<11|1<<27 {
		t.Errorf("limit reasons in the PL2 phase %#x, want PL2 status and log (%#x)", reasons, 1<<11|1<<27)
	}
	fPL2 := delivered(t, m, clk, 0, time.Second)
	clk.add(6 * time.Second) // now 8.01 s
	if r := msr(t, m, 0, 0x64f); r&(1<<10) != 0 {
		t.Errorf("PL1 status at 8.0 s (%#x), its average cannot have reached 15 W", r)
	}
	clk.add(200 * time.Millisecond) // past 8.15 s
	if w := pkgWatts(m, clk, time.Second); math.Abs(w-15) > 1e-6 {
		t.Errorf("PL1 phase: %.6f W, want 15", w)
	}
	if r := msr(t, m, 0, 0x64f); r != 1<<10|1<<26|1<<27 {
		t.Errorf("limit reasons in the PL1 phase %#x, want PL1 status, PL1 and PL2 logs (%#x)", r, 1<<10|1<<26|1<<27)
	}
	fPL1 := delivered(t, m, clk, 0, time.Second)
	if !(fPL1 < fPL2 && fPL2 < 62*80) {
		t.Errorf("cpu0 Bzy_MHz %.0f under PL2, %.0f under PL1: want below the request 4960 and falling", fPL2, fPL1)
	}
	for _, n := range []int{0, 4, 12} {
		if s := msr(t, m, n, 0x777); s&4 == 0 {
			t.Errorf("cpu%d HWP_STATUS %#x: no excursion to minimum", n, s)
		}
	}
	// The power the model reports over the phase is what RAPL shows.
	e0 := msr(t, m, 0, 0x611)
	clk.add(10 * time.Second)
	if w := float64(msr(t, m, 0, 0x611)-e0) / 16384 / 10; math.Abs(w-15) > 0.001 {
		t.Errorf("MSR_PKG_ENERGY_STATUS gives %.4f W, want 15", w)
	}
}

// TestPowerLimitReadRate checks that the model does not depend on how
// often it is read: one machine read every 7 ms and one read once, over
// 12 s that cross both limits' transitions, count the same energy and
// cycles.
func TestPowerLimitReadRate(t *testing.T) {
	often, clk1 := load(t, "mtl-165u", 1)
	once, clk2 := load(t, "mtl-165u", 1)
	allPerformance(t, often)
	allPerformance(t, once)
	for range 12000 / 7 {
		clk1.add(7 * time.Millisecond)
		msr(t, often, 0, 0x611)
	}
	clk2.add(time.Duration(12000/7*7) * time.Millisecond)
	for _, r := range []struct {
		cpu  int
		addr uint32
	}{{0, 0x611}, {0, 0xe8}, {5, 0xe8}, {13, 0xe8}, {0, 0x639}} {
		a, b := float64(msr(t, often, r.cpu, r.addr)), float64(msr(t, once, r.cpu, r.addr))
		if math.Abs(a-b) > 2+1e-9*a {
			t.Errorf("cpu%d MSR %#x read often %.0f, once %.0f", r.cpu, r.addr, a, b)
		}
	}
}

// TestPowerLimitTimeScale: with the time windows divided by 28, PL1's
// 28 s is 1 s and the package is held at 15 W after 0.29 s.
func TestPowerLimitTimeScale(t *testing.T) {
	m, clk := load(t, "mtl-165u", 1, WithTimeScale(28))
	allPerformance(t, m)
	clk.add(280 * time.Millisecond)
	if r := msr(t, m, 0, 0x64f); r&(1<<10) != 0 {
		t.Errorf("PL1 status at 0.28 s (%#x)", r)
	}
	clk.add(20 * time.Millisecond)
	if w := pkgWatts(m, clk, 100*time.Millisecond); math.Abs(w-15) > 1e-6 {
		t.Errorf("after 0.3 s: %.6f W, want 15", w)
	}
}

// TestPowerLimitUnderBudget: a light load stays below every limit: no
// reason bit, no excursion, the requested frequency delivered: at EPP 64
// (a = 64/255) and busy 0.1 (load u = 0.2), 62 - round(57 x 64/255 + 57
// x a x (1 - a) x 0.8) = 62 - round(22.88) = 39 units x 80 MHz = 3120
// MHz.
func TestPowerLimitUnderBudget(t *testing.T) {
	m, clk := load(t, "mtl-165u", 0.1)
	clk.add(60 * time.Second)
	if r := msr(t, m, 0, 0x64f); r != 0 {
		t.Errorf("limit reasons %#x", r)
	}
	if s := msr(t, m, 0, 0x777); s != 0 {
		t.Errorf("HWP_STATUS %#x", s)
	}
	if f := delivered(t, m, clk, 0, time.Second); math.Abs(f-3120) > 0.01 {
		t.Errorf("cpu0 Bzy_MHz %.2f, want the request's 3120", f)
	}
}

// TestPowercapConstraintWrites writes the constraint files as a user of
// intel_rapl would: a new PL1 changes MSR_PKG_POWER_LIMIT's bits 14:0 (in
// 1/8 W units) and the power the package is held at; a time window
// becomes the 2^Y x (1 + F/4) encoding rapl_compute_time_window_core()
// makes; bad numbers are EINVAL (kstrtoull), a power past the 15-bit
// field wraps as the kernel's mask makes it, and a locked register
// refuses with ENODATA; every accepted write is logged on CPU 0.
func TestPowercapConstraintWrites(t *testing.T) {
	const pc = "sys/class/powercap/intel-rapl:0/"
	m, clk := load(t, "mtl-165u", 1, WithTimeScale(28))
	allPerformance(t, m)
	for _, tt := range []struct {
		file, val string
		want      error
		reg       uint64 // MSR_PKG_POWER_LIMIT after
		show      string
	}{
		{"constraint_0_power_limit_uw", "10000000\n", nil, 0x004281c800dd8050, "10000000"},
		{"constraint_0_power_limit_uw", "10000000.5", syscall.EINVAL, 0x004281c800dd8050, "10000000"},
		{"constraint_0_power_limit_uw", "-1", syscall.EINVAL, 0x004281c800dd8050, "10000000"},
		{"constraint_0_power_limit_uw", "99999999999999999999", syscall.EINVAL, 0x004281c800dd8050, "10000000"},
		{"constraint_0_power_limit_uw", "", syscall.EINVAL, 0x004281c800dd8050, "10000000"},
		{"constraint_1_power_limit_uw", "+20000000", nil, 0x004280a000dd8050, "20000000"},
		{"constraint_0_time_window_us", "1000000", nil, 0x004280a000158050, "999424"},
		{"constraint_1_power_limit_uw", "5000000000", nil, 0x00429c4000158050, "904000000"},
	} {
		err := write(m, pc+tt.file, tt.val)
		if err != tt.want {
			t.Errorf("write %q to %s: %v, want %v", tt.val, tt.file, err, tt.want)
		}
		if got := msr(t, m, 0, 0x610); got != tt.reg {
			t.Errorf("after %q to %s: MSR_PKG_POWER_LIMIT %#x, want %#x", tt.val, tt.file, got, tt.reg)
		}
		if got := read(t, m, pc+tt.file); got != tt.show {
			t.Errorf("%s reads %s, want %s", tt.file, got, tt.show)
		}
	}
	if err := write(m, pc+"constraint_1_power_limit_uw", "57000000"); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Second) // PL1 10 W with tau 1 s / 28
	if w := pkgWatts(m, clk, 100*time.Millisecond); math.Abs(w-10) > 1e-6 {
		t.Errorf("with PL1 10 W: %.6f W", w)
	}
	ws := m.MSRWrites()
	if len(ws) < 4 || ws[len(ws)-1].MSR != 0x610 || ws[len(ws)-1].CPU != 0 || ws[len(ws)-1].New != 0x004281c800158050 {
		t.Errorf("last logged write %+v", ws[len(ws)-1])
	}
	m.pkgs[0].limits.reg |= plLockBit
	if err := write(m, pc+"constraint_0_power_limit_uw", "12000000"); err != syscall.ENODATA {
		t.Errorf("write to a locked register: %v, want ENODATA", err)
	}
}
