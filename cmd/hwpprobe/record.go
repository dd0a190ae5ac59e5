// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/runctx"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
	"github.com/hwpprobe/hwpprobe/perfcount"
	"github.com/hwpprobe/hwpprobe/recording"
	"github.com/hwpprobe/hwpprobe/recording/recorder"
	"github.com/hwpprobe/hwpprobe/recording/summary"
	"github.com/hwpprobe/hwpprobe/sysfs"
	"github.com/hwpprobe/hwpprobe/workload"
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
	root := global.root
	fs := sysfs.NewFS(root)
	list, err := selectCPUs(root, o.cpuSpec)
	if err != nil {
		return err
	}

	// Catch the signals from now on: a Ctrl-C while setting up is
	// forwarded to CMD as soon as it exists, and the file still ends well.
	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, cli.StopSignals...)()

	// The output is started before anything runs: an unwritable path or
	// a full disk fails here, with CMD not started and no file left.
	file, err := createOutput(o.out, o.force, cred)
	if err != nil {
		return err
	}
	defer file.Abort()
	host := recorder.Host(fs)
	rctx, _ := runctx.Read(fs, version)
	meta := recording.Meta{Tool: "hwpprobe", ToolVersion: version, Kind: "record", CommandLine: os.Args,
		TimeNs: time.Now().UnixNano(), IntervalNs: int64(o.interval), CPUs: list.String(),
		Host: host, Emulated: fs.Emulated(), Context: &rctx}
	w, err := recording.NewWriter(file.File, meta) // the *os.File: the writer truncates partial records and syncs it
	if err != nil {
		return fmt.Errorf("record: %s: %w", o.out, err)
	}
	// The file appears under its name once its header is written.
	if err := file.Publish(); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if meta.Emulated != "" {
		cli.Linef(stderr, "hwpprobe", "recording emulated machine %q: figures are emulated, not measured", meta.Emulated)
	}

	cfg := recorder.Config{
		W:        w,
		Run:      recording.RunStart{Run: 1, Observed: recorder.Observed(fs, list), Command: argv},
		Spec:     workload.Spec{Argv: argv, Cred: cred, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr},
		Interval: o.interval, Counters: perfcount.ProcessEvents(), Signals: sigs, Warn: stderr,
	}
	if cfg.Spec.Dir, err = os.Getwd(); err != nil {
		cfg.Spec.Dir = ""
	}
	cfg.Run.Dir = cfg.Spec.Dir

	setup := recorder.OpenSetup(recorder.SetupOptions{Root: root, FS: fs, CPUs: list, MSRs: msrs, Warn: stderr}, w)
	defer setup.Close()
	cfg = setup.Config(cfg)

	res := recorder.Run(cfg)

	status := recording.StatusComplete
	switch {
	case res.End.Interrupted:
		status = recording.StatusInterrupted
	case res.StartErr != nil || res.WriteErr != nil:
		status = recording.StatusFailed
	}
	if res.WriteErr == nil {
		if err := w.Close(recording.End{TimeNs: time.Now().UnixNano(), Status: status}); err != nil {
			res.WriteErr = err
			cli.Linef(stderr, "hwpprobe", "%v", err)
		}
	}
	printRecordSummary(stderr, o.out, res.WriteErr)
	return recordExit(res)
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

// recordExit chooses hwpprobe's status: 128+signal when interrupted, the
// command's status otherwise, 1 when the command succeeded but the
// recording failed.
func recordExit(res recorder.Result) error {
	code := res.End.ExitCode
	var err error
	switch {
	case res.End.Interrupted && res.Forwarded != 0:
		code = 128 + int(res.Forwarded)
		err = fmt.Errorf("interrupted: %s forwarded to the command's process group; %s",
			unix.SignalName(res.Forwarded), exitWords(res.End))
	case res.StartErr != nil:
		err = res.StartErr
	case res.WriteErr != nil && code == 0:
		code = exitError
		err = fmt.Errorf("the recording is incomplete: %w", res.WriteErr)
	}
	if code == 0 {
		return nil
	}
	return cli.ExitCodeError{Code: code, Err: err}
}

func exitWords(e recording.RunEnd) string {
	if e.Signal != "" {
		return "the command was killed by signal: " + e.Signal
	}
	return fmt.Sprintf("the command exited with status %d", e.ExitCode)
}

// printRecordSummary reads the file back and prints its summary, so that
// what is printed is what was stored: scanned batch by batch, as show
// reads it, so that memory does not grow with the recording.
func printRecordSummary(w io.Writer, path string, writeErr error) {
	c := summary.NewCollector()
	rec, err := recording.ScanFileParts(path, summary.Parts, func(r recording.Record) error { c.Add(r); return nil })
	if err != nil {
		cli.Linef(w, "hwpprobe", "read back %s: %v", path, err)
		return
	}
	cli.Linef(w, "hwpprobe", "recorded %s", path)
	summary.WriteHeader(w, rec.Meta, rec.End, rec.Problem)
	for _, run := range rec.Runs {
		c.Summary(rec, run).WriteText(w)
	}
}

// createOutput starts the recording file (published once its header is
// written): refusing to replace an existing one unless force, owned by the
// sudo user when there is one.
func createOutput(path string, force bool, cred *workload.Credential) (*atomicfile.File, error) {
	f, err := atomicfile.Create(path, atomicfile.Options{Replace: force})
	if errors.Is(err, atomicfile.ErrExists) {
		return nil, fmt.Errorf("record: %s exists (use --force to overwrite it)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("record: cannot create the recording: %w", err)
	}
	if cred != nil {
		if err := f.Chown(int(cred.UID), int(cred.GID)); err != nil {
			f.Abort()
			return nil, fmt.Errorf("record: give %s to uid %d: %w", path, cred.UID, err)
		}
	}
	return f, nil
}
