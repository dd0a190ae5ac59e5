// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/emu/emutest"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
)

// TestSnapshotThisMachine runs snapshot for real on the CI/dev VM (no msr
// driver, no cpufreq) under every host variant. It must exit 0 with a
// capability report.
func TestSnapshotThisMachine(t *testing.T) {
	hostvariant.Each(t, func(t *testing.T, _ hostvariant.Variant) { snapshotThisMachine(t) })
}

func snapshotThisMachine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("must run as root (CI does)")
	}
	stdout, stderr, code := runBin(t, "snapshot")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, w := range []string{"hwpprobe snapshot: ", "Capabilities", "ok      cpuid"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	stdout, stderr, code = runBin(t, "snapshot", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d, stderr %q", code, stderr)
	}
	checkSchema(t, "hwpprobe-snapshot/1", []byte(stdout))
	var s snapshot.Snapshot
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, stdout)
	}
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	if s.SelectedCPUs != strings.TrimSpace(string(online)) {
		t.Errorf("selected %q, online %q", s.SelectedCPUs, online)
	}
	// Whatever this machine lacks is reported, never silently zero: every
	// CPU without a readable msr device has null registers.
	_, statErr := os.Stat("/dev/cpu/0/msr")
	for _, c := range s.Capabilities {
		if c.Name == "msr" && c.Available != (statErr == nil) {
			t.Errorf("msr capability %+v, but stat /dev/cpu/0/msr: %v", c, statErr)
		}
	}
}

// TestSnapshotFixture runs the binary on the Meteor Lake tree: registers
// and CPUID cannot be served by plain files, so the binary reports them
// missing and takes core types from sysfs.
func TestSnapshotFixture(t *testing.T) {
	root, _ := emutest.Root(t, "mtl-165u")
	emutest.NoMSRDriver(t, root) // the kernel has no msr driver at all
	stdout, stderr, code := runBin(t, "--root", root, "snapshot")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, w := range []string{
		"Intel(R) Core(TM) Ultra 7 165U (GenuineIntel 6:170:4",
		"driver: intel_pstate status active, no_turbo 0, min_perf_pct 8, max_perf_pct 100",
		"P-core (CPUs 0-3)", "E-core (CPUs 4-11)", "LP E-core (CPUs 12-13)",
		"MISSING msr", "CONFIG_X86_MSR",
		"EPP table: performance 16, balance_performance 64, balance_power 179, power 255",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	stdout, _, code = runBin(t, "--root", root, "snapshot", "-C", "12-13", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	checkSchema(t, "hwpprobe-snapshot/1", []byte(stdout))
	var s snapshot.Snapshot
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Groups) != 1 || s.Groups[0].CoreType != "LP E-core" || s.Groups[0].CPUList != "12-13" {
		t.Errorf("groups %+v, want one LP E-core group 12-13", s.Groups)
	}
	if g := s.Groups[0].CPUs[0]; g.Registers.HWPRequest != nil || g.Sysfs.EPP == nil || *g.Sysfs.EPP != "balance_performance" {
		t.Errorf("cpu12: registers %+v, sysfs EPP %v", g.Registers, g.Sysfs.EPP)
	}
}

func TestSnapshotBadInput(t *testing.T) {
	root, _ := emutest.Root(t, "mtl-165u")
	emutest.Set(t, root, "sys/devices/system/cpu/online", "0-12") // cpu13 offline
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-C", "1-x"}, 2, "invalid CPU list"},
		{[]string{"-C", "20"}, 2, "CPU 20 does not exist"},
		{[]string{"-C", "13"}, 2, "CPU 13 is offline"},
		{[]string{"extra"}, 2, "unknown command"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runBin(t, append([]string{"--root", root, "snapshot"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) || stdout != "" {
			t.Errorf("snapshot %v: exit %d stderr %q stdout %q; want exit %d and %q", tt.args, code, stderr, stdout, tt.code, tt.msg)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
			t.Errorf("snapshot %v: error is %d lines, want one: %q", tt.args, n+1, stderr)
		}
	}
	stdout, _, code := runBin(t, "--root", root, "snapshot")
	if code != 0 || !strings.Contains(stdout, "offline, not read: 13") {
		t.Errorf("offline CPU not reported (exit %d):\n%s", code, stdout)
	}
	_, stderr, code := runBin(t, "--root", t.TempDir(), "snapshot")
	if code != 1 || !strings.Contains(stderr, "online") {
		t.Errorf("empty root: exit %d stderr %q, want 1 and a message about the CPU list", code, stderr)
	}
}

// TestSnapshotNotRoot runs the real binary as user nobody on this machine:
// it must exit 0 and say that root is needed and why.
func TestSnapshotNotRoot(t *testing.T) {
	cmd, _ := nobodyCmd(t, "snapshot")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, w := range []string{"MISSING root", "fix: run as root: sudo hwpprobe snapshot", "MISSING cpuid", "permission denied opening /dev/cpu/N/cpuid"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("as nobody, output lacks %q:\n%s", w, out)
		}
	}
}

// mountEmulated serves an emulated machine (package emu) through FUSE at a
// temporary directory, as hwpemu does, and returns the root to pass as
// --root. The binary then reads /dev/cpu/N/msr and cpuid of the emulated
// machine with real preads.
func mountEmulated(t *testing.T, name string) string {
	t.Helper()
	m, err := emu.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srv, err := fusefs.Mount(dir, m.Tree(), fusefs.Options{Name: "hwpprobe-snapshot-test", SelfReader: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return dir
}

func snapshotJSON(t *testing.T, args ...string) *snapshot.Snapshot {
	t.Helper()
	stdout, stderr, code := runBin(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("hwpprobe %v: exit %d, stderr %q", args, code, stderr)
	}
	checkSchema(t, "hwpprobe-snapshot/1", []byte(stdout))
	var s snapshot.Snapshot
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func findingSet(s *snapshot.Snapshot) []string {
	out := []string{}
	for _, f := range s.Findings {
		out = append(out, f.Kind+" "+f.Check+" "+f.CPUs)
	}
	return out
}

// TestSnapshotEmulated runs the binary against the project's emulated
// machines (emu/machines) served through FUSE, then changes settings
// through the emulated sysfs, which applies the kernel's rules, and checks
// what snapshot reports.
func TestSnapshotEmulated(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("must run as root (CI does): FUSE mounts need CAP_SYS_ADMIN")
	}
	t.Run("mtl-165u", func(t *testing.T) {
		root := mountEmulated(t, "mtl-165u")
		stdout, _, code := runBin(t, "--root", root, "snapshot")
		if code != 0 || !strings.Contains(stdout, `EMULATED machine "mtl-165u"`) {
			t.Fatalf("exit %d, output lacks the EMULATED line:\n%s", code, stdout)
		}
		s := snapshotJSON(t, "--root", root, "snapshot")
		var got []string
		for _, g := range s.Groups {
			got = append(got, g.CoreType+" "+g.CPUList)
		}
		if diff := cmp.Diff([]string{"P-core 0-3", "E-core 4-11", "LP E-core 12-13"}, got); diff != "" {
			t.Errorf("groups (-want +got):\n%s", diff)
		}
		if s.Emulated != "mtl-165u" || s.CoreTypeSource != "cpuid" {
			t.Errorf("emulated %q, core types from %q", s.Emulated, s.CoreTypeSource)
		}
		if diff := cmp.Diff([]string{}, findingSet(s)); diff != "" {
			t.Errorf("findings at boot (-want +got):\n%s", diff)
		}
		// Switch cpu0 to the performance governor and cpu5 to EPP
		// balance_power through sysfs, as a user would.
		write := func(cpu int, file, v string) {
			p := filepath.Join(root, "sys/devices/system/cpu", "cpu"+strconv.Itoa(cpu), "cpufreq", file)
			if err := os.WriteFile(p, []byte(v), 0); err != nil {
				t.Fatal(err)
			}
		}
		write(0, "scaling_governor", "performance")
		write(5, "energy_performance_preference", "balance_power")
		s = snapshotJSON(t, "--root", root, "snapshot", "-C", "0,5")
		if diff := cmp.Diff([]string{"note performance_policy 0"}, findingSet(s)); diff != "" {
			t.Errorf("findings after the change (-want +got):\n%s", diff)
		}
		if r := s.Groups[0].CPUs[0].Registers.HWPRequest; r == nil || r.Min != r.Max || r.EPP != 0 {
			t.Errorf("cpu0 HWP_REQUEST %+v under performance, want min = max and EPP 0", r)
		}
		if r := s.Groups[1].CPUs[0].Registers.HWPRequest; r == nil || r.EPP != 179 {
			t.Errorf("cpu5 HWP_REQUEST %+v, want EPP 179 (Meteor Lake balance_power)", r)
		}
		// Limits set through sysfs: the emulated intel_pstate converts them
		// into HWP_REQUEST, and snapshot's own conversion must agree.
		if err := os.WriteFile(filepath.Join(root, "sys/devices/system/cpu/intel_pstate/max_perf_pct"), []byte("60"), 0); err != nil {
			t.Fatal(err)
		}
		write(4, "scaling_max_freq", "2000000")
		write(1, "scaling_min_freq", "3000000")
		write(13, "scaling_min_freq", "1500000")
		s = snapshotJSON(t, "--root", root, "snapshot")
		if diff := cmp.Diff([]string{"note performance_policy 0"}, findingSet(s)); diff != "" {
			t.Errorf("findings after limit changes (-want +got):\n%s\n%+v", diff, s.Findings)
		}
		for file, v := range map[string]string{"no_turbo": "1", "min_perf_pct": "50"} {
			if err := os.WriteFile(filepath.Join(root, "sys/devices/system/cpu/intel_pstate", file), []byte(v), 0); err != nil {
				t.Fatal(err)
			}
		}
		s = snapshotJSON(t, "--root", root, "snapshot")
		if diff := cmp.Diff([]string{"note performance_policy 0"}, findingSet(s)); diff != "" {
			t.Errorf("findings after no_turbo 1, min_perf_pct 50 (-want +got):\n%s\n%+v", diff, s.Findings)
		}
		if r := s.Groups[0].CPUs[1].Registers.HWPRequest; r == nil || r.Max != s.Groups[0].CPUs[1].Registers.HWPCapabilities.Guaranteed {
			t.Errorf("cpu1 HWP_REQUEST %+v under no_turbo: max is not the guaranteed level", r)
		}
	})
	t.Run("zen4-amd-pstate", func(t *testing.T) {
		root := mountEmulated(t, "zen4-amd-pstate")
		s := snapshotJSON(t, "--root", root, "snapshot", "-C", "0-3")
		if diff := cmp.Diff([]string{}, findingSet(s)); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		c := s.Groups[0].CPUs[0]
		if c.Registers.CPPCReq == nil || c.Registers.CPPCReq.EPP != 0x80 || c.Sysfs.EPP == nil || *c.Sysfs.EPP != "balance_performance" {
			t.Errorf("cpu0 CPPC_REQ %+v, sysfs EPP %v", c.Registers.CPPCReq, c.Sysfs.EPP)
		}
		// Limits and EPP set through the emulated amd-pstate's sysfs must
		// come out consistent with the registers it writes.
		for file, v := range map[string]string{"cpu2/cpufreq/scaling_max_freq": "3000000", "cpu3/cpufreq/scaling_min_freq": "4000000", "cpu1/cpufreq/energy_performance_preference": "power"} {
			if err := os.WriteFile(filepath.Join(root, "sys/devices/system/cpu", file), []byte(v), 0); err != nil {
				t.Fatal(err)
			}
		}
		s = snapshotJSON(t, "--root", root, "snapshot", "-C", "0-3")
		if diff := cmp.Diff([]string{}, findingSet(s)); diff != "" {
			t.Errorf("findings after changes (-want +got):\n%s\n%+v", diff, s.Findings)
		}
		if c := s.Groups[0].CPUs[2]; c.Sysfs.AMDHighestPerf == nil || c.Registers.CPPCReq == nil || c.Registers.CPPCReq.Max >= c.Registers.CPPCCap1.Highest {
			t.Errorf("cpu2: amd_pstate_highest_perf %v, CPPC_REQ %+v: the limit check had nothing to compare", c.Sysfs.AMDHighestPerf, c.Registers.CPPCReq)
		}
		if r := s.Groups[0].CPUs[1].Registers.CPPCReq; r == nil || r.EPP != 0xFF {
			t.Errorf("cpu1 CPPC_REQ %+v, want EPP 0xFF (power)", r)
		}
	})
	t.Run("vm-bare", func(t *testing.T) {
		root := mountEmulated(t, "vm-bare")
		s := snapshotJSON(t, "--root", root, "snapshot")
		avail := map[string]bool{}
		for _, c := range s.Capabilities {
			avail[c.Name] = c.Available
		}
		want := map[string]bool{"emulated": true, "root": true, "msr": false, "cpuid": true, "cpufreq": false, "hwp": false, "intel_pstate": false, "epb": false, "powercap": false}
		if diff := cmp.Diff(want, avail); diff != "" {
			t.Errorf("capabilities (-want +got):\n%s", diff)
		}
	})
}
