// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
	"github.com/hwpprobe/hwpprobe/msr"
)

// SnapshotFormat names the snapshot JSON stored in recordings: the schema
// of `hwpprobe snapshot --json` (docs/snapshot.md).
const SnapshotFormat = "hwpprobe-snapshot-json"

// SetupOptions say what every run of a recording measures.
type SetupOptions struct {
	Root string // system root
	FS   sysfs.FS
	CPUs cpus.List
	// MSRs are the registers whose kernel writes are traced; none: no
	// tracing.
	MSRs []uint32
	Warn io.Writer // one line per source that cannot be opened
}

// Setup holds the sources, the tracer and the snapshot taker that the
// runs of one recording share (`record` makes one run, `diff` many).
type Setup struct {
	o      SetupOptions
	set    *source.Set
	tracer ebpf.Source
}

// OpenSetup opens the figure sources and the tracer. What cannot be opened
// is left out of the runs, said once on o.Warn and written to w as a note:
// it never fails.
func OpenSetup(o SetupOptions, w *recording.Writer) *Setup {
	s := &Setup{o: o}
	note := func(text string) {
		cli.Linef(o.Warn, "hwpprobe", "%s", text)
		w.Write(recording.Note{TimeNs: time.Now().UnixNano(), Text: text})
	}
	set, err := source.OpenCPUs(o.Root, o.FS, o.CPUs)
	if err != nil {
		note("sampling disabled: " + err.Error())
	} else {
		s.set = set
	}
	if len(o.MSRs) > 0 {
		// Under hwpemu the emulated machine's register writes come with
		// the kernel's, labelled emulated.
		tr, err := ebpf.OpenSources(o.Root, traceOptions(o))
		if err != nil {
			note("kernel MSR writes not traced: " + err.Error())
		} else {
			s.tracer = tr
		}
	}
	return s
}

// traceOptions are the tracer's options. The events wait for the next
// flush anyway: polling the ring buffer (and an emulated machine's write
// log) once a flush instead of every ebpf.DefaultPollInterval takes a
// third or more off the recorder's CPU time (docs/record.md, "Observer
// cost"). The kernel still wakes the reader early when the ring buffer
// fills past its wake-up level, so no event is lost to the slower poll.
func traceOptions(o SetupOptions) ebpf.Options {
	return ebpf.Options{MSRs: o.MSRs, CPUs: o.CPUs, PollInterval: FlushEvery}
}

// Config completes a run's configuration with the setup's sampler,
// tracer and snapshots.
func (s *Setup) Config(c Config) Config {
	if s.set != nil {
		// The sources chose the request register they read
		// (the first of regs.Requests that the CPU answers).
		c.HWPReg = s.set.Setup().Info().HWPRegister
		set := s.set
		c.OpenSampler = func() (Sampler, *recording.Figures, error) {
			smp, err := sampler.New(set)
			if err != nil {
				return nil, nil, err
			}
			return smp, FiguresFromInfo(set.Setup().Info()), nil
		}
	}
	if s.tracer != nil {
		c.Tracer = s.tracer
	}
	c.Snapshot = func() (string, []byte, error) { return TakeSnapshot(s.o.Root, s.o.CPUs) }
	return c
}

// Sources returns the figure sources, nil when sampling is disabled.
func (s *Setup) Sources() *source.Set { return s.set }

// Close closes the sources and the tracer.
func (s *Setup) Close() {
	if s.set != nil {
		s.set.Close()
	}
	if s.tracer != nil {
		s.tracer.Close()
	}
}

// TakeSnapshot returns the machine's snapshot (package snapshot) of list
// as JSON in SnapshotFormat.
func TakeSnapshot(root string, list cpus.List) (string, []byte, error) {
	dev := msr.Open(root)
	defer dev.Close()
	id := cpuid.Open(root)
	defer id.Close()
	s, err := snapshot.Build(snapshot.Sources{FS: sysfs.NewFS(root), MSR: dev, CPUID: id, EUID: os.Geteuid()}, list.String())
	if err != nil {
		return "", nil, err
	}
	b, err := json.Marshal(s)
	return SnapshotFormat, b, err
}
