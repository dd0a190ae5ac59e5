// SPDX-License-Identifier: Apache-2.0

// Package conform checks, on this machine, that the kernel and the
// hardware do what each cpufreq setting promises (`hwpprobe conform`,
// docs/conform.md): per profile and core type, what the kernel writes to
// the request registers (the rules matrix checks), what the cores deliver
// under a fixed load, and that no other writer changed the settings
// meanwhile. It applies each profile through profile's Switcher (journal,
// signals, restore as apply) and returns a verdict tree.
package conform

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// Config configures Run.
type Config struct {
	// Profiles are the profiles to check (docs/profiles.md); none:
	// DefaultProfiles for the machine.
	Profiles []string
	// Sources are the read-only sources (sysfs, MSRs, CPUID).
	Sources snapshot.Sources
	// Options are the Switcher's (journal directory).
	Options profile.Options
	// IgnoreDaemons runs although a power daemon runs.
	IgnoreDaemons bool
	// Exe is the hwpprobe binary whose `workload burn` is the fixed load
	// (os.Executable() of the running hwpprobe).
	Exe string
	// Warmup is how long the load runs before it is measured, Half each
	// of the two halves it is measured over (their difference is the
	// noise); zero: DefaultWarmup, DefaultHalf.
	Warmup, Half time.Duration
}

// The load's default timing: the emulator's closed loop sets the load
// every 100 ms, so the warm-up covers two of its intervals.
const (
	DefaultWarmup = 200 * time.Millisecond
	DefaultHalf   = 200 * time.Millisecond
)

// Run checks every profile and restores the settings (also on SIGINT,
// SIGTERM, SIGHUP, SIGQUIT or a panic). A machine without cpufreq or
// without MSR access, or a run without root, gives a plan of skipped
// cases with the reason. Errors: a malformed profile, a running daemon
// or a journal left from an earlier run (before any write), an interrupt,
// a restore that failed.
func Run(cfg Config) (cases []*verdict.Case, err error) {
	ps, err := parse(cfg.Profiles)
	if err != nil {
		return nil, err
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = DefaultWarmup
	}
	if cfg.Half == 0 {
		cfg.Half = DefaultHalf
	}
	m, why, err := precheck(cfg)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return skipAll(ps, why), nil
	}
	if len(ps) == 0 {
		names := DefaultProfiles(m)
		if ps, err = parse(names); err != nil {
			return nil, err
		}
	}
	if err := profile.CheckBeforeWrites(m, ps, cfg.IgnoreDaemons); err != nil {
		return nil, err
	}
	set, err := source.OpenCPUs(cfg.Sources.FS.Root(), cfg.Sources.FS, m.Online)
	if err != nil {
		return nil, fmt.Errorf("open the counters: %w", err)
	}
	defer set.Close()
	tr := openTrace(cfg.Sources.FS.Root())
	defer tr.close()

	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, cli.StopSignals...)()
	sw, err := profile.Begin(cfg.Options, "conform: "+names(ps))
	if err != nil {
		return nil, err
	}
	defer sw.RestoreOnReturn(&err)
	var results []*result
	for _, p := range ps {
		if sig := profile.Pending(sigs); sig != nil {
			return cases, fmt.Errorf("interrupted by %v", sig)
		}
		r, err := checkProfile(cfg, sw, m, set, tr, p)
		if err != nil {
			return cases, err
		}
		results = append(results, r)
		cases = append(cases, r.c)
	}
	if c := eppOrder(results); c != nil {
		cases = append(cases, c)
	}
	return cases, nil
}

func parse(specs []string) ([]*profile.Profile, error) {
	var ps []*profile.Profile
	for _, s := range specs {
		p, err := profile.Parse(s)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func names(ps []*profile.Profile) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, " ")
}

// precheck reads the machine and says why the whole plan is skipped, if
// it is: not root, no cpufreq, no MSR access.
func precheck(cfg Config) (*profile.Machine, string, error) {
	if cfg.Sources.EUID != 0 {
		return nil, "not root: conform writes sysfs settings and reads the MSRs", nil
	}
	m, err := profile.ReadMachine(cfg.Sources.FS)
	if err != nil {
		return nil, "", fmt.Errorf("read settings: %w", err)
	}
	if m.Driver == "" {
		return nil, profile.ErrNoCPUFreq.Error(), nil
	}
	if len(m.Online) == 0 {
		return nil, "no online CPU", nil
	}
	// The first online CPU tells whether the MSRs can be read: a
	// snapshot of every CPU costs seconds on a two-socket server (tens
	// of reads per CPU), and checkProfile reads them all anyway.
	s, err := snapshot.Build(cfg.Sources, strconv.Itoa(m.Online[0]))
	if err != nil {
		return nil, "", fmt.Errorf("read the registers: %w", err)
	}
	for _, c := range s.Capabilities {
		if c.Name == "msr" && !c.Available {
			return nil, "no MSR access: " + c.Detail, nil
		}
	}
	return m, "", nil
}

// skipAll is the plan of a machine conform cannot check: one skipped
// case per profile named (or one "conform" case without profiles).
func skipAll(ps []*profile.Profile, why string) []*verdict.Case {
	if len(ps) == 0 {
		return []*verdict.Case{verdict.Skipf("conform", "%s", why)}
	}
	out := make([]*verdict.Case, len(ps))
	for i, p := range ps {
		out[i] = verdict.Skipf(caseName(p), "%s", why)
	}
	return out
}

// caseName is a profile's case name: its text, without the characters a
// KTAP line cannot carry.
func caseName(p *profile.Profile) string {
	return strings.NewReplacer("#", "_", "\n", " ").Replace(p.String())
}

// DefaultProfiles are the profiles conform checks when none is named:
// performance, powersave with each EPP string the machine offers, turbo
// off (no_turbo, or boost=0), and a scaling_max_freq halfway between the
// highest minimum and the lowest maximum of the CPUs (rounded down to
// 100 MHz), each where the machine has the setting.
func DefaultProfiles(m *profile.Machine) []string {
	out := []string{"performance"}
	var lo, hi int64
	var epps []string
	for _, o := range m.Offers {
		if !o.HasCPUFreq {
			continue
		}
		if len(o.EPPs) > len(epps) {
			epps = o.EPPs
		}
		lo = max(lo, o.MinKHz)
		if hi == 0 || o.MaxKHz < hi {
			hi = o.MaxKHz
		}
	}
	for _, e := range []string{"performance", "balance_performance", "balance_power", "power"} {
		for _, have := range epps {
			if have == e {
				out = append(out, "powersave:epp="+e)
			}
		}
	}
	if _, ok := m.State.Globals[profile.NoTurbo]; ok {
		out = append(out, "powersave:no_turbo=1")
	} else if _, ok := m.State.Globals[profile.Boost]; ok {
		out = append(out, "powersave:boost=0")
	}
	if mid := (lo + hi) / 2 / 100000 * 100000; hi > lo && mid > lo {
		out = append(out, fmt.Sprintf("powersave:scaling_max_freq=%d", mid))
	}
	return out
}

// trace collects the register writes made while a load runs.
type trace struct {
	src ebpf.Source
	why string // why there is no trace
}

// settingNames names the registers whose writes mean a setting changed
// (regs.SettingAddresses): "IA32_HWP_REQUEST, IA32_ENERGY_PERF_BIAS or
// ...".
func settingNames() string {
	var names []string
	for _, a := range regs.SettingAddresses() {
		r, _ := regs.ByAddress(a)
		names = append(names, r.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func openTrace(root string) *trace {
	src, err := ebpf.OpenSources(root, ebpf.Options{MSRs: regs.SettingAddresses()})
	if err != nil {
		return &trace{why: fmt.Sprintf("no trace of the register writes: %v", err)}
	}
	return &trace{src: src}
}

func (t *trace) close() {
	if t.src != nil {
		t.src.Close()
	}
}
