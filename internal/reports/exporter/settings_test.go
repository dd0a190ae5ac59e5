// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/msr"
)

// series maps each metric to its value, keyed by name and labels in
// name order ("hwpprobe_hwp_request_epp{core_type=cpu=0,cpu=core_type=P,package=package=0}").
func series(t *testing.T, ms []prometheus.Metric) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range ms {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		var vals []string
		for _, l := range d.GetLabel() {
			vals = append(vals, l.GetName()+"="+l.GetValue())
		}
		name := fqNameRE.FindStringSubmatch(m.Desc().String())[1]
		out[name+"{"+strings.Join(vals, ",")+"}"] = d.GetGauge().GetValue()
	}
	return out
}

// settingsFixture is a two-CPU machine: cpu0 with intel_pstate and the
// HWP and EPB registers, cpu1 with no cpufreq policy and EPB only in
// sysfs.
func settingsFixture(t *testing.T) (sysfs.FS, *snapshot.Snapshot) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"cpu0/cpufreq/scaling_driver":                "intel_pstate",
		"cpu0/cpufreq/scaling_governor":              "powersave",
		"cpu0/cpufreq/energy_performance_preference": "balance_performance",
		"cpu0/cpufreq/scaling_min_freq":              "400000",
		"cpu0/cpufreq/scaling_max_freq":              "4900000",
		"cpu0/cpufreq/cpuinfo_min_freq":              "400000",
		"cpu0/cpufreq/cpuinfo_max_freq":              "4900000",
		"cpu1/power/energy_perf_bias":                "6",
	}
	for name, v := range files {
		p := filepath.Join(root, "sys/devices/system/cpu", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	driver, epb := "intel_pstate", int64(6)
	snap := &snapshot.Snapshot{Groups: []snapshot.Group{{CPUs: []snapshot.CPU{
		{CPU: 0, Sysfs: snapshot.CPUSysfs{ScalingDriver: &driver}, Registers: snapshot.CPURegs{
			HWPRequest: &snapshot.HWPRequest{}, HWPCapabilities: &snapshot.HWPCapabilities{}, EPB: &snapshot.EPB{},
		}},
		{CPU: 1, Sysfs: snapshot.CPUSysfs{EPB: &epb}},
	}}}}
	return sysfs.NewFS(root), snap
}

// TestSettingsReader: each refresh reads the settings the first snapshot
// found, decoded; what was absent stays absent, and a register that no
// longer reads is absent from that refresh and reported.
func TestSettingsReader(t *testing.T) {
	fs, snap := settingsFixture(t)
	regs := msr.Map{0: {
		0x774: 0x80002a0c, // EPP 128, desired 0, max 42, min 12
		0x771: 0x01142230, // lowest 1, most efficient 20, guaranteed 34, highest 48
		0x1b0: 0x4,
	}, 1: {}}
	setup := &sampler.Setup{CPUs: []sampler.Topo{{CPU: 0, Type: topology.PCore}, {CPU: 1}}, HWPRegister: 0x774}
	r := newSettingsReader(fs, regs, snap, setup)
	b := &builder{}
	if !r.read(b, nil) {
		t.Error("read reported a failure")
	}
	want := map[string]float64{
		"hwpprobe_cpufreq_info{core_type=P,cpu=0,driver=intel_pstate,epp=balance_performance,governor=powersave,package=0}": 1,
		"hwpprobe_cpufreq_scaling_min_hertz{core_type=P,cpu=0,package=0}":                                                   4e8,
		"hwpprobe_cpufreq_scaling_max_hertz{core_type=P,cpu=0,package=0}":                                                   4.9e9,
		"hwpprobe_cpufreq_cpuinfo_min_hertz{core_type=P,cpu=0,package=0}":                                                   4e8,
		"hwpprobe_cpufreq_cpuinfo_max_hertz{core_type=P,cpu=0,package=0}":                                                   4.9e9,
		"hwpprobe_hwp_request_min_perf{core_type=P,cpu=0,package=0}":                                                        12,
		"hwpprobe_hwp_request_max_perf{core_type=P,cpu=0,package=0}":                                                        42,
		"hwpprobe_hwp_request_desired_perf{core_type=P,cpu=0,package=0}":                                                    0,
		"hwpprobe_hwp_request_epp{core_type=P,cpu=0,package=0}":                                                             128,
		"hwpprobe_hwp_capabilities_highest_perf{core_type=P,cpu=0,package=0}":                                               48,
		"hwpprobe_hwp_capabilities_guaranteed_perf{core_type=P,cpu=0,package=0}":                                            34,
		"hwpprobe_hwp_capabilities_most_efficient_perf{core_type=P,cpu=0,package=0}":                                        20,
		"hwpprobe_hwp_capabilities_lowest_perf{core_type=P,cpu=0,package=0}":                                                1,
		"hwpprobe_energy_perf_bias{core_type=P,cpu=0,package=0}":                                                            4,
		"hwpprobe_energy_perf_bias{core_type=,cpu=1,package=0}":                                                             6,
	}
	if diff := cmp.Diff(want, series(t, b.ms)); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	delete(regs[0], 0x774)
	b = &builder{}
	if r.read(b, nil) {
		t.Error("HWP_REQUEST unreadable: read reported no failure")
	}
	for k := range series(t, b.ms) {
		if strings.HasPrefix(k, "hwpprobe_hwp_request_") {
			t.Errorf("%s served though HWP_REQUEST did not read", k)
		}
	}
}

// TestSettingsFromSample: the request and EPB registers that the
// refresh's sample read are taken from it, not read again; the
// capabilities, which the sampler does not read, still are.
func TestSettingsFromSample(t *testing.T) {
	fs, snap := settingsFixture(t)
	// Only HWP_CAPABILITIES reads: a second read of HWP_REQUEST or EPB
	// would fail.
	regs := msr.Map{0: {0x771: 0x01142230}, 1: {}}
	setup := &sampler.Setup{CPUs: []sampler.Topo{{CPU: 1}, {CPU: 0, Type: topology.PCore}}, HWPRegister: 0x774}
	r := newSettingsReader(fs, regs, snap, setup)
	smp := &sampler.Sample{CPUs: []sampler.CPU{{CPU: 1}, {CPU: 0,
		HWPRequest: sampler.Reg{Raw: 0x80002a0c, Src: sampler.SrcMSR}, // EPP 128, max 42, min 12
		EPB:        sampler.Reg{Raw: 0x4, Src: sampler.SrcMSR},
	}}}
	b := &builder{}
	if !r.read(b, smp) {
		t.Error("read reported a failure")
	}
	got := series(t, b.ms)
	for k, want := range map[string]float64{
		"hwpprobe_hwp_request_min_perf{core_type=P,cpu=0,package=0}":          12,
		"hwpprobe_hwp_request_max_perf{core_type=P,cpu=0,package=0}":          42,
		"hwpprobe_hwp_request_epp{core_type=P,cpu=0,package=0}":               128,
		"hwpprobe_energy_perf_bias{core_type=P,cpu=0,package=0}":              4,
		"hwpprobe_hwp_capabilities_highest_perf{core_type=P,cpu=0,package=0}": 48,
		"hwpprobe_energy_perf_bias{core_type=,cpu=1,package=0}":               6,
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (served %v), want %v", k, v, ok, want)
		}
	}
}
