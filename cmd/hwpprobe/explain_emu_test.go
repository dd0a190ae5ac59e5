// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExplainDryRunEmulated: on the emulated Core Ultra 7 165U,
// performance (min = max, EPP 0) and powersave:epp=performance (min
// lowest, EPP 16) differ in min and EPP; the chain goes through
// performance's register twin on powersave, changes min, then EPP, and
// adds the corner with min at performance's value and EPP 16. --dry-run
// prints it with the registers each side leaves and changes nothing. From
// powersave to performance the chain goes the other way (performance
// holds min = max whatever min_perf_pct says): B's fields one at a time
// on powersave, to performance's register twin.
func TestExplainDryRunEmulated(t *testing.T) {
	dir := t.TempDir()
	script := settingsScript + ` > before
"$H" explain performance powersave:epp=performance --dry-run -o x.hwpr -- sleep 0.05 > out 2> err; echo "status $?"
"$H" explain powersave performance --dry-run -o x.hwpr -- sleep 0.05 > back 2> err; echo "back status $?"
` + settingsScript + ` > after; cmp before after && echo unchanged; ls x.hwpr 2>&1 | grep -c 'No such'`
	out, _ := emuDiff(t, "mtl-165u", dir, script)
	if !strings.Contains(out, "\nstatus 0") || !strings.Contains(out, "back status 0") || !strings.Contains(out, "unchanged") || !strings.Contains(out, "\n1\n") {
		t.Fatalf("want status 0, settings unchanged, no file:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out"))
	chain := chainLines(b)
	var regs []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 11 && f[1] == "P-core" {
			regs = append(regs, f[0]+" min "+f[5]+" max "+f[6]+" epp "+f[8])
		}
	}
	wantChain := []string{"A performance", "B min_perf_pct=100,governor=powersave,epp=0", "C governor=powersave,epp=0",
		"D powersave:epp=performance", "E min_perf_pct=100,governor=powersave,epp=performance"}
	wantRegs := []string{"governor=performance min 62 max 62 epp 0", "min_perf_pct=100,governor=powersave,epp=0 min 62 max 62 epp 0",
		"governor=powersave,epp=0 min 5 max 62 epp 0", "governor=powersave,epp=performance min 5 max 62 epp 16",
		"min_perf_pct=100,governor=powersave,epp=performance min 62 max 62 epp 16"}
	if d := cmp.Diff(wantChain, chain); d != "" {
		t.Errorf("chain (-want +got):\n%s\n%s", d, b)
	}
	if d := cmp.Diff(wantRegs, regs); d != "" {
		t.Errorf("P-core registers (-want +got):\n%s\n%s", d, b)
	}
	// The other way, powersave's min cannot be held under performance: the
	// chain goes on A's settings to B's register twin, then to B.
	back, _ := os.ReadFile(filepath.Join(dir, "back"))
	if d := cmp.Diff([]string{"A powersave", "B min_perf_pct=100,governor=powersave", "C min_perf_pct=100,governor=powersave,epp=0",
		"D performance", "E governor=powersave,epp=0"}, chainLines(back)); d != "" {
		t.Errorf("chain from powersave to performance (-want +got):\n%s\n%s", d, back)
	}
	if !strings.Contains(string(b), "explain: A and B differ in [min epp]") || !strings.Contains(string(b), "register twin of A") {
		t.Errorf("the dry run does not name the fields and the twin:\n%s", b)
	}
}

// chainLines are the dry run's sides: "A performance", ...
func chainLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && len(f[0]) == 1 && f[0] >= "A" && f[0] <= "H" {
			out = append(out, f[0]+" "+f[1])
		}
	}
	return out
}

// explainJSON is the part of the JSON report that explain adds.
type explainJSON struct {
	Schema string `json:"schema"`
	Sides  []struct {
		CoreTypes []struct {
			Type string                              `json:"type"`
			Held map[string][]struct{ Value uint64 } `json:"held"`
		} `json:"core_types"`
	} `json:"sides"`
	Explain []struct {
		Figure string `json:"figure"`
		Steps  []struct {
			From, To string
			Fields   []string `json:"fields"`
			Verdict  string   `json:"verdict"`
		} `json:"steps"`
		Interaction *struct {
			Fields [2]string `json:"fields"`
		} `json:"interaction"`
	} `json:"explain"`
}

// TestExplainEmulated: explain runs the chain as one five-side experiment
// with a sleep workload, attributes the time to the steps (twin, min,
// EPP) with the min-EPP interaction, restores the settings, and explain
// EXPERIMENT attributes again from the file; explain of a profile with
// itself, or of three profiles, is one line and status 2.
func TestExplainEmulated(t *testing.T) {
	dir := t.TempDir()
	script := settingsScript + ` > before
"$H" explain performance powersave:epp=performance --runs 2 --warmup 0 -o x.hwpr --json x.json -- sleep 0.05 > out 2> err; echo "live status $?"
` + settingsScript + ` > after; cmp before after && echo unchanged
"$H" explain x.hwpr --precision 0.5 --json y.json --html y.html > out2 2>&1; echo "offline status $?"
for args in "performance performance -- true" "performance powersave powersave:epp=power -- true"; do
  "$H" explain $args -o z.hwpr 2> err; echo "status $? lines $(wc -l < err): $(cat err)"; done`
	out, _ := emuDiff(t, "mtl-165u", dir, script)
	for _, want := range []string{"live status 0", "unchanged", "offline status 0", "A and B are the same profile governor=performance: nothing to explain",
		"want two profiles A B"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "status 2 lines 1:") != 2 {
		t.Errorf("want two one-line status-2 errors:\n%s", out)
	}
	type step struct{ From, To, Fields string }
	summary := func(path string) (string, []step, [2]string) {
		var j explainJSON
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &j) != nil || len(j.Explain) == 0 || j.Explain[0].Interaction == nil {
			t.Fatalf("read %s: %v\n%s", path, err, b)
		}
		checkSchema(t, j.Schema, b)
		var steps []step
		for _, s := range j.Explain[0].Steps {
			steps = append(steps, step{s.From, s.To, strings.Join(s.Fields, ",")})
		}
		return j.Schema + " " + j.Explain[0].Figure, steps, j.Explain[0].Interaction.Fields
	}
	for _, f := range []string{"x.json", "y.json"} {
		head, steps, inter := summary(filepath.Join(dir, f))
		want := []step{{"A", "B", ""}, {"B", "C", "min"}, {"C", "D", "epp"}}
		if d := cmp.Diff(want, steps); d != "" || head != "hwpprobe-diff/2 time" || inter != [2]string{"min", "epp"} {
			t.Errorf("%s: %s, interaction %v, steps (-want +got):\n%s", f, head, inter, d)
		}
	}
	// Every side held, during its runs, what the chain's probe read: the
	// P-cores' min and EPP (nothing carried over from the side before).
	var j explainJSON
	if b, err := os.ReadFile(filepath.Join(dir, "x.json")); err != nil || json.Unmarshal(b, &j) != nil {
		t.Fatalf("read x.json: %v", err)
	}
	var held []string
	for i, side := range j.Sides {
		for _, ct := range side.CoreTypes {
			if ct.Type == "P" && len(ct.Held["min"]) > 0 && len(ct.Held["epp"]) > 0 {
				held = append(held, fmt.Sprintf("%c min %d epp %d", 'A'+i, ct.Held["min"][0].Value, ct.Held["epp"][0].Value))
			}
		}
	}
	wantHeld := []string{"A min 62 epp 0", "B min 62 epp 0", "C min 5 epp 0", "D min 5 epp 16", "E min 62 epp 16"}
	if d := cmp.Diff(wantHeld, held); d != "" {
		t.Errorf("P-core registers held per side (-want +got):\n%s", d)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "out2"))
	if !strings.Contains(string(text), "explain time: A -> D") || !strings.Contains(string(text), "precision ±50%") {
		t.Errorf("offline text lacks the attribution:\n%s", text)
	}
	// The page shows the same attribution: each step's row as the text
	// words it, and the interaction.
	page, err := os.ReadFile(filepath.Join(dir, "y.html"))
	if err != nil {
		t.Fatal(err)
	}
	var stepLines []string
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "  B -> C  min ") {
			stepLines = append(stepLines, l)
		}
	}
	if len(stepLines) == 0 || !strings.Contains(string(page), `<h2 id="explain">`) ||
		!strings.Contains(string(page), `<tr><td>B -&gt; C</td><td>min</td>`) || !strings.Contains(html.UnescapeString(string(page)), "interaction of min and epp: ") {
		t.Errorf("page lacks the attribution of the text's step %q", stepLines)
	}
}
