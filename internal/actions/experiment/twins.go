// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"fmt"
	"os"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/msr"
)

// Probe applies each profile in turn, each from the original settings
// and with nothing running, reads per core type what the request
// registers and EPB hold (or the refusal) and restores every setting:
// what `hwpprobe matrix` does (profile.Matrix). Power daemons are not
// checked: the caller has.
func Probe(root string, fs sysfs.FS, journalDir string, profiles []string) ([]*profile.Verification, error) {
	dev, id := msr.Open(root), cpuid.Open(root)
	defer dev.Close()
	defer id.Close()
	src := snapshot.Sources{FS: fs, MSR: dev, CPUID: id, EUID: os.Geteuid()}
	vs, err := profile.Matrix(profile.MatrixOptions{Options: profile.Options{FS: fs, JournalDir: journalDir}, Sources: src,
		Profiles: profiles, IgnoreDaemons: true})
	if err != nil {
		return nil, fmt.Errorf("read what the sides leave in the registers: %w", err)
	}
	return vs, nil
}

// checkTwins refuses sides that are register twins: applied in turn (and
// restored) they leave the same request registers and EPB on every CPU,
// so this machine cannot tell them apart.
func checkTwins(cfg Config) error {
	vs, err := Probe(cfg.Root, cfg.FS, cfg.JournalDir, cfg.Sides)
	if err != nil {
		return err
	}
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			if profile.Twins(vs[i], vs[j]) {
				return fmt.Errorf("%w: sides %s (%s) and %s (%s) leave the same request registers and EPB on every CPU: register twins, which this machine cannot tell apart (--allow-twins compares them anyway)",
					ErrConfig, label(i), cfg.Sides[i], label(j), cfg.Sides[j])
			}
		}
	}
	return nil
}
