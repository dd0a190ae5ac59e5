// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
	"github.com/hwpprobe/hwpprobe/sampler"
	"github.com/hwpprobe/hwpprobe/source"
	"github.com/hwpprobe/hwpprobe/sysfs"
)

func init() { subcommands = append(subcommands, newWatchCmd) }

func newWatchCmd() *cobra.Command {
	var (
		interval time.Duration
		cpuSpec  string
		show     string
		perCPU   bool
		count    int
	)
	cmd := &cobra.Command{
		Use:   "watch [-i 1s] [-C cpus] [--show cols] [--per-cpu] [-n count]",
		Short: "Live turbostat-like table: delivered MHz, busy, IPC, watts, temperatures, HWP requests",
		Long: `watch samples every CPU at an interval and prints turbostat's figures
(Avg_MHz, Busy%, Bzy_MHz, TSC_MHz, IPC, CoreTmp, PkgTmp, PkgWatt, CorWatt,
GFXWatt, RAMWatt) with the HWP request (min, max, desired, EPP) and EPB of
each CPU, summarised per core type (P, E, LP-E) and for the machine.
On a terminal the table refreshes in place; piped, it appends. Figures the
machine cannot give are listed with the reason, never shown as 0.
Ctrl-C stops it. See docs/watch.md.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cols []string
			if show != "" {
				var err error
				if cols, err = sampler.ParseColumns(show); err != nil {
					return cli.UsageError{Err: err}
				}
			}
			ctx, stop := sigquit.NotifyContext(cmd.Context(), cli.StopSignals...)
			defer stop()
			return runWatch(ctx, cmd.OutOrStdout(), watchOptions{
				interval: interval, cpuSpec: cpuSpec, cols: cols, perCPU: perCPU, count: count,
			})
		},
	}
	f := cmd.Flags()
	cli.DurationVarP(f, &interval, "interval", "i", time.Second, minInterval, maxInterval, "sampling interval (10ms to 24h)")
	cli.CPUListVar(f, &cpuSpec, "CPUs to sample, e.g. 0-3,8 (default: every online CPU)")
	f.StringVar(&show, "show", "", "columns to show, comma-separated (default: every available one): "+fmt.Sprint(sampler.ColumnNames()))
	f.BoolVar(&perCPU, "per-cpu", false, "one row per CPU besides the summaries")
	cli.IntVarP(f, &count, "num-iterations", "n", 0, 0, math.MaxInt32, "stop after this many samples (default: until Ctrl-C)")
	return cmd
}

type watchOptions struct {
	interval time.Duration
	cpuSpec  string
	cols     []string
	perCPU   bool
	count    int
}

// openSampler wires the sources for the selected CPUs: topology, then
// package source's fallbacks (perf off under emulation).
func openSampler(root, cpuSpec string) (*source.Set, *sampler.Sampler, error) {
	fs := sysfs.NewFS(root)
	list, err := selectCPUs(root, cpuSpec)
	if err != nil {
		return nil, nil, err
	}
	set, err := openSources(root, fs, list)
	if err != nil {
		return nil, nil, err
	}
	s, err := sampler.New(set)
	if err != nil {
		set.Close()
		return nil, nil, err
	}
	return set, s, nil
}

func runWatch(ctx context.Context, w io.Writer, o watchOptions) error {
	set, s, err := openSampler(global.root, o.cpuSpec)
	if err != nil {
		return err
	}
	defer set.Close()
	st := set.Setup()
	cols := o.cols
	if cols == nil {
		cols = sampler.DefaultColumns(st)
	}
	tab := sampler.NewTable(st, cols, o.perCPU)
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
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	var smp sampler.Sample
	for n := 0; o.count == 0 || n < o.count; n++ {
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
