// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/msr"
)

func init() { subcommands = append(subcommands, newSnapshotCmd) }

func newSnapshotCmd() *cobra.Command {
	var cpuSpec string
	var out *cli.Outputs
	cmd := &cobra.Command{
		Use:   "snapshot [-C cpus] [--format text|json] [-o [FORMAT=]FILE]",
		Short: "Show cpufreq sysfs settings next to the HWP/CPPC/EPB registers, per core type",
		Long: `snapshot shows the machine as the kernel presents it (cpufreq driver, governor,
energy_performance_preference, energy_perf_bias, scaling limits, intel_pstate
and amd-pstate settings) next to what the registers hold (HWP_REQUEST,
HWP_CAPABILITIES, EPB, AMD CPPC) for every CPU, grouped by core type, with
package facts (RAPL units, TDP, PL1/PL2, TjMax, temperatures, turbo ratios).
It flags every place where sysfs and a register disagree and explains the
kernel rule behind it, and reports what could not be read, why, and how to
fix it. It exits 0 with whatever it could read. See docs/snapshot.md.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.Resolve(); err != nil {
				return err
			}
			if err := checkFiles("snapshot", iocheck.Set{Outputs: out.IOCheck(), Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}); err != nil {
				return err
			}
			dev := msr.Open(global.root)
			defer dev.Close()
			id := cpuid.Open(global.root)
			defer id.Close()
			s, err := snapshot.Build(snapshot.Sources{
				FS: sysfs.NewFS(global.root), MSR: dev, CPUID: id, EUID: os.Geteuid(),
			}, cpuSpec)
			if errors.Is(err, snapshot.ErrBadCPUList) {
				return cli.UsageError{Err: err}
			}
			if err != nil {
				return err
			}
			return out.Render(cmd.OutOrStdout(), nil, func(w io.Writer, f cli.Format) error {
				if f == cli.JSON {
					return cli.WriteJSON(w, s)
				}
				return snapshot.WriteText(w, s)
			})
		},
	}
	cli.CPUListVar(cmd.Flags(), &cpuSpec, "CPUs to show, e.g. 0-3,8 (default: every online CPU)")
	out = cli.AddOutputs(cmd.Flags(), cli.OutputSpec{Command: "snapshot", Stdout: textJSON, Files: textJSON}, "")
	out.FormatAlias(cmd.Flags(), "json", cli.JSON) // JSON: schema hwpprobe-snapshot/1, docs/schemas.md
	return cmd
}
