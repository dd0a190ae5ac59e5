// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCPUFreq(t *testing.T) {
	root := t.TempDir()
	d := "sys/devices/system/cpu/cpu2/cpufreq/"
	// File contents as intel_pstate prints them (Documentation/admin-guide/
	// pm/intel_pstate.rst); base_frequency absent, as with acpi-cpufreq.
	write(t, root, map[string]string{
		d + "scaling_driver":                                 "intel_pstate\n",
		d + "scaling_governor":                               "powersave\n",
		d + "energy_performance_preference":                  "balance_performance\n",
		d + "scaling_min_freq":                               "400000\n",
		d + "scaling_max_freq":                               "4900000\n",
		d + "affected_cpus":                                  "2\n",
		"sys/devices/system/cpu/cpu2/power/energy_perf_bias": "6\n",
	})
	fs := NewFS(root)
	got, err := fs.CPUFreq(2)
	if err != nil {
		t.Fatal(err)
	}
	want := &CPUFreq{Driver: ptr("intel_pstate"), Governor: ptr("powersave"), EPP: ptr("balance_performance"),
		ScalingMinKHz: ptr(int64(400000)), ScalingMaxKHz: ptr(int64(4900000)), AffectedCPUs: cpus.List{2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CPUFreq (-want +got):\n%s", diff)
	}
	if epb, err := fs.EnergyPerfBias(2); err != nil || epb == nil || *epb != 6 {
		t.Errorf("EnergyPerfBias = %v, %v", epb, err)
	}
	if epb, err := fs.EnergyPerfBias(3); err != nil || epb != nil {
		t.Errorf("absent EPB = %v, %v; want nil, nil", epb, err)
	}
	if _, err := fs.CPUFreq(3); !errors.Is(err, ErrNoCPUFreq) {
		t.Errorf("cpu3 without cpufreq: %v", err)
	}
	// A file that exists but does not read (here: garbage where a number
	// belongs) is an error naming it, and the value stays nil.
	write(t, root, map[string]string{d + "scaling_max_freq": "<unsupported>\n"})
	got, err = fs.CPUFreq(2)
	if err == nil || !strings.Contains(err.Error(), "scaling_max_freq") || got.ScalingMaxKHz != nil {
		t.Errorf("bad scaling_max_freq: %v, value %v", err, got.ScalingMaxKHz)
	}
}

// TestThisMachine reads the real sysfs of the dev/CI VM, which has no
// cpufreq driver, and checks the readers against /proc/cpuinfo.
func TestThisMachine(t *testing.T) {
	fs := NewFS("/")
	info, err := fs.CPUInfo()
	if err != nil {
		t.Fatal(err)
	}
	online, err := NewFS("/").OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(info) != len(online) {
		t.Errorf("%d cpuinfo blocks, %d online CPUs", len(info), len(online))
	}
	for _, c := range info {
		topo, err := fs.Topology(c.Processor)
		if err != nil {
			t.Fatal(err)
		}
		if topo.CoreID != c.CoreID || topo.PackageID != c.PhysicalID {
			t.Errorf("cpu%d topology core %d package %d, cpuinfo core id %d physical id %d", c.Processor, topo.CoreID, topo.PackageID, c.CoreID, c.PhysicalID)
		}
		if !topo.Siblings.Contains(c.Processor) {
			t.Errorf("cpu%d siblings %v lack itself", c.Processor, topo.Siblings)
		}
		if _, err := os.Stat(filepath.Join("/sys/devices/system/cpu", "cpu"+strconv.Itoa(c.Processor), "cpufreq")); err != nil {
			if _, err := fs.CPUFreq(c.Processor); !errors.Is(err, ErrNoCPUFreq) {
				t.Errorf("cpu%d: %v, want ErrNoCPUFreq", c.Processor, err)
			}
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	// Two blocks in the format of arch/x86/kernel/cpu/proc.c (trimmed).
	in := "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 170\nmodel name\t: Intel(R) Core(TM) Ultra 7 165U\nstepping\t: 4\nmicrocode\t: 0x1e\nphysical id\t: 0\ncore id\t\t: 8\nflags\t\t: fpu hwp epb hwp_epp\n\n" +
		"processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 170\nflags\t\t: fpu\n"
	got, err := ParseCPUInfo([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []CPUInfo{
		{Processor: 0, VendorID: "GenuineIntel", Family: 6, Model: 170, Stepping: 4, ModelName: "Intel(R) Core(TM) Ultra 7 165U", Microcode: "0x1e", PhysicalID: 0, CoreID: 8, Flags: []string{"epb", "fpu", "hwp", "hwp_epp"}},
		{Processor: 1, VendorID: "GenuineIntel", Family: 6, Model: 170, PhysicalID: -1, CoreID: -1, Flags: []string{"fpu"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseCPUInfo (-want +got):\n%s", diff)
	}
	if !got[0].HasFlag("hwp_epp") || got[1].HasFlag("hwp") {
		t.Error("HasFlag")
	}
	for _, bad := range []string{"", "processor\t: x\n", "processor\t: 0\nmodel\t: z\n"} {
		if _, err := ParseCPUInfo([]byte(bad)); err == nil {
			t.Errorf("ParseCPUInfo(%q) accepted", bad)
		}
	}
}

func TestPowercapZones(t *testing.T) {
	root := t.TempDir()
	pc := "sys/class/powercap/"
	// Names and constraint files as intel_rapl_common.c creates them; the
	// sub-zone intel-rapl:0:0 ("core") and the control type directory
	// intel-rapl are not top-level package zones.
	write(t, root, map[string]string{
		pc + "intel-rapl/enabled":                            "1\n",
		pc + "intel-rapl:0/name":                             "package-0\n",
		pc + "intel-rapl:0/enabled":                          "1\n",
		pc + "intel-rapl:0/constraint_0_name":                "long_term\n",
		pc + "intel-rapl:0/constraint_0_power_limit_uw":      "15000000\n",
		pc + "intel-rapl:0/constraint_0_time_window_us":      "27983872\n",
		pc + "intel-rapl:0/constraint_1_name":                "short_term\n",
		pc + "intel-rapl:0/constraint_1_power_limit_uw":      "57000000\n",
		pc + "intel-rapl:0/constraint_1_time_window_us":      "2440\n",
		pc + "intel-rapl:0:0/name":                           "core\n",
		pc + "intel-rapl-mmio:0/name":                        "package-0\n",
		pc + "intel-rapl-mmio:0/constraint_0_name":           "long_term\n",
		pc + "intel-rapl-mmio:0/constraint_0_power_limit_uw": "28000000\n",
	})
	zones, err := NewFS(root).PowercapZones()
	if err != nil {
		t.Fatal(err)
	}
	want := []PowercapZone{
		{ID: "intel-rapl-mmio:0", Name: "package-0", Constraints: []PowercapConstraint{{Index: 0, Name: "long_term", PowerLimitUW: ptr(int64(28000000))}}},
		{ID: "intel-rapl:0", Name: "package-0", Enabled: ptr(int64(1)), Constraints: []PowercapConstraint{
			{Index: 0, Name: "long_term", PowerLimitUW: ptr(int64(15000000)), TimeWindowUS: ptr(int64(27983872))},
			{Index: 1, Name: "short_term", PowerLimitUW: ptr(int64(57000000)), TimeWindowUS: ptr(int64(2440))},
		}},
	}
	if diff := cmp.Diff(want, zones); diff != "" {
		t.Errorf("PowercapZones (-want +got):\n%s", diff)
	}
	if !zones[0].MMIO() || zones[1].MMIO() {
		t.Error("MMIO()")
	}
	if z, err := NewFS(t.TempDir()).PowercapZones(); err != nil || len(z) != 0 {
		t.Errorf("no powercap: %v, %v", z, err)
	}
}
