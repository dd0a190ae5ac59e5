// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
)

// ErrNoCPUFreq is wrapped when a profile needs cpufreq and the machine has
// none.
var ErrNoCPUFreq = errors.New("no cpufreq")

const cpuSysfs = "sys/devices/system/cpu"

// Path returns the sysfs file of key on cpu (cpu is ignored for global
// keys), relative to the system root.
func Path(k Key, cpu int) string {
	dir := fmt.Sprintf("%s/cpu%d/cpufreq/", cpuSysfs, cpu)
	switch k {
	case Governor:
		return dir + "scaling_governor"
	case EPP:
		return dir + "energy_performance_preference"
	case ScalingMinFreq, ScalingMaxFreq:
		return dir + string(k)
	case EPB:
		return fmt.Sprintf("%s/cpu%d/power/energy_perf_bias", cpuSysfs, cpu)
	case Boost:
		return cpuSysfs + "/cpufreq/boost"
	}
	return cpuSysfs + "/intel_pstate/" + string(k) // no_turbo, min_perf_pct, max_perf_pct
}

// cpuKeys are the per-CPU keys a State holds, in restore order.
var cpuKeys = []Key{ScalingMinFreq, ScalingMaxFreq, Governor, EPP, EPB}

// globalKeys are the machine-wide keys, in restore order.
var globalKeys = []Key{NoTurbo, Boost, MinPerfPct, MaxPerfPct}

// State is every setting a profile may change, as sysfs shows it: what a
// journal keeps and Restore brings back. Values are the files' text,
// trimmed; an absent file has no entry.
type State struct {
	Globals map[Key]string `json:"globals"`
	CPUs    []CPUState     `json:"cpus"`
	// Daemons holds the active TuneD ("tuned") and power-profiles-daemon
	// ("ppd") profiles when the profile switches them.
	Daemons map[string]string `json:"daemons,omitempty"`
}

// CPUState is one CPU's settings.
type CPUState struct {
	CPU    int            `json:"cpu"`
	Values map[Key]string `json:"values"`
	// SavedEPP is the EPP intel_pstate keeps for a CPU in the performance
	// policy (cpu_data->epp_powersave) and restores on leaving it while
	// the register EPP is 0 (intel_pstate_hwp_set()). sysfs does not show
	// it: Apply learns it when it first moves a CPU out of performance,
	// and Restore puts it back before switching the CPU into performance
	// again, so that the kernel saves the same value.
	SavedEPP string `json:"saved_epp,omitempty"`
}

// ReadState reads the settings of the CPUs in list.
func ReadState(fs sysfs.FS, list cpus.List) (State, error) {
	s := State{Globals: map[Key]string{}}
	var errs []error
	read := func(path string) (string, bool) {
		v, err := fs.ReadString(path)
		if err != nil {
			if !sysfs.IsNotExist(err) {
				errs = append(errs, err)
			}
			return "", false
		}
		return v, true
	}
	for _, k := range globalKeys {
		if v, ok := read(Path(k, 0)); ok {
			s.Globals[k] = v
		}
	}
	for _, c := range list {
		cs := CPUState{CPU: c, Values: map[Key]string{}}
		for _, k := range cpuKeys {
			if v, ok := read(Path(k, c)); ok {
				cs.Values[k] = v
			}
		}
		s.CPUs = append(s.CPUs, cs)
	}
	return s, errors.Join(errs...)
}

// Clone returns a deep copy.
func (s State) Clone() State {
	c := State{Globals: maps.Clone(s.Globals), Daemons: maps.Clone(s.Daemons)}
	for _, cs := range s.CPUs {
		c.CPUs = append(c.CPUs, CPUState{CPU: cs.CPU, Values: maps.Clone(cs.Values), SavedEPP: cs.SavedEPP})
	}
	return c
}

// CPU returns the state of cpu, nil when the state does not hold it.
func (s *State) CPU(cpu int) *CPUState {
	for i := range s.CPUs {
		if s.CPUs[i].CPU == cpu {
			return &s.CPUs[i]
		}
	}
	return nil
}

// Diff lists the settings of want that got does not hold, one line each
// ("cpu3 energy_performance_preference: balance_performance, now power").
func Diff(want, got State) []string {
	var out []string
	for _, k := range globalKeys {
		if w, ok := want.Globals[k]; ok && got.Globals[k] != w {
			out = append(out, fmt.Sprintf("%s: %s, now %s", Path(k, 0), w, orNone(got.Globals[k])))
		}
	}
	for _, w := range want.CPUs {
		g := got.CPU(w.CPU)
		for _, k := range cpuKeys {
			v, ok := w.Values[k]
			if !ok {
				continue
			}
			now := ""
			if g != nil {
				now = g.Values[k]
			}
			if now != v {
				out = append(out, fmt.Sprintf("%s: %s, now %s", Path(k, w.CPU), v, orNone(now)))
			}
		}
	}
	for _, d := range slices.Sorted(maps.Keys(want.Daemons)) {
		if got.Daemons[d] != want.Daemons[d] {
			out = append(out, fmt.Sprintf("%s profile: %s, now %s", d, want.Daemons[d], orNone(got.Daemons[d])))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(unreadable)"
	}
	return s
}

// Machine is what planning needs to know: the CPUs, what each one offers,
// its limits, and the settings now.
type Machine struct {
	FS       sysfs.FS
	Online   cpus.List
	Vendor   string // GenuineIntel, AuthenticAMD
	Family   int
	Model    int
	Driver   string            // scaling_driver ("" without cpufreq)
	EPPTable snapshot.EPPTable // the kernel's EPP values for the names on this model
	Offers   map[int]Offer     // per online CPU with cpufreq
	State    State
}

// Offer is what one CPU's cpufreq policy accepts.
type Offer struct {
	Governors  []string // scaling_available_governors
	EPPs       []string // energy_performance_available_preferences
	MinKHz     int64    // cpuinfo_min_freq
	MaxKHz     int64    // cpuinfo_max_freq
	HasEPP     bool     // energy_performance_preference exists
	HasEPB     bool     // power/energy_perf_bias exists
	HasCPUFreq bool
}

// ReadMachine reads the machine under fs.
func ReadMachine(fs sysfs.FS) (*Machine, error) {
	online, err := fs.OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	m := &Machine{FS: fs, Online: online, Offers: map[int]Offer{}}
	if info, err := fs.CPUInfo(); err == nil && len(info) > 0 {
		m.Vendor, m.Family, m.Model = info[0].VendorID, info[0].Family, info[0].Model
	}
	m.EPPTable = snapshot.IntelEPPTable(m.Family, m.Model)
	if m.Vendor == "AuthenticAMD" {
		m.EPPTable = snapshot.AMDEPPTable()
	}
	var errs []error
	for _, c := range online {
		o := Offer{HasEPB: fs.Exists(Path(EPB, c))}
		if fs.Exists(fmt.Sprintf("%s/cpu%d/cpufreq", cpuSysfs, c)) {
			o.HasCPUFreq = true
			o.HasEPP = fs.Exists(Path(EPP, c))
			dir := fmt.Sprintf("%s/cpu%d/cpufreq/", cpuSysfs, c)
			gov, _ := fs.ReadString(dir + "scaling_available_governors")
			o.Governors = strings.Fields(gov)
			epps, _ := fs.ReadString(dir + "energy_performance_available_preferences")
			o.EPPs = strings.Fields(epps)
			o.MinKHz, _ = fs.ReadInt(dir + "cpuinfo_min_freq")
			o.MaxKHz, _ = fs.ReadInt(dir + "cpuinfo_max_freq")
			if m.Driver == "" {
				m.Driver, _ = fs.ReadString(dir + "scaling_driver")
			}
		}
		m.Offers[c] = o
	}
	m.State, err = ReadState(fs, online)
	errs = append(errs, err)
	return m, errors.Join(errs...)
}

// intValue parses a state value; ok is false for a missing or bad one.
func intValue(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
