// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
)

var update = flag.Bool("update", false, "rewrite testdata/matrix golden files")

// matrixProfiles is {performance, powersave} x {EPP unset, default,
// performance, balance_performance, balance_power, power} x EPB {0, 6,
// 15}, or without EPB ("" only: AMD has no IA32_ENERGY_PERF_BIAS).
func matrixProfiles(epbs ...string) []string {
	var ps []string
	for _, g := range []string{"performance", "powersave"} {
		for _, b := range epbs {
			spec := func(epp string) string {
				s := "governor=" + g
				if epp != "" {
					s += ",epp=" + epp
				}
				if b != "" {
					s += ",epb=" + b
				}
				return s
			}
			ps = append(ps, spec(""))
			for _, e := range profile.EPPNames {
				ps = append(ps, spec(e))
			}
		}
	}
	return ps
}

// TestMatrix runs `hwpprobe matrix` over matrixProfiles under the
// emulated machines and checks the result against the kernel's rules
// (docs/kernel-facts.md section 1), and the text against the committed golden file
// with --expect; a changed golden line makes --expect exit 1.
//
// mtl-165u (intel_pstate, model 0xAA): performance gives HWP min = max
// and EPP 0 and refuses every EPP string (performance is 16 there, the
// others non-zero: EBUSY); powersave's EPP strings give 16/64/179/255,
// "default" the boot EPP 64. zen4-amd-pstate: performance gives min =
// nominal perf (commit 0c411b39e4f4) and EPP 0, and takes only
// epp=performance (0); powersave's strings give 0/128/191/255.
func TestMatrix(t *testing.T) {
	type rule struct {
		eppPerf, minIsMax, minIsNominal bool
		epp                             map[string]int
		epbs                            []string
	}
	for machine, r := range map[string]rule{
		"mtl-165u":        {minIsMax: true, epp: map[string]int{"": 64, "default": 64, "performance": 16, "balance_performance": 64, "balance_power": 179, "power": 255}, epbs: []string{"0", "6", "15"}},
		"zen4-amd-pstate": {eppPerf: true, minIsNominal: true, epp: map[string]int{"": 128, "default": 128, "performance": 0, "balance_performance": 128, "balance_power": 191, "power": 255}, epbs: []string{""}},
	} {
		t.Run(machine, func(t *testing.T) {
			golden := filepath.Join("testdata", "matrix", machine+".txt")
			profiles := matrixProfiles(r.epbs...)
			args := strings.Join(quoteAll(profiles), " ")
			script := fmt.Sprintf(`D before
$H matrix --ignore-daemons --json %[1]s > $T/m.json; echo "json $?" >> $T/codes
$H matrix --ignore-daemons %[1]s > $T/m.txt; echo "text $?" >> $T/codes
D after`, args)
			if !*update {
				script += fmt.Sprintf(`
$H matrix --ignore-daemons --expect %[2]s %[1]s > /dev/null; echo "expect $?" >> $T/codes
sed '3s/0/1/' %[2]s > $T/changed.txt
$H matrix --ignore-daemons --expect $T/changed.txt %[1]s > $T/changed.out 2>&1; echo "changed $?" >> $T/codes`, args, mustAbs(t, golden))
			}
			out, dir := emuScript(t, machine, script)
			got := codes(t, dir)
			if got["json"] != "0" || got["text"] != "0" {
				t.Fatalf("matrix exit statuses %v:\n%s", got, out)
			}
			if d := cmp.Diff(readDump(t, dir, "before"), readDump(t, dir, "after")); d != "" {
				t.Errorf("matrix left the machine changed:\n%s", d)
			}
			text, _ := os.ReadFile(filepath.Join(dir, "m.txt"))
			if *update {
				if err := os.WriteFile(golden, text, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if got["expect"] != "0" || got["changed"] != "1" {
				out, _ := os.ReadFile(filepath.Join(dir, "changed.out"))
				t.Errorf("--expect: exit %s with the golden file (want 0), %s with a changed one (want 1):\n%s", got["expect"], got["changed"], out)
			}
			var vs []profile.Verification
			b, _ := os.ReadFile(filepath.Join(dir, "m.json"))
			if err := json.Unmarshal(b, &vs); err != nil {
				t.Fatal(err)
			}
			if len(vs) != len(profiles) {
				t.Fatalf("%d profiles in the matrix, want %d", len(vs), len(profiles))
			}
			for _, v := range vs {
				checkMatrixRow(t, v, r.eppPerf, r.minIsMax, r.minIsNominal, r.epp)
			}
		})
	}
}

// checkMatrixRow checks one profile's result against the rules.
func checkMatrixRow(t *testing.T, v profile.Verification, eppPerf, minIsMax, minIsNominal bool, eppVal map[string]int) {
	t.Helper()
	p, err := profile.Parse(v.Profile)
	if err != nil {
		t.Fatal(err)
	}
	gov, epp, epb := p.Get(profile.Governor), p.Get(profile.EPP), p.Get(profile.EPB)
	wantRefused := gov == "performance" && epp != "" && !(eppPerf && epp == "performance")
	if (v.Refused != "") != wantRefused {
		t.Errorf("%s: refused %q, want refused %v", v.Profile, v.Refused, wantRefused)
		return
	}
	if wantRefused && !strings.Contains(v.Refused, "EBUSY") {
		t.Errorf("%s: refusal %q does not name EBUSY", v.Profile, v.Refused)
	}
	for _, r := range v.Rows {
		if r.Min == nil || r.Max == nil || r.RegEPP == nil || (r.EPB == nil) != (epb == "") {
			t.Errorf("%s %s: registers not read: %+v", v.Profile, r.CoreType, r)
			continue
		}
		want := eppVal[epp]
		if gov == "performance" {
			want = 0
			if minIsMax && *r.Min != *r.Max {
				t.Errorf("%s %s: HWP min %d != max %d under performance", v.Profile, r.CoreType, *r.Min, *r.Max)
			}
			if minIsNominal && (*r.Min != 150 || *r.Max != 190) {
				t.Errorf("%s %s: CPPC min %d max %d, want nominal 150 and highest 190", v.Profile, r.CoreType, *r.Min, *r.Max)
			}
		} else if *r.Min >= *r.Max {
			t.Errorf("%s %s: min %d >= max %d under powersave", v.Profile, r.CoreType, *r.Min, *r.Max)
		}
		if *r.RegEPP != want {
			t.Errorf("%s %s: EPP %d, want %d", v.Profile, r.CoreType, *r.RegEPP, want)
		}
		if r.EPB != nil && fmt.Sprint(*r.EPB) != epb {
			t.Errorf("%s %s: EPB %d, want %s", v.Profile, r.CoreType, *r.EPB, epb)
		}
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "'" + s + "'"
	}
	return out
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestProfiles: `hwpprobe profiles` lists the governors, the EPP strings
// with their values on the model (Meteor Lake's table; amd-pstate's) and
// the EPB names where the CPU has EPB.
func TestProfiles(t *testing.T) {
	for machine, want := range map[string][]string{
		"mtl-165u":        {"governors: performance powersave", "performance          16", "balance_power        179", "normal               6", "no_turbo (now 0)"},
		"zen4-amd-pstate": {"driver: amd-pstate-epp", "balance_power        191", "epb: none", "boost (now 1)"},
	} {
		out, _ := emuScript(t, machine, "$H profiles")
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: profiles output lacks %q:\n%s", machine, w, out)
			}
		}
	}
}

// TestMatrixExpectLines: the difference from --expect is printed as
// lines (line N, want, got), then one error line, exit 1; not as one line
// with literal \n.
func TestMatrixExpectLines(t *testing.T) {
	out, dir := emuScript(t, "mtl-165u", `cd $T
$H matrix --ignore-daemons performance > m.txt; echo "text $?" >> codes
sed '3s/performance/PERFORMANCE/' m.txt > changed.txt
$H matrix --ignore-daemons --expect changed.txt performance > /dev/null 2> err; echo "expect $?" >> codes`)
	if d := cmp.Diff(map[string]string{"text": "0", "expect": "1"}, codes(t, dir)); d != "" {
		t.Fatalf("exit statuses (-want +got):\n%s\n%s", d, out)
	}
	m, _ := os.ReadFile(filepath.Join(dir, "m.txt"))
	line := strings.Split(string(m), "\n")[2]
	want := "line 3:\n  want: " + strings.Replace(line, "performance", "PERFORMANCE", 1) + "\n  got:  " + line + "\n" +
		"hwpprobe: matrix: the matrix differs from the expected one in changed.txt (1 lines, above)\n"
	got, _ := os.ReadFile(filepath.Join(dir, "err"))
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("stderr (-want +got):\n%s", d)
	}
}

// TestMatrixExpectBounded: --expect reads at most 1 MiB of its file and
// refuses a larger one, or one that never ends (/dev/zero, which it read
// until memory ran out), as bad input (exit 2, one line), before
// anything is applied.
func TestMatrixExpectBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("profile line\n", 100_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file, want string
	}{
		{"/dev/zero", "--expect: /dev/zero is larger than 1048576 bytes: not a matrix table"},
		{big, "is larger than 1048576 bytes"},
		{filepath.Join(t.TempDir(), "absent.txt"), "no such file"},
	}
	for _, tc := range tests {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, hwpprobeBin, "matrix", "--expect", tc.file, "performance")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		code := cmd.ProcessState.ExitCode()
		if timedOut || code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("--expect %s: %v, exit %d, stderr %q; want exit 2 and one line saying %q", tc.file, err, code, stderr.String(), tc.want)
		}
	}
}
