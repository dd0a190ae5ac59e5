// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/runctx"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
	"github.com/hwpprobe/hwpprobe/perfcount"
)

// ErrConfig is wrapped by every error about the experiment's input that is
// found before anything changes: the system is untouched.
var ErrConfig = errors.New("bad experiment")

// Config is an experiment.
type Config struct {
	Root string
	FS   sysfs.FS
	CPUs cpus.List // sampled and traced
	// Sides are the profiles, 2 to MaxSides (package profile's syntax).
	Sides []string
	// Command is the workload; Builtin describes it in the file when it
	// is the built-in one.
	Command []string
	Builtin string
	Warmup  int
	Runs    int // measured runs per side (Auto: unused)
	Auto    bool
	Rule    analysis.StopRule // Auto: the stopping rule
	Order   string            // OrderABBA or OrderRandom
	Seed    uint64
	Prepare string // shell command before every run, untimed; "" none
	// Cooldown waits this long before every run; with CooldownAuto it is
	// the bound of the wait for the package temperature.
	Cooldown     time.Duration
	CooldownAuto bool
	Output       string
	Force        bool
	Interval     time.Duration
	MSRs         []uint32 // traced registers
	DryRun       bool
	// Explain, when set, is recorded in the file's meta: the experiment
	// is hwpprobe explain's chain of sides.
	Explain *recording.Explain
	// AllowDaemons runs beside power daemons that also write the
	// settings (profile.Daemons); without it Run refuses, naming one.
	AllowDaemons bool
	// AllowTwins runs sides that are register twins (Probe: the same
	// request registers and EPB on every CPU); without it Run refuses.
	AllowTwins  bool
	Cred        *workload.Credential
	JournalDir  string // "": profile.JournalDir()
	Version     string
	CommandLine []string
	Dir         string // the workload's working directory
	Stdin       io.Reader
	Stdout      io.Writer // the workload's and prepare's streams
	Stderr      io.Writer
	Progress    io.Writer // one line per run, the schedule, the restore
}

// Outcome is how an experiment ended.
type Outcome struct {
	Complete int // measured runs that ended
	// Signal is the signal that stopped the experiment, 0 if none.
	Signal syscall.Signal
	// Failed names the run whose command failed (the experiment stopped
	// there); FailedCode is its status.
	Failed     string
	FailedCode int
	Stop       *analysis.Decision // Auto: the last look
	// Stopping is the stopping rule's account (Auto), written in the
	// file's end record.
	Stopping   *recording.Stopping
	RestoreErr error
	WriteErr   error
}

// Run runs the experiment. Errors wrapping ErrConfig, profile.ErrSyntax,
// profile.ErrRefused, profile.ErrNoCPUFreq, profile.ErrJournalExists,
// profile.ErrDaemon or profile.ErrNotRoot leave the settings as they were:
// they come before any change, except the refusal of register twins,
// which comes after each side was applied once and every setting
// restored (Probe).
func Run(cfg Config) (*Outcome, error) {
	profiles, m, err := check(cfg)
	if err != nil {
		return nil, err
	}
	rctx, err := readContext(cfg, profiles)
	if err != nil {
		return nil, err
	}
	if cfg.DryRun {
		return &Outcome{}, dryRun(cfg, profiles, m)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: diff writes sysfs settings; run it as root (sudo hwpprobe diff ...), or add --dry-run", profile.ErrNotRoot)
	}
	if !cfg.AllowTwins {
		if err := checkTwins(cfg); err != nil {
			return nil, err
		}
	}
	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, cli.StopSignals...)()
	sw, err := profile.Begin(profile.Options{FS: cfg.FS, JournalDir: cfg.JournalDir}, profiles[0].Text)
	if err != nil {
		return nil, err
	}
	out := &Outcome{}
	defer sw.RestoreOnPanic()
	prog := newProgress(cfg.Progress, planned(cfg), cfg.Auto, fixedCooldown(cfg))
	report := cfg.Progress
	cfg.Progress, cfg.Stdout, cfg.Stderr = prog, prog.output(cfg.Stdout), prog.output(cfg.Stderr)
	err = run(cfg, profiles, m, rctx, sw, sigs, prog, out)
	prog.close()
	res, rerr := sw.Restore()
	profile.WriteRestore(report, res)
	out.RestoreErr = rerr
	return out, err
}

// planned is the number of runs in the schedule; with Auto, the most
// there can be.
func planned(cfg Config) int {
	if cfg.Auto {
		return 2 * (cfg.Warmup + cfg.Rule.MaxRuns)
	}
	return len(Schedule(len(cfg.Sides), cfg.Warmup, cfg.Runs, cfg.Order, cfg.Seed))
}

// fixedCooldown is the wait before each run that the ETA assumes until one
// has been measured: --cooldown D; 0 for auto, which may not wait at all.
func fixedCooldown(cfg Config) time.Duration {
	if cfg.CooldownAuto {
		return 0
	}
	return cfg.Cooldown
}

// check validates everything that can be checked before a change: the
// options, the profiles against the machine, the command.
func check(cfg Config) ([]*profile.Profile, *profile.Machine, error) {
	var ps []*profile.Profile
	switch {
	case len(cfg.Sides) < 2 || len(cfg.Sides) > MaxSides:
		return ps, nil, fmt.Errorf("%w: %d profiles: give 2 to %d", ErrConfig, len(cfg.Sides), MaxSides)
	case cfg.Auto && len(cfg.Sides) > 2:
		return ps, nil, fmt.Errorf("%w: --runs auto compares two sides; give --runs N for %d", ErrConfig, len(cfg.Sides))
	case !cfg.Auto && cfg.Runs < 1:
		return ps, nil, fmt.Errorf("%w: --runs %d: at least 1 run per side", ErrConfig, cfg.Runs)
	case cfg.Warmup < 0:
		return ps, nil, fmt.Errorf("%w: --warmup %d is negative", ErrConfig, cfg.Warmup)
	case cfg.Order != OrderABBA && cfg.Order != OrderRandom:
		return ps, nil, fmt.Errorf("%w: --order %q: abba or random", ErrConfig, cfg.Order)
	case cfg.Auto && cfg.Order == OrderRandom:
		return ps, nil, fmt.Errorf("%w: --runs auto interleaves ABBA blocks; it does not take --order random", ErrConfig)
	case cfg.Cooldown < 0:
		return ps, nil, fmt.Errorf("%w: --cooldown %v is negative", ErrConfig, cfg.Cooldown)
	}
	if cfg.Auto {
		if err := cfg.Rule.Check(); err != nil {
			return ps, nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	seen := map[string]int{}
	for i, s := range cfg.Sides {
		p, err := profile.Parse(s)
		if err != nil {
			return ps, nil, err
		}
		if j, ok := seen[p.String()]; ok && !cfg.AllowTwins {
			return ps, nil, fmt.Errorf("%w: sides %s and %s are the same profile %s (--allow-twins runs a side against itself)", ErrConfig, label(j), label(i), p)
		}
		seen[p.String()] = i
		ps = append(ps, p)
	}
	m, err := profile.ReadMachine(cfg.FS)
	if err != nil {
		return ps, nil, fmt.Errorf("read settings: %w", err)
	}
	for i, p := range ps {
		if _, err := m.Plan(p); err != nil {
			return ps, nil, fmt.Errorf("side %s: %w", label(i), err)
		}
	}
	if len(cfg.Command) == 0 {
		return ps, nil, fmt.Errorf("%w: no command", ErrConfig)
	}
	if _, err := exec.LookPath(cfg.Command[0]); err != nil {
		return ps, nil, fmt.Errorf("%w: command %q not found", ErrConfig, cfg.Command[0])
	}
	if cfg.Output == "" {
		return ps, nil, fmt.Errorf("%w: no output file", ErrConfig)
	}
	if _, err := os.Stat(cfg.Output); err == nil && !cfg.Force {
		return ps, nil, fmt.Errorf("%w: %s exists (use --force to overwrite it)", ErrConfig, cfg.Output)
	}
	return ps, m, nil
}

func dryRun(cfg Config, ps []*profile.Profile, m *profile.Machine) error {
	w := cfg.Progress
	if cfg.Auto {
		fmt.Fprintf(w, "dry run: %d warm-up runs a side, then ABBA blocks until the verdict is settled, at most %d runs a side\n",
			cfg.Warmup, cfg.Rule.MaxRuns)
	} else {
		fmt.Fprintf(w, "dry run: schedule %s\n", String(Schedule(len(ps), cfg.Warmup, cfg.Runs, cfg.Order, cfg.Seed)))
	}
	fmt.Fprintf(w, "command: %q", cfg.Command)
	if cfg.Builtin != "" {
		fmt.Fprintf(w, " (%s)", cfg.Builtin)
	}
	fmt.Fprintln(w)
	if cfg.Prepare != "" {
		fmt.Fprintf(w, "before every run, untimed: sh -c %q\n", cfg.Prepare)
	}
	for i, p := range ps {
		plan, err := m.Plan(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "side %s: %s: %d writes:\n", label(i), p, len(plan.Writes))
		for _, wr := range plan.Writes {
			fmt.Fprintf(w, "  %s\n", wr)
		}
	}
	fmt.Fprintf(w, "every setting is restored at the end; recording to %s\n", cfg.Output)
	return nil
}

// readContext reads the run context recorded in the file's meta and,
// unless cfg.AllowDaemons, refuses when a power daemon runs that writes
// what a side sets (one a tuned: or ppd: side switches itself excepted).
func readContext(cfg Config, ps []*profile.Profile) (*recording.Context, error) {
	c, running := runctx.Read(cfg.FS, cfg.Version)
	if !cfg.AllowDaemons {
		for _, p := range ps {
			if err := profile.CheckDaemons(running, p, "--allow-daemons"); err != nil {
				return nil, err
			}
		}
	}
	return &c, nil
}

// sideSettings is a profile as recorded settings.
func sideSettings(p *profile.Profile) []recording.Setting {
	switch p.Kind {
	case profile.Tuned:
		return []recording.Setting{{Name: "tuned", Value: p.Name}}
	case profile.PPD:
		return []recording.Setting{{Name: "ppd", Value: p.Name}}
	case profile.Current:
		return []recording.Setting{{Name: "profile", Value: "current"}}
	}
	var out []recording.Setting
	for _, s := range p.Settings {
		name := string(s.Key)
		if s.CPUs != nil {
			name += "@" + s.CPUs.String()
		}
		out = append(out, recording.Setting{Name: name, Value: s.Value})
	}
	return out
}

// counters are the process counters of each run.
var counters = perfcount.ProcessEvents

func toSignal(s os.Signal) syscall.Signal {
	if sig, ok := s.(syscall.Signal); ok {
		return sig
	}
	return syscall.SIGINT
}

func nan() float64 { return math.NaN() }
