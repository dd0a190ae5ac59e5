// SPDX-License-Identifier: Apache-2.0

// Package watch is `hwpprobe watch`: it samples the selected CPUs at an
// interval and prints sampler's table, redrawn in place on a terminal
// (cli.CanRedraw), appended elsewhere, until Ctrl-C, a count or a closed
// pipe (docs/watch.md).
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// Config is one watch.
type Config struct {
	Root     string
	CPUs     cpus.List
	Interval time.Duration
	Columns  []string // nil: sampler.DefaultColumns
	PerCPU   bool     // a row per CPU besides the summaries
	Count    int      // samples to print; 0: until stopped
}

// Run watches until ctx ends, a stop signal (cli.StopSignals) arrives,
// Count samples are printed or w's reader goes away; each of those is a
// clean end (nil).
func Run(ctx context.Context, w io.Writer, cfg Config) error {
	ctx, stop := sigquit.NotifyContext(ctx, cli.StopSignals...)
	defer stop()
	set, err := source.OpenCPUs(cfg.Root, sysfs.NewFS(cfg.Root), cfg.CPUs)
	if err != nil {
		return err
	}
	defer set.Close()
	s, err := sampler.New(set)
	if err != nil {
		return err
	}
	st := set.Setup()
	cols := cfg.Columns
	if cols == nil {
		cols = sampler.DefaultColumns(st)
	}
	tab := sampler.NewTable(st, cols, cfg.PerCPU)
	var preamble []byte
	if st.Emulated != "" {
		preamble = fmt.Appendf(preamble, "# EMULATED machine %q: every figure below comes from hwpemu, not from hardware\n", st.Emulated)
	}
	for _, n := range st.Notes {
		preamble = fmt.Appendf(preamble, "# %s: %s\n", n.Figure, n.Reason)
	}
	if _, err := w.Write(preamble); err != nil {
		return err
	}
	tty := cli.CanRedraw(w)
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	var smp sampler.Sample
	for n := 0; cfg.Count == 0 || n < cfg.Count; n++ {
		select {
		case <-ctx.Done():
			return nil // Ctrl-C: a clean exit
		case <-tick.C:
		}
		if err := s.Sample(&smp); err != nil {
			return err
		}
		switch {
		case tty:
			// Refresh in place: cursor home, clear the screen.
			if _, err := fmt.Fprintf(w, "\x1b[H\x1b[2J%s", preamble); err != nil {
				return err
			}
			if err := tab.WriteHeader(w); err != nil {
				return err
			}
		case n == 0 || tab.Rows(&smp) > 1:
			if err := tab.WriteHeader(w); err != nil {
				return err
			}
		}
		if err := tab.WriteRows(w, &smp); err != nil {
			if errors.Is(err, syscall.EPIPE) {
				return nil
			}
			return err
		}
	}
	return nil
}
