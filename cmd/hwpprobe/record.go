// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/recorder"
)

func init() { subcommands = append(subcommands, newRecordCmd) }

// The sampling interval (-i of watch and record): shorter than
// minInterval measures the sampler; maxInterval is a day.
const (
	minInterval = 10 * time.Millisecond
	maxInterval = 24 * time.Hour
)

type recordOptions struct {
	out       string
	interval  time.Duration
	cpuSpec   string
	force     bool
	traceMSRs string
	noTrace   bool
}

func newRecordCmd() *cobra.Command {
	o := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record -o FILE [-i 100ms] [-C cpus] -- CMD [ARGS...]",
		Short: "Run a command and record what the CPUs were asked for and delivered",
		Long: `record runs CMD (as the invoking user under sudo), samples the CPUs every
interval until it exits (turbostat's Avg_MHz, Busy%, Bzy_MHz, IPC, PkgWatt...),
traces the kernel's writes to the HWP/EPB/CPPC registers, counts CMD's process
tree (task-clock, cycles, instructions), and stores a snapshot of the machine
before and after. The file is written as the run goes and stays readable if
hwpprobe is killed or the disk fills up. hwpprobe exits with CMD's status
(127 not found, 128+N killed by signal N, 130 after Ctrl-C). See docs/record.md.`,
		Args: cli.ArgsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				return cli.Usagef("record: -o FILE is required")
			}
			msrs, err := traceFilter("record", cmd.Flags(), o.noTrace, o.traceMSRs)
			if err != nil {
				return err
			}
			// CMD writes to both streams, record to standard error.
			files := iocheck.Set{Outputs: []iocheck.Output{{Name: "-o", Path: o.out}}, Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}
			if err := checkFiles("record", files); err != nil {
				return err
			}
			return runRecord(cmd.ErrOrStderr(), o, msrs, args)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // everything from CMD on is CMD's
	f.StringVarP(&o.out, "output", "o", "", "recording file to write (required)")
	cli.DurationVarP(f, &o.interval, "interval", "i", 100*time.Millisecond, minInterval, maxInterval, "sampling interval (10ms to 24h)")
	cli.CPUListVar(f, &o.cpuSpec, "CPUs to sample, e.g. 0-3,8 (default: every online CPU)")
	f.BoolVar(&o.force, "force", false, "overwrite FILE if it exists")
	f.StringVar(&o.traceMSRs, "trace-msrs", tracefmt.FormatMSRs(tracefmt.DefaultMSRs), "MSRs whose kernel writes are traced: names or hex numbers, comma-separated (as trace --msr)")
	f.BoolVar(&o.noTrace, "no-trace", false, "do not trace the kernel's MSR writes")
	return cmd
}

// runRecord records argv into o.out, tracing the kernel's writes to msrs
// (none: no tracing).
func runRecord(stderr io.Writer, o *recordOptions, msrs []uint32, argv []string) error {
	cred, err := workload.SudoCredential(os.Getenv)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	list, err := selectCPUs(global.root, o.cpuSpec)
	if err != nil {
		return err
	}
	return recorder.Record(recorder.SessionConfig{Out: o.out, Force: o.force, Root: global.root, CPUs: list,
		Interval: o.interval, MSRs: msrs, Argv: argv, Version: version, CommandLine: os.Args, Cred: cred,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: stderr})
}

// traceFilter returns the MSRs whose kernel writes record and diff
// trace: --trace-msrs parsed, or none with --no-trace, which a
// --trace-msrs given contradicts (a usage error naming command).
func traceFilter(command string, fs *pflag.FlagSet, noTrace bool, spec string) ([]uint32, error) {
	if noTrace {
		if fs.Changed("trace-msrs") {
			return nil, cli.Usagef("%s: --no-trace and --trace-msrs contradict each other", command)
		}
		return nil, nil
	}
	msrs, err := tracefmt.ParseMSRFilter(spec)
	if err != nil {
		return nil, cli.Usagef("%s: --trace-msrs: %w", command, err)
	}
	return msrs, nil
}
