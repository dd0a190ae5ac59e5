// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/tracerun"
)

func init() { subcommands = append(subcommands, newTraceCmd) }

func newTraceCmd() *cobra.Command {
	var o tracerun.Options
	cmd := &cobra.Command{
		Use:   "trace [--msr LIST] [--events LIST] [-C CPUS] [--duration D] [--format text|json] [--count-only] [-- CMD...]",
		Short: "Trace what the kernel writes to HWP, EPB, PERF_CTL and CPPC registers",
		Long: `trace shows every write the kernel makes to the chosen MSRs (by default the
HWP, EPB, PERF_CTL and AMD CPPC registers), as the hardware receives it, from
the msr:write_msr tracepoint through eBPF; the MSR and CPU filters run in the
kernel. Each write is decoded (turbostat wording) with what changed since that
CPU's previous write of the register. --events adds other tracepoints:
"power" (the default) attaches those of power:pstate_sample,
power:cpu_frequency, power:cpu_frequency_limits, amd_cpu:amd_pstate_perf and
amd_cpu:amd_pstate_epp_perf that the kernel has and says which it lacks.

On an emulated machine (hwpemu) the writes its model makes when a sysfs file
is written are shown too, labelled "[emulated, was OLD, pid N]" with the
process that wrote the file.

Traces until Ctrl-C, for --duration, or while CMD runs. Ends with a summary
per register and CPU and the number of events lost (ring buffer full).
Needs root (or CAP_BPF and CAP_PERFMON) and Linux 5.8+. See docs/trace.md.`,
		Example: `  sudo hwpprobe trace --msr 0x6e0 --duration 1s
  sudo hwpprobe trace --msr HWP_REQUEST,EPB -- sh -c 'echo power > /sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference'
  sudo hwpprobe trace --format json -C 0-3 --duration 10s > writes.jsonl`,
		Args: cli.ArgsUsage(func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return fmt.Errorf("unexpected argument %q: put the command to trace after --", args[0])
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), global.root, args, cli.StreamsOf(cmd))
		},
	}
	o.AddFlags(cmd.Flags())
	complete.Flag(cmd, "msr", complete.List(regs.Names))
	return cmd
}
