// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// diffMultiJSON is the part of schema hwpprobe-diff/2 the tests read.
type diffMultiJSON struct {
	Schema string `json:"schema"`
	Sides  []struct {
		Label string `json:"label"`
	} `json:"sides"`
	Runs []struct {
		Side string `json:"side"`
	} `json:"runs"`
	Multi []struct {
		Name        string `json:"name"`
		Reference   string `json:"reference"`
		Comparisons []struct {
			Side string `json:"side"`
		} `json:"comparisons"`
	} `json:"multi"`
}

func readMultiJSON(t *testing.T, path string) diffMultiJSON {
	t.Helper()
	var j diffMultiJSON
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &j) != nil {
		t.Fatalf("read %s: %v\n%s", path, err, b)
	}
	checkSchema(t, j.Schema, b)
	return j
}

// TestDiffThreeSidesEmulated: three profiles under the emulated Core
// Ultra 7 165U run in Williams blocks (A B C, B C A), are compared with
// A (schema hwpprobe-diff/2), again offline with --reference B, and the
// settings come back; explain refuses the file (it has no chain).
func TestDiffThreeSidesEmulated(t *testing.T) {
	dir := t.TempDir()
	script := settingsScript + ` > before;
"$H" diff performance powersave powersave:epp=performance --runs 2 --warmup 0 -o e.hwpr --json e.json --markdown e.md --html e.html -- sleep 0.05 > out 2> err; echo "live status $?"
` + settingsScript + ` > after; cmp before after && echo unchanged
"$H" diff e.hwpr --reference B --json b.json > out2 2>&1; echo "offline status $?"
"$H" explain e.hwpr > /dev/null 2> err; echo "explain status $? lines $(wc -l < err): $(cat err)"`
	out, _ := emuDiff(t, "mtl-165u", dir, script)
	for _, want := range []string{"live status 0", "unchanged", "offline status 0", "explain status 2 lines 1: hwpprobe: explain: not an experiment: e.hwpr is not an experiment of hwpprobe explain (it has no chain)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	j := readMultiJSON(t, filepath.Join(dir, "e.json"))
	var order []string
	for _, r := range j.Runs {
		order = append(order, r.Side)
	}
	type summary struct {
		Schema, Order, Ref string
		Sides, Compared    []string
	}
	sum := func(j diffMultiJSON) summary {
		s := summary{Schema: j.Schema, Order: strings.Join(order, " ")}
		for _, x := range j.Sides {
			s.Sides = append(s.Sides, x.Label)
		}
		if len(j.Multi) > 0 {
			s.Ref = j.Multi[0].Name + " vs " + j.Multi[0].Reference
			for _, c := range j.Multi[0].Comparisons {
				s.Compared = append(s.Compared, c.Side)
			}
		}
		return s
	}
	want := summary{Schema: "hwpprobe-diff/2", Order: "A B C B C A", Ref: "time vs A", Sides: []string{"A", "B", "C"}, Compared: []string{"B", "C"}}
	if d := cmp.Diff(want, sum(j)); d != "" {
		t.Errorf("live JSON (-want +got):\n%s", d)
	}
	want.Ref, want.Compared = "time vs B", []string{"A", "C"}
	if d := cmp.Diff(want, sum(readMultiJSON(t, filepath.Join(dir, "b.json")))); d != "" {
		t.Errorf("offline --reference B JSON (-want +got):\n%s", d)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "out"))
	md, _ := os.ReadFile(filepath.Join(dir, "e.md"))
	for _, want := range []string{"verdict: ~ no significant difference in time between A and C", "ratio C/A", "Holm p="} {
		if !strings.Contains(string(text), want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "e.html"))
	for _, want := range []string{"hwpprobe diff: A vs B vs C", `id="multi-table"`, "(reference)", "Holm p="} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML page lacks %q", want)
		}
	}
	if !strings.Contains(string(md), "## hwpprobe diff: A vs B vs C") || !strings.Contains(string(md), "| C |") {
		t.Errorf("Markdown lacks the three sides:\n%s", md)
	}
}

// TestDiffSidesBadInputEmulated: more than 8 sides, the same side twice,
// register twins (performance and powersave with EPP 0 and min_perf_pct
// 100 on Meteor Lake), --runs auto, --reference, or --fail-if with three
// sides: one line, status 2, nothing changed, no file;
// --allow-twins runs the twins.
func TestDiffSidesBadInputEmulated(t *testing.T) {
	dir := t.TempDir()
	script := settingsScript + ` > before;
for args in "a b c d e f g h i -- true" "performance governor=performance -- true" "performance powersave:epp=0,min_perf_pct=100 -- true" "performance powersave powersave:epp=power --runs auto -- true" "performance powersave --reference A -- true" "performance powersave powersave:epp=power --reference D -- true"; do
  "$H" diff $args -o x.hwpr 2> err; echo "status $? lines $(wc -l < err): $(cat err)"; done
"$H" diff performance powersave powersave:epp=power --fail-if 'B slower than A by 5%' -o x.hwpr -- true 2> err; echo "status $? lines $(wc -l < err): $(cat err)"
` + settingsScript + ` > after; cmp before after && echo unchanged; ls x.hwpr 2>&1 | grep -c 'No such'
"$H" diff performance powersave:epp=0,min_perf_pct=100 --allow-twins --runs 1 --warmup 0 -o t.hwpr -- true > /dev/null 2>&1; echo "twins status $?"`
	out, _ := emuDiff(t, "mtl-165u", dir, script)
	if strings.Count(out, "status 2 lines 1:") != 7 || !strings.Contains(out, "unchanged") || !strings.Contains(out, "\n1\n") || !strings.Contains(out, "twins status 0") {
		t.Errorf("want seven one-line status-2 errors, settings unchanged, no file, twins run with --allow-twins:\n%s", out)
	}
	for _, want := range []string{"want 2 to 8 profiles", "sides A and B are the same profile governor=performance",
		"register twins", "--runs auto compares two sides", "--reference chooses among 3 or more sides", `--reference "D": not a side`,
		"--fail-if compares two sides"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDiffSidesFromOriginalEmulated: each side is applied from the
// original settings, not on top of the side before: after A
// (powersave with min_perf_pct=100: min = max) side B (powersave alone)
// holds powersave's own min (5 on the P-cores, 4 on the E-cores), not the
// min_perf_pct A left behind; the explain chain's C and D likewise.
func TestDiffSidesFromOriginalEmulated(t *testing.T) {
	dir := t.TempDir()
	out, code := emuDiff(t, "mtl-165u", dir, `"$H" diff powersave:min_perf_pct=100 powersave --runs 1 --warmup 0 -C 0,4 --json ab.json -o ab.hwpr -- sleep 0.05 > /dev/null 2>&1; echo "status $?"`)
	if code != 0 || !strings.Contains(out, "status 0") {
		t.Fatalf("status %d:\n%s", code, out)
	}
	j := readDiffJSON(t, filepath.Join(dir, "ab.json"))
	got := map[string]uint64{}
	for i, s := range j.Sides {
		for _, ct := range s.CoreTypes {
			if m := ct.Held["min"]; len(m) > 0 && ct.Type != "all" {
				got[string(rune('A'+i))+" "+ct.Type] = m[0].Value
			}
		}
	}
	want := map[string]uint64{"A P": 62, "A E": 38, "B P": 5, "B E": 4}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("min held per side and core type (-want +got):\n%s", d)
	}
}
