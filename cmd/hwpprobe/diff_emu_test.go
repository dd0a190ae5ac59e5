// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
	"github.com/hwpprobe/hwpprobe/internal/termscreen"
)

// settingsScript prints every setting diff may change, so that a script
// can compare them before and after.
const settingsScript = `cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor /sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference /sys/devices/system/cpu/cpu*/cpufreq/scaling_min_freq /sys/devices/system/cpu/cpu*/power/energy_perf_bias`

// emuDiff runs script under `hwpemu run machine` with hwpprobe as $H, in
// dir, with a private journal directory; it returns the combined output
// and the script's status.
func emuDiff(t *testing.T, machine, dir, script string) (string, int) {
	t.Helper()
	b, code := emuRun(t, 3*time.Minute, dir, []string{"H=" + hwpprobeBin, profile.JournalDirEnv + "=" + filepath.Join(dir, "journal")},
		"run", machine, "--", "sh", "-c", script)
	return string(b), code
}

type diffJSON struct {
	Figures []struct {
		Name        string   `json:"name"`
		Significant bool     `json:"significant"`
		P           float64  `json:"p"`
		Ratio       float64  `json:"ratio"`
		RatioLo     *float64 `json:"ratio_lo"` // nil: not finite
		RatioHi     *float64 `json:"ratio_hi"`
		Delta       string   `json:"delta"`
		A, B        struct {
			N int `json:"n"`
		}
	} `json:"figures"`
	Sides []struct {
		CoreTypes []struct {
			Type    string                              `json:"type"`
			Held    map[string][]struct{ Value uint64 } `json:"held"`
			Written []struct {
				Comm   string                              `json:"comm"`
				Fields map[string][]struct{ Value uint64 } `json:"fields"`
			} `json:"written"`
		} `json:"core_types"`
	} `json:"sides"`
	Runs []struct{ Counted bool } `json:"runs"`
}

// deref is *p, or NaN for nil (a JSON null: not finite).
func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func readDiffJSON(t *testing.T, path string) diffJSON {
	t.Helper()
	var j diffJSON
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &j) != nil {
		t.Fatalf("read %s: %v\n%s", path, err, b)
	}
	checkSchema(t, report.Schema, b) // /1 and /2 share one schema file
	return j
}

// TestDiffEmulated: the experiment under the emulated Core Ultra 7
// 165U, with the built-in workload kept small: per core type, min == max
// and EPP 0 under performance, min < max and EPP 16 (Meteor Lake's
// "performance" EPP) under powersave:epp=performance, both in the sampled
// registers and in the writes the trace saw (the emulated machine's write
// log, caused by hwpprobe's sysfs writes); every setting back afterwards;
// text, Markdown and JSON written.
func TestDiffEmulated(t *testing.T) {
	dir := t.TempDir()
	out, code := emuDiff(t, "mtl-165u", dir, settingsScript+` > before; "$H" diff performance powersave:epp=performance --runs 4 --size 60 -C 0,4,12 -o exp.hwpr --markdown r.md --json r.json; echo "diff status $?"; `+settingsScript+` > after; cmp before after && echo restored`)
	if code != 0 || !strings.Contains(out, "diff status 0") || !strings.Contains(out, "restored") {
		t.Fatalf("status %d:\n%s", code, out)
	}
	for _, want := range []string{"A: governor=performance  (4 runs counted)", "held:    min 62  max 62  desired 0  epp 0",
		"held:    min 4  max 38  desired 0  epp 16", "verdict:", "restore: every setting is back"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	j := readDiffJSON(t, filepath.Join(dir, "r.json"))
	for i, s := range j.Sides {
		for _, ct := range s.CoreTypes {
			if ct.Type == "all" {
				continue
			}
			min, max, epp := ct.Held["min"][0].Value, ct.Held["max"][0].Value, ct.Held["epp"][0].Value
			if i == 0 && (min != max || epp != 0) || i == 1 && (min >= max || epp != 16) {
				t.Errorf("side %d %s: held min %d max %d EPP %d", i, ct.Type, min, max, epp)
			}
			if len(ct.Written) != 1 || ct.Written[0].Comm != "hwpprobe" {
				t.Errorf("side %d %s: writers %+v, want hwpprobe's", i, ct.Type, ct.Written)
				continue
			}
			// hwpprobe's writes: the side's, and before A's (which does
			// not set B's EPP) the original settings' (docs/diff.md).
			w := ct.Written[0].Fields
			if !wrote(w["min"], min) || !wrote(w["max"], max) || !wrote(w["epp"], epp) {
				t.Errorf("side %d %s: written %v, held min %d max %d EPP %d", i, ct.Type, w, min, max, epp)
			}
		}
	}
	if md, err := os.ReadFile(filepath.Join(dir, "r.md")); err != nil || !strings.Contains(string(md), "| B | P | 1 | min 5  max 62  desired 0  epp 16") {
		t.Errorf("Markdown: %v\n%s", err, md)
	}
	if _, err := os.Stat(filepath.Join(dir, "journal", "journal.json")); err == nil {
		t.Error("the journal is left after a complete experiment")
	}
}

// wrote reports whether v is among a field's written values.
func wrote(vs []struct{ Value uint64 }, v uint64) bool {
	return slices.ContainsFunc(vs, func(x struct{ Value uint64 }) bool { return x.Value == v })
}

// TestDiffGovernorSensitive: a workload that is slower under the
// performance governor (it reads the governor) gets a significant verdict
// with the right sign: B faster, the ratio B/A near 0.1 (0.1 s against
// 1 s, plus each run's start and end on both) and its whole interval below
// 1. Then A = A, a side against itself with a fixed 0.3 s workload, in
// 7+7 runs at alpha 0.001 and confidence 0.999: a test that can fail (7+7
// runs can reach p = 0.0006, and the interval is finite), not "~" by
// construction. Identical sides give a p-value at most alpha, or an
// interval without 1, with probability about 0.001 each. At 7+7 runs and
// 0.999 the interval is the smallest and largest of the 49 ratios b/a:
// within a few percent of 1 on an idle machine, and asked to lie within
// [1/3, 3] (a run of 0.3 s would have to take 0.9 s) so that load on the
// machine cannot fail the test; a side that ran another workload, or
// runs given to the wrong side, would.
func TestDiffGovernorSensitive(t *testing.T) {
	dir := t.TempDir()
	work := `if grep -q performance /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor; then sleep 1; else sleep 0.1; fi`
	out, code := emuDiff(t, "mtl-165u", dir, `"$H" diff performance powersave --runs 4 --warmup 0 -C 0 --json ab.json -o ab.hwpr -- sh -c '`+work+`'; echo "ab $?"; "$H" diff powersave powersave --allow-twins --runs 7 --warmup 1 --alpha 0.001 --confidence 0.999 -C 0 --json aa.json -o aa.hwpr -- sleep 0.3; echo "aa $?"`)
	if code != 0 || !strings.Contains(out, "ab 0") || !strings.Contains(out, "aa 0") {
		t.Fatalf("status %d:\n%s", code, out)
	}
	ab := readDiffJSON(t, filepath.Join(dir, "ab.json")).Figures[0]
	if ab.Name != "time" || !ab.Significant || !strings.HasPrefix(ab.Delta, "-") || ab.RatioLo == nil || ab.RatioHi == nil ||
		*ab.RatioLo < 0.05 || *ab.RatioLo > ab.Ratio || ab.Ratio > *ab.RatioHi || ab.Ratio > 0.5 || *ab.RatioHi >= 1 {
		t.Errorf("performance vs powersave: %+v, want significant, B faster (delta -), 0.05 <= lo <= ratio <= 0.5, hi < 1", ab)
	}
	aa := readDiffJSON(t, filepath.Join(dir, "aa.json")).Figures[0]
	t.Logf("A vs B: ratio %.3f [%.3f, %.3f] p %.4f; A = A: ratio %.3f [%.3f, %.3f] p %.4f",
		ab.Ratio, deref(ab.RatioLo), deref(ab.RatioHi), ab.P, aa.Ratio, deref(aa.RatioLo), deref(aa.RatioHi), aa.P)
	if aa.A.N != 7 || aa.B.N != 7 || aa.Significant || aa.Delta != "~" || aa.P <= 0.001 {
		t.Errorf("powersave vs powersave: %+v, want 7+7 runs, p > 0.001, ~", aa)
	}
	if aa.RatioLo == nil || aa.RatioHi == nil || *aa.RatioLo > 1 || *aa.RatioHi < 1 || *aa.RatioLo < 1.0/3 || *aa.RatioHi > 3 {
		t.Errorf("powersave vs powersave: ratio interval [%v, %v], want finite, containing 1, within [1/3, 3]", deref(aa.RatioLo), deref(aa.RatioHi))
	}
}

// heldRun is a run of a --keep-disturbed analysis as
// TestDiffSettingsNotHeld compares it: its side and its first
// disturbance, nil when none.
type heldRun struct {
	Run   int
	Side  string
	First *heldDisturbance
}

// heldDisturbance is a disturbance without its pid and time.
type heldDisturbance struct {
	Comm     string `json:"comm"`
	CPU      int    `json:"cpu"`
	Register string `json:"register"`
	Old      string `json:"old"`
	New      string `json:"new"`
	Checked  bool   `json:"checked"`
}

// TestDiffSettingsNotHeld: experiments whose settings never held (the
// issue's) are an error, not a verdict: one line, status 1, every setting
// back. A workload that switches every CPU to powersave under side
// performance disturbs each of A's runs, long or short, the runs that
// follow another A run included (diff applies the side again when it no
// longer holds): the kernel's writes at its start are judged against the
// registers checked just before it, not against its first sample, and
// printed old -> new (performance's min = max = 62, EPP 0, to powersave's
// min 5 with the EPP intel_pstate restores: the original 64 in every A
// run, since A, which does not set B's EPP, is applied from the original
// settings). A --prepare that writes
// balance_power to every EPP file is found by the check after it, on
// both sides.
func TestDiffSettingsNotHeld(t *testing.T) {
	toPowersave := `for c in /sys/devices/system/cpu/cpu*/cpufreq; do echo powersave > $c/scaling_governor; done`
	toBalancePower := `for f in /sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference; do echo balance_power > $f; done`
	switched := func(old, new string) *heldDisturbance {
		return &heldDisturbance{Comm: "sh", CPU: 0, Register: "IA32_HWP_REQUEST", Old: old, New: new}
	}
	prepared := func(side string) *heldDisturbance {
		return &heldDisturbance{CPU: 0, Register: "energy_performance_preference", Old: side, New: "balance_power", Checked: true}
	}
	tests := []struct {
		name    string
		args    string // diff's, after the sides
		wantErr string // regexp of the error line
		runs    []heldRun
	}{
		{name: "workload", args: `performance powersave:epp=performance --runs 2 --warmup 0 -C 0 -- sh -c '` + toPowersave + `; sleep 0.3'`,
			wantErr: `^hwpprobe: diff: settings did not hold: side A \(governor=performance\) in none of its 2 runs \(run 1: sh \(pid \d+\) at \+0\.\d\ds on CPU 0: IA32_HWP_REQUEST 0x3e3e -> 0x40003e05\); no verdict \(--keep-disturbed counts such runs\)$`,
			runs:    []heldRun{{1, "A", switched("0x3e3e", "0x40003e05")}, {2, "B", nil}, {3, "B", nil}, {4, "A", switched("0x3e3e", "0x40003e05")}}},
		{name: "short-workload", args: `performance powersave:epp=performance --runs 4 --warmup 0 -C 0 -- sh -c '` + toPowersave + `; sleep 0.09'`,
			wantErr: `^hwpprobe: diff: settings did not hold: side A \(governor=performance\) in none of its 4 runs \(run 1: `,
			runs: []heldRun{{1, "A", switched("0x3e3e", "0x40003e05")}, {2, "B", nil}, {3, "B", nil}, {4, "A", switched("0x3e3e", "0x40003e05")},
				{5, "A", switched("0x3e3e", "0x40003e05")}, {6, "B", nil}, {7, "B", nil}, {8, "A", switched("0x3e3e", "0x40003e05")}}},
		{name: "prepare", args: `powersave:epp=power powersave:epp=performance --runs 4 --warmup 0 -C 0 --prepare '` + toBalancePower + `' -- sleep 0.1`,
			wantErr: `^hwpprobe: diff: settings did not hold: side A \(governor=powersave epp=power\) in none of its 4 runs \(run 1: at its start CPU 0 energy_performance_preference had changed since the side was applied: power -> balance_power\); ` +
				`side B \(governor=powersave epp=performance\) in none of its 4 runs \(run 2: at its start CPU 0 energy_performance_preference had changed since the side was applied: performance -> balance_power\); no verdict`,
			runs: []heldRun{{1, "A", prepared("power")}, {2, "B", prepared("performance")}, {3, "B", prepared("performance")}, {4, "A", prepared("power")},
				{5, "A", prepared("power")}, {6, "B", prepared("performance")}, {7, "B", prepared("performance")}, {8, "A", prepared("power")}}},
	}
	dir := t.TempDir()
	script := settingsScript + " > before\n"
	for _, tc := range tests {
		script += fmt.Sprintf(`"$H" diff -o %[2]s.hwpr %[1]s > %[2]s.out 2> %[2]s.err; echo $? > %[2]s.status; "$H" diff %[2]s.hwpr --keep-disturbed --json %[2]s.json > /dev/null 2>&1`+"\n", tc.args, tc.name)
	}
	out, code := emuDiff(t, "mtl-165u", dir, script+settingsScript+` > after; cmp before after && echo restored`)
	if code != 0 || !strings.Contains(out, "restored") {
		t.Fatalf("status %d, settings not restored:\n%s", code, out)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := func(ext string) string {
				b, err := os.ReadFile(filepath.Join(dir, tc.name+ext))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			stderr := read(".err")
			if status := strings.TrimSpace(read(".status")); status != "1" || strings.Contains(read(".out"), "verdict") {
				t.Errorf("status %s, want 1 and no verdict; stdout:\n%s", status, read(".out"))
			}
			var errLines []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "hwpprobe: diff:") {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 || !regexp.MustCompile(tc.wantErr).MatchString(errLines[0]) || !strings.Contains(stderr, "restore: every setting is back") {
				t.Errorf("error lines %q, want one matching %s, and the settings restored; stderr:\n%s", errLines, tc.wantErr, stderr)
			}
			var j struct {
				Runs []struct {
					Run          int               `json:"run"`
					Side         string            `json:"side"`
					Disturbances []heldDisturbance `json:"disturbances"`
				} `json:"runs"`
			}
			if err := json.Unmarshal([]byte(read(".json")), &j); err != nil {
				t.Fatal(err)
			}
			var got []heldRun
			for _, r := range j.Runs {
				h := heldRun{Run: r.Run, Side: r.Side}
				if len(r.Disturbances) > 0 {
					h.First = &r.Disturbances[0]
				}
				got = append(got, h)
			}
			if d := cmp.Diff(tc.runs, got); d != "" {
				t.Errorf("runs and their first disturbance (-want +got):\n%s", d)
			}
		})
	}
}

// TestDiffEmulatedInterrupted: SIGINT in the middle of a run and a failing
// command both end with every setting back and a readable file; after
// SIGKILL the next diff refuses (the journal is left) and `hwpprobe
// restore` brings every setting back.
func TestDiffEmulatedInterrupted(t *testing.T) {
	dir := t.TempDir()
	out, code := emuDiff(t, "mtl-165u", dir, settingsScript+` > before;
"$H" diff performance powersave:epp=performance --runs 4 -C 0 -o int.hwpr -- sleep 1 & pid=$!; sleep 3.5; kill -INT $pid; wait $pid; echo "int $?"; `+settingsScript+` > after1; cmp before after1 && echo restored1;
"$H" diff performance powersave --runs 4 -C 0 -o fail.hwpr -- sh -c 'exit 3'; echo "fail $?"; `+settingsScript+` > after2; cmp before after2 && echo restored2;
"$H" show int.hwpr > /dev/null; echo "show $?";
"$H" diff performance powersave:epp=performance --runs 4 -C 0 -o kill.hwpr -- sleep 1 & pid=$!; sleep 3.5; kill -KILL $pid; wait $pid; echo "kill $?";
"$H" diff performance powersave -o again.hwpr -- true 2>&1; echo "again $?"; "$H" restore > /dev/null; echo "restore $?"; `+settingsScript+` > after3; cmp before after3 && echo restored3`)
	for _, want := range []string{"int 130", "restored1", "fail 4", "restored2", "show 0", "kill 137", "a journal of settings to restore exists", "again 2", "restore 0", "restored3", "interrupted by interrupt after", "run 1 (A) failed with status 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q (status %d):\n%s", want, code, out)
		}
	}
}

// TestDiffEmulatedZen4: the same experiment on the emulated AMD machine
// (amd-pstate: MSR_AMD_CPPC_REQ): under performance min is nominal, below
// max (amd-pstate since commit 0c411b39e4f4, docs/kernel-facts.md section 1), and
// above powersave's; the trace shows hwpprobe's writes of the held values.
func TestDiffEmulatedZen4(t *testing.T) {
	dir := t.TempDir()
	out, code := emuDiff(t, "zen4-amd-pstate", dir, settingsScript+` > before; "$H" diff performance powersave --runs 4 --size 40 -C 0 -o exp.hwpr --json r.json; echo "diff status $?"; `+settingsScript+` > after; cmp before after && echo restored`)
	if code != 0 || !strings.Contains(out, "diff status 0") || !strings.Contains(out, "restored") {
		t.Fatalf("status %d:\n%s", code, out)
	}
	j := readDiffJSON(t, filepath.Join(dir, "r.json"))
	if len(j.Sides) != 2 || len(j.Sides[0].CoreTypes) == 0 || len(j.Sides[1].CoreTypes) == 0 {
		t.Fatalf("sides %+v", j.Sides)
	}
	a, b := j.Sides[0].CoreTypes[0], j.Sides[1].CoreTypes[0]
	amin, amax, bmin := a.Held["min"][0].Value, a.Held["max"][0].Value, b.Held["min"][0].Value
	if amin >= amax || amin <= bmin {
		t.Errorf("CPPC request held: performance min %d max %d, powersave min %d", amin, amax, bmin)
	}
	for i, min := range []uint64{amin, bmin} {
		w := j.Sides[i].CoreTypes[0].Written
		if len(w) != 1 || w[0].Comm != "hwpprobe" || w[0].Fields["min"][0].Value != min {
			t.Errorf("side %d: written %+v, want hwpprobe's write of min %d", i, w, min)
		}
	}
}

// TestDiffBadInputEmulated: bad input is one line, status 2, nothing
// changed: a governor or EPP unknown, or one this machine does not offer
// or refuses, a command not found, --runs 0, conflicting options, a
// journal left by a crash.
func TestDiffBadInputEmulated(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := settingsScript + ` > before;
for args in "performance bogus -- true" "performance ondemand -- true" "performance powersave:epp=bogus -- true" "performance performance:epp=power -- true" "performance powersave -- no-such-command-hwpprobe" "performance powersave --runs 0 -- true" "performance powersave --max-runs 5 -- true" "performance powersave --runs auto --order random -- true" "performance powersave --size 5 -- true"; do
  "$H" diff $args -o x.hwpr 2> err; echo "status $? lines $(wc -l < err): $(cat err)"; done
echo '{"version":1,"pid":1,"user":"root","profile":"performance","started":"2026-01-01T00:00:00Z","root":"/","original":{}}' > journal/journal.json
"$H" diff performance powersave -o y.hwpr -- true 2> err; echo "journal status $? lines $(wc -l < err): $(cat err)"
` + settingsScript + ` > after; cmp before after && echo unchanged; ls x.hwpr y.hwpr 2>&1 | grep -c 'No such'`
	out, _ := emuDiff(t, "mtl-165u", dir, script)
	if strings.Count(out, "status 2 lines 1:") != 10 || !strings.Contains(out, "unchanged") || !strings.Contains(out, "\n2\n") {
		t.Errorf("want ten one-line status-2 errors, settings unchanged, no file:\n%s", out)
	}
	for _, want := range []string{"governor=bogus", "governor=ondemand: cpu0 offers performance, powersave", "epp=bogus: unknown EPP",
		"intel_pstate refuses any EPP but 0 under the performance policy", "not found", `--runs "0"`, "--max-runs goes with --runs auto", "does not take --order random", "--size sizes the built-in workload", "journal"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDiffNoCPUFreq: on this VM (no cpufreq) diff says what is missing.
func TestDiffNoCPUFreq(t *testing.T) {
	_, errOut, code := runBin(t, "diff", "performance", "powersave", "-o", filepath.Join(t.TempDir(), "x.hwpr"), "--", "true")
	if code != exitUsage || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "cpufreq") {
		t.Errorf("status %d, stderr %q; want 2 and one line naming cpufreq", code, errOut)
	}
}

// TestDiffEmulatedDryRunAndAuto: --dry-run prints the schedule and the
// writes and changes nothing; --runs auto settles a tenfold difference as
// significant within its 6 runs a side (at 4+4 when the runs are steady
// enough for the 5% precision, at the last look otherwise, then not
// settled: the interval is wider than the precision). The file's end
// record keeps the rule's looks (the first at 4+4 spending 2/70, the
// smallest p of 4+4; each later (0.05 - 2/70) / 2), and `diff` of the file
// afterwards tests at the last look's level: its verdict is the live
// report's, and both carry the note saying so.
func TestDiffEmulatedDryRunAndAuto(t *testing.T) {
	dir := t.TempDir()
	work := `if grep -q performance /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor; then sleep 1; else sleep 0.1; fi`
	out, code := emuDiff(t, "mtl-165u", dir, settingsScript+` > before; "$H" diff performance powersave:epp=performance --dry-run -o dry.hwpr; echo "dry $?"; `+settingsScript+` > after; cmp before after && echo unchanged; test -e dry.hwpr || echo "no file";
"$H" diff performance powersave --runs auto --max-runs 6 --warmup 0 -C 0 -o auto.hwpr -- sh -c '`+work+`' > live.txt; echo "auto $?"; cat live.txt;
"$H" diff auto.hwpr --alpha 0.2 > offline.txt; echo "offline $?"; grep -h '^verdict' live.txt offline.txt | uniq -c | sed 's/^ */verdicts /'`)
	for _, want := range []string{"dry run: schedule A(w) B(w) A B B A A B B A A B\n", "echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
		"echo performance > /sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", "dry 0", "unchanged", "no file",
		"runs: significant", "verdict: B is", "auto 0", "offline 0", "verdicts 2 verdict: B is", "note: time: --runs auto: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q (status %d):\n%s", want, code, out)
		}
	}
	st := readRec(t, filepath.Join(dir, "auto.hwpr")).End.Stopping
	if st == nil || len(st.Looks) == 0 || len(st.Looks) > 3 || st.Alpha != 0.05 || st.MaxRuns != 6 || st.Settled != (len(st.Looks) < 3) {
		t.Fatalf("end record's stopping = %+v, want 1 to 3 looks, settled unless at the third, alpha 0.05, at most 6 runs", st)
	}
	spent := 0.0
	for i, l := range st.Looks {
		want := (0.05 - 2.0/70) / 2
		if i == 0 {
			want = 2.0 / 70
		}
		if l.N != 4+i || math.Abs(l.Level-want) > 1e-12 {
			t.Errorf("look %d: %d runs a side at level %v, want %d at %v", i, l.N, l.Level, 4+i, want)
		}
		spent += l.Level
	}
	if math.Abs(st.Spent-spent) > 1e-12 {
		t.Errorf("spent alpha %v, the looks' levels sum to %v", st.Spent, spent)
	}
}

// TestDiffEmulatedAsUser: under sudo (SUDO_UID/SUDO_GID) the workload runs
// as the invoking user and the experiment file and reports belong to them.
func TestDiffEmulatedAsUser(t *testing.T) {
	dir, err := os.MkdirTemp("", "hwpprobe-diff-user")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil { // the workload writes here as nobody
		t.Fatal(err)
	}
	out, _ := emuDiff(t, "mtl-165u", dir, `SUDO_UID=65534 SUDO_GID=65534 "$H" diff performance powersave --runs 1 --warmup 0 -C 0 -o u.hwpr --markdown u.md --json u.json -- sh -c 'id -u >> ids'; echo "diff $?"; echo "owners $(stat -c %u:%g u.hwpr u.md u.json | tr '\n' ' ')"; echo "ids $(sort -u ids)"`)
	for _, want := range []string{"diff 0", "owners 65534:65534 65534:65534 65534:65534 ", "ids 65534"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDiffProgressTerminal runs an emulated experiment with the built-in
// workload under a pseudo-terminal (script(1)): the progress is one live
// line drawn over itself (carriage return, erase to the end of the line)
// as each run begins, starts and ends, cleared before other output (the
// --prepare command's, which passes under it) and at the end, so the
// screen keeps no progress line; off a terminal the same experiment
// writes one plain line per run and no control sequence.
func TestDiffProgressTerminal(t *testing.T) {
	dir := t.TempDir()
	exp := `exec "$H" diff performance powersave --runs 2 --warmup 1 --size 20 -C 0 --prepare 'echo prepared' -o "$1"`
	if err := os.WriteFile(filepath.Join(dir, "exp.sh"), []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := emuDiff(t, "mtl-165u", dir, `script -qec 'sh exp.sh tty.hwpr' /dev/null > tty.out; echo "tty $?"; `+
		`sh exp.sh plain.hwpr 2> plain.err > /dev/null; echo "plain $?"`)
	if code != 0 || !strings.Contains(out, "tty 0") || !strings.Contains(out, "plain 0") {
		t.Fatalf("status %d:\n%s", code, out)
	}
	tty, err := os.ReadFile(filepath.Join(dir, "tty.out"))
	if err != nil {
		t.Fatal(err)
	}
	raw := string(tty)
	// Three draws a run at least (begun, running, ended) and the clears.
	if n := strings.Count(raw, "\r\x1b[K"); n < 3*6 || !strings.Contains(raw, "\r\x1b[Khwpprobe: run 6 of 6: side ") ||
		!strings.Contains(raw, "| ETA ") || !strings.Contains(raw, ", running ") {
		t.Errorf("%d redraws, want the live line at least 18 times, run 6 of 6 among them:\n%q", n, raw)
	}
	if strings.Contains(raw, ": side A (warm-up): ") {
		t.Errorf("the plain per-run line on a terminal:\n%q", raw)
	}
	screen := termscreen.Lines(raw)
	prepared := 0
	for _, l := range screen {
		if strings.Contains(l, "hwpprobe: run ") || strings.Contains(l, "ETA") {
			t.Errorf("a progress line is left on the screen: %q\nscreen:\n%s", l, strings.Join(screen, "\n"))
		}
		if l == "prepared" {
			prepared++
		}
	}
	text := strings.Join(screen, "\n")
	if prepared != 6 || !strings.Contains(text, "verdict:") || !strings.Contains(text, "hwpprobe: 4 measured runs complete") {
		t.Errorf("screen: want 6 lines of --prepare output, the report and the count:\n%s", text)
	}
	plain, err := os.ReadFile(filepath.Join(dir, "plain.err"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^hwpprobe: run [1-6] of 6: side [AB]( \(warm-up\))?: \d+\.\d{3} s, status 0(, .* left)?$`)
	if n := len(line.FindAllString(string(plain), -1)); n != 6 || strings.Contains(string(plain), "\x1b") {
		t.Errorf("off a terminal: %d per-run lines, want 6 and no escape sequence:\n%q", n, plain)
	}
}
