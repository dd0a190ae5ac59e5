// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

func init() { subcommands = append(subcommands, newShowCmd) }

func newShowCmd() *cobra.Command {
	var runID int
	cmd := &cobra.Command{
		Use:   "show [--run N] FILE",
		Short: "Print the summary of a recording",
		Long: `show prints what record printed at the end of a run: the machine, each run's
command, outcome and settings, time-weighted turbostat averages per core type
and for the machine, package energy, the kernel's register writes and the
process tree's counters. A recording cut short (crash, kill, full disk) is
shown up to its last whole record, with a line saying so. See docs/show.md.`,
		Args: cli.ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFiles("show", iocheck.Set{Inputs: args, Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}); err != nil {
				return err
			}
			// Scanned batch by batch: memory does not grow with the file.
			c := summary.NewCollector()
			rec, err := recording.ScanFileParts(args[0], summary.Parts, func(r recording.Record) error { c.Add(r); return nil })
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if err := summary.WriteHeader(w, rec.Meta, rec.End, rec.Issue()); err != nil {
				return err
			}
			shown := 0
			for _, run := range rec.Runs {
				if runID != 0 && run.Start.Run != runID {
					continue
				}
				shown++
				if err := c.Summary(rec, run).WriteText(w); err != nil {
					return err
				}
			}
			if runID != 0 && shown == 0 {
				return cli.Usagef("show: %s has no run %d (it has %d runs)", args[0], runID, len(rec.Runs))
			}
			if len(rec.Runs) == 0 {
				if _, err := fmt.Fprintln(w, "no runs recorded"); err != nil {
					return err
				}
			}
			return rec.CorruptError(args[0])
		},
	}
	cli.IntVarP(cmd.Flags(), &runID, "run", "", 0, 1, math.MaxInt32, "show only run N (default: every run)")
	return cmd
}
