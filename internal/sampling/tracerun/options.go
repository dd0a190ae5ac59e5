// SPDX-License-Identifier: Apache-2.0

package tracerun

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Options are trace's filters as given on the command line
// (docs/trace.md).
type Options struct {
	MSRs      string // --msr: names or hex numbers, comma-separated
	MSRsSet   bool   // --msr was given (else the default MSRs)
	Events    string // --events: power, none, or group:name,...
	CPUs      string // -C: "" for all
	CountOnly bool
	Duration  time.Duration // --duration: 0 until Ctrl-C or CMD's end
	Out       *cli.Outputs  // --format
	flags     *pflag.FlagSet
}

// Configure sets cfg.Tracer from o, checking it against the machine
// under cfg.Root: bad input is a cli.UsageError. The power tracepoints
// this kernel lacks are named in a note on cfg.Stderr.
func Configure(o Options, cfg *Config) error {
	cfg.Tracer = ebpf.Options{MSRs: tracefmt.DefaultMSRs, CountOnly: o.CountOnly}
	var err error
	if o.MSRsSet {
		if cfg.Tracer.MSRs, err = tracefmt.ParseMSRFilter(o.MSRs); err != nil {
			return cli.Usagef("--msr: %w", err)
		}
	}
	if o.CPUs != "" {
		list, err := cpus.Parse(o.CPUs)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		online, err := sysfs.NewFS(cfg.Root).OnlineCPUs()
		if err != nil {
			return fmt.Errorf("online CPUs: %w", err)
		}
		if off := list.Minus(online); len(off) > 0 {
			return cli.Usagef("-C %s: CPU %s not online (online: %s)", o.CPUs, off, online)
		}
		cfg.Tracer.CPUs = list
	}
	if cfg.Tracer.TraceFS, err = ebpf.FindTraceFS(cfg.Root); err != nil {
		return err
	}
	var missing []string
	if cfg.Tracer.Events, missing, err = Events(cfg.Tracer.TraceFS, o.Events); err != nil {
		return err
	}
	if len(missing) > 0 {
		cli.Linef(cfg.Stderr, "hwpprobe", "note: this kernel lacks %s (not traced)", strings.Join(missing, ", "))
	}
	return nil
}

// Events resolves --events to tracepoint names; "power" keeps the
// PowerEvents the kernel has and returns the others as missing.
func Events(tracefs, spec string) (events, missing []string, err error) {
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
