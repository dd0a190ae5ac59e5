package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/cpus"
	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/cli"
)

func init() { subcommands = append(subcommands, newTraceCmd) }

// traceFlags are the options of `hwpprobe trace`.
type traceFlags struct {
	msrs      string
	events    string
	cpus      string
	duration  time.Duration
	json      bool
	countOnly bool
}

func newTraceCmd() *cobra.Command {
	var f traceFlags
	cmd := &cobra.Command{
		Use:   "trace [--msr LIST] [--events LIST] [-C CPUS] [--duration D] [--json] [--count-only] [-- CMD...]",
		Short: "Trace what the kernel writes to HWP, EPB, PERF_CTL and CPPC registers",
		Long: `trace shows every write the kernel makes to the chosen MSRs (by default the
HWP, EPB, PERF_CTL and AMD CPPC registers), as the hardware receives it, from
the msr:write_msr tracepoint through eBPF; the MSR and CPU filters run in the
kernel. Each write is decoded (turbostat wording) with what changed since that
CPU's previous write of the register. --events adds other tracepoints:
"power" (the default) attaches those of power:pstate_sample,
power:cpu_frequency, power:cpu_frequency_limits, amd_cpu:amd_pstate_perf and
amd_cpu:amd_pstate_epp_perf that the kernel has and says which it lacks.

Traces until Ctrl-C, for --duration, or while CMD runs. Ends with a summary
per register and CPU and the number of events lost (ring buffer full).
Needs root (or CAP_BPF and CAP_PERFMON) and Linux 5.8+. See docs/trace.md.`,
		Example: `  sudo hwpprobe trace --msr 0x6e0 --duration 1s
  sudo hwpprobe trace --msr HWP_REQUEST,EPB -- sh -c 'echo power > /sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference'
  sudo hwpprobe trace --json -C 0-3 --duration 10s > writes.jsonl`,
		Args: cli.ArgsUsage(func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return fmt.Errorf("unexpected argument %q: put the command to trace after --", args[0])
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), cli.StopSignals...)
			defer stop()
			return runTrace(ctx, cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.msrs, "msr", "", "MSRs to trace: register names or hex numbers, comma-separated (default: HWP, EPB, PERF_CTL and CPPC registers)")
	fl.StringVar(&f.events, "events", "power", `other tracepoints: "power" (those of the power and amd_cpu groups this kernel has), "none", or group:name,...`)
	cli.CPUListVar(fl, &f.cpus, "CPUs to trace, e.g. 0-3,8 (default: all)")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (default: until Ctrl-C or until CMD exits)")
	fl.BoolVar(&f.json, "json", false, "one JSON object per event, then a summary object")
	fl.BoolVar(&f.countOnly, "count-only", false, "count matching writes in the kernel, print no events")
	return cmd
}

// traceEvents resolves --events to tracepoint names; "power" keeps the
// PowerEvents the kernel has and returns the others as missing.
func traceEvents(tracefs, spec string) (events, missing []string, err error) {
	switch spec {
	case "none", "":
		return nil, nil, nil
	case "power":
		for _, ev := range ebpf.PowerEvents {
			_, err := ebpf.ReadFormat(tracefs, ev)
			switch {
			case err == nil:
				events = append(events, ev)
			case errors.Is(err, ebpf.ErrTracepointMissing):
				missing = append(missing, ev)
			default:
				return nil, nil, err
			}
		}
		return events, missing, nil
	}
	for ev := range strings.SplitSeq(spec, ",") {
		if _, _, err := ebpf.SplitEvent(strings.TrimSpace(ev)); err != nil {
			return nil, nil, cli.UsageError{Err: err}
		}
		events = append(events, strings.TrimSpace(ev))
	}
	return events, nil, nil
}

func runTrace(ctx context.Context, cmd *cobra.Command, f traceFlags, argv []string) error {
	if f.duration < 0 {
		return cli.Usagef("--duration %v: cannot be negative", f.duration)
	}
	msrs := tracefmt.DefaultMSRs
	if cmd.Flags().Changed("msr") {
		var err error
		if msrs, err = tracefmt.ParseMSRFilter(f.msrs); err != nil {
			return cli.Usagef("--msr: %w", err)
		}
	}
	var cpuList cpus.List
	if f.cpus != "" {
		var err error
		if cpuList, err = cpus.Parse(f.cpus); err != nil {
			return cli.UsageError{Err: err}
		}
		online, err := cpus.Online(global.root)
		if err != nil {
			return fmt.Errorf("online CPUs: %w", err)
		}
		if off := cpuList.Minus(online); len(off) > 0 {
			return cli.Usagef("-C %s: CPU %s not online (online: %s)", f.cpus, off, online)
		}
	}
	tracefs, err := ebpf.FindTraceFS(global.root)
	if err != nil {
		return err
	}
	events, missing, err := traceEvents(tracefs, f.events)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "hwpprobe: note: this kernel lacks %s (not traced)\n", strings.Join(missing, ", "))
	}
	tr, err := ebpf.Open(ebpf.Options{
		MSRs: msrs, CPUs: cpuList, Events: events, CountOnly: f.countOnly, TraceFS: tracefs,
	})
	if err != nil {
		return err
	}
	defer tr.Close()

	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	var child *exec.Cmd
	childDone := make(chan error, 1)
	if len(argv) > 0 {
		child = exec.CommandContext(ctx, argv[0], argv[1:]...)
		child.Stdin, child.Stdout, child.Stderr = os.Stdin, cmd.ErrOrStderr(), cmd.ErrOrStderr()
		if err := child.Start(); err != nil {
			return fmt.Errorf("start %s: %w", argv[0], err)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() { childDone <- child.Wait(); cancel() }()
	}

	fmt.Fprintf(cmd.ErrOrStderr(), "hwpprobe: tracing %s\n", describeTrace(msrs, cpuList, events, f, argv))
	start := time.Now()
	var end atomic.Int64 // when tracing was asked to stop (detaching takes a while)
	context.AfterFunc(ctx, func() { end.Store(time.Now().UnixNano()) })
	w := tracefmt.New(cmd.OutOrStdout(), f.json)
	if err := tr.RunFlush(ctx, w.Event, w.Flush); err != nil {
		return err
	}
	st, err := tr.Stats()
	if err != nil {
		return err
	}
	counts, err := tr.Counts()
	if err != nil {
		return err
	}
	stopped := time.Now()
	if e := end.Load(); e != 0 {
		stopped = time.Unix(0, e)
	}
	if err := w.WriteSummary(w.Summary(st, stopped.Sub(start), f.countOnly, counts)); err != nil {
		return err
	}
	if w := lossWarning(st.Lost, st.Missed); w != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "hwpprobe: warning:", w)
	}
	if child != nil {
		return childStatus(argv[0], <-childDone)
	}
	return nil
}

// describeTrace says what is traced, for stderr: "writes of
// IA32_HWP_REQUEST (0x774) on CPUs 0-3, and power:cpu_frequency, for 1s".
func describeTrace(msrs []uint32, cpuList cpus.List, events []string, f traceFlags, argv []string) string {
	names := make([]string, len(msrs))
	for i, m := range msrs {
		names[i] = fmt.Sprintf("%s (%#x)", tracefmt.Name(m), m)
	}
	s := "writes of " + strings.Join(names, ", ")
	if f.countOnly {
		s = "(counting) " + s
	}
	if len(cpuList) == 1 {
		s += " on CPU " + cpuList.String()
	} else if len(cpuList) > 1 {
		s += " on CPUs " + cpuList.String()
	} else {
		s += " on all CPUs"
	}
	if len(events) > 0 {
		s += ", and " + strings.Join(events, ", ")
	}
	switch {
	case len(argv) > 0 && f.duration > 0:
		s += fmt.Sprintf(", while %s runs (at most %v)", argv[0], f.duration)
	case len(argv) > 0:
		s += fmt.Sprintf(", while %s runs", argv[0])
	case f.duration > 0:
		s += fmt.Sprintf(", for %v", f.duration)
	default:
		s += " until Ctrl-C"
	}
	return s
}

// childStatus passes on a traced command's failure as hwpprobe's exit
// status.
func childStatus(name string, err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return cli.ExitCodeError{Code: code}
		}
		return cli.ExitCodeError{Code: exitError, Err: fmt.Errorf("%s: %v", name, ee)}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// lossWarning says which events the trace does not hold, naming only the
// non-zero causes; "" when it holds them all.
func lossWarning(lost, missed uint64) string {
	var parts []string
	if lost > 0 {
		parts = append(parts, fmt.Sprintf("%d events lost (ring buffer full)", lost))
	}
	if missed > 0 {
		parts = append(parts, fmt.Sprintf("%d events missed (another BPF program was running on that CPU)", missed))
	}
	return strings.Join(parts, ", ")
}
