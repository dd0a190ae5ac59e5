// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// TestEmulatedRecord records under `hwpemu run --busy 1 --time-scale 4
// mtl-165u` (the emulated Core Ultra 7 165U, PL1 15 W over a 7 s window,
// PL2 57 W) while the shell switches every CPU to the performance
// governor, waits for PL1 to take over, then lowers PL1 to 10 W through
// powercap, and checks the timeline: the snapshot's TjMax and limits, a
// PL1 step to 10 W from the write, the package at PL2 (when the model
// got there) then PL1 with bands for the limit bits, HWP_STATUS excursions from the switch on,
// the P-cores' request stepping to min = max
// = 62 with EPP 0, and the emulated model's writes by sh with decoded
// fields.
func TestEmulatedRecord(t *testing.T) {
	dir := t.TempDir()
	hwpemu, err := testbin.Build(dir, "../../../cmd/hwpemu")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := testbin.Build(dir, "../../../cmd/hwpprobe")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "emu.hwpr")
	script := "sleep 0.5; for f in /sys/devices/system/cpu/cpufreq/policy*/scaling_governor; do echo performance > $f; done; sleep 3.5; " +
		"echo 10000000 > /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw; sleep 1"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hwpemu, "run", "--busy", "1", "--time-scale", "4", "mtl-165u", "--",
		probe, "record", "-o", out, "-i", "100ms", "--", "sh", "-c", script)
	cmd.WaitDelay = 5 * time.Second
	if b, err := cmd.CombinedOutput(); err != nil || ctx.Err() != nil {
		t.Fatalf("hwpemu run ... record: %v (%v)\n%s", err, ctx.Err(), b)
	}
	tl := build(t, out, Options{})
	if tl.Emulated != "mtl-165u" || len(tl.Runs) != 1 || len(tl.Missing) != 0 {
		t.Fatalf("emulated %q, %d runs, missing %q", tl.Emulated, len(tl.Runs), tl.Missing)
	}
	run := tl.Runs[0]
	if run.TjMaxC == nil || *run.TjMaxC != 110 {
		t.Errorf("TjMax %v, want the description's 110", run.TjMaxC)
	}
	checkEmuLimits(t, run)
	checkEmuExcursions(t, run)
	checkEmuRequests(t, run)
	checkEmuWrites(t, run)
}

func checkEmuLimits(t *testing.T, run Run) {
	t.Helper()
	pl := run.PowerLimits
	if len(pl) != 2 || *pl[0].PL1W != 15 || *pl[0].PL2W != 57 || pl[1].Source != "write" || *pl[1].PL1W != 10 || *pl[1].PL2W != 57 || pl[1].T < 3.5 {
		t.Fatalf("power limits %s", jsonOf(pl))
	}
	bands := map[string][]Band{}
	for _, b := range run.LimitReasons {
		bands[b.Name] = append(bands[b.Name], b)
	}
	// PL1 limits from about 2 s after the switch on. PL2 limits before
	// that only when PL1's running average, which the model starts with
	// hwpemu, is still under 15 W at the switch: on a loaded host
	// hwpprobe's own start can take long enough for the powersave
	// machine at full load to pass it first.
	if len(bands["PkgPwrL1"]) == 0 || !strings.HasPrefix(run.LimitTable, "SDM vol. 4 MSR 64FH") {
		t.Fatalf("limit reasons (%s): %s; want a band of PkgPwrL1 (bit 10)", run.LimitTable, jsonOf(run.LimitReasons))
	}
	if len(bands["PkgPwrL2"]) == 0 {
		t.Logf("no PL2 phase (bit 11): PL1 limited from the switch on: %s", jsonOf(run.LimitReasons))
	}
	// One interval's watts carry the jitter of reading the emulated
	// counters through FUSE a little apart from the sampler's clock; the
	// median over a phase does not.
	for _, ph := range []struct {
		bit      string
		from, to float64
		watts    float64
	}{{"PkgPwrL2", 0, pl[1].T, 57}, {"PkgPwrL1", 0, pl[1].T, 15}} {
		var means []float64
		for _, s := range run.Series {
			for i, tt := range s.T {
				if s.Figure == "PkgWatt" && tt >= ph.from && tt < ph.to && inBands(tt, run.BucketSeconds, bands[ph.bit]) {
					means = append(means, s.Mean[i])
				}
			}
		}
		if len(bands[ph.bit]) == 0 {
			continue
		}
		slices.Sort(means)
		if len(means) < 3 || means[len(means)/2] < ph.watts*0.9 || means[len(means)/2] > ph.watts*1.1 {
			t.Errorf("PkgWatt while %s is set: %v, want a median near %v W", ph.bit, means, ph.watts)
		}
	}
}

// inBands reports whether the bucket [t, t+w) lies inside one of bands.
func inBands(t, w float64, bands []Band) bool {
	for _, b := range bands {
		if t >= b.From-1e-9 && t+w <= b.To+1e-9 {
			return true
		}
	}
	return false
}

// checkEmuExcursions: under the power limits the model sets HWP_STATUS's
// excursion to minimum on every CPU, from the switch on (it is sticky);
// the CPUs of the band's first interval may get it one after the other.
func checkEmuExcursions(t *testing.T, run Run) {
	t.Helper()
	last := 0.0 // the end of the last bucket with samples
	for _, s := range run.Series {
		if n := len(s.T); n > 0 {
			last = max(last, s.T[n-1]+run.BucketSeconds)
		}
	}
	var groups []string
	for _, b := range run.Excursions {
		groups = append(groups, b.Group)
		if b.Name != "excursion_to_minimum" || b.From < 0.5 || b.From > run.PowerLimits[1].T || b.To < last-run.BucketSeconds || b.Share < 0.9 {
			t.Errorf("excursion band %+v, samples to %v s, want from the switch (0.5 s) to the end on every CPU", b, last)
		}
	}
	if !slices.Equal(groups, []string{"P", "E", "LP-E"}) {
		t.Errorf("excursion bands %s, want one per core type", jsonOf(run.Excursions))
	}
}

func checkEmuRequests(t *testing.T, run Run) {
	t.Helper()
	want := map[string]float64{"min": 62, "max": 62, "epp": 0}
	for _, s := range run.Requests {
		w, ok := want[s.Field]
		if s.Group != "P" || !ok {
			continue
		}
		delete(want, s.Field)
		last := s.Steps[len(s.Steps)-1]
		// max is highest under powersave too; min and EPP change.
		if s.Register != "IA32_HWP_REQUEST" || len(s.Steps) < 2 && s.Field != "max" || last.Lo != w || last.Hi != w {
			t.Errorf("P-core request %s steps %s, want the last at %v", s.Field, jsonOf(s.Steps), w)
		}
	}
	if len(want) > 0 {
		t.Errorf("no P-core steps for %v: %s", want, jsonOf(run.Requests))
	}
}

func checkEmuWrites(t *testing.T, run Run) {
	t.Helper()
	var cpus []int
	for _, w := range run.Writes {
		if w.Register != "IA32_HWP_REQUEST" || !w.Emulated || w.Comm != "sh" || w.Old == "" {
			continue
		}
		cpus = append(cpus, w.CPU)
		for _, f := range w.Fields {
			if f.Name == "epp" && (f.New != uint64(0) || f.Old != uint64(64) || !f.Changed) {
				t.Errorf("CPU %d write: epp %v -> %v, want 64 -> 0", w.CPU, f.Old, f.New)
			}
		}
	}
	slices.Sort(cpus)
	cpus = slices.Compact(cpus)
	if len(cpus) != 14 {
		t.Errorf("IA32_HWP_REQUEST writes by sh on CPUs %v, want all 14: %s", cpus, jsonOf(run.Writes))
	}
}
