// SPDX-License-Identifier: Apache-2.0

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

// TestRecordEmulatedMeteorLake records under `hwpemu run mtl-165u` (the
// emulated Core Ultra 7 165U of emu/machines/mtl-165u.yaml) while CMD
// switches cpu0 to the performance governor, and checks the recording
// against the machine description and intel_pstate's rules:
//   - TSC_MHz over the run is the description's tsc_mhz, 1700;
//   - Bzy_MHz over the run stays within each core type's HWP highest performance x
//     its perf unit (P 62 x 80 MHz, E 38 x 100 MHz, LP-E 21 x 100 MHz):
//     under hwpemu's closed loop the one busy loop CMD runs is on CPU 0,
//     a P-core, whose Bzy_MHz must be measured; the E-core and the LP
//     E-core are then idle or nearly so, and an idle CPU counts no cycles
//     (no Bzy_MHz);
//   - package watts are measured, and the package's energy over the run
//     is at least the cores' (not per interval: the two counters are read
//     one after the other, and a loaded machine that stalls between them
//     for 7 ms moves 7% of a 100 ms interval's cores energy, the margin
//     here, into the next interval);
//   - cpu0's IA32_HWP_REQUEST goes from powersave with EPP
//     balance_performance (64 on Meteor Lake, docs/kernel-facts.md section 1) to
//     min = max = highest (62) with EPP 0 (intel_pstate_hwp_set() under
//     the performance policy), while the E-core's request stays;
//   - the recording holds the emulated machine's writes of that switch
//     (IA32_PERF_CTL then IA32_HWP_REQUEST on cpu0, with their old values,
//     by the shell), and the summary lists them with their writer.
func TestRecordEmulatedMeteorLake(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "emu.rec")
	b := runEmu(t, 2*time.Minute, "run", "mtl-165u", "--", hwpprobeBin, "record", "-o", out, "-C", "0,4,12", "--",
		"sh", "-c", "(while :; do :; done) & b=$!; sleep 1.5; echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor; sleep 1.5; kill $b")
	if !strings.Contains(string(b), `EMULATED: machine "mtl-165u"`) {
		t.Errorf("summary does not say the machine is emulated:\n%s", b)
	}
	rec := readRec(t, out)
	if rec.Meta.Emulated != "mtl-165u" || rec.Meta.Host.Model != 0xAA || !rec.Complete() {
		t.Fatalf("meta %+v, complete %v", rec.Meta, rec.Complete())
	}
	run := rec.Runs[0]
	// Over the run, not per interval: one interval's figures carry the
	// jitter of reading the emulated counters through FUSE at a slightly
	// different moment than the sampler's clock (a few ms in 100), which
	// cancels over the run.
	maxBzy := map[string]float64{"P": 62 * 80, "E": 38 * 100, "LP-E": 21 * 100}
	for _, row := range summary.Summarize(rec, run).Rows {
		if pj, cj := row.Joule("PkgWatt"), row.Joule("CorWatt"); row.Type == "all" && (!pj.Valid() || pj <= 0 || (cj.Valid() && cj > pj)) {
			t.Errorf("over the run: package %v J, cores %v J", pj, cj)
		}
		if v := row.TSCMHz; !v.Valid() || v < 1700*0.99 || v > 1700*1.01 {
			t.Errorf("%s TSC_MHz %v over the run, want 1700", row.Type, v)
		}
		if max, ok := maxBzy[row.Type]; ok && ((row.Type == "P" && !row.BzyMHz.Valid()) || (row.BzyMHz.Valid() && float64(row.BzyMHz) > max*1.01)) {
			t.Errorf("%s Bzy_MHz %v over the run, above its HWP highest %v MHz", row.Type, row.BzyMHz, max)
		}
	}
	pkgW := run.PackageColumn("PkgWatt")
	var first, last map[int]uint64
	for _, s := range run.Samples {
		regs := map[int]uint64{}
		for _, c := range s.CPUs {
			if r, ok := c.Reg(hwp.MSR_IA32_HWP_REQUEST); ok {
				regs[c.CPU] = r
			}
		}
		for _, p := range s.Packages {
			if w := p.Value(pkgW); !w.Valid() || w <= 0 {
				t.Errorf("package %d: PkgWatt %v", p.Package, w)
			}
		}
		if first == nil {
			first = regs
		}
		last = regs
	}
	types := map[string]int{}
	for _, r := range run.Samples[0].Summaries {
		types[r.Type] = r.CPUs
	}
	if types["P"] != 1 || types["E"] != 1 || types["LP-E"] != 1 || types["all"] != 3 {
		t.Errorf("summary rows %v, want one CPU of each core type", types)
	}
	before, after := hwp.DecodeRequest(first[0]), hwp.DecodeRequest(last[0])
	if before.EPP != 64 || before.Max != 62 {
		t.Errorf("cpu0 HWP_REQUEST before %#x = %+v, want max 62 EPP 64", first[0], before)
	}
	if after.Min != 62 || after.Max != 62 || after.EPP != 0 {
		t.Errorf("cpu0 HWP_REQUEST after %#x = %+v, want min = max = 62, EPP 0", last[0], after)
	}
	if first[4] != last[4] {
		t.Errorf("cpu4 HWP_REQUEST changed %#x -> %#x; only cpu0's governor was written", first[4], last[4])
	}
	if !strings.Contains(string(b), "cpu0 IA32_HWP_REQUEST:") {
		t.Errorf("summary does not list cpu0's HWP_REQUEST change:\n%s", b)
	}
	var writes []recording.TraceEvent
	for _, e := range run.Trace {
		if e.Emulated {
			e.TimeNs, e.PID = 0, 0
			writes = append(writes, e)
		}
	}
	want := []recording.TraceEvent{
		{CPU: 0, Comm: "sh", MSR: 0x199, Old: 0x1100, Value: 0x3e00, Emulated: true},
		{CPU: 0, Comm: "sh", MSR: 0x774, Old: 0x40003e05, Value: 0x3e3e, Emulated: true},
	}
	if diff := cmp.Diff(want, writes); diff != "" {
		t.Errorf("emulated writes in the recording (-want +got):\n%s", diff)
	}
	for _, line := range []string{"IA32_HWP_REQUEST (0x774) [emulated]: 1 writes on CPUs 0", "      by sh (pid "} {
		if !strings.Contains(string(b), line) {
			t.Errorf("summary lacks %q:\n%s", line, b)
		}
	}
}
