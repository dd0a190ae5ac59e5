// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
)

// plantedScript is a workload whose duration is planted on the request
// register: it reads cpu0's IA32_HWP_REQUEST (0x774) through the emulated
// msr device, and sleeps 0.3 s when cond holds of min (bits 7:0), max
// (15:8) and EPP (31:24), else 0.2 s.
func plantedScript(cond string) string {
	return `v=$(dd if=/dev/cpu/0/msr bs=8 count=1 skip=$((0x774)) iflag=skip_bytes status=none | od -An -tu8 | tr -d ' ')
min=$((v & 255)); max=$(((v >> 8) & 255)); epp=$(((v >> 24) & 255))
if ` + cond + `; then sleep 0.3; else sleep 0.2; fi`
}

// TestExplainPlanted: explain performance powersave:epp=performance on
// the emulated 165U with workloads whose duration depends on the request
// alone, as planted: on min = max only (the min step causes a 2/3 ratio,
// the EPP step is equivalent, no interaction), on EPP 0 only (the EPP
// step causes it, the min step is equivalent), and on both at once (the
// min step causes it at EPP 0 and not at EPP 16: the interaction). Each
// causing step's ratio interval covers the planted 0.2/0.3. A sleep's
// time on a loaded 2-CPU host wanders by several percent, so a step is
// shown equivalent within --precision 0.2, well inside the planted 33%;
// without a planted interaction the interaction is not said to cause
// anything (equivalent or undecided: its interval combines four sides).
// The precision applies offline (explain EXPERIMENT), as a live run takes
// it only with --runs auto.
func TestExplainPlanted(t *testing.T) {
	tests := []struct {
		name        string
		cond        string
		verdicts    map[string]string // step field -> verdict
		interaction bool              // planted: the interaction causes a difference
	}{
		{"min", `[ $min -eq $max ]`, map[string]string{"min": analysis.Causes, "epp": analysis.Equivalent}, false},
		{"epp", `[ $epp -eq 0 ]`, map[string]string{"min": analysis.Equivalent, "epp": analysis.Causes}, false},
		{"both", `[ $min -eq $max ] && [ $epp -eq 0 ]`, map[string]string{"min": analysis.Causes, "epp": analysis.Equivalent}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "work.sh"), []byte(plantedScript(tt.cond)), 0o755); err != nil {
				t.Fatal(err)
			}
			out, _ := emuDiff(t, "mtl-165u", dir, `"$H" explain performance powersave:epp=performance --runs 8 --warmup 1 -C 0 -o x.hwpr -- sh work.sh > out 2> err && `+
				`"$H" explain x.hwpr --precision 0.2 --json x.json >> out 2>> err; echo "status $?"; cat out err`)
			if !strings.Contains(out, "status 0") {
				t.Fatalf("explain failed:\n%s", out)
			}
			b, err := os.ReadFile(filepath.Join(dir, "x.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkSchema(t, "hwpprobe-diff/2", b)
			var j struct {
				Runs []struct {
					Side    string  `json:"side"`
					Seconds float64 `json:"seconds"`
					Counted bool    `json:"counted"`
				} `json:"runs"`
				Explain []struct {
					Figure string `json:"figure"`
					Steps  []struct {
						From    string   `json:"from"`
						Fields  []string `json:"fields"`
						RatioLo *float64 `json:"ratio_lo"`
						RatioHi *float64 `json:"ratio_hi"`
						Verdict string   `json:"verdict"`
					} `json:"steps"`
					Interaction *struct {
						Verdict string `json:"verdict"`
					} `json:"interaction"`
				} `json:"explain"`
			}
			if err := json.Unmarshal(b, &j); err != nil {
				t.Fatal(err)
			}
			// The planted effect is 0.1 s less (or more) than the step's
			// from side takes: a ratio of (t - 0.1) / t, t the median of
			// that side's counted runs (the script's own start adds to
			// both states alike).
			times := map[string][]float64{}
			for _, r := range j.Runs {
				if r.Counted {
					times[r.Side] = append(times[r.Side], r.Seconds)
				}
			}
			got := map[string]string{}
			var interaction string
			for _, e := range j.Explain {
				if e.Figure != "time" {
					continue
				}
				for _, s := range e.Steps {
					f := strings.Join(s.Fields, ",")
					if f == "" {
						continue // the twin step: TestExplainEmulated checks it
					}
					got[f] = s.Verdict
					if s.Verdict != analysis.Causes {
						continue
					}
					from := medianOf(times[s.From])
					planted := (from - 0.1) / from
					if s.RatioLo == nil || s.RatioHi == nil || *s.RatioLo > planted || *s.RatioHi < planted {
						t.Errorf("step %q causes, but its ratio interval [%v, %v] misses the planted %.3f (0.1 s less than side %s's %.3f s)",
							f, deref(s.RatioLo), deref(s.RatioHi), planted, s.From, from)
					}
				}
				if e.Interaction != nil {
					interaction = e.Interaction.Verdict
				}
			}
			if d := cmp.Diff(tt.verdicts, got); d != "" || (interaction == analysis.Causes) != tt.interaction {
				t.Errorf("verdicts (-want +got):\n%s\ninteraction %q, planted %v\n%s", d, interaction, tt.interaction, out)
			}
		})
	}
}

// medianOf is the median of v (NaN for none).
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
