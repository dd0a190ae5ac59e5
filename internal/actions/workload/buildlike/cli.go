// SPDX-License-Identifier: Apache-2.0

package buildlike

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// Bounds of the built-in workload's flags: 10^8 units are about 14 hours
// of one core; 4096 jobs, more CPUs than any machine here.
const (
	MaxSize = 100_000_000
	MaxJobs = 4096
)

// AddFlags registers `hwpprobe workload buildlike`'s flags on f, filling
// c; jobs is the default job limit (DefaultJobs).
func (c *Config) AddFlags(f *pflag.FlagSet, jobs int) {
	f.Uint64Var(&c.Seed, "seed", DefaultSeed, "seed of the plan")
	cli.IntVarP(f, &c.Size, "size", "", DefaultSize, 0, MaxSize, "total work in units (one is about half a millisecond of one core)")
	cli.IntVarP(f, &c.Jobs, "jobs", "", jobs, 1, MaxJobs, "job limit, like make -j")
}

// RunSelf runs c's plan until it ends or is stopped, each step a
// `hwpprobe workload burn UNITS` process of this binary writing to
// stderr.
func RunSelf(ctx context.Context, c Config, stderr io.Writer) error {
	plan, err := NewPlan(c)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("buildlike: find hwpprobe's binary: %w", err)
	}
	return RunUntilStopped(ctx, plan, ExecSpawn(stderr, exe, "workload", "burn"))
}

// BurnArg is `hwpprobe workload burn UNITS`: Burn of the units arg names.
func BurnArg(arg string) error {
	u, err := strconv.Atoi(arg)
	if err != nil || u < 0 {
		return cli.Usagef("burn: %q is not a number of units", arg)
	}
	Burn(u)
	return nil
}
