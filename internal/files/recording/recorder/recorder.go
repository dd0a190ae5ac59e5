// SPDX-License-Identifier: Apache-2.0

// Package recorder records one run of a workload: it starts the command
// (package workload) stopped, attaches its process counters, takes the
// "before" snapshot and the sampler's baseline, lets it run while sampling
// at an interval and streaming the kernel's MSR writes, and at its end
// writes the counters, the "after" snapshot and the outcome. Records go to
// a recording.Writer as the run goes, batched about once a second, so a
// crash loses at most the last second of samples (trace events, which the
// tracer polls once a second too, at most the last two).
//
// When a write fails (disk full, I/O error) recording stops, the problem
// is reported once on the Warn writer, and the command keeps running to
// its end: the file holds every record written before the failure.
package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/perfcount"
	"golang.org/x/sys/unix"
)

// FlushEvery is how often buffered samples and trace events are written.
const FlushEvery = time.Second

// Sampler gives interval samples; *sampler.Sampler implements it. Its
// baseline is taken when it is created (Config.OpenSampler).
type Sampler interface {
	Sample(dst *sampler.Sample) error
}

// Tracer streams register writes; every ebpf.Source (the eBPF tracer, an
// emulated machine's write log, both merged) implements it.
type Tracer interface {
	Run(ctx context.Context, fn func(*ebpf.Event) error) error
	Stats() (ebpf.Stats, error)
}

// Config is one run's setup. Only W, Run and Spec are required.
type Config struct {
	W *recording.Writer
	// Run is the run-start record; Run.Run, Side, Settings, Observed
	// and Command are filled by the caller. PID, UID, GID and TimeNs are
	// set here.
	Run  recording.RunStart
	Spec workload.Spec
	// Interval is the sampling interval (OpenSampler set).
	Interval time.Duration
	// OpenSampler creates the sampler, taking its baseline; it is called
	// with the command stopped before its first instruction. nil: no
	// samples.
	OpenSampler func() (Sampler, *recording.Figures, error)
	// HWPReg is the MSR the sampler's HWPRequest comes from.
	HWPReg uint32
	// Tracer, when set, runs from Run's start to the command's end.
	Tracer Tracer
	// Snapshot, when set, returns the machine's state as JSON in the named
	// format; it is taken before the command starts and after it ends.
	Snapshot func() (format string, data []byte, err error)
	// Counters are the events counted for the command's process tree
	// (perfcount.ProcessEvents()); empty: none.
	Counters []perfcount.Event
	// Signals delivers the signals to forward to the command (from
	// signal.Notify); nil: none.
	Signals <-chan os.Signal
	// Warn receives one line per problem met while recording.
	Warn io.Writer
}

// Result is how a run went.
type Result struct {
	// Start is the run-start record as written (its TimeNs is when the
	// command was released).
	Start recording.RunStart
	End   recording.RunEnd
	// StartErr is set when the command did not start (ErrNotFound,
	// ErrNotExecutable ...); End.ExitCode is then 127 or 126.
	StartErr error
	// WriteErr is the first write error: records after it were lost.
	WriteErr error
	// Warnings counts the problems reported on Warn.
	Warnings int
	// Forwarded is the first signal hwpprobe received and forwarded to
	// the command (End.Interrupted), 0 if none.
	Forwarded syscall.Signal
}

// sink serialises writes and stops at the first error.
type sink struct {
	mu       sync.Mutex
	w        *recording.Writer
	err      error
	warn     io.Writer
	warnings int
}

func (s *sink) write(r recording.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if err := s.w.Write(r); err != nil {
		s.err = err
		s.warnLocked("recording stopped: %v; the command runs on, and the file keeps every record before this one", err)
	}
}

func (s *sink) warnf(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warnLocked(format, a...)
}

func (s *sink) warnLocked(format string, a ...any) {
	s.warnings++
	if s.warn != nil {
		fmt.Fprintf(s.warn, "hwpprobe: "+format+"\n", a...)
	}
}

// note reports a problem and stores it in the recording.
func (s *sink) note(run int, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	s.warnf("%s", msg)
	s.write(recording.Note{Run: run, TimeNs: time.Now().UnixNano(), Text: msg})
}

// buffers hold samples and trace events until the next flush.
type buffers struct {
	mu       sync.Mutex
	started  bool // RunStart written: flushing allowed
	samples  []recording.Sample
	events   []recording.TraceEvent
	lastLost uint64
	until    int64 // when set, the command's end: later events are not the run's
}

// Run records one run. It returns when the command has ended and every
// record of the run has been written (or writing failed).
func Run(cfg Config) Result {
	sk := &sink{w: cfg.W, warn: cfg.Warn}
	run := cfg.Run
	run.UID, run.GID = os.Getuid(), os.Getgid()
	if c := cfg.Spec.Cred; c != nil {
		run.UID, run.GID = int(c.UID), int(c.GID)
	}
	if run.Command == nil {
		run.Command = cfg.Spec.Argv
	}
	bufs := &buffers{}

	// The tracer runs from now on, so writes made as the command starts
	// are caught; its events wait in the buffer until RunStart is out.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	if cfg.Tracer != nil {
		off := monoToUnix()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cfg.Tracer.Run(ctx, func(e *ebpf.Event) error {
				if e.Tracepoint != nil {
					return nil
				}
				bufs.mu.Lock()
				defer bufs.mu.Unlock()
				if t := int64(e.TimeNs) + off; bufs.until == 0 || t <= bufs.until {
					bufs.events = append(bufs.events, recording.TraceEvent{TimeNs: t,
						CPU: int(e.CPU), PID: int(e.PID), Comm: e.Comm, MSR: e.MSR, Value: e.Value, Failed: e.Failed,
						Emulated: e.Emulated, Old: e.Old})
				}
				return nil
			})
			if err != nil {
				// A file-level note: the run may not have started yet.
				sk.note(0, "kernel MSR trace stopped: %v", err)
			}
		}()
	}

	var (
		smp     Sampler
		counter *perfcount.Process
	)
	attach := func(pid int) error {
		if len(cfg.Counters) > 0 {
			var err error
			if counter, err = perfcount.OpenProcess(pid, cfg.Counters); err != nil {
				sk.warnf("process counters: %v", err)
			} else {
				warnCounters(sk, counter.Read())
			}
		}
		// The snapshot is the slow part: take it before the sampler's
		// baseline, so that the first interval starts as the command does.
		snap := takeSnapshot(cfg.Snapshot, run.Run, recording.PhaseBefore)
		if cfg.OpenSampler != nil {
			s, figs, err := cfg.OpenSampler()
			if err != nil {
				sk.warnf("sampling disabled: %v", err)
				run.Figures = &recording.Figures{Notes: []recording.FigureNote{{Figure: "samples", Reason: err.Error()}}}
			} else {
				smp, run.Figures = s, figs
			}
		}
		run.PID = pid
		run.TimeNs = time.Now().UnixNano()
		sk.write(run)
		bufs.mu.Lock()
		bufs.started = true
		bufs.mu.Unlock()
		writeSnapshot(sk, snap)
		return nil
	}
	proc, err := workload.Start(cfg.Spec, attach)
	if err != nil {
		cancel()
		wg.Wait()
		if run.TimeNs == 0 { // the command never reached attach
			run.TimeNs = time.Now().UnixNano()
			sk.write(run)
		}
		bufs.mu.Lock()
		bufs.started = true
		bufs.mu.Unlock()
		flush(sk, bufs, cfg.Tracer, run.Run)
		code := workload.ExitStatus(err)
		end := recording.RunEnd{Run: run.Run, TimeNs: time.Now().UnixNano(), ExitCode: code, Error: err.Error()}
		sk.write(end)
		return Result{Start: run, End: end, StartErr: err, WriteErr: sk.err, Warnings: sk.warnings}
	}

	// Sampling and flushing while the command runs.
	stop := make(chan struct{})
	var smpWG sync.WaitGroup
	smpWG.Add(1)
	go func() {
		defer smpWG.Done()
		loop(sk, bufs, cfg, smp, run.Run, stop)
	}()

	res := proc.Wait(cfg.Signals)
	close(stop) // the loop takes the last sample and returns
	smpWG.Wait()
	// The run ends here, with its last sample: the trace's later events,
	// the process counters and the snapshot after are not in its time,
	// which diff compares.
	ended := time.Now().UnixNano()
	bufs.mu.Lock()
	bufs.until = ended
	bufs.mu.Unlock()
	cancel() // the tracer delivers what is buffered and returns
	wg.Wait()
	flush(sk, bufs, cfg.Tracer, run.Run)

	if counter != nil {
		sk.write(processRecord(run.Run, proc.Pid(), counter.Read()))
		counter.Close()
	}
	writeSnapshot(sk, takeSnapshot(cfg.Snapshot, run.Run, recording.PhaseAfter))
	end := recording.RunEnd{Run: run.Run, TimeNs: ended, ExitCode: res.ExitCode,
		Interrupted: res.Interrupted, UserNs: res.User.Nanoseconds(), SysNs: res.Sys.Nanoseconds(), MaxRSSKiB: res.MaxRSSKiB}
	if res.Signal != 0 {
		end.Signal = res.Signal.String()
	}
	if res.Err != nil {
		end.Error = res.Err.Error()
	}
	sk.write(end)
	return Result{Start: run, End: end, WriteErr: sk.err, Warnings: sk.warnings, Forwarded: res.Forwarded}
}

// loop samples every interval and flushes every FlushEvery until stop is
// closed, then takes a last sample (the command's last partial interval)
// and returns.
func loop(sk *sink, bufs *buffers, cfg Config, smp Sampler, run int, stop <-chan struct{}) {
	var tick <-chan time.Time
	if smp != nil && cfg.Interval > 0 {
		t := time.NewTicker(cfg.Interval)
		defer t.Stop()
		tick = t.C
	}
	fl := time.NewTicker(FlushEvery)
	defer fl.Stop()
	var s sampler.Sample
	failed := false
	take := func() {
		if smp == nil || failed {
			return
		}
		if err := bufs.take(smp, &s, cfg.HWPReg); err != nil {
			failed = true
			sk.note(run, "sampling stopped: %v", err)
		}
	}
	for {
		select {
		case <-tick:
			take()
		case <-fl.C:
			flush(sk, bufs, cfg.Tracer, run)
		case <-stop:
			take()
			return
		}
	}
}

// take samples smp into s and buffers the sample in its recorded form:
// the recorder's work per sample (BenchmarkRecordSample).
func (b *buffers) take(smp Sampler, s *sampler.Sample, hwpReg uint32) error {
	if err := smp.Sample(s); err != nil {
		return err
	}
	r := FromSampler(s, hwpReg)
	b.mu.Lock()
	b.samples = append(b.samples, r)
	b.mu.Unlock()
	return nil
}

// flush writes the buffered samples and trace events.
func flush(sk *sink, bufs *buffers, tr Tracer, run int) {
	var lost uint64
	if tr != nil {
		if st, err := tr.Stats(); err == nil {
			lost = st.Lost
		}
	}
	bufs.mu.Lock()
	if !bufs.started {
		bufs.mu.Unlock()
		return
	}
	samples, events := bufs.samples, bufs.events
	bufs.samples, bufs.events = nil, nil
	dLost := lost - bufs.lastLost
	if lost < bufs.lastLost {
		dLost = 0
	}
	bufs.lastLost = max(lost, bufs.lastLost)
	bufs.mu.Unlock()
	if len(samples) > 0 {
		sk.write(recording.Samples{Run: run, CPUColumns: recording.SamplerCPUColumns(),
			PackageColumns: recording.SamplerPackageColumns(), Samples: samples})
	}
	if len(events) > 0 || dLost > 0 {
		sk.write(recording.Trace{Run: run, Events: events, Lost: dLost})
	}
}

// snapshotResult is a snapshot taken, or why it could not be.
type snapshotResult struct {
	rec recording.Snapshot
	err error
}

func takeSnapshot(take func() (string, []byte, error), run int, phase string) *snapshotResult {
	if take == nil {
		return nil
	}
	format, data, err := take()
	if err != nil {
		return &snapshotResult{rec: recording.Snapshot{Run: run, Phase: phase}, err: err}
	}
	return &snapshotResult{rec: recording.Snapshot{Run: run, Phase: phase, TimeNs: time.Now().UnixNano(), Format: format, Data: data}}
}

// writeSnapshot writes a snapshot, or a note saying why there is none.
func writeSnapshot(sk *sink, s *snapshotResult) {
	switch {
	case s == nil:
	case s.err != nil:
		sk.note(s.rec.Run, "%s snapshot: %v", s.rec.Phase, s.err)
	default:
		sk.write(s.rec)
	}
}

// warnCounters reports, once, the process counters that could not be
// opened for a reason other than the machine lacking the event (which the
// summary shows as <not supported>).
func warnCounters(sk *sink, counts []perfcount.ProcessCount) {
	var msgs []string
	for _, c := range counts {
		if c.Err != nil && !errors.Is(c.Err, perfcount.ErrUnsupported) {
			msgs = append(msgs, c.Err.Error())
		}
	}
	if len(msgs) > 0 {
		sk.warnf("process counters: %s", strings.Join(msgs, "; "))
	}
}

func processRecord(run, pid int, counts []perfcount.ProcessCount) recording.Process {
	p := recording.Process{Run: run, PID: pid}
	for _, c := range counts {
		rc := recording.Count{Event: c.Event.Name, Supported: c.Err == nil, Value: c.Value,
			EnabledNs: c.Enabled, RunningNs: c.Running}
		if c.Err != nil {
			rc.Value = 0
			rc.Error = c.Err.Error()
			if errors.Is(c.Err, perfcount.ErrUnsupported) {
				rc.Error = "not supported by this machine's PMU"
			}
		}
		p.Counts = append(p.Counts, rc)
	}
	return p
}

// monoToUnix returns Unix time minus CLOCK_MONOTONIC (the eBPF timestamps'
// clock), in ns.
func monoToUnix() int64 {
	var ts unix.Timespec
	before := time.Now().UnixNano()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	after := time.Now().UnixNano()
	return (before+after)/2 - ts.Nano()
}
