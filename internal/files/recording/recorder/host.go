// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Host describes the machine under fs: uname, /proc/cpuinfo of the first
// CPU and the cpufreq driver. Fields that cannot be read stay empty.
func Host(fs sysfs.FS) recording.Host {
	var h recording.Host
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel, h.KernelVer, h.Arch = unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:])
	}
	if infos, err := fs.CPUInfo(); err == nil && len(infos) > 0 {
		c := infos[0]
		h.Vendor, h.CPUModel, h.Family, h.Model, h.Stepping, h.Microcode = c.VendorID, c.ModelName, c.Family, c.Model, c.Stepping, c.Microcode
	}
	if l, err := fs.OnlineCPUs(); err == nil {
		h.OnlineCPU = l.String()
	}
	h.Driver, _ = fs.ReadString("sys/devices/system/cpu/cpu0/cpufreq/scaling_driver")
	return h
}

// setting is a sysfs file a run's setting is read from, named as the
// kernel names it.
type setting struct{ name, path string }

// perCPUSettings returns the per-CPU files, relative to cpuN/.
func perCPUSettings() []setting {
	return []setting{
		{"scaling_governor", "cpufreq/scaling_governor"},
		{"energy_performance_preference", "cpufreq/energy_performance_preference"},
		{"scaling_min_freq", "cpufreq/scaling_min_freq"},
		{"scaling_max_freq", "cpufreq/scaling_max_freq"},
		{"energy_perf_bias", "power/energy_perf_bias"},
	}
}

// globalSettings returns the driver-wide files.
func globalSettings() []setting {
	return []setting{
		{"intel_pstate/status", "sys/devices/system/cpu/intel_pstate/status"},
		{"intel_pstate/no_turbo", "sys/devices/system/cpu/intel_pstate/no_turbo"},
		{"intel_pstate/min_perf_pct", "sys/devices/system/cpu/intel_pstate/min_perf_pct"},
		{"intel_pstate/max_perf_pct", "sys/devices/system/cpu/intel_pstate/max_perf_pct"},
		{"amd_pstate/status", "sys/devices/system/cpu/amd_pstate/status"},
		{"cpufreq/boost", "sys/devices/system/cpu/cpufreq/boost"},
	}
}

// Observed reads the power-management settings in force on the CPUs of
// list. A setting that differs between CPUs is given as
// "powersave (0-3), performance (4-7)"; one no CPU has is left out.
func Observed(fs sysfs.FS, list cpus.List) []recording.Setting {
	var out []recording.Setting
	for _, s := range perCPUSettings() {
		by := map[string]cpus.List{}
		var order []string
		for _, c := range list {
			v, err := fs.ReadString(fmt.Sprintf("sys/devices/system/cpu/cpu%d", c), s.path)
			if err != nil {
				continue
			}
			if _, ok := by[v]; !ok {
				order = append(order, v)
			}
			by[v] = append(by[v], c)
		}
		switch len(order) {
		case 0:
			continue
		case 1:
			if len(by[order[0]]) == len(list) {
				out = append(out, recording.Setting{Name: s.name, Value: order[0]})
				continue
			}
		}
		slices.SortFunc(order, func(a, b string) int { return by[a][0] - by[b][0] })
		parts := make([]string, len(order))
		for i, v := range order {
			parts[i] = fmt.Sprintf("%s (%s)", v, by[v])
		}
		out = append(out, recording.Setting{Name: s.name, Value: strings.Join(parts, ", ")})
	}
	for _, s := range globalSettings() {
		if v, err := fs.ReadString(s.path); err == nil {
			out = append(out, recording.Setting{Name: s.name, Value: v})
		}
	}
	return out
}
