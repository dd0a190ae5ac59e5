// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// Command is `hwpprobe record`'s options (docs/record.md).
type Command struct {
	Version   string // hwpprobe's, stored in the recording
	out       string
	interval  time.Duration
	cpuSpec   string
	force     bool
	traceMSRs string
	noTrace   bool
	flags     *pflag.FlagSet
}

// AddFlags registers record's flags on f, filling c.
func (c *Command) AddFlags(f *pflag.FlagSet) {
	c.flags = f
	f.SetInterspersed(false) // everything from CMD on is CMD's
	f.StringVarP(&c.out, "output", "o", "", "recording file to write (required)")
	cli.DurationVarP(f, &c.interval, "interval", "i", 100*time.Millisecond, sampler.MinInterval, sampler.MaxInterval, "sampling interval (10ms to 24h)")
	cli.CPUListVar(f, &c.cpuSpec, "CPUs to sample, e.g. 0-3,8 (default: every online CPU)")
	f.BoolVar(&c.force, "force", false, "overwrite FILE if it exists")
	f.StringVar(&c.traceMSRs, "trace-msrs", tracefmt.FormatMSRs(tracefmt.DefaultMSRs), "MSRs whose kernel writes are traced: names or hex numbers, comma-separated (as trace --msr)")
	f.BoolVar(&c.noTrace, "no-trace", false, "do not trace the kernel's MSR writes")
}

// Run records argv, run as the invoking user under sudo, on the system at
// root into the -o file; CMD writes to both standard streams, record to
// stderr.
func (c *Command) Run(root string, argv []string, stderr io.Writer) error {
	if c.out == "" {
		return cli.Usagef("record: -o FILE is required")
	}
	msrs, err := TraceFilter("record", c.flags, c.noTrace, c.traceMSRs)
	if err != nil {
		return err
	}
	files := iocheck.Set{Outputs: []iocheck.Output{{Name: "-o", Path: c.out}}, Streams: cli.StdStreams()}
	if err := cli.CheckFiles("record", files); err != nil {
		return err
	}
	cred, err := workload.SudoCredential(os.Getenv)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	list, err := cli.SelectCPUs(root, c.cpuSpec)
	if err != nil {
		return err
	}
	return Record(SessionConfig{Out: c.out, Force: c.force, Root: root, CPUs: list,
		Interval: c.interval, MSRs: msrs, Argv: argv, Version: c.Version, CommandLine: os.Args, Cred: cred,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: stderr})
}

// TraceFilter returns the MSRs whose kernel writes record and diff
// trace: --trace-msrs parsed, or none with --no-trace, which a
// --trace-msrs given contradicts (a usage error naming command).
func TraceFilter(command string, fs *pflag.FlagSet, noTrace bool, spec string) ([]uint32, error) {
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
