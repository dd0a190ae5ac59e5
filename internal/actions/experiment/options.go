// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload/buildlike"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
)

// The command-line options of diff and explain that an experiment's
// Config is made of, checked here so that the commands only wire
// (docs/diff.md, docs/explain.md). name is the command in messages;
// every error is a cli.UsageError.

// Exit statuses of diff and explain beyond cli's (docs/diff.md).
const (
	ExitCrossed       = 3 // a --fail-if threshold was crossed
	ExitRunFailed     = 4 // a run's command (or --prepare) failed
	ExitRestoreFailed = 5 // settings did not return
)

// ParseRuns sets cfg's runs from --runs ("auto" or a number); under
// auto, rule is the stop rule; changed reports whether a flag was given
// (--max-runs and --precision go with auto only).
func ParseRuns(name, runs string, rule analysis.StopRule, changed func(string) bool, cfg *Config) error {
	if runs == "auto" {
		cfg.Auto, cfg.Rule = true, rule
		return nil
	}
	n, err := strconv.Atoi(runs)
	if err != nil || n < 1 {
		return cli.Usagef("%s: --runs %q: a number of runs per side, at least 1, or auto", name, runs)
	}
	for _, flag := range []string{"max-runs", "precision"} {
		if changed(flag) {
			return cli.Usagef("%s: --%s goes with --runs auto, not --runs %d", name, flag, n)
		}
	}
	cfg.Runs = n
	return nil
}

// MaxAutoCooldown bounds --cooldown auto.
const MaxAutoCooldown = 5 * time.Minute

// ParseCooldown sets cfg's cooldown from --cooldown: a duration or auto.
func ParseCooldown(name, s string, cfg *Config) error {
	if s == "auto" {
		cfg.Cooldown, cfg.CooldownAuto = MaxAutoCooldown, true
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return cli.Usagef("%s: --cooldown %q: a duration (30s) or auto", name, s)
	}
	cfg.Cooldown = d
	return nil
}

// CheckSides checks the options that depend on the number of sides:
// --reference names one of 3 or more, --fail-if (failIf thresholds)
// takes two.
func CheckSides(sides []string, reference string, failIf int) error {
	n := len(sides)
	switch {
	case reference != "" && n == 2:
		return cli.Usagef("diff: --reference chooses among 3 or more sides; there are 2")
	case reference != "" && SideLabel(sides, reference) == "":
		return cli.Usagef("diff: --reference %q: not a side (A to %c, or one of the profiles as given)", reference, 'A'+n-1)
	case n > 2 && failIf > 0:
		return cli.Usagef("diff: --fail-if compares two sides; there are %d", n)
	}
	return nil
}

// SideLabel is the label (A, B, ...) of the side ref names, by its label
// or its profile as given; "" when ref is "" or names none.
func SideLabel(sides []string, ref string) string {
	for i, s := range sides {
		if l := string(rune('A' + i)); ref == l || ref == s {
			return l
		}
	}
	return ""
}

// Error is an experiment's error with the command's name: a usage error
// when it is bad input found before any change.
func Error(name string, err error) error {
	if err == nil {
		return nil
	}
	for _, e := range []error{ErrConfig, profile.ErrSyntax, profile.ErrRefused, profile.ErrNoCPUFreq,
		profile.ErrNotRoot, profile.ErrJournalExists, profile.ErrLocked, profile.ErrDaemon} {
		if errors.Is(err, e) {
			return cli.UsageError{Err: fmt.Errorf("%s: %w", name, err)}
		}
	}
	return fmt.Errorf("%s: %w", name, err)
}

// ReportError maps report.Diff's errors to exit statuses; name is the
// command (diff, explain).
func ReportError(name string, err error) error {
	var in report.InputError
	switch {
	case errors.Is(err, report.ErrCrossed):
		return cli.ExitCodeError{Code: ExitCrossed, Err: err}
	case errors.As(err, &in):
		return cli.UsageError{Err: fmt.Errorf("%s: %w", name, in.Err)}
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Report reports the experiment's complete runs (report.Diff of
// cfg.Output to stdout, with d) and chooses the exit status: restore
// failure first, then a signal, a failed run, the thresholds.
func Report(name string, stdout, stderr io.Writer, cfg Config, out *Outcome, d report.DiffOptions) error {
	var rerr error
	if out.Complete > 0 || out.Signal == 0 {
		d.Paths = []string{cfg.Output}
		rerr = ReportError(name, report.Diff(stdout, d))
	}
	cli.Linef(stderr, "hwpprobe", "%d measured runs complete in %s", out.Complete, cfg.Output)
	switch {
	case out.RestoreErr != nil:
		return cli.ExitCodeError{Code: ExitRestoreFailed, Err: fmt.Errorf("%s: restore: %w; run `hwpprobe restore`", name, out.RestoreErr)}
	case out.Signal != 0:
		return cli.ExitCodeError{Code: 128 + int(out.Signal), Err: fmt.Errorf("%s: interrupted by %v after %d complete runs; settings restored, %s is readable",
			name, out.Signal, out.Complete, cfg.Output)}
	case out.Failed != "":
		return cli.ExitCodeError{Code: ExitRunFailed, Err: fmt.Errorf("%s: %s failed with status %d; the experiment stopped, settings restored",
			name, out.Failed, out.FailedCode)}
	case out.WriteErr != nil:
		return fmt.Errorf("%s: the experiment file is incomplete: %w", name, out.WriteErr)
	}
	return rerr
}

// SplitSides splits diff's arguments at dash (cobra's ArgsLenAtDash, -1
// for none) into the sides (2 to MaxSides profiles) and the command.
func SplitSides(args []string, dash int) (sides, command []string, err error) {
	sides = args
	if dash >= 0 {
		sides, command = args[:dash], args[dash:]
	}
	if len(sides) < 2 || len(sides) > MaxSides {
		return nil, nil, cli.Usagef("diff: want 2 to %d profiles A B ... (or recordings to analyse), got %d: %q",
			MaxSides, len(sides), sides)
	}
	return sides, command, nil
}

// Complete fills what cfg's options leave to defaults: the experiment
// file (name-YYYYMMDD-HHMMSS.hwpr), the working directory, and without a
// command the built-in workload of size units, run by this binary
// (sizeSet: --size was given, which a command does not take).
func Complete(name string, size int, sizeSet bool, cfg *Config) error {
	var err error
	if cfg.Dir, err = os.Getwd(); err != nil {
		cfg.Dir = ""
	}
	if cfg.Output == "" {
		cfg.Output = name + "-" + time.Now().Format("20060102-150405") + ".hwpr"
	}
	if len(cfg.Command) > 0 {
		if sizeSet {
			return cli.Usagef("%s: --size sizes the built-in workload; it does not apply to a CMD", name)
		}
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("%s: find hwpprobe's binary for the built-in workload: %w", name, err)
	}
	bc := buildlike.Config{Size: size, Jobs: buildlike.DefaultJobs(cfg.Root)}
	if cfg.Command, err = buildlike.Command(exe, bc); err != nil {
		return cli.UsageError{Err: err}
	}
	plan, _ := buildlike.NewPlan(bc)
	cfg.Builtin = plan.String()
	return nil
}
