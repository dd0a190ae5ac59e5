// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock               { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }
func load(t *testing.T, name string, busy float64, opts ...Option) (*Machine, *fakeClock) {
	t.Helper()
	clk := newClock()
	m, err := Load(name, append([]Option{WithClock(clk.now), WithLoad(ConstLoad{busy})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m, clk
}

func read(t *testing.T, m *Machine, p string) string {
	t.Helper()
	n, ok := m.Tree().Walk(p)
	if !ok {
		t.Fatalf("%s: missing", p)
	}
	b, err := n.(*vfs.File).Read()
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

func write(m *Machine, p, s string) error {
	n, ok := m.Tree().Walk(p)
	if !ok {
		return os.ErrNotExist
	}
	f := n.(*vfs.File)
	if f.Write == nil {
		return syscall.EACCES
	}
	return f.Write([]byte(s))
}

func msr(t *testing.T, m *Machine, cpu int, addr uint32) uint64 {
	t.Helper()
	v, err := m.ReadMSR(cpu, addr)
	if err != nil {
		t.Fatalf("cpu%d msr %#x: %v", cpu, addr, err)
	}
	return v
}

const pol0 = "sys/devices/system/cpu/cpufreq/policy0/"

func TestLoadBuiltin(t *testing.T) {
	// CPU counts: ARK (165U: 14 threads; 8480+: 112 per socket), AMD
	// (7950X: 32 threads), this VM (2 vCPUs).
	want := map[string]string{"mtl-165u": "0-13", "zen4-amd-pstate": "0-31", "spr-2s": "0-223", "vm-bare": "0-1"}
	if diff := cmp.Diff([]string{"mtl-165u", "spr-2s", "vm-bare", "zen4-amd-pstate"}, Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
	for name, online := range want {
		m, _ := load(t, name, 0)
		if got := read(t, m, "sys/devices/system/cpu/online"); got != online {
			t.Errorf("%s: online = %q, want %q", name, got, online)
		}
		if got := read(t, m, "sys/devices/system/cpu/hwpemu_machine"); got != name {
			t.Errorf("%s: marker = %q", name, got)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mtl, _ := builtin.ReadFile("machines/mtl-165u.yaml")
	bad := file("bad.yaml", string(mtl)+"tjmax: 100\n")
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := file("big.yaml", "")
	if err := os.Truncate(big, MaxDescriptionBytes+1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg  string
		want error
		msg  string // the start of the message
	}{
		{"no-such-machine", ErrUnknownMachine, `unknown machine "no-such-machine"`},
		{filepath.Join(dir, "missing.yaml"), ErrUnknownMachine, "unknown machine: open"},
		{bad, ErrDescription, bad + ":" + fmt.Sprint(bytes.Count(mtl, []byte("\n"))+1) + ": tjmax: unknown field"},
		{file("empty.yaml", ""), ErrDescription, dir + "/empty.yaml:1: name: missing"},
		// Cut inside the first register's flow mapping: never valid YAML.
		{file("cut.yaml", string(mtl[:bytes.Index(mtl, []byte("- {msr: "))+10])), ErrDescription, dir + "/cut.yaml:"},
		{"/dev/zero", ErrNotRegular, "/dev/zero: not a regular file"},
		{fifo, ErrNotRegular, fifo + ": not a regular file"},
		{dir, ErrNotRegular, dir + ": not a regular file"},
		{big, ErrTooLarge, big + ": larger than 64 MiB"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Load(tc.arg, WithLoad(ConstLoad{0})); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrUnknownMachine) && !errors.Is(err, ErrDescription) ||
				!strings.HasPrefix(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Load(%q) = %v, want %v starting %q", tc.arg, err, tc.want, tc.msg)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("Load(%q) did not return", tc.arg)
		}
	}
}

// The expected HWP_REQUEST values follow intel_pstate.c arithmetic on the
// mtl-165u description: P-core (CPU 0) HWP_CAP highest 62, guaranteed 22,
// scaling 80000 kHz; min_pstate = DIV_ROUND_UP(4 x 100000, 80000) = 5;
// min_perf_pct = min_perf_pct_min() = 5 x 100 / 62 = 8, so the global
// minimum is DIV_ROUND_UP(62 x 8, 100) = 5. E-core (CPU 4): 38/12,
// min_pstate 4, global minimum DIV_ROUND_UP(38 x 8, 100) = 4. EPP 64 is Meteor Lake's
// balance_performance, written as the default by intel_pstate_hwp_enable().
func TestIntelGovernorSwitch(t *testing.T) {
	m, _ := load(t, "mtl-165u", 0)
	type state struct {
		P, E   uint64 // HWP_REQUEST of CPU 0 and CPU 4
		EPP    string // CPU 0 energy_performance_preference
		PerfCt uint64 // CPU 0 IA32_PERF_CTL
	}
	get := func() state {
		return state{msr(t, m, 0, 0x774), msr(t, m, 4, 0x774), read(t, m, pol0+"energy_performance_preference"), msr(t, m, 0, 0x199)}
	}
	if diff := cmp.Diff(state{0x40003e05, 0x40002604, "balance_performance", 0x1100}, get()); diff != "" {
		t.Errorf("boot (-want +got):\n%s", diff)
	}
	for cpu := range 14 {
		if err := write(m, "sys/devices/system/cpu/cpufreq/policy"+itoa(cpu)+"/scaling_governor", "performance\n"); err != nil {
			t.Fatal(err)
		}
	}
	// performance: min = max, EPP 0 (saved), PERF_CTL = max ratio << 8.
	// EPP 0 is not in the Meteor Lake table, so the file shows "default".
	if diff := cmp.Diff(state{0x00003e3e, 0x00002626, "default", 0x3e00}, get()); diff != "" {
		t.Errorf("performance (-want +got):\n%s", diff)
	}
	if got := read(t, m, pol0+"scaling_governor"); got != "performance" {
		t.Errorf("scaling_governor = %q", got)
	}
	// Back to powersave: min from the policy again, EPP 64 restored.
	for cpu := range 14 {
		if err := write(m, "sys/devices/system/cpu/cpufreq/policy"+itoa(cpu)+"/scaling_governor", "powersave"); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(state{0x40003e05, 0x40002604, "balance_performance", 0x3e00}, get()); diff != "" {
		t.Errorf("powersave again (-want +got):\n%s", diff)
	}
	if err := write(m, pol0+"scaling_governor", "ondemand"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("ondemand: %v, want EINVAL", err)
	}
}

// store_energy_performance_preference() under the performance policy:
// anything but EPP 0 is EBUSY (intel_pstate_set_energy_pref_index()).
func TestIntelEPPBusyUnderPerformance(t *testing.T) {
	m, _ := load(t, "mtl-165u", 0)
	if err := write(m, pol0+"scaling_governor", "performance"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"balance_power", syscall.EBUSY},
		{"performance", syscall.EBUSY}, // 16 on Meteor Lake, not 0
		{"default", syscall.EBUSY},     // epp_default = 64
		{"128", syscall.EBUSY},
		{"0", nil},
	} {
		if err := write(m, pol0+"energy_performance_preference", tc.in); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("write %q = %v, want %v", tc.in, err, tc.want)
		}
	}
	if got := msr(t, m, 0, 0x774); got != 0x3e3e {
		t.Errorf("HWP_REQUEST = %#x, want 0x3e3e", got)
	}
}

func TestIntelEPPStrings(t *testing.T) {
	for _, tc := range []struct {
		machine, in string
		wantEPP     uint64
		wantShow    string
		wantErr     error
	}{
		// Meteor Lake table (docs/kernel-facts.md section 1).
		{"mtl-165u", "performance", 16, "performance", nil},
		{"mtl-165u", "balance_performance\n", 64, "balance_performance", nil},
		{"mtl-165u", "balance_power", 179, "balance_power", nil},
		{"mtl-165u", "power", 255, "power", nil},
		{"mtl-165u", "default", 64, "balance_performance", nil},
		{"mtl-165u", "128\n", 128, "128", nil},
		{"mtl-165u", "16", 16, "performance", nil},
		{"mtl-165u", "256", 64, "balance_performance", syscall.EINVAL},
		{"mtl-165u", "powersave", 64, "balance_performance", syscall.EINVAL},
		{"mtl-165u", "", 64, "balance_performance", syscall.EINVAL},
		// Sapphire Rapids: balance_performance 32, generic others.
		{"spr-2s", "balance_power", 192, "balance_power", nil},
		{"spr-2s", "performance", 0, "performance", nil},
		{"spr-2s", "default", 32, "balance_performance", nil},
	} {
		m, _ := load(t, tc.machine, 0)
		err := write(m, pol0+"energy_performance_preference", tc.in)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("%s %q: err %v, want %v", tc.machine, tc.in, err, tc.wantErr)
		}
		if got := msr(t, m, 0, 0x774) >> 24 & 0xff; got != tc.wantEPP {
			t.Errorf("%s %q: EPP %d, want %d", tc.machine, tc.in, got, tc.wantEPP)
		}
		if got := read(t, m, pol0+"energy_performance_preference"); got != tc.wantShow {
			t.Errorf("%s %q: shows %q, want %q", tc.machine, tc.in, got, tc.wantShow)
		}
	}
	m, _ := load(t, "mtl-165u", 0)
	if got := read(t, m, pol0+"energy_performance_available_preferences"); got != "default performance balance_performance balance_power power " {
		t.Errorf("available preferences %q", got)
	}
}

// energy_perf_bias_store() (intel_epb.c): names map to 0, 4, 6, 8, 15;
// numbers up to 15 in any base kstrtou64 accepts.
func TestEPB(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  error
	}{
		{"performance", 0, nil}, {"balance-performance", 4, nil}, {"normal\n", 6, nil},
		{"balance-power", 8, nil}, {"power", 15, nil}, {"0x9", 9, nil}, {"15", 15, nil},
		{"16", 6, syscall.EINVAL}, {"balance_power", 6, syscall.EINVAL},
	} {
		m, _ := load(t, "mtl-165u", 0)
		p := "sys/devices/system/cpu/cpu3/power/energy_perf_bias"
		if err := write(m, p, tc.in); !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%q: %v, want %v", tc.in, err, tc.err)
		}
		if got := msr(t, m, 3, 0x1b0); got != tc.want {
			t.Errorf("%q: EPB MSR %d, want %d", tc.in, got, tc.want)
		}
		if got := read(t, m, p); got != itoa(tc.want) {
			t.Errorf("%q: shows %q", tc.in, got)
		}
	}
}

// The limits follow intel_pstate_update_perf_limits() and store_no_turbo();
// arithmetic per case below (P-core: scaling 80000 kHz, HWP highest 62,
// guaranteed 22; E-core CPU 4: 38, 12, scaling 100000).
func TestIntelLimits(t *testing.T) {
	const ip = "sys/devices/system/cpu/intel_pstate/"
	for _, tc := range []struct {
		name       string
		file, in   string
		wantP      uint64 // CPU 0 HWP_REQUEST bits 15:0 (max<<8 | min)
		wantE      uint64 // CPU 4
		wantMaxKHz string // CPU 0 scaling_max_freq
		wantErr    error
	}{
		// no_turbo: policy max = base 1700000 -> max_freq -> max_pstate 22;
		// E: 1200000 -> 12.
		{"no_turbo", ip + "no_turbo", "1", 22<<8 | 5, 12<<8 | 4, "1700000", nil},
		// max_perf_pct 50: DIV_ROUND_UP(62 x 50, 100) = 31, (38 x 50) = 19.
		{"max_perf_pct", ip + "max_perf_pct", "50", 31<<8 | 5, 19<<8 | 4, "4900000", nil},
		// min_perf_pct 100 (clamped to max_perf_pct 100): min = max.
		{"min_perf_pct", ip + "min_perf_pct", "100", 62<<8 | 62, 38<<8 | 38, "4900000", nil},
		// scaling_max_freq 2 GHz on CPU 0: 20 x 100000 -> DIV_ROUND_UP(2000000, 80000) = 25.
		{"scaling_max_freq", pol0 + "scaling_max_freq", "2000000", 25<<8 | 5, 38<<8 | 4, "2000000", nil},
		// scaling_min_freq 3 GHz: DIV_ROUND_UP(3000000, 80000) = 38.
		{"scaling_min_freq", pol0 + "scaling_min_freq", "3000000", 62<<8 | 38, 38<<8 | 4, "4900000", nil},
		// scaling_max_freq above cpuinfo_max_freq is clamped.
		{"scaling_max_freq high", pol0 + "scaling_max_freq", "9000000", 62<<8 | 5, 38<<8 | 4, "4900000", nil},
		{"no_turbo junk", ip + "no_turbo", "yes", 62<<8 | 5, 38<<8 | 4, "4900000", syscall.EINVAL},
	} {
		m, _ := load(t, "mtl-165u", 0)
		err := write(m, tc.file, tc.in)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.wantErr)
		}
		if got := msr(t, m, 0, 0x774) & 0xffff; got != tc.wantP {
			t.Errorf("%s: CPU 0 max/min %#x, want %#x", tc.name, got, tc.wantP)
		}
		if got := msr(t, m, 4, 0x774) & 0xffff; got != tc.wantE {
			t.Errorf("%s: CPU 4 max/min %#x, want %#x", tc.name, got, tc.wantE)
		}
		if got := read(t, m, pol0+"scaling_max_freq"); got != tc.wantMaxKHz {
			t.Errorf("%s: scaling_max_freq %s, want %s", tc.name, got, tc.wantMaxKHz)
		}
	}
	m, _ := load(t, "mtl-165u", 0)
	// store_min_perf_pct() clamps to [min_perf_pct_min(), max_perf_pct].
	if err := write(m, ip+"min_perf_pct", "3"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, m, ip+"min_perf_pct"); got != "8" {
		t.Errorf("min_perf_pct after writing 3 = %s, want 8", got)
	}
	if err := write(m, ip+"no_turbo", "1"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, m, pol0+"cpuinfo_max_freq"); got != "1700000" {
		t.Errorf("cpuinfo_max_freq with no_turbo = %s, want 1700000", got)
	}
	if err := write(m, ip+"no_turbo", "0"); err != nil {
		t.Fatal(err)
	}
	if got := msr(t, m, 0, 0x774) & 0xffff; got != 62<<8|5 {
		t.Errorf("turbo back: %#x", got)
	}
}

// amd-pstate active mode: CPPC_REQ max 7:0, min 15:8, EPP 31:24. CAP1 of
// zen4-amd-pstate: highest 190, nominal 150, lowest nonlinear 60.
func TestAMDPstate(t *testing.T) {
	m, _ := load(t, "zen4-amd-pstate", 0)
	steps := []struct {
		file, in string
		wantErr  error
		wantReq  uint64
		wantShow string
	}{
		// Boot: powersave, min = lowest nonlinear, EPP balance_performance.
		{"", "", nil, 0x80003cbe, "balance_performance"},
		// performance: min = min(nominal, max) = 150 (commit 0c411b39e4f4), EPP 0.
		{"scaling_governor", "performance", nil, 0x000096be, "performance"},
		{"energy_performance_preference", "power", syscall.EBUSY, 0x000096be, "performance"},
		{"energy_performance_preference", "performance", nil, 0x000096be, "performance"},
		// powersave keeps the EPP in CPPC_REQ (amd_pstate_epp_update_limit()).
		{"scaling_governor", "powersave", nil, 0x00003cbe, "performance"},
		{"energy_performance_preference", "balance_power", nil, 0xbf003cbe, "balance_power"},
		{"energy_performance_preference", "128", syscall.EINVAL, 0xbf003cbe, "balance_power"},
		{"energy_performance_preference", "default", nil, 0x80003cbe, "balance_performance"},
		// scaling_max_freq 4.5 GHz: DIV_ROUND_UP(4500000 x 150, 4500000) = 150.
		{"scaling_max_freq", "4500000", nil, 0x80003c96, "balance_performance"},
	}
	for _, s := range steps {
		if s.file != "" {
			err := write(m, pol0+s.file, s.in)
			if !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
				t.Errorf("%s=%s: err %v, want %v", s.file, s.in, err, s.wantErr)
			}
		}
		if got := msr(t, m, 0, 0xC00102B3); got != s.wantReq {
			t.Errorf("after %s=%s: CPPC_REQ %#x, want %#x", s.file, s.in, got, s.wantReq)
		}
		if got := read(t, m, pol0+"energy_performance_preference"); got != s.wantShow {
			t.Errorf("after %s=%s: EPP shows %q, want %q", s.file, s.in, got, s.wantShow)
		}
	}
	if err := write(m, pol0+"scaling_governor", "performance"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, m, pol0+"energy_performance_available_preferences"); got != "performance" {
		t.Errorf("available under performance: %q", got)
	}
	// perf_to_freq(190) = DIV_ROUND_UP(4500000 x 190, 150) = 5700000.
	if got := read(t, m, pol0+"amd_pstate_max_freq"); got != "5700000" {
		t.Errorf("amd_pstate_max_freq %s", got)
	}
}

// cpufreq/boost on amd-pstate (amd_pstate_cpu_boost_update()): off caps
// cpuinfo_max_freq at the nominal 4.5 GHz, so CPPC_REQ.max becomes
// freq_to_perf(4500000) = 150; amd_pstate_max_freq stays 5700000.
func TestAMDBoost(t *testing.T) {
	m, _ := load(t, "zen4-amd-pstate", 0)
	const boost = "sys/devices/system/cpu/cpufreq/boost"
	if got := read(t, m, boost); got != "1" {
		t.Errorf("boost at start %q", got)
	}
	if err := write(m, boost, "2"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("boost 2: %v, want EINVAL", err)
	}
	if err := write(m, boost, "0\n"); err != nil {
		t.Fatal(err)
	}
	got := []string{read(t, m, pol0+"cpuinfo_max_freq"), read(t, m, pol0+"scaling_max_freq"), read(t, m, pol0+"amd_pstate_max_freq")}
	if diff := cmp.Diff([]string{"4500000", "4500000", "5700000"}, got); diff != "" {
		t.Errorf("boost off (-want +got):\n%s", diff)
	}
	if got := msr(t, m, 5, 0xC00102B3); got != 0x80003c96 {
		t.Errorf("CPPC_REQ with boost off %#x, want 0x80003c96", got)
	}
	if err := write(m, boost, "1"); err != nil {
		t.Fatal(err)
	}
	if got := msr(t, m, 5, 0xC00102B3); got != 0x80003cbe {
		t.Errorf("CPPC_REQ with boost on again %#x", got)
	}
}

// Counters with a fake clock and a fixed load: TSC at 1700 MHz, MPERF =
// busy x TSC, APERF = busy x delivered MHz. CPU 0 (P-core) at EPP 64
// (a = 64/255) and busy 0.25 (load u = 0.25/0.5): 62 - round(57 x 64/255
// + 57 x a x (1 - a) x (1 - u)) = 62 - round(14.31 + 5.36) = 42 units x
// 80 MHz = 3360 MHz (PERF_STATUS ratio 34 of the 100 MHz bus); under performance 62 x 80 = 4960 MHz whatever the
// load.
func TestCounters(t *testing.T) {
	m, clk := load(t, "mtl-165u", 0.25)
	tsc0, mperf0, aperf0, c60 := msr(t, m, 0, 0x10), msr(t, m, 0, 0xe7), msr(t, m, 0, 0xe8), msr(t, m, 0, 0x3fd)
	clk.add(2 * time.Second)
	got := []uint64{msr(t, m, 0, 0x10) - tsc0, msr(t, m, 0, 0xe7) - mperf0, msr(t, m, 0, 0xe8) - aperf0, msr(t, m, 0, 0x3fd) - c60,
		msr(t, m, 0, 0x198)}
	want := []uint64{3_400_000_000, 850_000_000, 1_680_000_000, 2_550_000_000, 34 << 8}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deltas tsc mperf aperf c6 perf_status (-want +got):\n%s", diff)
	}
	if err := write(m, pol0+"scaling_governor", "performance"); err != nil {
		t.Fatal(err)
	}
	a := msr(t, m, 0, 0xe8)
	clk.add(time.Second)
	if d := msr(t, m, 0, 0xe8) - a; d != 1_240_000_000 {
		t.Errorf("APERF delta under performance = %d, want 0.25 x 4960e6", d)
	}
}

// Energy: idle mtl-165u draws idle_w 0.8 W, psys 0.8 + 3.0 W. 10 s give
// 8 J = 131072 counts of 1/16384 J; powercap converts with the kernel's
// truncated unit 10^9 >> 14 = 61035: 131072 x 61035 / 1000 = 7999979 µJ.
func TestEnergy(t *testing.T) {
	m, clk := load(t, "mtl-165u", 0)
	clk.add(10 * time.Second)
	if got := msr(t, m, 0, 0x611); got != 131072 {
		t.Errorf("PKG_ENERGY_STATUS %d, want 131072", got)
	}
	if got := msr(t, m, 0, 0x64d); got != 38*16384 {
		t.Errorf("PLATFORM_ENERGY_STATUS %d, want %d", got, 38*16384)
	}
	if got := read(t, m, "sys/class/powercap/intel-rapl:0/energy_uj"); got != "7999979" {
		t.Errorf("energy_uj %s, want 7999979", got)
	}
	// 0xffffffff x 61035 / 1000, truncated.
	if got := read(t, m, "sys/class/powercap/intel-rapl:0/max_energy_range_uj"); got != "262143328850" {
		t.Errorf("max_energy_range_uj %s", got)
	}
	if n, _ := m.Tree().Walk("sys/class/powercap/intel-rapl:0:0"); n.(*vfs.Symlink).Target != "intel-rapl:0/intel-rapl:0:0" {
		t.Errorf("intel-rapl:0:0 link: %+v", n)
	}
	for p, want := range map[string]string{
		"intel-rapl:0/name": "package-0", "intel-rapl:0/intel-rapl:0:0/name": "core", "intel-rapl:0/intel-rapl:0:1/name": "uncore",
		"intel-rapl:1/name": "psys", "intel-rapl:0/constraint_1_power_limit_uw": "57000000",
		"intel-rapl:0/constraint_0_name": "long_term", "intel-rapl:0/constraint_0_max_power_uw": "15000000",
	} {
		if got := read(t, m, "sys/class/powercap/"+p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}

// A counter started 1 J short of the 32-bit wrap wraps within 10 s at
// 0.8 W: (2^32 - 16384) + 131072 - 2^32 = 114688 counts; energy_uj goes
// from (2^32 - 16384) x 61035 / 1000 to 114688 x 61035 / 1000 (truncated).
func TestEnergyWrap(t *testing.T) {
	start := float64(uint64(1)<<32-16384) / 16384
	m, clk := load(t, "mtl-165u", 0, WithEnergyStart(start))
	if got := msr(t, m, 0, 0x611); got != 1<<32-16384 {
		t.Fatalf("start %#x", got)
	}
	before := read(t, m, "sys/class/powercap/intel-rapl:0/energy_uj")
	clk.add(10 * time.Second)
	if got := msr(t, m, 0, 0x611); got != 114688 {
		t.Errorf("after wrap %d, want 114688", got)
	}
	if after := read(t, m, "sys/class/powercap/intel-rapl:0/energy_uj"); after != "6999982" || before != "262142328913" {
		t.Errorf("energy_uj %s -> %s", before, after)
	}
	z, clk := load(t, "zen4-amd-pstate", 0)
	clk.add(time.Second)
	// 22 W for 1 s in 1/65536 J units (MSR C001_0299 0x000a1000).
	if got := msr(t, z, 0, 0xC001029B); got != 22*65536 {
		t.Errorf("AMD package energy %d, want %d", got, 22*65536)
	}
}

func readDev(m *Machine, p string, size int, off int64) ([]byte, error) {
	n, ok := m.Tree().Walk(p)
	if !ok {
		return nil, os.ErrNotExist
	}
	b := make([]byte, size)
	k, err := n.(*vfs.Device).ReadAt(b, off)
	return b[:k], err
}

func TestDevices(t *testing.T) {
	dir := t.TempDir()
	mtl, _ := builtin.ReadFile("machines/mtl-165u.yaml")
	path := filepath.Join(dir, "mtl-off.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(mtl), "name: mtl-165u", "name: mtl-off\noffline: [13]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	off, err := Load(path, WithLoad(ConstLoad{0}))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := load(t, "mtl-165u", 0)
	b, err := readDev(m, "dev/cpu/0/msr", 8, 0x771)
	if err != nil || binary.LittleEndian.Uint64(b) != 0x0105163e {
		t.Errorf("msr 0x771: %x %v", b, err)
	}
	b, err = readDev(m, "dev/cpu/0/msr", 16, 0x771)
	if err != nil || len(b) != 16 || binary.LittleEndian.Uint64(b[8:]) != 0x0105163e {
		t.Errorf("16-byte read repeats the register: %x %v", b, err)
	}
	for _, tc := range []struct {
		m    *Machine
		path string
		size int
		off  int64
		want error
	}{
		{m, "dev/cpu/0/msr", 4, 0x771, syscall.EINVAL},
		{m, "dev/cpu/0/msr", 8, 0x12345, syscall.EIO},
		{m, "dev/cpu/0/cpuid", 8, 0, syscall.EINVAL},
		{off, "dev/cpu/13/msr", 8, 0x10, syscall.ENXIO},
		{off, "dev/cpu/13/cpuid", 16, 0, syscall.ENXIO},
	} {
		if _, err := readDev(tc.m, tc.path, tc.size, tc.off); !errors.Is(err, tc.want) {
			t.Errorf("%s %s size %d at %#x: %v, want %v", tc.m.Name(), tc.path, tc.size, tc.off, err, tc.want)
		}
	}
	for p, want := range map[string]string{
		"sys/devices/system/cpu/online": "0-12", "sys/devices/system/cpu/offline": "13",
		"sys/devices/system/cpu/cpu13/online": "0",
	} {
		if got := read(t, off, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if _, ok := off.Tree().Walk("sys/devices/system/cpu/cpu13/cpufreq"); ok {
		t.Error("offline CPU has a cpufreq link")
	}
	// vm-bare is like this VM: cpuid but no msr, no cpufreq, no powercap.
	v, _ := load(t, "vm-bare", 0)
	for p, want := range map[string]bool{"dev/cpu/0/cpuid": true, "dev/cpu/0/msr": false,
		"sys/devices/system/cpu/cpufreq/policy0": false, "sys/class/powercap": false,
		"sys/devices/system/cpu/cpu0/power/energy_perf_bias": false, "sys/devices/system/cpu/intel_pstate": false} {
		if _, ok := v.Tree().Walk(p); ok != want {
			t.Errorf("vm-bare %s exists = %v, want %v", p, ok, want)
		}
	}
}

func TestHybridTopology(t *testing.T) {
	m, _ := load(t, "mtl-165u", 0)
	for p, want := range map[string]string{
		"sys/devices/cpu_core/cpus": "0-3", "sys/devices/cpu_atom/cpus": "4-13",
		"sys/devices/system/cpu/cpu1/topology/thread_siblings_list": "0-1",
		"sys/devices/system/cpu/cpu5/topology/core_id":              "3",
		"sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list":  "0-11", // LP E-cores have no L3
		"sys/devices/system/cpu/cpu9/cache/index2/shared_cpu_list":  "8-11",
		pol0 + "base_frequency":                                     "1700000",
		"sys/devices/system/cpu/cpufreq/policy4/base_frequency":     "1200000",
		"sys/devices/system/cpu/cpufreq/policy12/cpuinfo_max_freq":  "2100000",
	} {
		if got := read(t, m, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if _, ok := m.Tree().Walk("sys/devices/system/cpu/cpu12/cache/index3"); ok {
		t.Error("LP E-core has an L3")
	}
}

// AMD's MSR_AMD_CORE_ENERGY_STATUS counts one core: zen4-amd-pstate at
// 100% busy, EPP 128: 190 - round(130 x 128 / 255) = 125 x 30 MHz =
// 3750 MHz; each thread draws 2.5 W x (3750/4500)^2, a core two threads:
// 1 s gives 3.4722 J = 227555 counts of 1/65536 J on CPU 0 and its
// sibling CPU 1 alike.
func TestAMDPerCoreEnergy(t *testing.T) {
	m, clk := load(t, "zen4-amd-pstate", 1)
	clk.add(time.Second)
	for _, cpu := range []int{0, 1, 30} {
		if got := msr(t, m, cpu, 0xC001029A); got != 227555 {
			t.Errorf("CPU %d core energy %d, want 227555", cpu, got)
		}
	}
}

// BenchmarkReadMSR reads APERF of one CPU of the 224-CPU spr-2s, each read
// advancing every CPU's counters (the cost a sampler pays per register).
func BenchmarkReadMSR(b *testing.B) {
	clk := newClock()
	m, err := Load("spr-2s", WithClock(clk.now), WithLoad(ConstLoad{0.5}))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		clk.add(time.Microsecond)
		if _, err := m.ReadMSR(i%224, 0xE8); err != nil {
			b.Fatal(err)
		}
	}
}

// Readers and writers at once, as a FUSE server calls the tree (run with
// -race).
func TestConcurrentAccess(t *testing.T) {
	m, _ := Load("mtl-165u", WithLoad(ConstLoad{0.5}))
	done := make(chan error)
	for g := range 4 {
		go func() {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				switch g {
				case 0:
					_, err = m.ReadMSR(i%14, 0xE8)
				case 1:
					err = write(m, pol0+"scaling_governor", []string{"performance", "powersave"}[i%2])
				case 2:
					_, err = readDev(m, "dev/cpu/3/msr", 8, 0x774)
				case 3:
					n, _ := m.Tree().Walk("proc/stat")
					_, err = n.(*vfs.File).Read()
				}
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// tiny is a minimal valid description (testdata/tiny.yaml, which
// cmd/hwpemu's tests start from too); line numbers below refer to it.
var tiny = func() string {
	b, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

// Every bad description gives one line naming the line and the field.
func TestParseDescriptionErrors(t *testing.T) {
	if _, err := ParseDescription([]byte(tiny)); err != nil {
		t.Fatalf("tiny: %v", err)
	}
	rep := func(old, new string) string {
		if !strings.Contains(tiny, old) {
			t.Fatalf("%q not in tiny", old)
		}
		return strings.Replace(tiny, old, new, 1)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"vendor", rep("GenuineIntel", "Cyrix"), `description:2: vendor: "Cyrix": want GenuineIntel or AuthenticAMD`},
		{"unknown core type", rep("{type: c,", "{type: x,"), `description:9: cores[0].type: unknown core type "x"`},
		{"threads", rep("threads: 1", "threads: 4"), "description:9: cores[0]: type c: count 2 threads 4"},
		{"kind", rep("kind: tsc", "kind: sleepy"), `description:13: msrs[0].kind: msr 0x10: unknown kind "sleepy"`},
		{"no source", rep("source: model", `source: ""`), "description:13: msrs[0].source: msr 0x10 (TSC): no source"},
		{"thermal kind", rep("kind: tsc", "kind: therm_status"), "description:13: msrs[0].kind: msr 0x10: kind therm_status needs a thermal section"},
		{"thermal", tiny + "thermal: {ambient_c: 35, r_k_per_w: 0, c_j_per_k: 10, source: assumed}\n", "description:14: thermal: r_k_per_w and c_j_per_k must be positive and source given"},
		{"unknown field", tiny + "tjmax: 100\n", "description:14: tjmax: unknown field"},
		{"nested unknown field", rep("c: {}", "c: {perf_mhz: 3}"), "description:11: core_types.c.perf_mhz: unknown field"},
		{"type", rep("family: 6", "family: six"), "description:3: family: cannot unmarshal !!str `six` into int"},
		{"syntax", rep("packages: 1", "packages: ["), "description:9: yaml: did not find expected node content"},
		{"empty", "", "description:1: name: missing: the description is empty"},
		{"comments only", "# nothing\n", "description:1: name: missing: the description is empty"},
		{"truncated", tiny[:strings.Index(tiny, "cores:")], "description:7: cores: missing: no cores"},
		{"truncated mid-line", tiny[:strings.Index(tiny, "threads")+3], "description:9: yaml: did not find expected ',' or '}'"},
		{"offline boot CPU", tiny + "offline: [0]\n", "description:14: offline[0]: CPU 0: want 1 to 1 (CPU 0 cannot be offline)"},
		{"cache ways", rep("c: {}", "c: {caches: [{level: 1, type: Data, size_k: 48, ways: 0, shared_by: core}]}"), "description:11: core_types.c.caches[0].ways: 0: want 1 to 1024"},
		{"bus", rep("bus_mhz: 100", "bus_mhz: 0\ncpuid_level: 0x16"), "description:6: bus_mhz: 0: want > 0"},
		{"cpuid cpus", tiny + "cpuid:\n  - {leaf: 1, cpus: 0-5, regs: [1, 2, 3, 4]}\n", "description:15: cpuid[0].cpus: leaf 0x1: CPU 5: the machine has 2 CPUs"},
		{"cpuid twice", tiny + "cpuid:\n  - {leaf: 1, cpus: 0-1, regs: [1, 2, 3, 4]}\n  - {leaf: 1, subleaf: 0, cpus: 1, regs: [1, 2, 3, 4]}\n", "description:16: cpuid[1]: leaf 0x1 subleaf 0 listed twice for CPU 1"},
		{"msr cpus", rep("source: model}", "source: model, cpus: 1}\n  - {msr: 0x10, name: TSC, kind: tsc, source: model, cpus: 0-1}"), "description:14: msrs[1].cpus: msr 0x10 listed twice for CPU 1"},
		{"file path", tiny + "files:\n  - {path: /etc/passwd, mode: \"0444\"}\n", `description:15: files[0].path: "/etc/passwd": want a clean path relative to the system root`},
		{"file outside", tiny + "files:\n  - {path: etc/passwd, mode: \"0444\"}\n", `description:15: files[0].path: "etc/passwd": outside the served paths`},
		{"file live", tiny + "files:\n  - {path: proc/stat, mode: \"0444\"}\n", `description:15: files[0].path: "proc/stat": served by the model`},
		{"file under file", tiny + "files:\n  - {path: proc/cpuinfo, mode: \"0444\"}\n  - {path: proc/cpuinfo/x, mode: \"0444\"}\n", "description:16: files[1].path: proc/cpuinfo/x: proc/cpuinfo is not a directory"},
		{"file kind", tiny + "files:\n  - {path: proc/cpuinfo, mode: \"0444\", dir: true}\n", "description:15: files[0]: proc/cpuinfo: want exactly one of mode"},
		{"file mode", tiny + "files:\n  - {path: proc/cpuinfo, mode: \"0999\"}\n", `description:15: files[0].mode: "0999": want octal`},
		{"newline in a key", tiny + "\"x\\ny\": 1\n", `description:14: x\ny: `},
	} {
		_, err := ParseDescription([]byte(tc.data))
		var de *DescriptionError
		if !errors.Is(err, ErrDescription) || !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a DescriptionError starting %q", tc.name, err, tc.want)
		}
	}
}

// The same story on every machine with a driver: the request at start,
// the performance governor's request, EBUSY for an EPP under performance,
// counters over 1 s at 50% busy, and the package energy counter wrapping
// when started one joule short of 2^32 counts. Expected values
// follow the rules and model above (docs/emulator.md):
//   - spr-2s: HWP_CAP 38/20/8/5, EPP 32 -> 38 - round(30 x 32/255) = 34
//     (3400 MHz); package power 70 + 60 x 0.5 + 112 x 0.5 x 1.0 x 1.7^2 =
//     261.84 W; energy unit 1/16384 J.
//   - zen4-amd-pstate: CPPC min 60 max 190 EPP 128 -> 125 x 30 MHz =
//     3750 MHz; 22 + 15 x 0.5 + 32 x 0.5 x 2.5 x (3750/4500)^2 = 57.28 W;
//     energy unit 1/65536 J.
//   - mtl-165u: CPU 0 (P-core) at EPP 64: 62 - round(57 x 64/255) = 48
//     units x 80 MHz = 3840 MHz.
//
// Every CPU is busy 0.5, the model's full load, so the load term of the
// frequency model is 0 (TestLoadFrequency covers lighter loads).
func TestMachinesEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name             string
		req              uint32 // request register
		boot, perf       uint64
		tscHz, mhz       float64
		unitJ, pkgW      float64
		pkgMSR           uint32
		wrappedCountsMin uint64
	}{
		{"mtl-165u", 0x774, 0x40003e05, 0x00003e3e, 1.7e9, 3840, 1.0 / 16384, 0, 0x611, 0},
		{"spr-2s", 0x774, 0x20002608, 0x00002626, 2.0e9, 3400, 1.0 / 16384, 261.84, 0x611, 4273602},
		{"zen4-amd-pstate", 0xC00102B3, 0x80003cbe, 0x000096be, 4.5e9, 3750, 1.0 / 65536, 57.277777, 0xC001029B, 3688220},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := (1<<32 - 1/tc.unitJ) * tc.unitJ // one joule short of the wrap
			m, clk := load(t, tc.name, 0.5, WithEnergyStart(start))
			if got := msr(t, m, 0, tc.req); got != tc.boot {
				t.Errorf("request at start %#x, want %#x", got, tc.boot)
			}
			t0, m0, a0, e0 := msr(t, m, 0, 0x10), msr(t, m, 0, 0xe7), msr(t, m, 0, 0xe8), msr(t, m, 0, tc.pkgMSR)
			clk.add(time.Second)
			got := []uint64{msr(t, m, 0, 0x10) - t0, msr(t, m, 0, 0xe7) - m0, msr(t, m, 0, 0xe8) - a0}
			want := []uint64{uint64(tc.tscHz), uint64(tc.tscHz / 2), uint64(tc.mhz * 1e6 / 2)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TSC, MPERF, APERF deltas (-want +got):\n%s", diff)
			}
			if e := msr(t, m, 0, tc.pkgMSR); e >= e0 {
				t.Errorf("package energy did not wrap: %#x -> %#x", e0, e)
			} else if tc.wrappedCountsMin > 0 && (e < tc.wrappedCountsMin-2 || e > tc.wrappedCountsMin+2) {
				t.Errorf("package energy after wrap %d, want %d (± 2)", e, tc.wrappedCountsMin)
			}
			for cpu := range m.NumCPUs() {
				if err := write(m, "sys/devices/system/cpu/cpufreq/policy"+itoa(cpu)+"/scaling_governor", "performance"); err != nil {
					t.Fatal(err)
				}
			}
			if got := msr(t, m, 0, tc.req); got != tc.perf {
				t.Errorf("request under performance %#x, want %#x", got, tc.perf)
			}
			if err := write(m, pol0+"energy_performance_preference", "balance_power"); !errors.Is(err, syscall.EBUSY) {
				t.Errorf("EPP under performance: %v, want EBUSY", err)
			}
		})
	}
	v, _ := load(t, "vm-bare", 0.5)
	if _, err := v.ReadMSR(0, 0x10); !errors.Is(err, syscall.EIO) {
		t.Errorf("vm-bare MSR read: %v, want EIO", err)
	}
}
