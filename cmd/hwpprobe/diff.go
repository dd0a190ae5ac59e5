// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/experiment"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
)

func init() { subcommands = append(subcommands, newDiffCmd) }

// exitCrossed is diff's exit status when a --fail-if threshold was
// crossed (docs/diff.md; experiment.Report chooses the others).
const exitCrossed = experiment.ExitCrossed

func newDiffCmd() *cobra.Command {
	var o experiment.Options
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
			o.Root, o.Version = global.root, version
			return o.Run(cmd, args)
		},
	}
	o.AddDiffFlags(cmd.Flags())
	return cmd
}
