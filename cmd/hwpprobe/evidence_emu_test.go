// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDiffRunEvidenceEmulated: the per-run evidence separates two runs
// recorded under `hwpemu run --busy 1 mtl-165u` (every CPU busy, governor
// powersave with its low minimum, PL1 15 W over 28 s, PL2 57 W):
//
//   - side A's command switches every CPU to performance (min = max =
//     Highest) a moment in: PL2 binds and the model delivers every CPU
//     less than its new minimum, setting HWP_STATUS's excursion bit on
//     all 14 (docs/emulator.md), after the snapshot before the run had
//     it clear: 14 new excursions, P 4, E 8, LP-E 2;
//   - side B's command lowers PL1 to 10 W through powercap half a second
//     in, recorded with --no-trace: no write is traced, so only the
//     sampled MSR_PKG_POWER_LIMIT shows the step (10/57 W) and the
//     snapshot after holds it, in the register and the intel-rapl:0
//     zone; its CPUs, at powersave's minimum, have no excursion.
func TestDiffRunEvidenceEmulated(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.hwpr"), filepath.Join(dir, "b.hwpr")
	rec := func(out, flags, script string) {
		runEmu(t, 2*time.Minute, "run", "--busy", "1", "mtl-165u", "--",
			"sh", "-c", hwpprobeBin+" record -o "+out+" -i 100ms "+flags+" -- sh -c '"+script+"'")
	}
	rec(a, "", "sleep 0.3; "+allPerformance+"sleep 0.7")
	rec(b, "--no-trace", "sleep 0.5; echo 10000000 > /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw; sleep 0.5")
	js := filepath.Join(dir, "d.json")
	out, errOut, code := runBin(t, "diff", a, b, "--keep-disturbed", "--json", js) // A changes its settings
	if code != 0 {
		t.Fatalf("diff: status %d %q\n%s", code, errOut, out)
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		T      float64 `json:"t"`
		Source string  `json:"source"`
		How    string  `json:"how"`
		PL1    float64 `json:"pl1_w"`
		PL2    float64 `json:"pl2_w"`
	}
	var rep struct {
		Runs []struct {
			Evidence struct {
				New    map[string]int `json:"hwp_excursions_new"`
				Limits []step         `json:"power_limits"`
			} `json:"evidence"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Runs) != 2 {
		t.Fatalf("%v: %d runs\n%s", err, len(rep.Runs), raw)
	}
	ea, eb := rep.Runs[0].Evidence, rep.Runs[1].Evidence
	if d := cmp.Diff(map[string]int{"P": 4, "E": 8, "LP-E": 2}, ea.New); d != "" {
		t.Errorf("A's new excursions (-want +got):\n%s", d)
	}
	if len(eb.New) != 0 || eb.New == nil {
		t.Errorf("B's new excursions %v, want none (HWP_STATUS read)", eb.New)
	}
	var got []string
	for _, s := range eb.Limits {
		got = append(got, s.How+" "+s.Source+" "+fmtW(s.PL1)+"/"+fmtW(s.PL2))
		if s.How == "sampled" && (s.T < 0.4 || s.T > 1.2) {
			t.Errorf("B's sampled step at %+.2f s, want after the write at about 0.5 s", s.T)
		}
	}
	want := []string{"before MSR_PKG_POWER_LIMIT 15/57", "before intel-rapl:0 15/57", "sampled MSR_PKG_POWER_LIMIT 10/57",
		"after MSR_PKG_POWER_LIMIT 10/57", "after intel-rapl:0 10/57"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("B's power limits (-want +got):\n%s", d)
	}
	for _, s := range ea.Limits {
		if s.How == "sampled" || s.How == "write" {
			t.Errorf("A's power limits changed: %+v", s)
		}
	}
	if !strings.Contains(out, "sampled +0.") {
		t.Errorf("text report lacks B's sampled step:\n%s", out)
	}
}

func fmtW(w float64) string { return strconv.FormatFloat(w, 'g', -1, 64) }
