// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// ErrNoCPUFreq is wrapped when a CPU has no cpufreq directory: no scaling
// driver is registered (VM guests normally have none: the hypervisor owns
// P-states), or the driver failed to initialise.
var ErrNoCPUFreq = errors.New("no cpufreq policy (no scaling driver loaded)")

// cpuDir is the per-CPU sysfs directory.
func cpuDir(cpu int) string { return "sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) }

// CPUFreq is a CPU's cpufreq policy as the kernel shows it under
// /sys/devices/system/cpu/cpuN/cpufreq (Documentation/admin-guide/pm/
// cpufreq.rst, intel_pstate.rst, amd-pstate.rst). Values the driver does not
// provide are nil. Frequencies are in kHz, as sysfs prints them.
type CPUFreq struct {
	Driver   *string // scaling_driver: intel_pstate, intel_cpufreq, amd-pstate-epp, acpi-cpufreq ...
	Governor *string // scaling_governor: performance, powersave, schedutil ...
	// EPP is energy_performance_preference: a name (performance,
	// balance_performance, balance_power, power, default) or a number.
	EPP                   *string
	EPPAvailable          *string   // energy_performance_available_preferences
	ScalingMinKHz         *int64    // scaling_min_freq
	ScalingMaxKHz         *int64    // scaling_max_freq
	ScalingCurKHz         *int64    // scaling_cur_freq
	CPUInfoMinKHz         *int64    // cpuinfo_min_freq
	CPUInfoMaxKHz         *int64    // cpuinfo_max_freq
	BaseFrequencyKHz      *int64    // base_frequency (intel_pstate)
	AMDHighestPerf        *int64    // amd_pstate_highest_perf
	AMDMaxFreqKHz         *int64    // amd_pstate_max_freq
	AMDLowestNonlinearKHz *int64    // amd_pstate_lowest_nonlinear_freq
	AMDPrefcoreRanking    *int64    // amd_pstate_prefcore_ranking
	AffectedCPUs          cpus.List // affected_cpus
}

// CPUFreq reads the cpufreq policy of cpu. A CPU without a cpufreq
// directory gives an error wrapping ErrNoCPUFreq. Files a driver lacks are
// nil; a file that exists but cannot be read (EBUSY, EIO) is an error
// naming it.
func (f FS) CPUFreq(cpu int) (*CPUFreq, error) {
	dir := cpuDir(cpu) + "/cpufreq"
	if !f.Exists(dir) {
		return nil, fmt.Errorf("cpu%d: %w", cpu, ErrNoCPUFreq)
	}
	r := optReader{fs: f, dir: dir}
	c := &CPUFreq{
		Driver:                r.str("scaling_driver"),
		Governor:              r.str("scaling_governor"),
		EPP:                   r.str("energy_performance_preference"),
		EPPAvailable:          r.str("energy_performance_available_preferences"),
		ScalingMinKHz:         r.int("scaling_min_freq"),
		ScalingMaxKHz:         r.int("scaling_max_freq"),
		ScalingCurKHz:         r.int("scaling_cur_freq"),
		CPUInfoMinKHz:         r.int("cpuinfo_min_freq"),
		CPUInfoMaxKHz:         r.int("cpuinfo_max_freq"),
		BaseFrequencyKHz:      r.int("base_frequency"),
		AMDHighestPerf:        r.int("amd_pstate_highest_perf"),
		AMDMaxFreqKHz:         r.int("amd_pstate_max_freq"),
		AMDLowestNonlinearKHz: r.int("amd_pstate_lowest_nonlinear_freq"),
		AMDPrefcoreRanking:    r.int("amd_pstate_prefcore_ranking"),
	}
	if s := r.str("affected_cpus"); s != nil {
		// affected_cpus is space-separated ("0 1"), unlike cpulist files.
		l, err := cpus.Parse(strings.Join(strings.Fields(*s), ","))
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("%s: %w", f.Path(dir, "affected_cpus"), err))
		}
		c.AffectedCPUs = l
	}
	return c, errors.Join(r.errs...)
}

// EnergyPerfBias reads cpuN/power/energy_perf_bias: the kernel prints the
// whole IA32_ENERGY_PERF_BIAS, read live on each read (energy_perf_bias_show()
// in arch/x86/kernel/cpu/intel_epb.c); the hint is bits 3:0, 0-15. It is nil
// when the file is absent (no EPB feature).
func (f FS) EnergyPerfBias(cpu int) (*int64, error) {
	r := optReader{fs: f, dir: cpuDir(cpu) + "/power"}
	v := r.int("energy_perf_bias")
	return v, errors.Join(r.errs...)
}

// IntelPstate is the global state of the intel_pstate driver under
// /sys/devices/system/cpu/intel_pstate (Documentation/admin-guide/pm/
// intel_pstate.rst). Nil when absent: the directory exists only when
// intel_pstate is registered or was, and some files only with HWP.
type IntelPstate struct {
	Status           *string // status: active, passive, off
	NoTurbo          *int64  // no_turbo
	MinPerfPct       *int64  // min_perf_pct
	MaxPerfPct       *int64  // max_perf_pct
	HWPDynamicBoost  *int64  // hwp_dynamic_boost (HWP only)
	TurboPct         *int64  // turbo_pct
	NumPstates       *int64  // num_pstates
	EnergyEfficiency *int64  // energy_efficiency (some server/client models)
}

// IntelPstate reads the intel_pstate directory; it returns nil, nil when
// the directory is absent.
func (f FS) IntelPstate() (*IntelPstate, error) {
	dir := "sys/devices/system/cpu/intel_pstate"
	if !f.Exists(dir) {
		return nil, nil
	}
	r := optReader{fs: f, dir: dir}
	p := &IntelPstate{
		Status:           r.str("status"),
		NoTurbo:          r.int("no_turbo"),
		MinPerfPct:       r.int("min_perf_pct"),
		MaxPerfPct:       r.int("max_perf_pct"),
		HWPDynamicBoost:  r.int("hwp_dynamic_boost"),
		TurboPct:         r.int("turbo_pct"),
		NumPstates:       r.int("num_pstates"),
		EnergyEfficiency: r.int("energy_efficiency"),
	}
	return p, errors.Join(r.errs...)
}

// AMDPstate is the global state of amd-pstate under
// /sys/devices/system/cpu/amd_pstate (Documentation/admin-guide/pm/
// amd-pstate.rst).
type AMDPstate struct {
	Status   *string // status: active (EPP mode), passive, guided, disable
	Prefcore *string // prefcore: enabled, disabled
}

// AMDPstate reads the amd_pstate directory; nil, nil when it is absent.
func (f FS) AMDPstate() (*AMDPstate, error) {
	dir := "sys/devices/system/cpu/amd_pstate"
	if !f.Exists(dir) {
		return nil, nil
	}
	r := optReader{fs: f, dir: dir}
	p := &AMDPstate{Status: r.str("status"), Prefcore: r.str("prefcore")}
	return p, errors.Join(r.errs...)
}

// Boost reads /sys/devices/system/cpu/cpufreq/boost (acpi-cpufreq and
// amd-pstate passive/guided); nil when absent.
func (f FS) Boost() (*int64, error) {
	r := optReader{fs: f, dir: "sys/devices/system/cpu/cpufreq"}
	v := r.int("boost")
	return v, errors.Join(r.errs...)
}

// optReader reads optional files of one directory: an absent file gives
// nil; any other failure is remembered in errs and gives nil.
type optReader struct {
	fs   FS
	dir  string
	errs []error
}

func (r *optReader) str(name string) *string {
	s, err := r.fs.ReadString(r.dir, name)
	if err != nil {
		if !IsNotExist(err) {
			r.errs = append(r.errs, err)
		}
		return nil
	}
	return &s
}

func (r *optReader) int(name string) *int64 {
	s := r.str(name)
	if s == nil {
		return nil
	}
	n, err := strconv.ParseInt(*s, 10, 64)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s: %w", r.fs.Path(r.dir, name), err))
		return nil
	}
	return &n
}
