// SPDX-License-Identifier: Apache-2.0

package watch

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// Command is `hwpprobe watch`'s options (docs/watch.md).
type Command struct {
	interval time.Duration
	cpuSpec  string
	show     string
	perCPU   bool
	count    int
}

// AddFlags registers watch's flags on f, filling c.
func (c *Command) AddFlags(f *pflag.FlagSet) {
	cli.DurationVarP(f, &c.interval, "interval", "i", time.Second, sampler.MinInterval, sampler.MaxInterval, "sampling interval (10ms to 24h)")
	cli.CPUListVar(f, &c.cpuSpec, "CPUs to sample, e.g. 0-3,8 (default: every online CPU)")
	f.StringVar(&c.show, "show", "", "columns to show, comma-separated (default: every available one): "+fmt.Sprint(sampler.ColumnNames()))
	f.BoolVar(&c.perCPU, "per-cpu", false, "one row per CPU besides the summaries")
	cli.IntVarP(f, &c.count, "num-iterations", "n", 0, 0, math.MaxInt32, "stop after this many samples (default: until Ctrl-C)")
}

// Run watches the machine at root on w (Run's ends).
func (c *Command) Run(ctx context.Context, root string, w io.Writer) error {
	var cols []string
	if c.show != "" {
		var err error
		if cols, err = sampler.ParseColumns(c.show); err != nil {
			return cli.UsageError{Err: err}
		}
	}
	list, err := cli.SelectCPUs(root, c.cpuSpec)
	if err != nil {
		return err
	}
	return Run(ctx, w, Config{Root: root, CPUs: list, Interval: c.interval, Columns: cols, PerCPU: c.perCPU, Count: c.count})
}
