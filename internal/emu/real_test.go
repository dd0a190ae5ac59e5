// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// These tests read the emulated trees with the project's own readers.
// Nothing here compares a description with the host: the capture round
// trip (roundtrip_test.go) does that, on whatever host runs it.

// statShape returns the first word of each line and the number of fields
// of the cpu lines.
func statShape(s string) (names []string, cpuFields []int) {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		names = append(names, f[0])
		if strings.HasPrefix(f[0], "cpu") {
			cpuFields = append(cpuFields, len(f))
		}
	}
	return names, cpuFields
}

// /proc/stat as show_stat() prints it (the round trip in
// roundtrip_test.go compares its shape with the host's).
func TestProcStat(t *testing.T) {
	m, clk := load(t, "mtl-165u", 0.5)
	clk.add(10 * time.Second)
	emu := read(t, m, "proc/stat") + "\n"
	en, ef := statShape(emu)
	wantNames := []string{"cpu"}
	wantFields := []int{11}
	for i := range 14 {
		wantNames = append(wantNames, fmt.Sprintf("cpu%d", i))
		wantFields = append(wantFields, 11)
	}
	wantNames = append(wantNames, "intr", "ctxt", "btime", "processes", "procs_running", "procs_blocked", "softirq")
	if diff := cmp.Diff(wantNames, en); diff != "" {
		t.Errorf("line names (-want +emulated):\n%s", diff)
	}
	if diff := cmp.Diff(wantFields, ef); diff != "" {
		t.Errorf("cpu line field counts (-want +emulated):\n%s", diff)
	}
	if !strings.HasPrefix(emu, "cpu  ") {
		t.Errorf("the sum line starts %q, want two spaces after cpu", emu[:6])
	}
	// 10 s at 50% busy: 500 busy ticks per CPU (450 user, 50 system), 500 idle.
	if !strings.Contains(emu, "\ncpu1 450 0 50 500 0 0 0 0 0 0\n") {
		t.Errorf("cpu1 line wrong:\n%s", emu)
	}
	// The host load reader parses what the emulator prints.
	ticks, err := parseStatTicks("emulated", []byte(emu))
	if err != nil || len(ticks) != 14 || ticks[1] != [2]uint64{500, 1000} {
		t.Errorf("readStatTicks = %v, %v", ticks, err)
	}
}

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stat")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHostLoad(t *testing.T) {
	p := writeTemp(t, "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0 0 0\n")
	h, err := NewHostLoad(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.Busy()
	if err := os.WriteFile(p, []byte("cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 175 0 100 825 0 0 0 0 0 0\ncpu1 0 0 10 1090 0 0 0 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Something else now at the path (as when the emulated /proc/stat is
	// mounted over it) is not read: the descriptor opened first is.
	other := writeTemp(t, "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 9999 0 0 1 0 0 0 0 0 0\n")
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{0.75, 0.1}, h.Busy()); diff != "" {
		t.Errorf("Busy (-want +got):\n%s", diff)
	}
	// Nothing changed since: the last fractions stay.
	if diff := cmp.Diff([]float64{0.75, 0.1}, h.Busy()); diff != "" {
		t.Errorf("Busy with no new ticks (-want +got):\n%s", diff)
	}
	// A literal with Path reads the path on each call.
	lit := &HostLoad{Path: p}
	lit.Busy()
	if err := os.WriteFile(p, []byte("cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 10000 0 0 1 0 0 0 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{1}, lit.Busy()); diff != "" {
		t.Errorf("literal HostLoad Busy (-want +got):\n%s", diff)
	}
	// The real host file: one fraction per host CPU, each in [0,1].
	real, err := NewHostLoad("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	got := real.Busy()
	online, err := sysfs.NewFS("/").OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(online) {
		t.Errorf("host Busy has %d CPUs, /sys says %s", len(got), online)
	}
	for _, b := range got {
		if b < 0 || b > 1 {
			t.Errorf("busy fraction %v", b)
		}
	}
}

// Meteor Lake CPUID: leaf 1 signature per the SDM (stepping 3:0, model
// 7:4, family 11:8, extended model 19:16), leaf 6 HWP bits 7-11 and
// APERFMPERF/EPB, leaf 0x1A core types, brand string.
func TestCPUIDMeteorLake(t *testing.T) {
	m, _ := load(t, "mtl-165u", 0)
	c := func(cpu int, leaf, sub uint32) [4]uint32 {
		r, err := m.CPUID(cpu, leaf, sub)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := c(0, 1, 0)[0]; got != 0xA06A4 {
		t.Errorf("leaf 1 EAX %#x, want 0xa06a4", got)
	}
	if got := c(0, 6, 0); got[0]&0xf80 != 0xf80 || got[2] != 0x9 {
		t.Errorf("leaf 6 %#x: want EAX bits 7-11 and ECX 0x9", got)
	}
	for cpu, want := range map[int]uint32{0: 0x40, 3: 0x40, 4: 0x20, 13: 0x20} {
		if got := c(cpu, 0x1A, 0)[0] >> 24; got != want {
			t.Errorf("CPU %d core type %#x, want %#x", cpu, got, want)
		}
	}
	if got := c(12, 4, 3); got != ([4]uint32{}) {
		t.Errorf("LP E-core leaf 4 subleaf 3 = %#x, want none (no L3)", got)
	}
	var brand []byte
	for l := uint32(0x80000002); l <= 0x80000004; l++ {
		for _, v := range c(0, l, 0) {
			brand = binary.LittleEndian.AppendUint32(brand, v)
		}
	}
	if got := strings.TrimRight(string(brand), "\x00"); got != "Intel(R) Core(TM) Ultra 7 165U" {
		t.Errorf("brand %q", got)
	}
	z, _ := load(t, "zen4-amd-pstate", 0)
	if r, _ := z.CPUID(0, 0x80000008, 0); r[1]&(1<<27) == 0 {
		t.Error("zen4: CPUID 0x80000008 EBX bit 27 (CPPC) clear")
	}
}

// The project's readers (cpus, sysfs) on a copy of each emulated tree.
func TestProjectReaders(t *testing.T) {
	for _, name := range Names() {
		m, _ := load(t, name, 0)
		root := t.TempDir()
		if err := WriteTree(m.Tree(), root); err != nil {
			t.Fatal(err)
		}
		fs := sysfs.NewFS(root)
		if got := fs.Emulated(); got != name {
			t.Errorf("%s: sysfs Emulated() = %q", name, got)
		}
		online, err := sysfs.NewFS(root).OnlineCPUs()
		if err != nil || len(online) != m.NumCPUs() {
			t.Errorf("%s: cpus.Online = %v, %v", name, online, err)
		}
		if name == "vm-bare" {
			continue
		}
		// Through the cpuN/cpufreq symlink, as tools read it.
		drv, err := fs.ReadString("sys/devices/system/cpu/cpu1/cpufreq/scaling_driver")
		if err != nil || drv != m.Description().Driver.Name {
			t.Errorf("%s: scaling_driver via cpu1/cpufreq: %q, %v", name, drv, err)
		}
		if _, err := fs.ReadInt("sys/class/powercap/intel-rapl:0/energy_uj"); err != nil {
			t.Errorf("%s: energy_uj: %v", name, err)
		}
		if len(m.Description().RAPL.Domains) < 2 {
			continue // spr-2s: package zones only
		}
		if _, err := fs.ReadString("sys/class/powercap/intel-rapl:0:0/name"); err != nil {
			t.Errorf("%s: sub-zone through its link: %v", name, err)
		}
	}
}

// cpuidOf adapts a Machine to the cpuid package's Reader, as
// /dev/cpu/N/cpuid would serve it.
type cpuidOf struct{ m *Machine }

func (c cpuidOf) CPUID(cpu int, leaf, sub uint32) (cpuid.Regs, error) {
	r, err := c.m.CPUID(cpu, leaf, sub)
	return cpuid.Regs{EAX: r[0], EBX: r[1], ECX: r[2], EDX: r[3]}, err
}

// The project's typed readers (sysfs, topology) on the emulated Meteor
// Lake, AMD and bare trees.
func TestProjectTypedReaders(t *testing.T) {
	ptr := func(v int64) *int64 { return &v }
	str := func(s string) *string { return &s }

	m, _ := load(t, "mtl-165u", 0)
	root := t.TempDir()
	if err := WriteTree(m.Tree(), root); err != nil {
		t.Fatal(err)
	}
	fs := sysfs.NewFS(root)
	info, err := fs.CPUInfo()
	if err != nil || len(info) != 14 || info[13].Model != 0xAA || !info[12].HasFlag("hwp_epp") || info[0].ModelName != "Intel(R) Core(TM) Ultra 7 165U" {
		t.Errorf("CPUInfo: %d blocks, %+v, %v", len(info), info, err)
	}
	cf, err := fs.CPUFreq(4)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{str("intel_pstate"), str("powersave"), str("balance_performance"), ptr(1200000), ptr(3800000), ptr(400000)},
		[]any{cf.Driver, cf.Governor, cf.EPP, cf.BaseFrequencyKHz, cf.CPUInfoMaxKHz, cf.CPUInfoMinKHz}); diff != "" {
		t.Errorf("CPUFreq(4) (-want +got):\n%s", diff)
	}
	ip, err := fs.IntelPstate()
	if err != nil || *ip.Status != "active" || *ip.MinPerfPct != 8 || *ip.MaxPerfPct != 100 || ip.NumPstates != nil || ip.HWPDynamicBoost == nil {
		t.Errorf("IntelPstate: %+v, %v", ip, err)
	}
	zones, err := fs.PowercapZones()
	if err != nil || len(zones) != 2 || zones[0].Name != "package-0" || zones[1].Name != "psys" ||
		len(zones[0].Constraints) != 2 || *zones[0].Constraints[0].PowerLimitUW != 15000000 || *zones[0].Constraints[1].PowerLimitUW != 57000000 {
		t.Errorf("PowercapZones: %+v, %v", zones, err)
	}
	pmus, err := fs.HybridPMUs()
	if err != nil || pmus.Core.String() != "0-3" || pmus.Atom.String() != "4-13" {
		t.Errorf("HybridPMUs: %+v, %v", pmus, err)
	}
	all, _ := cpus.Parse("0-13")
	// Core types from CPUID (0x1A, leaf 4 without an L3 on LP E-cores)
	// and, separately, from sysfs alone.
	for _, id := range []cpuid.Reader{cpuidOf{m}, nil} {
		topo, err := topology.Detect(fs, id, all)
		if err != nil {
			t.Fatal(err)
		}
		got := map[topology.CoreType]string{}
		for _, g := range topo.Groups() {
			got[g.Type] = g.CPUs.String()
		}
		want := map[topology.CoreType]string{topology.PCore: "0-3", topology.ECore: "4-11", topology.LPECore: "12-13"}
		if diff := cmp.Diff(want, got); diff != "" || !topo.Hybrid {
			t.Errorf("topology.Detect (cpuid %v, source %s) (-want +got):\n%s", id != nil, topo.Source, diff)
		}
	}

	z, _ := load(t, "zen4-amd-pstate", 0)
	root = t.TempDir()
	if err := WriteTree(z.Tree(), root); err != nil {
		t.Fatal(err)
	}
	fs = sysfs.NewFS(root)
	ap, err := fs.AMDPstate()
	if err != nil || ap == nil || *ap.Status != "active" {
		t.Errorf("AMDPstate: %+v, %v", ap, err)
	}
	cf, err = fs.CPUFreq(31)
	if err != nil || *cf.Driver != "amd-pstate-epp" || *cf.AMDHighestPerf != 190 || *cf.AMDMaxFreqKHz != 5700000 || *cf.AMDLowestNonlinearKHz != 1800000 {
		t.Errorf("CPUFreq(31) on zen4: %+v, %v", cf, err)
	}

	v, _ := load(t, "vm-bare", 0)
	root = t.TempDir()
	if err := WriteTree(v.Tree(), root); err != nil {
		t.Fatal(err)
	}
	fs = sysfs.NewFS(root)
	if _, err := fs.CPUFreq(0); !errors.Is(err, sysfs.ErrNoCPUFreq) {
		t.Errorf("vm-bare CPUFreq: %v, want ErrNoCPUFreq", err)
	}
	if zones, err := fs.PowercapZones(); err != nil || len(zones) != 0 {
		t.Errorf("vm-bare powercap: %v, %v", zones, err)
	}
	if pmus, err := fs.HybridPMUs(); err != nil || pmus != nil {
		t.Errorf("vm-bare hybrid PMUs: %+v, %v", pmus, err)
	}
}
