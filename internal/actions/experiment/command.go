// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload/buildlike"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/recorder"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// Options are the command-line options of diff and explain
// (docs/diff.md, docs/explain.md): AddDiffFlags or AddExplainFlags
// registers them, Run runs the command.
type Options struct {
	// Root is the system root (--root), Version hwpprobe's version;
	// the command sets both before Run.
	Root, Version string

	name              string // the command: diff or explain
	alpha, confidence float64
	failIf            []string
	verdicts          cli.Verdicts // --format, -o; ktap and junit: the --fail-if verdicts
	keepDisturbed     bool
	// the experiment
	runs, cooldown, order, prepare, cpuSpec, traceMSRs string
	warmup, maxRuns, size                              int
	precision                                          float64
	seed                                               uint64
	interval                                           time.Duration
	force, dryRun, noTrace, allowDaemons, allowTwins   bool
	reference                                          string
}

// liveFlags are the flags that only an experiment run takes.
var liveFlags = []string{"runs", "max-runs", "precision", "warmup", "order", "seed", "prepare", "cooldown",
	"output", "force", "interval", "cpus", "trace-msrs", "no-trace", "dry-run", "size", "allow-daemons", "allow-twins"}

// maxRunsPerSide bounds --max-runs and --warmup: far more runs than any
// experiment needs.
const maxRunsPerSide = 10000

// AddDiffFlags makes o diff's options and registers its flags in f.
func (o *Options) AddDiffFlags(f *pflag.FlagSet) {
	o.name = "diff"
	o.addFlags(f, []cli.Format{cli.Text, cli.KTAP}, []cli.Format{cli.Markdown, cli.JSON, cli.HTML, cli.JUnit})
	o.verdicts.Aliases(f)
	f.StringArrayVar(&o.failIf, "fail-if", nil, "exit 3 when e.g. 'B slower than A by 5%' (repeatable); --format ktap and -o junit=FILE write its verdicts")
	f.StringVar(&o.runs, "runs", "5", "measured runs per side, or auto (adaptive: --max-runs, --precision)")
	cli.IntVarP(f, &o.maxRuns, "max-runs", "", 20, 2, maxRunsPerSide, "--runs auto: at most this many runs per side")
	cli.FloatVar(f, &o.precision, "precision", analysis.DefaultPrecision, 1e-6, 0.99, "--runs auto: the ratio's relative half-width to settle for")
	f.StringVar(&o.reference, "reference", "", "with 3 or more sides: the side the others are compared with (A, B, ... or the profile as given; default the first)")
	f.BoolVar(&o.allowTwins, "allow-twins", false, "compare sides that leave the same request registers and EPB on every CPU (register twins)")
}

// AddExplainFlags makes o explain's options and registers its flags in
// f.
func (o *Options) AddExplainFlags(f *pflag.FlagSet) {
	o.name = "explain"
	o.addFlags(f, []cli.Format{cli.Text}, []cli.Format{cli.Markdown, cli.JSON, cli.HTML})
	f.StringVar(&o.runs, "runs", "5", "measured runs per side")
	cli.FloatVar(f, &o.precision, "precision", analysis.DefaultExplainPrecision, 1e-6, 0.99, "a step whose ratio interval lies within ±precision is equivalent (no effect)")
}

// addFlags adds the flags diff and explain share: the statistics, the
// reports, and the experiment's schedule, workload, sampling and safety;
// stdout and files are the formats it prints and writes besides the
// experiment file.
func (o *Options) addFlags(f *pflag.FlagSet, stdout, files []cli.Format) {
	cli.FloatVar(f, &o.alpha, "alpha", analysis.DefaultAlpha, 0, 1, "significance level of the U test, in (0, 1)")
	cli.FloatVar(f, &o.confidence, "confidence", analysis.DefaultConfidence, 0, 1, "level of the intervals, in (0, 1)")
	// The report's files: Markdown (for a bug tracker), JSON (schemas
	// report.Schema, report.SchemaN for more than two sides), one
	// self-contained HTML page with charts (docs/report.md).
	o.verdicts.Out = cli.AddOutputs(f, cli.OutputSpec{Command: o.name, Stdout: stdout, Files: files, Main: "experiment file"},
		"the experiment file (default "+o.name+"-YYYYMMDD-HHMMSS.hwpr)")
	for _, a := range []cli.Format{cli.Markdown, cli.JSON, cli.HTML} {
		o.verdicts.Out.FileAlias(f, string(a), a)
	}
	f.BoolVar(&o.keepDisturbed, "keep-disturbed", false, "count runs whose settings another writer changed")
	cli.IntVarP(f, &o.warmup, "warmup", "", 1, 0, maxRunsPerSide, "warm-up runs per side, not counted")
	f.StringVar(&o.order, "order", OrderABBA, "order of the measured runs: abba (Williams Latin square blocks) or random")
	f.Uint64Var(&o.seed, "seed", 1, "--order random: the seed")
	f.StringVar(&o.prepare, "prepare", "", "shell command before every run, untimed, as the invoking user")
	f.StringVar(&o.cooldown, "cooldown", "0s", "wait before every run: a duration, or auto (package temperature within 2 C of the start, at most 5m)")
	f.BoolVar(&o.force, "force", false, "overwrite the experiment file")
	cli.DurationVarP(f, &o.interval, "interval", "i", 100*time.Millisecond, sampler.MinInterval, sampler.MaxInterval, "sampling interval (10ms to 24h)")
	cli.CPUListVar(f, &o.cpuSpec, "CPUs to sample, e.g. 0-3,8 (default: every online CPU)")
	f.StringVar(&o.traceMSRs, "trace-msrs", tracefmt.FormatMSRs(tracefmt.DefaultMSRs), "MSRs whose kernel writes are traced")
	f.BoolVar(&o.noTrace, "no-trace", false, "do not trace the kernel's MSR writes")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the schedule and every setting write, change nothing")
	f.BoolVar(&o.allowDaemons, "allow-daemons", false, "run beside power daemons that also write these settings (thermald, tuned, ...); the report's context names them")
	cli.IntVarP(f, &o.size, "size", "", buildlike.DefaultSize, 0, buildlike.MaxSize, "work units of the built-in workload (when no CMD is given)")
}

// Run runs diff or explain with args, cmd's arguments: an experiment of
// the profiles given (and CMD after --), or the report on an experiment
// file (diff: or two recordings) given again.
func (o *Options) Run(cmd *cobra.Command, args []string) error {
	d, err := o.reportOptions()
	if err != nil {
		return err
	}
	dash := cmd.ArgsLenAtDash()
	if o.name == "explain" {
		d.Explain, d.Precision = true, o.precision
	}
	if dash < 0 && allFiles(args) {
		switch {
		case o.name == "diff" && len(args) > 2:
			return cli.Usagef("diff: give one experiment or two recordings, not %d files", len(args))
		case o.name == "explain" && len(args) != 1:
			return cli.Usagef("explain: give one experiment of explain, not %d files", len(args))
		}
		return o.analyseFiles(cmd, args, d)
	}
	if o.name == "diff" {
		cfg, err := o.config(cmd, args)
		if err != nil {
			return err
		}
		d.Reference = SideLabel(cfg.Sides, o.reference)
		return o.runConfigured(cmd, cfg, d, nil)
	}
	sides := args
	if dash >= 0 {
		sides = args[:dash]
	}
	if len(sides) != 2 {
		return cli.Usagef("explain: want two profiles A B (or an experiment to analyse), got %d: %q", len(sides), sides)
	}
	if o.runs == "auto" {
		return cli.Usagef("explain: --runs auto compares two sides; give --runs N")
	}
	cfg, err := o.config(cmd, args)
	if err != nil {
		return err
	}
	return o.runConfigured(cmd, cfg, d, func(cfg *Config) (bool, error) {
		return PrepareExplain(cfg, cmd.OutOrStdout())
	})
}

// reportOptions are the report's options from the flags, or a usage
// error.
func (o *Options) reportOptions() (report.DiffOptions, error) {
	if err := o.verdicts.Out.Resolve(); err != nil {
		return report.DiffOptions{}, err
	}
	out := o.verdicts.Out
	d := report.DiffOptions{KeepDisturbed: o.keepDisturbed, Markdown: out.File(cli.Markdown), JSON: out.File(cli.JSON), HTML: out.File(cli.HTML),
		Reference: o.reference, Stats: analysis.Options{Alpha: o.alpha, Confidence: o.confidence}, Info: report.Info{Version: o.Version}}
	if o.alpha <= 0 || o.alpha >= 1 || o.confidence <= 0 || o.confidence >= 1 {
		return d, cli.Usagef("%s: --alpha and --confidence must be in (0, 1)", o.name)
	}
	for _, s := range o.failIf {
		t, err := analysis.ParseThreshold(s)
		if err != nil {
			return d, cli.UsageError{Err: err}
		}
		d.Thresholds = append(d.Thresholds, t)
	}
	return d, nil
}

// analyseFiles reports on an experiment file (or two recordings) again:
// no experiment flag applies.
func (o *Options) analyseFiles(cmd *cobra.Command, args []string, d report.DiffOptions) error {
	for _, name := range liveFlags {
		if name == "precision" && o.name == "explain" {
			continue // explain's equivalence margin, an analysis flag
		}
		if name == "output" && o.verdicts.Out.Main == "" {
			continue // -o writes only reports
		}
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return cli.Usagef("%s: --%s runs an experiment; it does not apply to recordings given to analyse", o.name, name)
		}
	}
	d.Paths = args
	vout, err := o.openVerdicts(cmd, &d, args, iocheck.Set{Inputs: args})
	if err != nil {
		return err
	}
	defer vout.Abort()
	return ReportError(o.name, report.Diff(o.verdicts.Report(cmd.OutOrStdout(), cmd.ErrOrStderr()), d))
}

// openVerdicts creates --junit's file, before anything changes, checks
// files with the verdicts' outputs added (cli.Verdicts.OpenChecked), and
// sets d.Verdict to print the --fail-if verdicts as KTAP (--ktap) and
// write them to that file; inputs are the files the command reads.
func (o *Options) openVerdicts(cmd *cobra.Command, d *report.DiffOptions, inputs []string, files iocheck.Set) (*verdict.Files, error) {
	out, err := o.verdicts.OpenChecked(o.name, "--fail-if", len(o.failIf) > 0, inputs, files)
	if err != nil {
		return nil, err
	}
	if o.verdicts.On() {
		d.Verdict = func(c *verdict.Case) error { return o.verdicts.Write(cmd.OutOrStdout(), out, []*verdict.Case{c}) }
	}
	return out, nil
}

// allFiles reports whether every argument names a regular file.
func allFiles(args []string) bool {
	for _, p := range args {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// config turns the flags into an experiment, or a usage error.
func (o *Options) config(cmd *cobra.Command, args []string) (Config, error) {
	sides, command, err := SplitSides(args, cmd.ArgsLenAtDash())
	if err != nil {
		return Config{}, err
	}
	cfg := Config{Root: o.Root, FS: sysfs.NewFS(o.Root), Sides: sides,
		Command: command, Warmup: o.warmup, Order: o.order, Seed: o.seed, Prepare: o.prepare, Output: o.verdicts.Out.Main,
		Force: o.force, Interval: o.interval, DryRun: o.dryRun, AllowDaemons: o.allowDaemons, AllowTwins: o.allowTwins, Version: o.Version, CommandLine: os.Args,
		JournalDir: profile.JournalDir(), Stdin: os.Stdin, Stdout: cmd.ErrOrStderr(), Stderr: cmd.ErrOrStderr(),
		Progress: cmd.ErrOrStderr()}
	rule := analysis.StopRule{Alpha: o.alpha, Precision: o.precision, MaxRuns: o.maxRuns}
	if err := ParseRuns(o.name, o.runs, rule, cmd.Flags().Changed, &cfg); err != nil {
		return cfg, err
	}
	if err := ParseCooldown(o.name, o.cooldown, &cfg); err != nil {
		return cfg, err
	}
	if cmd.Flags().Changed("seed") && o.order != OrderRandom {
		return cfg, cli.Usagef("%s: --seed orders the runs of --order random only", o.name)
	}
	if err := CheckSides(sides, o.reference, len(o.failIf)); err != nil {
		return cfg, err
	}
	if cfg.CPUs, err = cli.SelectCPUs(o.Root, o.cpuSpec); err != nil {
		return cfg, err
	}
	if cfg.MSRs, err = recorder.TraceFilter(o.name, cmd.Flags(), o.noTrace, o.traceMSRs); err != nil {
		return cfg, err
	}
	if cfg.Cred, err = workload.SudoCredential(os.Getenv); err != nil {
		return cfg, cli.UsageError{Err: err}
	}
	err = Complete(o.name, o.size, cmd.Flags().Changed("size"), &cfg)
	return cfg, err
}

// runConfigured checks every file, then calls before (unless nil: it may
// change cfg, and end the command with done), runs the experiment and
// reports it.
func (o *Options) runConfigured(cmd *cobra.Command, cfg Config, d report.DiffOptions,
	before func(*Config) (done bool, err error)) error {
	// Every file is checked before the first setting changes: the
	// reports read the experiment file, so none may be it.
	files := iocheck.Set{Inputs: profile.Files(cfg.Sides), Outputs: []iocheck.Output{{Name: "-o", Path: cfg.Output}}}
	vout, err := o.openVerdicts(cmd, &d, append(profile.Files(cfg.Sides), cfg.Output), files)
	if err != nil {
		return err
	}
	defer vout.Abort()
	if cfg.Cred != nil {
		d.Owner = &[2]int{int(cfg.Cred.UID), int(cfg.Cred.GID)}
		if err := vout.Chown(d.Owner[0], d.Owner[1]); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	if before != nil {
		done, err := before(&cfg)
		if err != nil || done {
			return Error(o.name, err)
		}
	}
	out, err := Run(cfg)
	switch {
	case err != nil:
		return Error(o.name, err)
	case cfg.DryRun:
		return nil
	}
	return Report(o.name, o.verdicts.Report(cmd.OutOrStdout(), cmd.ErrOrStderr()), cmd.ErrOrStderr(), cfg, out, d)
}
