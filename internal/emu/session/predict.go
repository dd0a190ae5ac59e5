// SPDX-License-Identifier: Apache-2.0

package session

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// PredictConfig is `hwpemu predict`.
type PredictConfig struct {
	Machine        string   // a built-in machine or a description file
	Variant        string   // the model variant
	Busy           int      // how many CPUs are busy (the first online ones); 0: all
	Profiles       []string // as hwpprobe names them; at least one
	Stdout, Stderr io.Writer
}

// Predict runs the machine's model alone (emu.Predict) for each profile
// and writes a table of the steady states on c.Stdout, the banner on
// c.Stderr. A bad profile, machine or variant is a usage error.
func Predict(c PredictConfig) error {
	m, err := Machine{Name: c.Machine, Variant: c.Variant, TimeScale: 1}.Load(emu.WithLoad(emu.ConstLoad{0}))
	if err != nil {
		return err
	}
	var sides []emu.PredictProfile
	for _, s := range c.Profiles {
		p, err := predictProfile(s, m.Online())
		if err != nil {
			return err
		}
		sides = append(sides, p)
	}
	preds, err := emu.Predict(c.Machine, emu.PredictOptions{Variant: c.Variant, Busy: c.Busy}, sides)
	if errors.Is(err, emu.ErrPredict) {
		return cli.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	banner(c.Stderr, m.Name(), m.Summary(), m.VariantSummary())
	writePredictions(c.Stdout, m, c.Busy, preds)
	return nil
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
