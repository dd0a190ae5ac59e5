// SPDX-License-Identifier: Apache-2.0

package tracerun

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// --duration bounds: a trace shorter than a millisecond sees nothing, and
// a year is beyond any use.
const (
	minDuration = time.Millisecond
	maxDuration = 365 * 24 * time.Hour
)

// AddFlags registers trace's flags on fl, filling o.
func (o *Options) AddFlags(fl *pflag.FlagSet) {
	fl.StringVar(&o.MSRs, "msr", "", "MSRs to trace: register names or hex numbers, comma-separated (default: HWP, EPB, PERF_CTL and CPPC registers)")
	fl.StringVar(&o.Events, "events", "power", `other tracepoints: "power" (those of the power and amd_cpu groups this kernel has), "none", or group:name,...`)
	cli.CPUListVar(fl, &o.CPUs, "CPUs to trace, e.g. 0-3,8 (default: all)")
	cli.DurationVarP(fl, &o.Duration, "duration", "", 0, minDuration, maxDuration, "stop after this long, 1ms to 8760h (default: until Ctrl-C or until CMD exits)")
	// JSON: one object per event, then a summary object.
	o.Out = cli.AddOutputs(fl, cli.OutputSpec{Command: "trace", Stdout: cli.TextJSON}, "")
	o.Out.FormatAlias(fl, "json", cli.JSON)
	fl.BoolVar(&o.CountOnly, "count-only", false, "count matching writes in the kernel, print no events")
	o.flags = fl
}

// Run traces the machine at root as o asks, while argv runs (as the
// invoking user under sudo) when it is not empty, and returns the trace's
// exit status as a cli.ExitCodeError.
func (o *Options) Run(ctx context.Context, root string, argv []string, s cli.Streams) error {
	if err := o.Out.Resolve(); err != nil {
		return err
	}
	cfg := Config{Duration: o.Duration, JSON: o.Out.Format == cli.JSON, Out: s.Out, Stderr: s.Err, Root: root}
	o.MSRsSet = o.flags.Changed("msr")
	if err := Configure(*o, &cfg); err != nil {
		return err
	}
	if len(argv) > 0 {
		cred, err := workload.SudoCredential(os.Getenv)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		// CMD's output goes to stderr: stdout holds the events.
		cfg.Command = &workload.Spec{Argv: argv, Cred: cred, Stdin: os.Stdin, Stdout: s.Err, Stderr: s.Err}
	}
	code, err := Run(ctx, cfg).Exit()
	if code == 0 {
		return nil
	}
	return cli.ExitCodeError{Code: code, Err: err}
}
