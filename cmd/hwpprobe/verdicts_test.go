// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// oneLineNaming checks that out is one line that holds want.
func oneLineNaming(t *testing.T, what, out, want string) {
	t.Helper()
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("%s: want one line naming %q, got:\n%s", what, want, out)
	}
}

// TestDiffVerdicts: diff --fail-if with --ktap and --junit on the seed
// experiment (B 22% faster than A): a case per threshold, the crossed
// one not ok, read alike by kunit.py and junitparser; the exit status 3
// as without them, KTAP alone on stdout (the report on stderr); --junit
// to an unwritable path, or --ktap without --fail-if, one line and exit
// 2, before the experiment file is created.
func TestDiffVerdicts(t *testing.T) {
	dir := t.TempDir()
	exp := writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
	xml := filepath.Join(dir, "d.xml")
	out, errOut, code := runBin(t, "diff", exp, "--fail-if", "B slower than A by 5%", "--fail-if", "B faster than A by 5%", "--ktap", "--junit", xml)
	if code != exitCrossed || !strings.HasPrefix(out, "KTAP version 1\n") || !strings.Contains(errOut, "verdict: B is 22.") {
		t.Fatalf("status %d (want %d), stdout:\n%s\nstderr:\n%s", code, exitCrossed, out, errOut)
	}
	want := map[string]string{"fail-if|B slower than A by 5%": "PASS", "fail-if|B faster than A by 5%": "FAIL"}
	if d := cmp.Diff(want, verdictLeaves(t, out, xml)); d != "" {
		t.Errorf("cases (-want +got):\n%s\n%s", d, out)
	}
	if !strings.Contains(out, "# crossed when the time difference is significant (p <= 0.05) and B/A below 0.950\n") {
		t.Errorf("the KTAP does not give the limit:\n%s", out)
	}
	// Without the crossed threshold: exit 0, the case ok.
	out, _, code = runBin(t, "diff", exp, "--fail-if", "B slower than A by 5%", "--ktap")
	if code != 0 || !strings.Contains(out, "\nok 1 fail-if\n") {
		t.Errorf("status %d, want 0:\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{exp, "--fail-if", "B slower than A by 5%", "--junit", "/nonexistent/dir/d.xml"}, "--junit"},
		{[]string{exp, "--ktap"}, "--ktap and --junit write the verdicts of --fail-if"},
		{[]string{"performance", "powersave", "--fail-if", "B slower than A by 5%", "--junit", "/nonexistent/dir/d.xml", "-o", filepath.Join(dir, "live.hwpr"), "--", "true"}, "--junit"},
	} {
		out, errOut, code := runBin(t, append([]string{"diff"}, tc.args...)...)
		if code != exitUsage || out != "" {
			t.Errorf("diff %q: status %d, want %d; stdout %q", tc.args, code, exitUsage, out)
		}
		oneLineNaming(t, fmt.Sprintf("diff %q", tc.args), errOut, tc.want)
	}
	if _, err := os.Stat(filepath.Join(dir, "live.hwpr")); !os.IsNotExist(err) {
		t.Errorf("an unwritable --junit: the experiment file was created (%v)", err)
	}
}

// TestMatrixVerdicts: matrix --expect with --ktap and --junit under the
// emulated laptop, against a table with line 3 changed: a case per line,
// exactly line 3 not ok with both lines as diagnostics, read alike by
// kunit.py and junitparser; exit 1 as without them, the table on stderr;
// --junit to an unwritable path, or --ktap without --expect, one line,
// exit 2, nothing applied.
func TestMatrixVerdicts(t *testing.T) {
	out, dir := emuScript(t, "mtl-165u", `cd $T
$H matrix --ignore-daemons performance powersave:epp=power > m.txt; echo "text $?" >> codes
sed '3s/0/1/' m.txt > changed.txt
$H matrix --ignore-daemons --expect changed.txt --ktap --junit m.xml performance powersave:epp=power > m.ktap 2> m.err; echo "ktap $?" >> codes
$H matrix --ignore-daemons --expect m.txt --junit /nonexistent/dir/m.xml performance powersave:epp=power > bad.out 2>&1; echo "badjunit $?" >> codes
$H matrix --ignore-daemons --ktap performance > noexpect.out 2>&1; echo "noexpect $?" >> codes`)
	if d := cmp.Diff(map[string]string{"text": "0", "ktap": "1", "badjunit": "2", "noexpect": "2"}, codes(t, dir)); d != "" {
		t.Fatalf("exit statuses (-want +got):\n%s\n%s", d, out)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	table, ktap := read("m.txt"), read("m.ktap")
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	want := map[string]string{}
	for i := range lines {
		want[fmt.Sprintf("expect|line %d", i+1)] = "PASS"
	}
	want["expect|line 3"] = "FAIL"
	if d := cmp.Diff(want, verdictLeaves(t, ktap, filepath.Join(dir, "m.xml"))); d != "" {
		t.Errorf("cases (-want +got):\n%s\n%s", d, ktap)
	}
	changed := strings.Split(read("changed.txt"), "\n")[2]
	for _, l := range []string{"  # want: " + strings.Join(strings.Fields(changed), " "), "  # got: " + strings.Join(strings.Fields(lines[2]), " "), "  not ok 3 line 3"} {
		if !strings.Contains(ktap, l+"\n") {
			t.Errorf("the KTAP lacks %q:\n%s", l, ktap)
		}
	}
	if !strings.HasPrefix(read("m.err"), table) {
		t.Errorf("stderr does not begin with the table:\n%s", read("m.err"))
	}
	oneLineNaming(t, "--junit to an unwritable path", read("bad.out"), "--junit")
	oneLineNaming(t, "--ktap without --expect", read("noexpect.out"), "--ktap and --junit write the verdicts of --expect")
}
