// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/recorder"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/msr"
)

// errStop ends the schedule early: a signal, a failed run, a write error
// (the Outcome says which).
var errStop = errors.New("experiment stopped")

// runner is one experiment under way.
type runner struct {
	cfg      Config
	ps       []*profile.Profile
	sw       *profile.Switcher
	sigs     chan os.Signal
	w        *recording.Writer
	setup    *recorder.Setup
	out      *Outcome
	prog     *progress
	id       int         // runs started
	times    [][]float64 // measured seconds per side
	baseTemp float64     // package temperature at the start; NaN unknown
	checker  *checker
	// refs are what each side's settings left when last applied.
	refs []*reference
}

func run(cfg Config, ps []*profile.Profile, m *profile.Machine, rctx *recording.Context, sw *profile.Switcher, sigs chan os.Signal, prog *progress, out *Outcome) error {
	meta := recording.Meta{Tool: "hwpprobe", ToolVersion: cfg.Version, Kind: "diff", CommandLine: cfg.CommandLine,
		TimeNs: time.Now().UnixNano(), IntervalNs: int64(cfg.Interval), CPUs: cfg.CPUs.String(),
		Host: recorder.Host(cfg.FS), Emulated: cfg.FS.Emulated(), Context: rctx, Explain: cfg.Explain}
	for i, p := range ps {
		meta.Sides = append(meta.Sides, recording.Side{Label: label(i), Settings: sideSettings(p)})
	}
	f, err := recorder.CreateOutput(cfg.Output, cfg.Force, cfg.Cred, meta)
	if errors.Is(err, recorder.ErrExists) {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err != nil {
		return err
	}
	defer f.Abort()
	w := f.W
	if cfg.Builtin != "" {
		w.Write(recording.Note{TimeNs: time.Now().UnixNano(), Text: "workload: " + cfg.Builtin})
	}
	setup := recorder.OpenSetup(recorder.SetupOptions{Root: cfg.Root, FS: cfg.FS, CPUs: cfg.CPUs, MSRs: cfg.MSRs, Warn: cfg.Progress}, w)
	defer setup.Close()
	dev := msr.Open(cfg.Root)
	defer dev.Close()
	r := &runner{cfg: cfg, ps: ps, sw: sw, sigs: sigs, w: w, setup: setup, out: out, prog: prog,
		times: make([][]float64, len(ps)), refs: make([]*reference, len(ps)),
		checker: &checker{fs: cfg.FS, cpus: cfg.CPUs, dev: dev, driver: m.Driver}}
	r.baseTemp = r.packageTemp()
	err = r.schedule()
	status := recording.StatusComplete
	switch {
	case out.Signal != 0:
		status = recording.StatusInterrupted
	case err != nil && !errors.Is(err, errStop), out.Failed != "", out.WriteErr != nil:
		status = recording.StatusFailed
	}
	if out.WriteErr == nil {
		if cerr := w.Close(recording.End{TimeNs: time.Now().UnixNano(), Status: status, Stopping: out.Stopping}); cerr != nil {
			out.WriteErr = cerr
		}
	}
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// schedule runs the fixed schedule, or the adaptive one.
func (r *runner) schedule() error {
	if !r.cfg.Auto {
		for _, s := range Schedule(len(r.ps), r.cfg.Warmup, r.cfg.Runs, r.cfg.Order, r.cfg.Seed) {
			if err := r.one(s); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range Schedule(2, r.cfg.Warmup, 0, OrderABBA, 0) {
		if err := r.one(s); err != nil {
			return err
		}
	}
	for pairs := 0; ; pairs++ {
		for _, s := range pairSlots(pairs) {
			if err := r.one(s); err != nil {
				return err
			}
		}
		d, err := r.cfg.Rule.Decide(r.times[0], r.times[1])
		if err != nil {
			return err
		}
		if r.out.Stopping == nil {
			r.out.Stopping = r.cfg.Rule.Record()
		}
		analysis.AddLook(r.out.Stopping, d)
		if d.Stop {
			r.out.Stop = &d
			fmt.Fprintf(r.cfg.Progress, "hwpprobe: stopping after %d+%d runs: %s\n", d.N, d.N, d.Verdict)
			return nil
		}
	}
}

// interrupted reports a signal received between runs.
func (r *runner) interrupted() bool {
	select {
	case s := <-r.sigs:
		r.out.Signal = toSignal(s)
		return true
	default:
		return false
	}
}

// one makes one run: the side's settings, prepare, cool-down, the check
// that the settings still hold, the recorded run.
func (r *runner) one(s Slot) error {
	if r.interrupted() {
		return errStop
	}
	r.id++
	r.prog.begin(r.id, s)
	held, err := r.apply(s.Side)
	if err != nil {
		return err
	}
	if err := r.prepare(); err != nil {
		return err
	}
	if err := r.cooldown(); err != nil {
		return err
	}
	if r.cfg.Prepare != "" || r.cfg.Cooldown > 0 {
		held = r.checker.check(r.refs[s.Side]) // --prepare or the wait may have changed them
	}
	cfg := r.setup.Config(recorder.Config{W: r.w,
		Run: recording.RunStart{Run: r.id, Side: label(s.Side), Warmup: s.Warmup, Settings: sideSettings(r.ps[s.Side]),
			Observed: recorder.Observed(r.cfg.FS, r.cfg.CPUs), Held: &held, Command: r.cfg.Command, Dir: r.cfg.Dir},
		Spec: workload.Spec{Argv: r.cfg.Command, Cred: r.cfg.Cred, Dir: r.cfg.Dir,
			Stdin: r.cfg.Stdin, Stdout: r.cfg.Stdout, Stderr: r.cfg.Stderr},
		Interval: r.cfg.Interval, Counters: counters(), Signals: r.sigs, Warn: r.cfg.Progress})
	r.prog.running()
	res := recorder.Run(cfg)
	secs := float64(res.End.TimeNs-res.Start.TimeNs) / 1e9
	r.prog.end(secs, res.End.ExitCode)
	switch {
	case res.WriteErr != nil:
		r.out.WriteErr = res.WriteErr
		return errStop
	case res.End.Interrupted:
		r.out.Signal = res.Forwarded
		return errStop
	case res.End.ExitCode != 0:
		r.out.Failed = fmt.Sprintf("run %d (%s)", r.id, label(s.Side))
		r.out.FailedCode = res.End.ExitCode
		return errStop
	}
	if !s.Warmup {
		r.out.Complete++
		r.times[s.Side] = append(r.times[s.Side], secs)
	}
	return nil
}

// apply switches to the side's settings when another side's are applied,
// or applies them again when they no longer hold what they left (a run's
// command or --prepare changed them), and reads what they left: the
// reference the check before the run compares with. It returns the check
// of the settings it made: what it read, which holds. A side is a profile
// applied to the original settings: when the side applied before set
// something this one does not (min_perf_pct=100 before plain powersave),
// the original settings are written back first (Switcher.Revert), as
// matrix applies each profile from them.
func (r *runner) apply(side int) (recording.Held, error) {
	p := r.ps[side]
	if r.sw.Applied == p {
		if h := r.checker.check(r.refs[side]); len(h.Unheld) == 0 {
			return h, nil
		}
	}
	if leftover(r.sw.Applied, p) {
		res, err := r.sw.Revert()
		if err == nil && len(res.Failed) > 0 {
			err = errors.Join(res.Failed...)
		}
		if err != nil {
			return recording.Held{}, fmt.Errorf("revert to the original settings before side %s: %w", label(side), err)
		}
	}
	plan, err := r.sw.Apply(p)
	if err != nil {
		return recording.Held{}, fmt.Errorf("apply side %s: %w", label(side), err)
	}
	var h recording.Held
	r.refs[side], h = r.checker.reference(plan)
	return h, nil
}

// prepare runs --prepare as the workload's user, untimed.
func (r *runner) prepare() error {
	if r.cfg.Prepare == "" {
		return nil
	}
	r.prog.setPhase("prepare")
	proc, err := workload.Start(workload.Spec{Argv: []string{"/bin/sh", "-c", r.cfg.Prepare}, Cred: r.cfg.Cred,
		Dir: r.cfg.Dir, Stdin: r.cfg.Stdin, Stdout: r.cfg.Stdout, Stderr: r.cfg.Stderr}, nil)
	if err != nil {
		r.out.Failed, r.out.FailedCode = fmt.Sprintf("--prepare before run %d", r.id), workload.ExitStatus(err)
		return errStop
	}
	res := proc.Wait(r.sigs)
	switch {
	case res.Interrupted:
		r.out.Signal = res.Forwarded
		return errStop
	case res.ExitCode != 0:
		r.out.Failed, r.out.FailedCode = fmt.Sprintf("--prepare before run %d", r.id), res.ExitCode
		return errStop
	}
	return nil
}

// AutoCooldownMargin is how close to its starting temperature the package
// must be before a run with --cooldown auto.
const AutoCooldownMargin = 2.0

// cooldown waits --cooldown, or with auto until the package temperature
// is within AutoCooldownMargin of the experiment's start (at most
// --cooldown), checking once a second; a signal ends the wait.
func (r *runner) cooldown() error {
	if r.cfg.Cooldown <= 0 {
		return nil
	}
	r.prog.setPhase("cool-down")
	deadline := time.Now().Add(r.cfg.Cooldown)
	for time.Now().Before(deadline) {
		if r.cfg.CooldownAuto {
			if t := r.packageTemp(); math.IsNaN(t) || math.IsNaN(r.baseTemp) || t <= r.baseTemp+AutoCooldownMargin {
				return nil // cool enough, or no temperature to wait for
			}
		}
		step := min(time.Second, time.Until(deadline))
		select {
		case s := <-r.sigs:
			r.out.Signal = toSignal(s)
			return errStop
		case <-time.After(step):
		}
	}
	return nil
}

// packageTemp reads the hottest package's temperature over a short
// interval; NaN when it cannot be read.
func (r *runner) packageTemp() float64 {
	set := r.setup.Sources()
	if set == nil {
		return nan()
	}
	smp, err := sampler.New(set)
	if err != nil {
		return nan()
	}
	time.Sleep(50 * time.Millisecond)
	var s sampler.Sample
	if err := smp.Sample(&s); err != nil {
		return nan()
	}
	t := nan()
	for _, p := range s.Packages {
		if p.PkgTmp.OK() && (math.IsNaN(t) || p.PkgTmp.V > t) {
			t = p.PkgTmp.V
		}
	}
	return t
}

// leftover reports whether applying next over prev would leave some of
// prev's settings in place: prev sets a key (on all CPUs or a subset)
// that next does not, or either is not a set of sysfs settings (a
// daemon's profile, or current: the original settings).
func leftover(prev, next *profile.Profile) bool {
	if prev == nil || prev == next {
		return false
	}
	if prev.Kind != profile.Sysfs || next.Kind != profile.Sysfs {
		return true
	}
	for _, s := range prev.Settings {
		if !slices.ContainsFunc(next.Settings, func(n profile.Setting) bool { return n.Key == s.Key && n.CPUs.String() == s.CPUs.String() }) {
			return true
		}
	}
	return false
}
