// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernelsrc"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// kunitDir is the kernel's KTAP parser's directory (tools/testing/kunit,
// package kernelsrc).
func kunitDir(t *testing.T) string {
	t.Helper()
	dir, err := kernelsrc.Path("tools/testing/kunit")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// kunitGroup is a test group in kunit.py parse --json's output.
type kunitGroup struct {
	Name   string       `json:"name"`
	Groups []kunitGroup `json:"sub_groups"`
	Cases  []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"test_cases"`
}

// ktapLeaves parses KTAP with the kernel's kunit.py and returns each leaf
// as "top-level case|path below it joined by '.'" (a top-level case
// without cases: "name|name") with its status (PASS, FAIL, SKIP).
func ktapLeaves(t *testing.T, ktap string) map[string]string {
	t.Helper()
	py := exec.Command("python3", filepath.Join(kunitDir(t), "kunit.py"), "parse", "--json")
	py.Stdin = strings.NewReader(ktap)
	out, _ := py.Output() // exit 1 when a case failed: the JSON says which
	i := strings.Index(string(out), "\n{")
	var root kunitGroup
	if i < 0 || json.Unmarshal(out[i+1:], &root) != nil {
		t.Fatalf("kunit.py parse --json gave no JSON:\n%s\n%s", out, ktap)
	}
	got := map[string]string{}
	for _, c := range root.Cases {
		got[c.Name+"|"+c.Name] = c.Status
	}
	var walk func(top string, path []string, g kunitGroup)
	walk = func(top string, path []string, g kunitGroup) {
		for _, c := range g.Cases {
			got[top+"|"+strings.Join(append(path[:len(path):len(path)], c.Name), ".")] = c.Status
		}
		for _, s := range g.Groups {
			walk(top, append(path[:len(path):len(path)], s.Name), s)
		}
	}
	for _, g := range root.Groups {
		walk(g.Name, nil, g)
	}
	return got
}

// junitLeaves reads JUnit XML with Debian's python3-junitparser and
// returns each case's suite|name and outcome in kunit's words.
func junitLeaves(t *testing.T, file string) map[string]string {
	t.Helper()
	script := `import sys
from junitparser import JUnitXml, Failure, Skipped
for s in JUnitXml.fromfile(sys.argv[1]):
    for c in s:
        r = "PASS"
        if any(isinstance(x, Failure) for x in c.result): r = "FAIL"
        elif any(isinstance(x, Skipped) for x in c.result): r = "SKIP"
        print(s.name + "|" + c.name + "\t" + r)`
	out, err := exec.Command("/usr/bin/python3", "-c", script, file).CombinedOutput()
	if err != nil {
		t.Fatalf("junitparser: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, "\t")
		got[k] = v
	}
	return got
}

// verdictLeaves reads the KTAP with kunit.py (ktapLeaves) and the JUnit
// file with junitparser (junitLeaves), fails the test when they differ,
// and returns kunit.py's leaves.
func verdictLeaves(t *testing.T, ktap, junitFile string) map[string]string {
	t.Helper()
	kunit := ktapLeaves(t, ktap)
	if d := cmp.Diff(kunit, junitLeaves(t, junitFile)); d != "" {
		t.Errorf("kunit.py's cases and outcomes (-) differ from junitparser's (+):\n%s", d)
	}
	return kunit
}

// TestConform runs `hwpprobe conform` under the emulated laptop
// (intel_pstate) and the emulated Zen 4 desktop (amd-pstate-epp), as is
// and with the deliberately broken model (broken-max: the hardware
// ignores the request's maximum): all ok and exit 0, then exactly the
// scaling_max_freq profile not ok and exit 1; a profile the machine
// refuses skipped with the reason; settings restored; the KTAP read by
// the kernel's kunit.py and the JUnit by junitparser with the same cases
// and outcomes; --junit to an unwritable path exit 2 before any change.
func TestConform(t *testing.T) {
	profiles := `performance powersave:epp=power powersave:scaling_max_freq=2000000 performance:epp=power`
	script := `D before
$H conform --ignore-daemons --ktap --junit $T/c.xml --json $T/c.json ` + profiles + ` > $T/c.ktap 2> $T/c.err; echo "conform $?" >> $T/codes
$H conform --ignore-daemons --junit /nonexistent/dir/c.xml performance > $T/bad.out 2>&1; echo "badjunit $?" >> $T/codes
D after`
	for _, tc := range []struct {
		args   []string
		code   string
		failed []string // top-level cases not ok
	}{
		{[]string{"mtl-165u"}, "0", nil},
		{[]string{"--variant", "broken-max", "mtl-165u"}, "1", []string{"scaling_max_freq=2000000,governor=powersave"}},
		{[]string{"zen4-amd-pstate"}, "0", nil},
		{[]string{"--variant", "broken-max", "zen4-amd-pstate"}, "1", []string{"scaling_max_freq=2000000,governor=powersave"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, dir := emuScriptArgs(t, tc.args, script)
			got := codes(t, dir)
			if d := cmp.Diff(map[string]string{"conform": tc.code, "badjunit": "2"}, got); d != "" {
				ktap, _ := os.ReadFile(filepath.Join(dir, "c.ktap"))
				stderr, _ := os.ReadFile(filepath.Join(dir, "c.err"))
				t.Fatalf("exit statuses (-want +got):\n%s\n%s\nKTAP:\n%s\nstderr:\n%s", d, out, ktap, stderr)
			}
			if d := cmp.Diff(readDump(t, dir, "before"), readDump(t, dir, "after")); d != "" {
				t.Errorf("conform left the machine changed:\n%s", d)
			}
			bad, _ := os.ReadFile(filepath.Join(dir, "bad.out"))
			if lines := strings.Split(strings.TrimSpace(string(bad)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "--junit") {
				t.Errorf("--junit to an unwritable path: want one line naming --junit, got:\n%s", bad)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "c.ktap"))
			ktap := string(b)
			var failed []string
			for _, m := range regexp.MustCompile(`(?m)^not ok \d+ (.*)$`).FindAllStringSubmatch(ktap, -1) {
				failed = append(failed, m[1])
			}
			if d := cmp.Diff(tc.failed, failed); d != "" {
				t.Errorf("failed cases (-want +got):\n%s\n%s", d, ktap)
			}
			if !regexp.MustCompile(`(?m)^ok 4 governor=performance,epp=power # SKIP the machine cannot apply it: .*EBUSY`).MatchString(ktap) {
				t.Errorf("the refused profile is not skipped with the reason:\n%s", ktap)
			}
			if js, err := os.ReadFile(filepath.Join(dir, "c.json")); err != nil {
				t.Error(err)
			} else {
				checkSchema(t, verdict.Schema, js)
			}
			if kunit := verdictLeaves(t, ktap, filepath.Join(dir, "c.xml")); len(kunit) < 10 {
				t.Fatalf("kunit.py found %d leaf cases:\n%v\n%s", len(kunit), kunit, ktap)
			}
		})
	}
}

// TestConformNoCPUFreq: on this VM (no cpufreq) the plan is skipped with
// the reason, exit 4.
func TestConformNoCPUFreq(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/cpu/cpu0/cpufreq"); err == nil {
		t.Skip("this machine has cpufreq")
	}
	out, err := exec.Command(hwpprobeBin, "conform", "--ktap").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 || !strings.Contains(string(out), "ok 1 conform # SKIP no cpufreq") {
		t.Errorf("conform on a machine without cpufreq: %v\n%s", err, out)
	}
}
