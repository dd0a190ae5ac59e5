// SPDX-License-Identifier: Apache-2.0

// Package tracerun is one `hwpprobe trace` run: it opens the eBPF tracer,
// runs the traced command through package workload (as the invoking user
// under sudo, in its own process group, with hwpprobe's signals forwarded),
// streams the decoded events until the command exits, the duration is up
// or a signal arrives, then writes the summary; and it says how hwpprobe
// should exit, by record's rules.
package tracerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// DefaultGrace is how long a command ended at the duration has between
// SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// Config is one trace run.
type Config struct {
	// Tracer holds the in-kernel filters: MSRs, CPUs, tracepoints,
	// count-only.
	Tracer ebpf.Options
	// Duration ends the trace (and a command still running, which is
	// then sent SIGTERM, and SIGKILL after Grace); 0: no limit.
	Duration time.Duration
	Grace    time.Duration // 0: DefaultGrace
	// Command is the traced command; nil traces until Duration or a
	// signal.
	Command *workload.Spec
	// Signals are the signals hwpprobe receives: without a command the
	// first one ends the trace; with one they are forwarded to its
	// process group and the trace ends when it exits. nil: Run catches the
	// stop signals (cli.StopSignals) itself.
	Signals <-chan os.Signal
	JSON    bool
	Out     io.Writer // events and summary
	Stderr  io.Writer // what is traced, notes and warnings
	// Root is where the machine's files are ("/"): on an emulated machine
	// (hwpemu) its model's register writes are traced too, from its write
	// log below Root (ebpf.OpenSources), labelled emulated.
	Root string
}

// Result is how a trace run ended.
type Result struct {
	// StartErr: the command did not start (wraps workload.ErrNotFound or
	// workload.ErrNotExecutable, or another start failure).
	StartErr error
	// Command is the command's outcome when it ran.
	Command *workload.Result
	// Ended is set when the duration ended the command (it did not exit
	// on its own first).
	Ended bool
	// Err is a failure of the trace itself (tracer, output).
	Err error
}

// Exit returns hwpprobe's exit status and the message to print (nil for
// none), by record's rules: the command's own status as a shell's $?
// (128+N when signal N killed it, no message of hwpprobe's); 127 or 126
// when it could not be started; 128+N with a message when hwpprobe got
// signal N and forwarded it (also when the duration then ended it); 0
// when hwpprobe ended the command at the duration or ran none; 1 when the
// trace failed.
func (r Result) Exit() (int, error) {
	switch {
	case r.StartErr != nil:
		return workload.ExitStatus(r.StartErr), r.StartErr
	case r.Err != nil:
		return 1, r.Err
	case r.Command == nil:
		return 0, nil
	case r.Command.Err != nil:
		return 1, r.Command.Err
	case r.Command.Interrupted && r.Command.Forwarded != 0:
		return 128 + int(r.Command.Forwarded), fmt.Errorf("interrupted: %s forwarded to the command's process group; %s",
			unix.SignalName(r.Command.Forwarded), Outcome(*r.Command))
	case r.Ended:
		return 0, nil
	}
	return r.Command.ExitCode, nil
}

// Outcome says how a command ended: "the command exited with status 3",
// "the command was killed by signal SIGKILL".
func Outcome(r workload.Result) string {
	if r.Signal != 0 {
		return "the command was killed by signal " + unix.SignalName(r.Signal)
	}
	return fmt.Sprintf("the command exited with status %d", r.ExitCode)
}

// Run traces as cfg says. Setting-up errors (tracefs, tracer) are
// returned as Result.Err before anything is printed on Out.
func Run(ctx context.Context, cfg Config) Result {
	if cfg.Signals == nil {
		sigs := make(chan os.Signal, 4)
		defer sigquit.Notify(sigs, cli.StopSignals...)()
		cfg.Signals = sigs
	}
	root := cfg.Root
	if root == "" {
		root = "/"
	}
	tr, err := ebpf.OpenSources(root, cfg.Tracer)
	if err != nil {
		return Result{Err: err}
	}
	defer tr.Close()
	var proc *workload.Process
	if cfg.Command != nil {
		// Started after the tracer is attached: its first writes are seen.
		if proc, err = workload.Start(*cfg.Command, nil); err != nil {
			return Result{StartErr: err}
		}
	}
	cli.Linef(cfg.Stderr, "hwpprobe", "tracing %s", Describe(cfg))
	if name := sysfs.NewFS(root).Emulated(); name != "" {
		cli.Linef(cfg.Stderr, "hwpprobe", "emulated machine %q: its model's writes of these registers are traced too, labelled emulated", name)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := tracefmt.New(cfg.Out, cfg.JSON)
	start := time.Now()
	traced := make(chan error, 1)
	done := make(chan struct{}) // closed when the tracer stopped
	go func() { traced <- tr.RunFlush(ctx, w.Event, w.Flush); close(done) }()

	var res Result
	if proc != nil {
		cr, ended := supervise(proc, cfg)
		res.Command, res.Ended = &cr, ended
		if ended {
			cli.Linef(cfg.Stderr, "hwpprobe", "--duration %v is up: ended %s (SIGTERM to its process group); %s",
				cfg.Duration, cfg.Command.Argv[0], Outcome(cr))
		}
	} else {
		waitStop(ctx, cfg, done)
	}
	stopped := time.Now()
	cancel()
	if err := <-traced; err != nil && !errors.Is(err, context.Canceled) {
		res.Err = err
		return res
	}
	res.Err = summarize(tr, w, cfg, stopped.Sub(start))
	return res
}

// waitStop returns when the duration is up, a signal arrives, or the
// tracer stopped on its own.
func waitStop(ctx context.Context, cfg Config, done <-chan struct{}) {
	var timeout <-chan time.Time
	if cfg.Duration > 0 {
		t := time.NewTimer(cfg.Duration)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
	case <-cfg.Signals:
	case <-ctx.Done():
	case <-done:
	}
}

// supervise waits for the command, forwarding cfg.Signals to its process
// group (workload.Process.Wait). When the duration is up first, it sends
// the group SIGTERM, and SIGKILL after the grace time, and reports
// ended. A tracer that stops early does not end the command: its outcome
// is still hwpprobe's exit status.
func supervise(proc *workload.Process, cfg Config) (workload.Result, bool) {
	waited := make(chan workload.Result, 1)
	go func() { waited <- proc.Wait(cfg.Signals) }()
	if cfg.Duration <= 0 {
		return <-waited, false
	}
	limit := time.NewTimer(cfg.Duration)
	defer limit.Stop()
	select {
	case r := <-waited:
		return r, false
	case <-limit.C:
	}
	proc.Signal(syscall.SIGTERM)
	grace := cfg.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	kill := time.NewTimer(grace)
	defer kill.Stop()
	select {
	case r := <-waited:
		return r, true
	case <-kill.C:
	}
	proc.Signal(syscall.SIGKILL)
	return <-waited, true
}

// summarize writes the summary and warns about lost events.
func summarize(tr ebpf.Source, w *tracefmt.Writer, cfg Config, d time.Duration) error {
	st, err := tr.Stats()
	if err != nil {
		return err
	}
	counts, err := tr.Counts()
	if err != nil {
		return err
	}
	if err := w.WriteSummary(w.Summary(st, d, cfg.Tracer.CountOnly, counts)); err != nil {
		return err
	}
	if msg := LossWarning(st.Lost, st.Missed); msg != "" {
		cli.Linef(cfg.Stderr, "hwpprobe", "warning: %s", msg)
	}
	return nil
}

// LossWarning says which events the trace does not hold, naming only the
// non-zero causes; "" when it holds them all.
func LossWarning(lost, missed uint64) string {
	var parts []string
	if lost > 0 {
		parts = append(parts, fmt.Sprintf("%d events lost (ring buffer full)", lost))
	}
	if missed > 0 {
		parts = append(parts, fmt.Sprintf("%d events missed (another BPF program was running on that CPU)", missed))
	}
	return strings.Join(parts, ", ")
}

// Describe says what is traced, for stderr: "writes of
// IA32_PERF_CTL (0x199) on CPUs 0-3, and power:cpu_frequency, for 1s".
func Describe(cfg Config) string {
	o := cfg.Tracer
	names := make([]string, len(o.MSRs))
	for i, m := range o.MSRs {
		names[i] = fmt.Sprintf("%s (%#x)", tracefmt.Name(m), m)
	}
	s := "writes of " + strings.Join(names, ", ")
	if o.CountOnly {
		s = "(counting) " + s
	}
	switch l := cpus.List(o.CPUs); len(l) {
	case 0:
		s += " on all CPUs"
	case 1:
		s += " on CPU " + l.String()
	default:
		s += " on CPUs " + l.String()
	}
	if len(o.Events) > 0 {
		s += ", and " + strings.Join(o.Events, ", ")
	}
	var argv0 string
	if cfg.Command != nil {
		argv0 = cfg.Command.Argv[0]
	}
	switch {
	case argv0 != "" && cfg.Duration > 0:
		s += fmt.Sprintf(", while %s runs (at most %v)", argv0, cfg.Duration)
	case argv0 != "":
		s += fmt.Sprintf(", while %s runs", argv0)
	case cfg.Duration > 0:
		s += fmt.Sprintf(", for %v", cfg.Duration)
	default:
		s += " until Ctrl-C"
	}
	return s
}
