// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/msr"
)

// TestCheck: the check before a run compares what the side's settings
// left (its sysfs files' text, the request registers' bits the settings
// fix) with what holds now, naming each change old -> new; a register's
// other bits (desired) and registers the CPU does not answer are not
// changes.
func TestCheck(t *testing.T) {
	const perf = 0x3e3e // IA32_HWP_REQUEST under performance: min = max = 62, EPP 0
	epp := profile.Write{Key: profile.EPP, CPU: 1, Path: profile.Path(profile.EPP, 1), Value: "power"}
	noTurbo := profile.Write{Key: profile.NoTurbo, CPU: -1, Path: profile.Path(profile.NoTurbo, 0), Value: "1"}
	tests := []struct {
		name   string
		change func(root string, regs msr.Map)
		want   []recording.Unheld
	}{
		{name: "held", change: func(string, msr.Map) {}},
		{name: "desired is not a setting", change: func(_ string, regs msr.Map) { regs[0][hwp.MSR_IA32_HWP_REQUEST] = perf | 0x20<<16 }},
		{name: "EPP file", change: func(root string, _ msr.Map) { write(t, root, epp.Path, "balance_power\n") },
			want: []recording.Unheld{{CPU: 1, Name: "energy_performance_preference", Want: "power", Got: "balance_power"}}},
		{name: "file gone", change: func(root string, _ msr.Map) { os.Remove(filepath.Join(root, noTurbo.Path)) },
			want: []recording.Unheld{{CPU: -1, Name: "no_turbo", Want: "1", Got: "(unreadable)"}}},
		{name: "request register", change: func(_ string, regs msr.Map) { regs[0][hwp.MSR_IA32_HWP_REQUEST] = 0x40003e05 },
			want: []recording.Unheld{{CPU: 0, Name: "IA32_HWP_REQUEST", Want: "0x3e3e", Got: "0x40003e05"}}},
		{name: "EPB", change: func(_ string, regs msr.Map) { regs[1][hwp.MSR_IA32_ENERGY_PERF_BIAS] = 15 },
			want: []recording.Unheld{{CPU: 1, Name: "IA32_ENERGY_PERF_BIAS", Want: "0x6", Got: "0xf"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, epp.Path, "power\n")
			write(t, root, noTurbo.Path, "1\n")
			regs := msr.Map{0: {hwp.MSR_IA32_HWP_REQUEST: perf, hwp.MSR_IA32_ENERGY_PERF_BIAS: 6},
				1: {hwp.MSR_IA32_HWP_REQUEST: perf, hwp.MSR_IA32_ENERGY_PERF_BIAS: 6}}
			c := &checker{fs: sysfs.NewFS(root), cpus: cpus.List{0, 1}, dev: regs, driver: "intel_pstate"}
			ref, _ := c.reference(&profile.Plan{Writes: []profile.Write{noTurbo, epp}})
			tc.change(root, regs)
			h := c.check(ref)
			if d := cmp.Diff(tc.want, h.Unheld); d != "" {
				t.Errorf("unheld (-want +got):\n%s", d)
			}
			if len(h.Regs) != 4 || h.TimeNs == 0 {
				t.Errorf("check read %d registers at %d, want 4 (two a CPU) and its time", len(h.Regs), h.TimeNs)
			}
		})
	}
}

func write(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLeftover: a side is applied over the one before only when it sets
// everything that one set; otherwise the original settings come back
// first.
func TestLeftover(t *testing.T) {
	parse := func(s string) *profile.Profile {
		p, err := profile.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	perf, pse, minpct := parse("performance"), parse("powersave:epp=performance"), parse("powersave:epp=0,min_perf_pct=100")
	tests := []struct {
		name       string
		prev, next *profile.Profile
		want       bool
	}{
		{"first side", nil, perf, false},
		{"same side", pse, pse, false},
		{"superset", perf, pse, false},
		{"epp left", pse, perf, true},
		{"min_perf_pct left", minpct, pse, true},
		{"subset left", parse("powersave:epp=power@0-3"), parse("powersave:epp=power"), true},
		{"to current", perf, parse("current"), true},
	}
	for _, tc := range tests {
		if got := leftover(tc.prev, tc.next); got != tc.want {
			t.Errorf("%s: leftover = %v, want %v", tc.name, got, tc.want)
		}
	}
}
