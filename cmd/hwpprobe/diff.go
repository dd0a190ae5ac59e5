// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/actions/experiment"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload/buildlike"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

func init() { subcommands = append(subcommands, newDiffCmd) }

// exitCrossed is diff's exit status when a --fail-if threshold was
// crossed (docs/diff.md; experiment.Report chooses the others).
const exitCrossed = experiment.ExitCrossed

type diffOptions struct {
	alpha, confidence float64
	failIf            []string
	verdicts          verdictFlags // --format, -o; ktap and junit: the --fail-if verdicts
	keepDisturbed     bool
	// the experiment
	runs, cooldown, order, prepare, cpuSpec, traceMSRs string
	warmup, maxRuns, size                              int
	precision                                          float64
	seed                                               uint64
	interval                                           time.Duration
	force, dryRun, noTrace, allowDaemons, allowTwins   bool
	reference                                          string
	name                                               string // the command: diff or explain
}

// liveFlags are the flags that only an experiment run takes.
var liveFlags = []string{"runs", "max-runs", "precision", "warmup", "order", "seed", "prepare", "cooldown",
	"output", "force", "interval", "cpus", "trace-msrs", "no-trace", "dry-run", "size", "allow-daemons", "allow-twins"}

func newDiffCmd() *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff A B [C ...] [-- CMD] | diff EXPERIMENT | diff A.hwpr B.hwpr",
		Short: "Is B faster than A, by how much, how sure, and what did the hardware get under each",
		Long: `diff A B runs an experiment: CMD (or the built-in build-like job) under the
settings of profile A and of profile B, interleaved (warm-up runs, then ABBA),
recording every run into one experiment file; the settings are restored on
every way out. With 3 to 8 profiles the runs go in blocks holding each side
once (Williams Latin square order) and each side is compared with the first
(or --reference), p-values Holm-adjusted. diff FILE analyses an experiment
again, diff a.hwpr b.hwpr compares two recordings. The report: per side and core type the HWP request
and EPB the registers held and the kernel wrote, delivered MHz, power, energy
per run, temperatures, limit reasons, what differs, then the verdict with
benchstat's statistics and the ratio B/A with a distribution-free interval.
Exit status: 0 verdict within thresholds, 1 error, 2 bad input, 3 a --fail-if
threshold crossed, 4 a run failed, 5 restore failed, 128+N interrupted by
signal N. See docs/diff.md.`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.Profiles(machineGovernors, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd, o, args)
		},
	}
	o.name = "diff"
	f := cmd.Flags()
	addExperimentFlags(f, o, []cli.Format{cli.Text, cli.KTAP}, []cli.Format{cli.Markdown, cli.JSON, cli.HTML, cli.JUnit})
	o.verdicts.aliases(f)
	f.StringArrayVar(&o.failIf, "fail-if", nil, "exit 3 when e.g. 'B slower than A by 5%' (repeatable); --format ktap and -o junit=FILE write its verdicts")
	f.StringVar(&o.runs, "runs", "5", "measured runs per side, or auto (adaptive: --max-runs, --precision)")
	cli.IntVarP(f, &o.maxRuns, "max-runs", "", 20, 2, maxRunsPerSide, "--runs auto: at most this many runs per side")
	cli.FloatVar(f, &o.precision, "precision", analysis.DefaultPrecision, 1e-6, 0.99, "--runs auto: the ratio's relative half-width to settle for")
	f.StringVar(&o.reference, "reference", "", "with 3 or more sides: the side the others are compared with (A, B, ... or the profile as given; default the first)")
	f.BoolVar(&o.allowTwins, "allow-twins", false, "compare sides that leave the same request registers and EPB on every CPU (register twins)")
	return cmd
}

// addExperimentFlags adds the flags diff and explain share: the
// statistics, the reports, and the experiment's schedule, workload,
// sampling and safety; stdout and files are the formats it prints and
// writes besides the experiment file.
func addExperimentFlags(f *pflag.FlagSet, o *diffOptions, stdout, files []cli.Format) {
	cli.FloatVar(f, &o.alpha, "alpha", analysis.DefaultAlpha, 0, 1, "significance level of the U test, in (0, 1)")
	cli.FloatVar(f, &o.confidence, "confidence", analysis.DefaultConfidence, 0, 1, "level of the intervals, in (0, 1)")
	// The report's files: Markdown (for a bug tracker), JSON (schemas
	// report.Schema, report.SchemaN for more than two sides), one
	// self-contained HTML page with charts (docs/report.md).
	o.verdicts.out = cli.AddOutputs(f, cli.OutputSpec{Command: o.name, Stdout: stdout, Files: files, Main: "experiment file"},
		"the experiment file (default "+o.name+"-YYYYMMDD-HHMMSS.hwpr)")
	for _, a := range []cli.Format{cli.Markdown, cli.JSON, cli.HTML} {
		o.verdicts.out.FileAlias(f, string(a), a)
	}
	f.BoolVar(&o.keepDisturbed, "keep-disturbed", false, "count runs whose settings another writer changed")
	cli.IntVarP(f, &o.warmup, "warmup", "", 1, 0, maxRunsPerSide, "warm-up runs per side, not counted")
	f.StringVar(&o.order, "order", experiment.OrderABBA, "order of the measured runs: abba (Williams Latin square blocks) or random")
	f.Uint64Var(&o.seed, "seed", 1, "--order random: the seed")
	f.StringVar(&o.prepare, "prepare", "", "shell command before every run, untimed, as the invoking user")
	f.StringVar(&o.cooldown, "cooldown", "0s", "wait before every run: a duration, or auto (package temperature within 2 C of the start, at most 5m)")
	f.BoolVar(&o.force, "force", false, "overwrite the experiment file")
	cli.DurationVarP(f, &o.interval, "interval", "i", 100*time.Millisecond, minInterval, maxInterval, "sampling interval (10ms to 24h)")
	cli.CPUListVar(f, &o.cpuSpec, "CPUs to sample, e.g. 0-3,8 (default: every online CPU)")
	f.StringVar(&o.traceMSRs, "trace-msrs", tracefmt.FormatMSRs(tracefmt.DefaultMSRs), "MSRs whose kernel writes are traced")
	f.BoolVar(&o.noTrace, "no-trace", false, "do not trace the kernel's MSR writes")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the schedule and every setting write, change nothing")
	f.BoolVar(&o.allowDaemons, "allow-daemons", false, "run beside power daemons that also write these settings (thermald, tuned, ...); the report's context names them")
	cli.IntVarP(f, &o.size, "size", "", buildlike.DefaultSize, 0, maxBuildlikeSize, "work units of the built-in workload (when no CMD is given)")
}

// maxRunsPerSide bounds --max-runs and --warmup: far more runs than any
// experiment needs.
const maxRunsPerSide = 10000

func runDiff(cmd *cobra.Command, o *diffOptions, args []string) error {
	d, err := reportOptions(o)
	if err != nil {
		return err
	}
	if cmd.ArgsLenAtDash() < 0 && allFiles(args) {
		if len(args) > 2 {
			return cli.Usagef("diff: give one experiment or two recordings, not %d files", len(args))
		}
		return analyseFiles(cmd, o, args, d)
	}
	return runExperiment(cmd, o, args, d)
}

// reportOptions are the report's options from the flags, or a usage
// error.
func reportOptions(o *diffOptions) (report.DiffOptions, error) {
	if err := o.verdicts.out.Resolve(); err != nil {
		return report.DiffOptions{}, err
	}
	out := o.verdicts.out
	d := report.DiffOptions{KeepDisturbed: o.keepDisturbed, Markdown: out.File(cli.Markdown), JSON: out.File(cli.JSON), HTML: out.File(cli.HTML),
		Reference: o.reference, Stats: analysis.Options{Alpha: o.alpha, Confidence: o.confidence}, Info: report.Info{Version: version}}
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
func analyseFiles(cmd *cobra.Command, o *diffOptions, args []string, d report.DiffOptions) error {
	for _, name := range liveFlags {
		if name == "precision" && o.name == "explain" {
			continue // explain's equivalence margin, an analysis flag
		}
		if name == "output" && o.verdicts.out.Main == "" {
			continue // -o writes only reports
		}
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return cli.Usagef("%s: --%s runs an experiment; it does not apply to recordings given to analyse", o.name, name)
		}
	}
	d.Paths = args
	vout, err := openVerdicts(cmd, o, &d, args)
	if err != nil {
		return err
	}
	defer vout.Abort()
	if err := checkFiles(o.name, iocheck.Set{Inputs: args, Outputs: o.verdicts.out.IOCheck(), Streams: diffStreams}); err != nil {
		return err
	}
	return experiment.ReportError(o.name, report.Diff(o.verdicts.report(cmd), d))
}

// openVerdicts creates --junit's file, before anything changes, and sets
// d.Verdict to print the --fail-if verdicts as KTAP (--ktap) and write
// them to that file; inputs are the files the command reads.
func openVerdicts(cmd *cobra.Command, o *diffOptions, d *report.DiffOptions, inputs []string) (*verdict.Files, error) {
	out, err := o.verdicts.open(o.name, "--fail-if", len(o.failIf) > 0, inputs)
	if err != nil {
		return nil, err
	}
	if o.verdicts.on() {
		d.Verdict = func(c *verdict.Case) error { return o.verdicts.write(cmd, out, []*verdict.Case{c}) }
	}
	return out, nil
}

// diffStreams are what diff writes besides its files: the text report on
// standard output, progress and the runs' output on standard error.
var diffStreams = []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}

// allFiles reports whether every argument names a regular file.
func allFiles(args []string) bool {
	for _, p := range args {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// experimentConfig turns the flags into an experiment, or a usage error.
func experimentConfig(cmd *cobra.Command, o *diffOptions, args []string) (experiment.Config, error) {
	sides, command, err := experiment.SplitSides(args, cmd.ArgsLenAtDash())
	if err != nil {
		return experiment.Config{}, err
	}
	cfg := experiment.Config{Root: global.root, FS: sysfs.NewFS(global.root), Sides: sides,
		Command: command, Warmup: o.warmup, Order: o.order, Seed: o.seed, Prepare: o.prepare, Output: o.verdicts.out.Main,
		Force: o.force, Interval: o.interval, DryRun: o.dryRun, AllowDaemons: o.allowDaemons, AllowTwins: o.allowTwins, Version: version, CommandLine: os.Args,
		JournalDir: profile.JournalDir(), Stdin: os.Stdin, Stdout: cmd.ErrOrStderr(), Stderr: cmd.ErrOrStderr(),
		Progress: cmd.ErrOrStderr()}
	rule := analysis.StopRule{Alpha: o.alpha, Precision: o.precision, MaxRuns: o.maxRuns}
	if err := experiment.ParseRuns(o.name, o.runs, rule, cmd.Flags().Changed, &cfg); err != nil {
		return cfg, err
	}
	if err := experiment.ParseCooldown(o.name, o.cooldown, &cfg); err != nil {
		return cfg, err
	}
	if cmd.Flags().Changed("seed") && o.order != experiment.OrderRandom {
		return cfg, cli.Usagef("%s: --seed orders the runs of --order random only", o.name)
	}
	if err := experiment.CheckSides(sides, o.reference, len(o.failIf)); err != nil {
		return cfg, err
	}
	if cfg.CPUs, err = selectCPUs(global.root, o.cpuSpec); err != nil {
		return cfg, err
	}
	if cfg.MSRs, err = traceFilter(o.name, cmd.Flags(), o.noTrace, o.traceMSRs); err != nil {
		return cfg, err
	}
	if cfg.Cred, err = workload.SudoCredential(os.Getenv); err != nil {
		return cfg, cli.UsageError{Err: err}
	}
	err = experiment.Complete(o.name, o.size, cmd.Flags().Changed("size"), &cfg)
	return cfg, err
}

func runExperiment(cmd *cobra.Command, o *diffOptions, args []string, d report.DiffOptions) error {
	cfg, err := experimentConfig(cmd, o, args)
	if err != nil {
		return err
	}
	d.Reference = experiment.SideLabel(cfg.Sides, o.reference)
	return runConfigured(cmd, o, cfg, d, nil)
}

// runConfigured checks every file, then calls before (unless nil: it may
// change cfg, and end the command with done), runs the experiment and
// reports it.
func runConfigured(cmd *cobra.Command, o *diffOptions, cfg experiment.Config, d report.DiffOptions,
	before func(*experiment.Config) (done bool, err error)) error {
	// Every file is checked before the first setting changes: the
	// reports read the experiment file, so none may be it.
	vout, err := openVerdicts(cmd, o, &d, append(profileFiles(cfg.Sides), cfg.Output))
	if err != nil {
		return err
	}
	defer vout.Abort()
	files := iocheck.Set{Inputs: profileFiles(cfg.Sides), Streams: diffStreams,
		Outputs: append([]iocheck.Output{{Name: "-o", Path: cfg.Output}}, o.verdicts.out.IOCheck()...)}
	if err := checkFiles(o.name, files); err != nil {
		return err
	}
	if cfg.Cred != nil {
		d.Owner = &[2]int{int(cfg.Cred.UID), int(cfg.Cred.GID)}
		if err := vout.Chown(d.Owner[0], d.Owner[1]); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	if before != nil {
		done, err := before(&cfg)
		if err != nil || done {
			return experiment.Error(o.name, err)
		}
	}
	out, err := experiment.Run(cfg)
	switch {
	case err != nil:
		return experiment.Error(o.name, err)
	case cfg.DryRun:
		return nil
	}
	return experiment.Report(o.name, o.verdicts.report(cmd), cmd.ErrOrStderr(), cfg, out, d)
}
