// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// Build reads the recordings or experiments at paths, each once and batch
// by batch, into one timeline: their runs in file order, then run order.
// A run's side is its experiment side; runs of plain recordings given
// together are sides "A (name)", "B (name)", ... as `hwpprobe diff a b`
// names them.
//
// A file cut short or damaged after some runs gives what is there, and
// Timeline.Missing says what is not; Build fails, with an error wrapping
// ErrUnreadable, only for a file with no run to show (not a recording,
// empty, corrupt before its first run) or one that cannot be opened.
func Build(paths []string, o Options) (*Timeline, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no file given", ErrUnreadable)
	}
	tl := &Timeline{MaxPoints: o.maxPoints()}
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		side := ""
		if len(paths) > 1 {
			side = fmt.Sprintf("%c (%s)", 'A'+i%26, filepath.Base(p))
		}
		err = tl.read(filepath.Base(p), f, side, o)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return tl, nil
}

// read scans one file into tl; side names its runs that have none.
func (tl *Timeline) read(name string, r io.Reader, side string, o Options) error {
	var fb *fileBuilder
	rec, err := recording.Scan(r, func(r recording.Record) error {
		if m, ok := r.(recording.Meta); ok {
			fb = newFileBuilder(m, o)
		}
		fb.add(r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if len(rec.Runs) == 0 {
		why := "the file holds no run"
		if rec.Problem != nil {
			why = rec.Problem.Error()
		}
		return fmt.Errorf("%w: %s", ErrUnreadable, why)
	}
	src := Source{Name: name, Kind: rec.Meta.Kind, Emulated: rec.Meta.Emulated, Complete: rec.Complete()}
	tl.Sources = append(tl.Sources, src)
	if tl.Emulated == "" {
		tl.Emulated = src.Emulated
	}
	switch {
	case rec.Issue() != nil:
		tl.Missing = append(tl.Missing, fmt.Sprintf("%s: %v; the records before it are shown", name, rec.Issue()))
	case rec.End == nil:
		tl.Missing = append(tl.Missing, name+": the file has no end record (the writer stopped)")
	}
	for _, run := range rec.Runs {
		x := fb.runs[run.Start.Run]
		if x == nil {
			x = newRunBuilder(rec.Meta, run.Start, o)
		}
		tr := x.finish(run)
		if tr.Side == "" {
			tr.Side = side
		}
		if !tr.Ended {
			tl.Missing = append(tl.Missing, fmt.Sprintf("%s run %d: no run-end record (cut short): shown up to its last sample, %.1f s", name, tr.Run, tr.Seconds))
		}
		tr.Source = name
		tr.Profile = profile(rec.Meta, tr.Side)
		tl.Runs = append(tl.Runs, tr)
	}
	return nil
}

// fileBuilder routes one file's records to its runs' builders.
type fileBuilder struct {
	meta recording.Meta
	o    Options
	runs map[int]*runBuilder
}

func newFileBuilder(m recording.Meta, o Options) *fileBuilder {
	return &fileBuilder{meta: m, o: o, runs: map[int]*runBuilder{}}
}

func (fb *fileBuilder) add(r recording.Record) {
	switch b := r.(type) {
	case recording.RunStart:
		fb.runs[b.Run] = newRunBuilder(fb.meta, b, fb.o)
	case recording.Snapshot:
		if x := fb.runs[b.Run]; x != nil {
			x.addSnapshot(b)
		}
	case recording.Samples:
		if x := fb.runs[b.Run]; x != nil {
			x.addSamples(b)
		}
	case recording.Trace:
		if x := fb.runs[b.Run]; x != nil {
			x.addTrace(b.Events)
		}
	}
}

// profile returns the settings of an experiment's side, "name=value"
// joined by ", ".
func profile(m recording.Meta, side string) string {
	for _, s := range m.Sides {
		if s.Label != side {
			continue
		}
		var parts []string
		for _, st := range s.Settings {
			parts = append(parts, st.Name+"="+st.Value)
		}
		return strings.Join(parts, ", ")
	}
	return ""
}
