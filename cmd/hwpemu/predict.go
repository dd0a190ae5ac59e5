// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

func newPredictCmd() *cobra.Command {
	var (
		variant string
		busy    int
	)
	cmd := &cobra.Command{
		Use:   "predict [flags] MACHINE PROFILE...",
		Short: "Print what the model alone says a CPU-bound workload gets under each profile",
		Long: `predict runs the emulated machine's model, with no FUSE and no workload, for
each PROFILE (as hwpprobe names them: performance, powersave:epp=0,
powersave:epp=performance, key=value,...): a fresh machine, the profile written
to its sysfs files under the kernel's rules, --busy-cpus CPUs busy all the time
(the first ones, all online CPUs by default) until the power limits and the
temperature have settled (after PL2's window, under PL1). It prints per profile
the mean delivered MHz of each core type, the package watts, PL1 and the
temperature at the end, and the work rate: the sum over the busy CPUs of their
delivered MHz, with its ratio to the first profile's.`,
		Example:           `  hwpemu predict --variant min-pins mtl-165u performance powersave:epp=0 powersave:epp=performance`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(2)),
		ValidArgsFunction: complete.FirstThen(completeMachines, complete.Profiles(emulatedGovernors, false)),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := (&machineFlags{variant: variant, timeScale: 1}).load(args[0], emu.WithLoad(emu.ConstLoad{0}))
			if err != nil {
				return err
			}
			var sides []emu.PredictProfile
			for _, s := range args[1:] {
				p, err := predictProfile(s, m.Online())
				if err != nil {
					return err
				}
				sides = append(sides, p)
			}
			preds, err := emu.Predict(args[0], emu.PredictOptions{Variant: variant, Busy: busy}, sides)
			if errors.Is(err, emu.ErrPredict) {
				return cli.UsageError{Err: err}
			}
			if err != nil {
				return err
			}
			banner(cmd.ErrOrStderr(), m.Name(), m.Summary(), m.VariantSummary())
			writePredictions(cmd.OutOrStdout(), m, busy, preds)
			return nil
		},
	}
	cmd.Flags().StringVar(&variant, "variant", "", variantUsage)
	complete.Flag(cmd, "variant", completeVariants)
	cli.IntVarP(cmd.Flags(), &busy, "busy-cpus", "", 0, 0, math.MaxInt32,
		"how many CPUs are busy (the first online ones), 0 for every online CPU")
	return cmd
}

// predictProfile parses a profile as hwpprobe does and turns it into the
// sysfs writes that make it on a machine with these online CPUs: its
// settings in order (profile.Keys order, all-CPU values before subsets,
// so a subset overrides), a per-CPU key written to each CPU it covers. A
// TuneD or power-profiles-daemon profile has no writes the model could
// apply: a usage error.
func predictProfile(s string, online cpus.List) (emu.PredictProfile, error) {
	p, err := profile.Parse(s)
	if err != nil {
		return emu.PredictProfile{}, cli.UsageError{Err: err}
	}
	if p.Kind == profile.Tuned || p.Kind == profile.PPD {
		return emu.PredictProfile{}, cli.Usagef("predict: %s: a TuneD or power-profiles-daemon profile is the daemon's; give its settings (key=value,...) instead", p)
	}
	out := emu.PredictProfile{Name: s}
	for _, st := range p.Settings {
		if st.Key.Global() {
			out.Writes = append(out.Writes, emu.SysfsWrite{Path: profile.Path(st.Key, 0), Value: st.Value})
			continue
		}
		for _, c := range online {
			if st.CPUs == nil || st.CPUs.Contains(c) {
				out.Writes = append(out.Writes, emu.SysfsWrite{Path: profile.Path(st.Key, c), Value: st.Value})
			}
		}
	}
	return out, nil
}

// writePredictions prints the predictions as a table: a line saying what
// was run, then one row per profile.
func writePredictions(w io.Writer, m *emu.Machine, busy int, preds []emu.Prediction) {
	busyCPUs := m.Online()
	if busy > 0 {
		busyCPUs = busyCPUs[:busy]
	}
	first := preds[0]
	fmt.Fprintf(w, "%s, model variant %s: %d busy CPUs (%s), steady state after %s, mean over %s; work = sum of the busy CPUs' delivered MHz\n",
		m.Name(), m.Variant(), len(busyCPUs), busyCPUs, seconds(first.Settle), seconds(first.Window))
	nameW := len("profile")
	for _, p := range preds {
		nameW = max(nameW, len(p.Profile))
	}
	head := []string{fmt.Sprintf("%-*s", nameW, "profile")}
	for _, t := range first.Types {
		head = append(head, fmt.Sprintf("%8s", t.Type+" MHz"))
	}
	head = append(head, fmt.Sprintf("%7s %7s %7s %9s  vs %s", "pkg W", "PL1 W", "temp C", "work MHz", first.Profile))
	fmt.Fprintln(w, strings.Join(head, " "))
	for _, p := range preds {
		row := []string{fmt.Sprintf("%-*s", nameW, p.Profile)}
		for _, t := range p.Types {
			row = append(row, fmt.Sprintf("%8.0f", t.MHz))
		}
		row = append(row, fmt.Sprintf("%7.2f %7s %7s %9.0f  %.3f", p.PkgWatts, orDash(p.PL1Watts, "%.2f"), orDash(p.TempC, "%.1f"),
			p.WorkMHz, p.WorkMHz/first.WorkMHz))
		fmt.Fprintln(w, strings.Join(row, " "))
	}
}

// orDash formats v, or "-" for 0 (not modelled).
func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// seconds formats d as "600 s".
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) + " s" }
