// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hwpprobe/hwpprobe/internal/emu/emutest"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/msr"
)

// machine is a test machine: the tree of an emulator description in
// testdata, written under root, which a test may change, and the
// machine's registers (a copy the test may change) and CPUID leaves.
type machine struct {
	tb    testing.TB
	root  string
	MSR   msr.Map
	CPUID emutest.CPUID
}

// load writes the description testdata/<name>.yaml under a temporary
// root. The tree stands for the machine it describes, not for hwpemu,
// so the emulated marker goes; and its kernel has no msr driver.
func load(tb testing.TB, name string) *machine {
	tb.Helper()
	root, m := emutest.Root(tb, "testdata/"+name+".yaml")
	emutest.Remove(tb, root, sysfs.EmulatedMarker)
	emutest.NoMSRDriver(tb, root)
	return &machine{tb: tb, root: root, MSR: emutest.Registers(tb, m), CPUID: emutest.CPUID{M: m}}
}

// meteorLakeU is the Core Ultra 7 165U under intel_pstate active mode,
// consistent everywhere (testdata/mtl-165u-snapshot.yaml).
func meteorLakeU(tb testing.TB) *machine { return load(tb, "mtl-165u-snapshot") }

// zen4 is the Ryzen 5 7600 under amd-pstate active mode, consistent
// everywhere (testdata/zen4-7600-snapshot.yaml).
func zen4(tb testing.TB) *machine { return load(tb, "zen4-7600-snapshot") }

// bareVM is the development VM: no cpufreq, no msr driver
// (testdata/vm-bare-snapshot.yaml).
func bareVM(tb testing.TB) *machine { return load(tb, "vm-bare-snapshot") }

// Set sets a file's content (a trailing newline is added, as sysfs has).
func (m *machine) Set(path, content string) { emutest.Set(m.tb, m.root, path, content) }

// CPUFile sets a file of cpuN: CPUFile(3, "cpufreq/scaling_governor", "powersave").
func (m *machine) CPUFile(cpu int, rel, content string) {
	m.Set(fmt.Sprintf("sys/devices/system/cpu/cpu%d/%s", cpu, rel), content)
}

// Remove deletes the file or directory path.
func (m *machine) Remove(path string) { emutest.Remove(m.tb, m.root, path) }

// Powercap adds the powercap zone id with the limits of the
// MSR_PKG_POWER_LIMIT value powerLimit in the machine's RAPL units.
func (m *machine) Powercap(id, name string, powerLimit uint64) {
	emutest.Powercap(m.tb, m.root, id, name, powerLimit, m.MSR[0][0x606])
}

// build snapshots m's tree with its registers and CPUID leaves, as root.
func build(t *testing.T, m *machine, spec string) *Snapshot {
	t.Helper()
	s, err := Build(Sources{FS: sysfs.NewFS(m.root), MSR: m.MSR, CPUID: m.CPUID, EUID: 0}, spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type groupSummary struct{ Type, CPUs string }

func groups(s *Snapshot) []groupSummary {
	var out []groupSummary
	for _, g := range s.Groups {
		out = append(out, groupSummary{g.CoreType, g.CPUList})
	}
	return out
}

type checkSummary struct{ Kind, Check, CPUs string }

func checks(s *Snapshot) []checkSummary {
	out := []checkSummary{}
	for _, f := range s.Findings {
		out = append(out, checkSummary{f.Kind, f.Check, f.CPUs})
	}
	return out
}

func capability(t *testing.T, s *Snapshot, name string) Capability {
	t.Helper()
	for _, c := range s.Capabilities {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no capability %q in %+v", name, s.Capabilities)
	return Capability{}
}

func cpu(t *testing.T, s *Snapshot, n int) CPU {
	t.Helper()
	for _, g := range s.Groups {
		for _, c := range g.CPUs {
			if c.CPU == n {
				return c
			}
		}
	}
	t.Fatalf("cpu%d not in snapshot", n)
	return CPU{}
}

func TestMeteorLakeConsistent(t *testing.T) {
	s := build(t, meteorLakeU(t), "")
	want := []groupSummary{{"P-core", "0-3"}, {"E-core", "4-11"}, {"LP E-core", "12-13"}}
	if diff := cmp.Diff(want, groups(s)); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if s.CoreTypeSource != "cpuid" || !s.Hybrid {
		t.Errorf("core types from %q, hybrid %v; want cpuid, true", s.CoreTypeSource, s.Hybrid)
	}
	if diff := cmp.Diff([]checkSummary{}, checks(s)); diff != "" {
		t.Errorf("a consistent machine has findings (-want +got):\n%s\n%+v", diff, s.Findings)
	}
	for _, name := range []string{"root", "msr", "cpuid", "cpufreq", "hwp", "intel_pstate", "epb", "core_types"} {
		if c := capability(t, s, name); !c.Available {
			t.Errorf("capability %s missing: %s", name, c.Detail)
		}
	}
	// The Meteor Lake table (intel_pstate.c intel_epp_default[]).
	if tb := s.Machine.EPPTable; tb == nil || tb.BalancePerformance != 64 || tb.Performance != 16 || tb.BalancePower != 179 {
		t.Errorf("EPP table %+v, want Meteor Lake's 16/64/179/255", tb)
	}
	c0 := cpu(t, s, 0)
	wantReq := &HWPRequest{Raw: 0x40003e05, Min: 5, Max: 62, EPP: 64}
	if diff := cmp.Diff(wantReq, c0.Registers.HWPRequest); diff != "" {
		t.Errorf("cpu0 HWP_REQUEST (-want +got):\n%s", diff)
	}
	if e := c0.Registers.EPB; e == nil || e.Value != 6 || e.Name != "normal" {
		t.Errorf("cpu0 EPB %+v, want 6 normal (intel_epb.c)", e)
	}
	// IA32_HWP_STATUS 0 (Arrow Lake's published value): no excursion.
	if st := c0.Registers.HWPStatus; st == nil || *st != (HWPStatus{}) {
		t.Errorf("cpu0 HWP_STATUS %+v, want 0 decoded", st)
	}
	// IA32_THERM_STATUS 0x882E2800: readout 46 below TjMax 100.
	if tc := c0.Registers.TemperatureC; tc == nil || *tc != 54 {
		t.Errorf("cpu0 temperature %v, want 54", tc)
	}
	// Package facts: the decodes registers.tsv publishes for these raw values.
	p := s.Packages[0]
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	u8 := func(v uint8) *uint8 { return &v }
	want0 := Package{
		Package: 0, ReadOnCPU: 0, BaseRatio: u8(24), MaxEfficiencyRatio: u8(8),
		RAPLUnits:  &RAPLUnits{Raw: 0xa0e03, PowerUnitW: 0.125, EnergyUnitJ: 0.00006103515625, TimeUnitS: 0.0009765625},
		TDPW:       f(15),
		PowerLimit: &PowerLimit{Raw: 0x42820800218208, PL1W: 65, PL1Enabled: true, PL1Clamp: true, PL1TimeS: 64, PL2W: 65, PL2Enabled: true, PL2Clamp: false, PL2TimeS: 0.00244140625},
		TjMaxC:     i(100), TCCOffsetC: i(0), TemperatureC: i(68),
		TurboRatios: []TurboRatio{{1, 42}, {2, 41}, {3, 40}, {4, 39}},
		// registers.tsv (Granite Rapids): min 0 max 255 des 0 epp 0x80.
		HWPRequestPkg: &HWPRequest{Raw: 0x8000ff00, Min: 0, Max: 255, EPP: 0x80},
		// Model 0xAA: the SDM's client table names the bits; none set.
		LimitReasons: &LimitReasons{Raw: 0, Table: "SDM vol. 4 MSR 64FH, 6th generation Intel Core and later (Meteor Lake-L)",
			Active: []string{}, Logged: []string{}},
		// The kernel's integer time unit (976 µs for 1/1024 s) makes the
		// 64 s window 63.963136 s and the 2.441 ms one 2.440 ms.
		Powercap: []PowercapLimits{{Zone: "intel-rapl:0", Interface: "msr", Enabled: ptr(true),
			PL1W: f(65), PL1TimeS: f(63.963136), PL2W: f(65), PL2TimeS: f(0.00244)}},
		CPUs: "0-13",
	}
	if diff := cmp.Diff(want0, p); diff != "" {
		t.Errorf("package 0 (-want +got):\n%s", diff)
	}
}

func TestMeteorLakeFindings(t *testing.T) {
	const (
		req  = 0x774
		epb  = 0x1b0
		misc = 0x1a0
		pm   = 0x770
		// IA32_HWP_CAPABILITIES: Highest_Performance in bits 7:0.
		hwpCap = 0x771
	)
	tests := []struct {
		name   string
		mutate func(m *machine)
		want   []checkSummary
	}{
		{"register EPP 0 under balance_performance", func(m *machine) {
			m.MSR[5][req] = 0x00002604 // EPP 0, max 38, min 4
		}, []checkSummary{{KindDisagreement, "epp", "5"}}},
		{"numeric EPP string matches", func(m *machine) {
			m.CPUFile(5, "cpufreq/energy_performance_preference", "64")
		}, []checkSummary{}},
		{"numeric EPP string differs", func(m *machine) {
			m.CPUFile(5, "cpufreq/energy_performance_preference", "100")
		}, []checkSummary{{KindDisagreement, "epp", "5"}}},
		{"performance governor as the kernel writes it", func(m *machine) {
			for c, regs := range m.MSR {
				m.CPUFile(c, "cpufreq/scaling_governor", "performance")
				// EPP 0 is not in Meteor Lake's table (performance is 16),
				// so show_energy_performance_preference() prints index 0,
				// "default".
				m.CPUFile(c, "cpufreq/energy_performance_preference", "default")
				highest := regs[hwpCap] & 0xff
				regs[req] = highest<<8 | highest // EPP 0, min = max
			}
		}, []checkSummary{{KindNote, "performance_policy", "0-3"}, {KindNote, "performance_policy", "4-11"}, {KindNote, "performance_policy", "12-13"}}},
		{"performance governor but EPP left at 64", func(m *machine) {
			m.CPUFile(2, "cpufreq/scaling_governor", "performance")
			m.MSR[2][req] = 64<<24 | 62<<8 | 62
		}, []checkSummary{{KindDisagreement, "performance_policy", "2"}}},
		{"EPB sysfs 6, register 0", func(m *machine) {
			m.MSR[13][epb] = 0
		}, []checkSummary{{KindDisagreement, "epb", "13"}}},
		{"scaling_max_freq 2 GHz but HWP max still highest", func(m *machine) {
			m.CPUFile(4, "cpufreq/scaling_max_freq", "2000000")
		}, []checkSummary{{KindDisagreement, "scaling_max_freq", "4"}}},
		{"scaling_max_freq 2 GHz honoured (E-core level 20)", func(m *machine) {
			m.CPUFile(4, "cpufreq/scaling_max_freq", "2000000")
			m.MSR[4][req] = 64<<24 | 20<<8 | 4
		}, []checkSummary{}},
		{"max_perf_pct 50 not applied", func(m *machine) {
			m.Set("sys/devices/system/cpu/intel_pstate/max_perf_pct", "50")
		}, []checkSummary{ // one per core type: the levels differ
			{KindDisagreement, "scaling_max_freq", "0-3"},
			{KindDisagreement, "scaling_max_freq", "4-11"},
			{KindDisagreement, "scaling_max_freq", "12-13"},
		}},
		{"scaling_min_freq raised on a P-core", func(m *machine) {
			m.CPUFile(1, "cpufreq/scaling_min_freq", "4900000")
		}, []checkSummary{{KindDisagreement, "scaling_min_freq", "1"}}},
		{"firmware turbo disable with no_turbo 0", func(m *machine) {
			m.MSR[0][misc] |= 1 << 38
		}, []checkSummary{{KindDisagreement, "no_turbo", "0"}}},
		{"HWP disabled in IA32_PM_ENABLE", func(m *machine) {
			m.MSR[1][pm] = 0
		}, []checkSummary{{KindDisagreement, "hwp_enable", "1"}}},
		{"powercap PL1 differs from MSR_PKG_POWER_LIMIT", func(m *machine) {
			m.Set("sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", "28000000")
		}, []checkSummary{{KindDisagreement, "power_limit", "0-13"}}},
		{"MMIO copy of the limits differs", func(m *machine) {
			m.Powercap("intel-rapl-mmio:0", "package-0", 0x42820800218078) // PL1 15 W
		}, []checkSummary{{KindNote, "power_limit_mmio", "0-13"}}},
		{"Package_Control set", func(m *machine) {
			m.MSR[6][req] |= 1 << 42
		}, []checkSummary{{KindNote, "package_control", "6"}}},
		{"HWP_REQUEST EIO: n/a, not compared", func(m *machine) {
			delete(m.MSR[3], req)
			m.MSR[3][epb] = 15
		}, []checkSummary{{KindDisagreement, "epb", "3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := meteorLakeU(t)
			tt.mutate(m)
			s := build(t, m, "")
			if diff := cmp.Diff(tt.want, checks(s)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%+v", diff, s.Findings)
			}
		})
	}
}

func TestNoTurbo(t *testing.T) {
	m := meteorLakeU(t)
	m.Set("sys/devices/system/cpu/intel_pstate/no_turbo", "1")
	// With no_turbo=1 the kernel lowers cpuinfo_max_freq and scaling_max_freq
	// to the guaranteed level (21 x 80 MHz on the P-core).
	m.CPUFile(0, "cpufreq/cpuinfo_max_freq", "1680000")
	m.CPUFile(0, "cpufreq/scaling_max_freq", "1680000")
	s := build(t, m, "0")
	// HWP max is still highest (62) although no_turbo caps it at
	// guaranteed (21): both the no_turbo rule and the max conversion say so.
	want := []checkSummary{{KindDisagreement, "scaling_max_freq", "0"}, {KindDisagreement, "no_turbo", "0"}}
	if diff := cmp.Diff(want, checks(s)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestUnimplementedRegisterIsNA(t *testing.T) {
	m := meteorLakeU(t)
	delete(m.MSR[3], 0x774)
	s := build(t, m, "3")
	c := cpu(t, s, 3)
	if c.Registers.HWPRequest != nil {
		t.Errorf("HWP_REQUEST %+v, want n/a", c.Registers.HWPRequest)
	}
	if why := c.Unavailable["IA32_HWP_REQUEST"]; !strings.Contains(why, msr.ErrUnsupported.Error()) {
		t.Errorf("unavailable reason %q", why)
	}
	var b strings.Builder
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "cpu3 IA32_HWP_REQUEST n/a: ") {
		t.Errorf("text does not say n/a:\n%s", b.String())
	}
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"hwp_request":null`) {
		t.Errorf("JSON does not carry null for the missing register")
	}
}

func TestCoreTypesFromSysfs(t *testing.T) {
	m := meteorLakeU(t)
	root := m.root
	// No cpuid device (nil reader): the hybrid PMU lists and the cache
	// directories tell the same groups.
	s, err := Build(Sources{FS: sysfs.NewFS(root), MSR: m.MSR}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []groupSummary{{"P-core", "0-3"}, {"E-core", "4-11"}, {"LP E-core", "12-13"}}
	if diff := cmp.Diff(want, groups(s)); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if s.CoreTypeSource != "sysfs" {
		t.Errorf("source %q, want sysfs", s.CoreTypeSource)
	}
	if c := capability(t, s, "cpuid"); c.Available {
		t.Errorf("cpuid capability available without a reader")
	}
}

func TestZen4(t *testing.T) {
	s := build(t, zen4(t), "")
	if diff := cmp.Diff([]groupSummary{{"all", "0-11"}}, groups(s)); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]checkSummary{}, checks(s)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	c := cpu(t, s, 7)
	want := CPURegs{
		CPPCEnabled: ptr(true),
		CPPCCap1:    &CPPCCap1{Raw: 0xa6782912 + 0x0, Highest: 166, Nominal: 120, LowestNonlinear: 41, Lowest: 15},
		CPPCReq:     &CPPCReq{Raw: 0x80000fa6, Max: 166, Min: 15, EPP: 0x80},
	}
	want.CPPCCap1.Raw = Hex(166<<24 | 120<<16 | 41<<8 | 15)
	if diff := cmp.Diff(want, c.Registers); diff != "" {
		t.Errorf("cpu7 registers (-want +got):\n%s", diff)
	}
	if ap := capability(t, s, "amd_pstate"); !ap.Available || !strings.Contains(ap.Detail, "active") {
		t.Errorf("amd_pstate capability %+v", ap)
	}
	// Ryzen 9 7950X RAPL unit (registers.tsv): 1 W, 15.26 µJ, 977 µs.
	if u := s.Packages[0].RAPLUnits; u == nil || u.PowerUnitW != 1 || u.EnergyUnitJ != 0.0000152587890625 {
		t.Errorf("AMD RAPL units %+v", u)
	}

	tests := []struct {
		name   string
		mutate func(m *machine)
		want   []checkSummary
	}{
		{"register EPP 0 under balance_performance", func(m *machine) {
			m.MSR[7][0xC00102B3] = 0x00000fa6
		}, []checkSummary{{KindDisagreement, "epp", "7"}}},
		{"balance_power is 0xBF on amd-pstate", func(m *machine) {
			m.CPUFile(7, "cpufreq/energy_performance_preference", "balance_power")
			m.MSR[7][0xC00102B3] = 0xbf000fa6
		}, []checkSummary{}},
		{"scaling_max_freq halved but CPPC_REQ max still highest", func(m *machine) {
			m.CPUFile(5, "cpufreq/scaling_max_freq", "2550000")
		}, []checkSummary{{KindDisagreement, "scaling_max_freq", "5"}}},
		{"scaling_max_freq halved and honoured (166 / 2 = 83)", func(m *machine) {
			m.CPUFile(5, "cpufreq/scaling_max_freq", "2550000")
			m.MSR[5][0xC00102B3] = 0x80000f53
		}, []checkSummary{}},
		{"scaling_min_freq raised, CPPC_REQ min left at lowest", func(m *machine) {
			m.CPUFile(6, "cpufreq/scaling_min_freq", "3000000")
		}, []checkSummary{{KindDisagreement, "scaling_min_freq", "6"}}},
		{"boost off: limits not compared (scaled by nominal_perf)", func(m *machine) {
			m.Set("sys/devices/system/cpu/cpufreq/boost", "0")
			m.CPUFile(5, "cpufreq/scaling_max_freq", "2550000")
		}, []checkSummary{}},
		{"performance governor keeps EPP 0x80", func(m *machine) {
			m.CPUFile(3, "cpufreq/scaling_governor", "performance")
		}, []checkSummary{{KindDisagreement, "performance_policy", "3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := zen4(t)
			tt.mutate(m)
			if diff := cmp.Diff(tt.want, checks(build(t, m, ""))); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestBareVM(t *testing.T) {
	m := bareVM(t)
	root := m.root
	dev := msr.Open(root) // the tree has no dev/cpu/N/msr and no msr module
	s, err := Build(Sources{FS: sysfs.NewFS(root), MSR: dev, CPUID: m.CPUID, EUID: 0}, "")
	if err != nil {
		t.Fatal(err)
	}
	type capSummary struct {
		Name      string
		Available bool
	}
	var got []capSummary
	for _, c := range s.Capabilities {
		got = append(got, capSummary{c.Name, c.Available})
	}
	want := []capSummary{{"root", true}, {"msr", false}, {"cpuid", true}, {"cpufreq", false}, {"hwp", false}, {"intel_pstate", false}, {"epb", false}, {"powercap", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if c := capability(t, s, "msr"); !strings.Contains(c.Detail, "no msr driver") {
		t.Errorf("msr detail %q", c.Detail)
	}
	if c := capability(t, s, "cpufreq"); !strings.Contains(c.Detail, "VM guest") || !strings.Contains(c.Fix, "bare metal") {
		t.Errorf("cpufreq %+v does not explain the VM", c)
	}
	if len(s.Findings) != 0 {
		t.Errorf("findings %+v on a machine with no registers", s.Findings)
	}
	c := cpu(t, s, 1)
	if diff := cmp.Diff(CPURegs{}, c.Registers); diff != "" {
		t.Errorf("registers on a machine without msr (-want +got):\n%s", diff)
	}
	if c.Unavailable != nil {
		t.Errorf("per-register reasons %v repeat the capability report", c.Unavailable)
	}
	var b strings.Builder
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"MISSING msr", "MISSING cpufreq", "fix: run on bare metal", "nothing was compared"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, b.String())
		}
	}
}

func TestSelection(t *testing.T) {
	m := meteorLakeU(t)
	m.Set("sys/devices/system/cpu/online", "0-12")
	root := m.root
	src := Sources{FS: sysfs.NewFS(root), MSR: m.MSR, CPUID: m.CPUID}
	for _, spec := range []string{"x", "0-", "3-1", "14", "13", "0,13"} {
		if _, err := Build(src, spec); !errors.Is(err, ErrBadCPUList) {
			t.Errorf("-C %q: err %v, want ErrBadCPUList", spec, err)
		}
	}
	s, err := Build(src, "")
	if err != nil {
		t.Fatal(err)
	}
	if s.SelectedCPUs != "0-12" || s.OfflineCPUs != "13" {
		t.Errorf("selected %q offline %q, want 0-12 and 13", s.SelectedCPUs, s.OfflineCPUs)
	}
	s, err = Build(src, "12,4")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]groupSummary{{"E-core", "4"}, {"LP E-core", "12"}}, groups(s)); diff != "" {
		t.Errorf("groups for -C 12,4 (-want +got):\n%s", diff)
	}
}

func TestNotRootReported(t *testing.T) {
	m := meteorLakeU(t)
	root := m.root
	s, err := Build(Sources{FS: sysfs.NewFS(root), MSR: msr.Open(root), EUID: 1000}, "")
	if err != nil {
		t.Fatal(err)
	}
	if c := capability(t, s, "root"); c.Available || !strings.Contains(c.Fix, "sudo") {
		t.Errorf("root capability %+v", c)
	}
}

func TestJSONHex(t *testing.T) {
	s := build(t, meteorLakeU(t), "0")
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"raw":"0x40003e05"`) {
		t.Errorf("HWP_REQUEST raw not a hex string in %s", j)
	}
	var back Snapshot
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, &back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

// TestDamagedTree feeds files that exist but do not parse, and a missing
// /proc/cpuinfo: Build must not fail or panic; each bad file is a read
// error naming it and its value stays n/a.
func TestDamagedTree(t *testing.T) {
	m := meteorLakeU(t)
	m.CPUFile(2, "cpufreq/scaling_max_freq", "<unsupported>")
	m.CPUFile(3, "power/energy_perf_bias", "")
	m.Set("sys/devices/system/cpu/intel_pstate/no_turbo", "yes")
	m.Set("sys/devices/cpu_core/cpus", "0-")
	s := build(t, m, "")
	c := cpu(t, s, 2)
	if c.Sysfs.ScalingMaxKHz != nil {
		t.Errorf("cpu2 scaling_max_freq %v, want n/a", *c.Sysfs.ScalingMaxKHz)
	}
	joined := strings.Join(s.ReadErrors, "\n")
	for _, w := range []string{"cpu2/cpufreq/scaling_max_freq", "cpu3/power/energy_perf_bias", "intel_pstate/no_turbo", "cpu_core/cpus"} {
		if !strings.Contains(joined, w) {
			t.Errorf("read errors lack %s:\n%s", w, joined)
		}
	}
	var b strings.Builder
	if err := WriteText(&b, s); err != nil || !strings.Contains(b.String(), "Read errors") {
		t.Errorf("text (err %v) lacks the read errors:\n%s", err, b.String())
	}

	m = meteorLakeU(t)
	m.Remove("proc/cpuinfo")
	s = build(t, m, "0")
	if s.Machine.Vendor != "" || len(s.ReadErrors) == 0 || !strings.Contains(s.ReadErrors[0], "proc/cpuinfo") {
		t.Errorf("without /proc/cpuinfo: vendor %q, read errors %q", s.Machine.Vendor, s.ReadErrors)
	}
	if c := cpu(t, s, 0); c.Registers.HWPRequest != nil {
		t.Error("registers read although the CPU's features are unknown")
	}
}

// failingMSR answers every read with one error, as msr.Dev does when the
// device cannot be opened.
type failingMSR struct{ err error }

func (f failingMSR) ReadMSR(cpu int, reg uint32) (uint64, error) {
	return 0, fmt.Errorf("cpu%d: %w", cpu, f.err)
}

func TestMSRCapability(t *testing.T) {
	tests := []struct {
		err       error
		detail    string
		fix       string
		available bool
	}{
		{msr.ErrNoDriver, "no msr driver", "CONFIG_X86_MSR", false},
		{msr.ErrNoDevice, "msr module is not loaded", "modprobe msr", false},
		{msr.ErrPermission, "permission denied", "sudo", false},
		{errors.New("EBADF"), "MSRs unreadable: cpu0: EBADF", "", false},
		// A CPU lacking only the probe register is not a missing device.
		{msr.ErrUnsupported, "readable", "", true},
	}
	m := meteorLakeU(t)
	root := m.root
	for _, tt := range tests {
		s, err := Build(Sources{FS: sysfs.NewFS(root), MSR: failingMSR{tt.err}, CPUID: m.CPUID}, "0")
		if err != nil {
			t.Fatal(err)
		}
		c := capability(t, s, "msr")
		if c.Available != tt.available || !strings.Contains(c.Detail, tt.detail) || !strings.Contains(c.Fix, tt.fix) {
			t.Errorf("%v: capability %+v, want available %v, detail ~%q, fix ~%q", tt.err, c, tt.available, tt.detail, tt.fix)
		}
		if r := cpu(t, s, 0).Registers; r.HWPRequest != nil || r.EPB != nil {
			t.Errorf("%v: registers %+v, want n/a", tt.err, r)
		}
	}
}

// TestLimitOrder follows intel_pstate_update_perf_limits() on the LP E-core
// cpu13 (highest 21): with max_perf_pct 60 the global maximum is
// DIV_ROUND_UP(21 * 60, 100) = 13, but scaling_min_freq 1.5 GHz is level 15
// and max_perf_ratio = max(min_policy_perf, min(max_policy_perf, global_max))
// = 15: the policy minimum wins, and the kernel writes min = max = 15.
func TestLimitOrder(t *testing.T) {
	m := meteorLakeU(t)
	m.Set("sys/devices/system/cpu/intel_pstate/max_perf_pct", "60")
	m.CPUFile(13, "cpufreq/scaling_min_freq", "1500000")
	m.MSR[13][0x774] = 64<<24 | 15<<8 | 15
	if diff := cmp.Diff([]checkSummary{}, checks(build(t, m, "13"))); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	m.MSR[13][0x774] = 64<<24 | 13<<8 | 13 // max_perf_pct applied over the policy minimum
	want := []checkSummary{{KindDisagreement, "scaling_max_freq", "13"}, {KindDisagreement, "scaling_min_freq", "13"}}
	if diff := cmp.Diff(want, checks(build(t, m, "13"))); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
