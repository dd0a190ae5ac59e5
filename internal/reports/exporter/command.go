// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
)

// Command is `hwpprobe exporter`'s options (docs/exporter.md).
type Command struct {
	o     Options
	msrs  string
	flags *pflag.FlagSet
}

// AddFlags registers exporter's flags on f, filling c.
func (c *Command) AddFlags(f *pflag.FlagSet) {
	c.flags = f
	f.StringVar(&c.o.Listen, "listen", "127.0.0.1:9977", "address to serve /metrics on")
	cli.CPUListVar(f, &c.o.CPUs, "CPUs to export, e.g. 0-3,8 (default: every online CPU)")
	f.StringVar(&c.o.TextfileDir, "textfile", "", "write DIR/"+TextfileName+" for node_exporter's textfile collector (then no listener unless --listen)")
	cli.DurationVarP(f, &c.o.TextfileInterval, "textfile-interval", "", 15*time.Second, 100*time.Millisecond, 24*time.Hour, "how often --textfile rewrites the file")
	f.StringVar(&c.o.WebConfigFile, "web.config.file", "", "exporter-toolkit web config (TLS, basic auth), as node_exporter's; it and its certificates must stay readable by --user")
	f.StringVar(&c.o.User, "user", "nobody", "user to switch to after opening the devices (root: stay root)")
	cli.DurationVarP(f, &c.o.MinInterval, "min-interval", "", DefaultMinInterval, 10*time.Millisecond, time.Hour,
		"shortest time between two refreshes; scrapes in between get the same figures")
	f.StringVar(&c.msrs, "msr", tracefmt.FormatMSRs(tracefmt.DefaultMSRs), "registers whose writes are counted: names or hex numbers, comma-separated")
}

// Run checks the options and exports the machine at root (Run), logging
// to log; bad options, CPUs, user, directory or web config are
// cli.UsageErrors.
func (c *Command) Run(ctx context.Context, root string, log io.Writer) error {
	o := c.o
	if o.TextfileDir != "" && !c.flags.Changed("listen") {
		o.Listen = ""
	}
	if o.Listen == "" && o.TextfileDir == "" {
		return cli.Usagef("exporter: nothing to do: --listen is empty and no --textfile DIR is given")
	}
	if o.Listen != "" {
		if _, _, err := net.SplitHostPort(o.Listen); err != nil {
			return cli.Usagef("exporter: --listen %q: %w (want HOST:PORT, e.g. 127.0.0.1:9977)", o.Listen, err)
		}
	}
	// The --textfile directory is Run's to check: it must be writable
	// by --user, not by root (ErrNotDir).
	files := iocheck.Set{Inputs: []string{o.WebConfigFile}, Streams: cli.StdStreams()}
	if err := cli.CheckFiles("exporter", files); err != nil {
		return err
	}
	var err error
	if o.MSRs, err = tracefmt.ParseMSRFilter(c.msrs); err != nil {
		return cli.Usagef("--msr: %w", err)
	}
	o.Root, o.Log = root, log
	err = Run(ctx, o)
	if errors.Is(err, ErrBadCPUList) || errors.Is(err, ErrBadUser) || errors.Is(err, ErrNotDir) || errors.Is(err, ErrWebConfig) {
		return cli.UsageError{Err: err}
	}
	return err
}
