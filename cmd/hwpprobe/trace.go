// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/tracerun"
)

func init() { subcommands = append(subcommands, newTraceCmd) }

// traceFlags are the options of `hwpprobe trace`.
type traceFlags struct {
	msrs      string
	events    string
	cpus      string
	duration  time.Duration
	out       *cli.Outputs
	countOnly bool
}

func newTraceCmd() *cobra.Command {
	var f traceFlags
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
			return runTrace(cmd.Context(), cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.msrs, "msr", "", "MSRs to trace: register names or hex numbers, comma-separated (default: HWP, EPB, PERF_CTL and CPPC registers)")
	complete.Flag(cmd, "msr", complete.List(regs.Names))
	fl.StringVar(&f.events, "events", "power", `other tracepoints: "power" (those of the power and amd_cpu groups this kernel has), "none", or group:name,...`)
	cli.CPUListVar(fl, &f.cpus, "CPUs to trace, e.g. 0-3,8 (default: all)")
	cli.DurationVarP(fl, &f.duration, "duration", "", 0, minDuration, maxDuration, "stop after this long, 1ms to 8760h (default: until Ctrl-C or until CMD exits)")
	// JSON: one object per event, then a summary object.
	f.out = cli.AddOutputs(fl, cli.OutputSpec{Command: "trace", Stdout: textJSON}, "")
	f.out.FormatAlias(fl, "json", cli.JSON)
	fl.BoolVar(&f.countOnly, "count-only", false, "count matching writes in the kernel, print no events")
	return cmd
}

// --duration bounds: a trace shorter than a millisecond sees nothing, and
// a year is beyond any use.
const (
	minDuration = time.Millisecond
	maxDuration = 365 * 24 * time.Hour
)

func runTrace(ctx context.Context, cmd *cobra.Command, f traceFlags, argv []string) error {
	if err := f.out.Resolve(); err != nil {
		return err
	}
	cfg := tracerun.Config{Duration: f.duration, JSON: f.out.Format == cli.JSON, Out: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(), Root: global.root}
	o := tracerun.Options{MSRs: f.msrs, MSRsSet: cmd.Flags().Changed("msr"), Events: f.events, CPUs: f.cpus, CountOnly: f.countOnly}
	if err := tracerun.Configure(o, &cfg); err != nil {
		return err
	}
	if len(argv) > 0 {
		cred, err := workload.SudoCredential(os.Getenv)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		// CMD's output goes to stderr: stdout holds the events.
		cfg.Command = &workload.Spec{Argv: argv, Cred: cred, Stdin: os.Stdin, Stdout: cmd.ErrOrStderr(), Stderr: cmd.ErrOrStderr()}
	}
	code, err := tracerun.Run(ctx, cfg).Exit()
	if code == 0 {
		return nil
	}
	return cli.ExitCodeError{Code: code, Err: err}
}
