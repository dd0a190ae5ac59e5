// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
)

// PrepareExplain turns cfg, an experiment of explain's two sides A and
// B, into the chain's experiment (docs/explain.md): as root, it builds
// the chain of profiles from A to B and sets cfg's sides to it. Under
// DryRun it prints the chain and the schedule to stdout and returns done:
// nothing is run.
func PrepareExplain(cfg *Config, stdout io.Writer) (done bool, err error) {
	if os.Geteuid() != 0 {
		return false, fmt.Errorf("%w: explain applies each profile to read what it leaves in the registers; run it as root (sudo hwpprobe explain ...)", profile.ErrNotRoot)
	}
	ch, err := BuildChain(ChainConfig{Root: cfg.Root, FS: cfg.FS, JournalDir: cfg.JournalDir,
		A: cfg.Sides[0], B: cfg.Sides[1], AllowDaemons: cfg.AllowDaemons})
	if err != nil {
		return false, err
	}
	cfg.Sides, cfg.Explain, cfg.AllowTwins = ch.Sides, &ch.Explain, true
	if !cfg.DryRun {
		return false, nil
	}
	if err := WriteChain(stdout, ch); err != nil {
		return false, err
	}
	_, err = fmt.Fprintf(stdout, "dry run: schedule %s; nothing was run, every setting is as it was\n",
		String(Schedule(len(cfg.Sides), cfg.Warmup, cfg.Runs, cfg.Order, cfg.Seed)))
	return true, err
}

// WriteChain prints the chain: each side with its role and profile, the
// fields of each step, then the registers each side leaves, per core
// type (matrix's table).
func WriteChain(w io.Writer, ch *Chain) error {
	changed := "no field: A and B are register twins"
	if len(ch.Changed) > 0 {
		changed = fmt.Sprint(ch.Changed)
	}
	fmt.Fprintf(w, "explain: A and B differ in %s\n", changed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "side\tprofile\trole")
	for i, s := range ch.Sides {
		fmt.Fprintf(tw, "%c\t%s\t%s\n", 'A'+i, s, ch.Roles[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "registers each side leaves (each applied in turn and restored, as matrix does):")
	profile.WriteMatrix(w, ch.Regs)
	return nil
}
