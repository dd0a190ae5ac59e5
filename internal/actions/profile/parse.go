// SPDX-License-Identifier: Apache-2.0

// Package profile is what hwpprobe switches a machine between: a cpufreq
// setting (a governor, or governor, EPP, EPB, frequency limits and the
// intel_pstate / amd-pstate globals, optionally per CPU subset), a TuneD or
// power-profiles-daemon profile, or the machine as it is. It parses a
// profile, plans its writes against the machine and refuses before any
// write what the kernel is known to refuse, applies it through sysfs in
// the order the kernel accepts, verifies what the registers then hold,
// and keeps a journal of the original settings so that they always come
// back (Restore, also after a crash). It never writes an MSR.
package profile

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("bad profile")

// Kind says how a profile is applied.
type Kind int

// Kinds of profile.
const (
	Sysfs   Kind = iota // settings written to sysfs
	Tuned               // a TuneD profile, switched with tuned-adm
	PPD                 // a power-profiles-daemon profile, switched with powerprofilesctl
	Current             // leave the machine as it is
)

// Key is a setting's name.
type Key string

// The settings a profile can make, named as their sysfs files (EPP and EPB
// shortened).
const (
	Governor       Key = "governor"         // cpuN/cpufreq/scaling_governor
	EPP            Key = "epp"              // cpuN/cpufreq/energy_performance_preference
	EPB            Key = "epb"              // cpuN/power/energy_perf_bias
	ScalingMinFreq Key = "scaling_min_freq" // cpuN/cpufreq/scaling_min_freq, kHz
	ScalingMaxFreq Key = "scaling_max_freq" // cpuN/cpufreq/scaling_max_freq, kHz
	NoTurbo        Key = "no_turbo"         // intel_pstate/no_turbo
	MinPerfPct     Key = "min_perf_pct"     // intel_pstate/min_perf_pct
	MaxPerfPct     Key = "max_perf_pct"     // intel_pstate/max_perf_pct
	Boost          Key = "boost"            // cpufreq/boost (amd-pstate, acpi-cpufreq)
)

// Keys lists every key in the order Apply writes them: the kernel's
// limits first (no_turbo changes cpuinfo_max_freq and squashes
// min_perf_pct), then the frequency limits, the governor, and the EPP last
// of the cpufreq settings because intel_pstate and amd-pstate refuse a
// non-zero EPP under the performance governor.
var Keys = []Key{NoTurbo, Boost, MinPerfPct, MaxPerfPct, ScalingMinFreq, ScalingMaxFreq, Governor, EPP, EPB}

// aliases are the sysfs and TuneD names accepted for the short keys.
var aliases = map[string]Key{
	"scaling_governor":              Governor,
	"energy_performance_preference": EPP,
	"energy_perf_bias":              EPB,
}

// Global reports whether a key is one machine-wide file (no @CPULIST).
func (k Key) Global() bool { return k == NoTurbo || k == MinPerfPct || k == MaxPerfPct || k == Boost }

// EPPNames are the strings energy_performance_preference accepts, in the
// kernel's order (energy_perf_strings[] in drivers/cpufreq/intel_pstate.c;
// amd-pstate.c has the same list).
var EPPNames = []string{"default", "performance", "balance_performance", "balance_power", "power"}

// EPBNames are the strings energy_perf_bias accepts
// (arch/x86/kernel/cpu/intel_epb.c energy_perf_strings[]).
var EPBNames = []string{"performance", "balance-performance", "normal", "balance-power", "power"}

// PPDProfiles are power-profiles-daemon's profiles.
var PPDProfiles = []string{"power-saver", "balanced", "performance"}

// Setting is one key=value, for every CPU (CPUs nil) or a subset. In a
// spec the subset is @CPULIST with "+" between ranges (epp=power@0-3+8),
// since the comma separates settings; a profile file takes the usual
// "0-3,8".
type Setting struct {
	Key Key
	// Value is normalised: a governor or EPP/EPB name as written, numbers
	// in decimal, frequencies in kHz.
	Value string
	CPUs  cpus.List
}

// String is key=value, or key=value@CPULIST with the list's commas
// written as "+" (the spec's own separator is the comma).
func (s Setting) String() string {
	if s.CPUs == nil {
		return string(s.Key) + "=" + s.Value
	}
	return string(s.Key) + "=" + s.Value + "@" + strings.ReplaceAll(s.CPUs.String(), ",", "+")
}

// Profile is a parsed profile.
type Profile struct {
	Text     string // as given
	Kind     Kind
	Name     string    // the TuneD or ppd profile name
	Settings []Setting // Sysfs: in Keys order, all-CPU settings before subsets
}

// String returns the canonical form: "tuned:NAME", "ppd:NAME", "current",
// or the settings joined by commas.
func (p *Profile) String() string {
	switch p.Kind {
	case Tuned:
		return "tuned:" + p.Name
	case PPD:
		return "ppd:" + p.Name
	case Current:
		return "current"
	}
	parts := make([]string, len(p.Settings))
	for i, s := range p.Settings {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// Get returns the all-CPU value of key, or "" when the profile does not
// set it for every CPU.
func (p *Profile) Get(k Key) string {
	for _, s := range p.Settings {
		if s.Key == k && s.CPUs == nil {
			return s.Value
		}
	}
	return ""
}

// For returns the value of key for cpu: the last subset that holds the
// CPU, else the all-CPU value; ok is false when the profile does not set
// it there.
func (p *Profile) For(k Key, cpu int) (string, bool) {
	v, ok := "", false
	for _, s := range p.Settings {
		if s.Key == k && (s.CPUs == nil || s.CPUs.Contains(cpu)) {
			v, ok = s.Value, true
		}
	}
	return v, ok
}

// Parse parses a profile; a "@FILE" profile is read with os.ReadFile.
func Parse(s string) (*Profile, error) { return ParseWith(s, readFile) }

// ParseWith is Parse reading "@FILE" profiles through readFile.
func ParseWith(s string, readFile func(string) ([]byte, error)) (*Profile, error) {
	p, err := parse(s, readFile)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %s", ErrSyntax, clip(s), oneLine(err.Error()))
	}
	return p, nil
}

var (
	governorRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	tunedRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$`)
)

func parse(s string, readFile func(string) ([]byte, error)) (*Profile, error) {
	p := &Profile{Text: s}
	switch {
	case s == "":
		return nil, errors.New("empty profile")
	case s == "current":
		p.Kind = Current
		return p, nil
	case strings.HasPrefix(s, "@"):
		return parseFile(s, readFile)
	}
	if name, ok := strings.CutPrefix(s, "tuned:"); ok {
		if !tunedRE.MatchString(name) {
			return nil, fmt.Errorf("tuned:%q is not a TuneD profile name", name)
		}
		p.Kind, p.Name = Tuned, name
		return p, nil
	}
	if name, ok := strings.CutPrefix(s, "ppd:"); ok {
		if !slices.Contains(PPDProfiles, name) {
			return nil, fmt.Errorf("ppd:%q: power-profiles-daemon has %s", name, strings.Join(PPDProfiles, ", "))
		}
		p.Kind, p.Name = PPD, name
		return p, nil
	}
	var raw []rawSetting
	spec := s
	if gov, rest, ok := strings.Cut(s, ":"); ok && !strings.Contains(gov, "=") {
		raw = append(raw, rawSetting{key: string(Governor), value: gov})
		if rest == "" {
			return nil, fmt.Errorf("%q: nothing after the colon", s)
		}
		spec = rest
	} else if !strings.ContainsAny(s, "=,@") {
		if !governorRE.MatchString(s) {
			return nil, fmt.Errorf("%q is not a governor name", s)
		}
		raw = append(raw, rawSetting{key: string(Governor), value: s})
		spec = ""
	}
	if spec != "" {
		for _, part := range strings.Split(spec, ",") {
			k, v, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("%q is not key=value", part)
			}
			v, list, hasList := strings.Cut(v, "@")
			raw = append(raw, rawSetting{key: k, value: v, cpus: list, hasCPUs: hasList})
		}
	}
	settings, err := build(raw)
	if err != nil {
		return nil, err
	}
	p.Settings = settings
	return p, nil
}

// rawSetting is a key=value@cpus before checking.
type rawSetting struct {
	key, value, cpus string
	hasCPUs          bool
}

// build checks raw settings and orders them: Keys order, all-CPU first.
func build(raw []rawSetting) ([]Setting, error) {
	var out []Setting
	seen := map[string]bool{}
	for _, r := range raw {
		s, err := check(r)
		if err != nil {
			return nil, err
		}
		id := string(s.Key) + "@" + s.CPUs.String()
		if s.CPUs == nil {
			id = string(s.Key)
		}
		if seen[id] {
			return nil, fmt.Errorf("%s given twice", id)
		}
		seen[id] = true
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Setting) int {
		if d := slices.Index(Keys, a.Key) - slices.Index(Keys, b.Key); d != 0 {
			return d
		}
		return boolInt(a.CPUs != nil) - boolInt(b.CPUs != nil)
	})
	return out, crossCheck(out)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// check validates one setting's key, value and CPU list.
func check(r rawSetting) (Setting, error) {
	k := Key(r.key)
	if a, ok := aliases[r.key]; ok {
		k = a
	}
	if !slices.Contains(Keys, k) {
		return Setting{}, fmt.Errorf("unknown key %q (want one of %s)", r.key, keyList())
	}
	s := Setting{Key: k}
	if r.hasCPUs {
		if k.Global() {
			return Setting{}, fmt.Errorf("%s=%s@%s: %s is one setting for the whole machine, it takes no @CPULIST", r.key, r.value, r.cpus, k)
		}
		l, err := cpus.Parse(strings.ReplaceAll(r.cpus, "+", ","))
		if err != nil || len(l) == 0 || strings.ContainsAny(r.cpus, " \t\n") {
			return Setting{}, fmt.Errorf("%s=%s@%s: bad CPU list %q", r.key, r.value, r.cpus, r.cpus)
		}
		s.CPUs = l
	}
	v, err := checkValue(k, r.value)
	if err != nil {
		return Setting{}, fmt.Errorf("%s=%s: %w", r.key, r.value, err)
	}
	s.Value = v
	return s, nil
}

func keyList() string {
	names := make([]string, len(Keys))
	for i, k := range Keys {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// checkValue validates and normalises a value for key k.
func checkValue(k Key, v string) (string, error) {
	switch k {
	case Governor:
		if !governorRE.MatchString(v) {
			return "", errors.New("not a governor name")
		}
		return v, nil
	case EPP:
		if slices.Contains(EPPNames, v) {
			return v, nil
		}
		n, err := number(v, 255)
		if err != nil {
			return "", fmt.Errorf("unknown EPP (want %s, or 0-255)", strings.Join(EPPNames, ", "))
		}
		return n, nil
	case EPB:
		if _, ok := hwp.EPBValue(v, hwp.EPBNormalDefault); ok {
			return v, nil
		}
		n, err := number(v, 15)
		if err != nil {
			return "", fmt.Errorf("unknown EPB (want %s, or 0-15)", strings.Join(EPBNames, ", "))
		}
		return n, nil
	case ScalingMinFreq, ScalingMaxFreq:
		khz, err := ParseKHz(v)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(khz, 10), nil
	case NoTurbo, Boost:
		return number(v, 1)
	}
	return number(v, 100) // min_perf_pct, max_perf_pct
}

// number checks a decimal integer in [0, hi].
func number(v string, hi int) (string, error) {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || n > uint64(hi) {
		return "", fmt.Errorf("want an integer 0-%d", hi)
	}
	return strconv.FormatUint(n, 10), nil
}

// ParseKHz parses a frequency: a number of kHz (as sysfs takes it,
// optionally suffixed kHz) or a number with MHz or GHz, case-insensitive.
// The result must be a whole, positive number of kHz below 100 GHz.
func ParseKHz(v string) (int64, error) {
	num, mult := v, 1.0
	lower := strings.ToLower(v)
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"khz", 1}, {"mhz", 1e3}, {"ghz", 1e6}} {
		if strings.HasSuffix(lower, u.suffix) {
			num, mult = v[:len(v)-len(u.suffix)], u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || strings.ContainsAny(num, "eEpPxX_+-") || math.IsNaN(f) {
		return 0, errors.New("want a frequency: kHz, or a number with MHz or GHz")
	}
	khz := f * mult
	if khz <= 0 || khz >= 1e8 || khz != math.Trunc(khz) {
		return 0, errors.New("want a whole number of kHz between 1 kHz and 100 GHz")
	}
	return int64(khz), nil
}

// crossCheck checks settings against each other: min <= max for the same
// CPUs.
func crossCheck(ss []Setting) error {
	get := func(k Key) (int64, bool) {
		for _, s := range ss {
			if s.Key == k && s.CPUs == nil {
				n, err := strconv.ParseInt(s.Value, 10, 64)
				return n, err == nil
			}
		}
		return 0, false
	}
	for _, pair := range [][2]Key{{MinPerfPct, MaxPerfPct}, {ScalingMinFreq, ScalingMaxFreq}} {
		lo, ok1 := get(pair[0])
		hi, ok2 := get(pair[1])
		if ok1 && ok2 && lo > hi {
			return fmt.Errorf("%s=%d is above %s=%d", pair[0], lo, pair[1], hi)
		}
	}
	return nil
}

// clip shortens a profile for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// oneLine joins a multi-line message (YAML/TOML errors) into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
