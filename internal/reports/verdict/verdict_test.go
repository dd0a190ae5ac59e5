// SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernelsrc"
)

// ktapExamples are the KTAP examples of the kernel's specification
// (Documentation/dev-tools/ktap.rst, linux-source 6.1): its literal
// blocks that begin with the version line, without their indentation.
func ktapExamples(t *testing.T) []string {
	t.Helper()
	path, err := kernelsrc.Path("Documentation/dev-tools/ktap.rst")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)::\n\n((?:\t.*\n)+)`).FindAllStringSubmatch(string(b), -1) {
		block := strings.ReplaceAll("\n"+m[1], "\n\t", "\n")[1:]
		if strings.HasPrefix(block, "KTAP version 1\n") {
			out = append(out, block)
		}
	}
	return out
}

// subtestLines are the "# Subtest: NAME" diagnostic lines KUnit (and
// WriteKTAP) put after a nested version line; ktap.rst's examples have
// none.
var subtestLines = regexp.MustCompile(`(?m)^ *# Subtest: .*\n`)

// TestKTAPSpecExamples builds the trees of ktap.rst's three nested
// examples and writes them: the text is the specification's, line for
// line, but for the "# Subtest:" lines (diagnostic lines, as KUnit
// writes them). The outcomes bubble up as the specification says: a
// parent fails when a case fails, skipped cases do not change it.
func TestKTAPSpecExamples(t *testing.T) {
	pass := func(name string, diag ...string) *Case { return Passf(name, diag...) }
	parent := func(name string, cases ...*Case) *Case { return &Case{Name: name, Cases: cases} }
	trees := [][]*Case{
		// "An example of a test with two nested subtests"
		{{Name: "example", Diag: []string{"example failed"}, Cases: []*Case{pass("test_1"), {Name: "test_2", Result: Fail}}}},
		// "An example format with multiple levels of nested testing"
		{
			parent("example_test_1", parent("test_3", &Case{Name: "test_1", Result: Fail}, pass("test_2")), Skipf("test_4", "")),
			pass("example_test_2"),
		},
		// the example of the hierarchy "main_test"
		{parent("main_test",
			parent("example_test_1", pass("test_1", "test_1: initializing test_1")),
			parent("example_test_2", Skipf("test_1", "test_1 skipped"), pass("test_2")),
			parent("example_test_3", pass("test_1"), Failf("test_2", "FAIL"), Skipf("test_3", "test_3 skipped")),
		)},
	}
	want := ktapExamples(t)
	if len(want) != len(trees) {
		t.Fatalf("ktap.rst has %d KTAP examples, want %d:\n%s", len(want), len(trees), strings.Join(want, "\n"))
	}
	for i, cases := range trees {
		var b bytes.Buffer
		if err := WriteKTAP(&b, cases); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want[i], subtestLines.ReplaceAllString(b.String(), "")); d != "" {
			t.Errorf("example %d (-ktap.rst +WriteKTAP):\n%s", i+1, d)
		}
	}
}

// TestKTAPSubtestLines: a parent's cases come after its indented version
// line, "# Subtest: NAME" and plan; a failed case's reason, with its line
// breaks folded, is a diagnostic line before its result; a skipped
// parent gives its cases' one reason.
func TestKTAPSubtestLines(t *testing.T) {
	cases := []*Case{
		{Name: "p", Cases: []*Case{Failf("a", "bad\nvalue"), {Name: "q", Cases: []*Case{Skipf("b", "no msr"), Skipf("c", "no msr")}}}},
	}
	want := `KTAP version 1
1..1
  KTAP version 1
  # Subtest: p
  1..2
  # a: bad value
  not ok 1 a
    KTAP version 1
    # Subtest: q
    1..2
    ok 1 b # SKIP no msr
    ok 2 c # SKIP no msr
  ok 2 q # SKIP no msr
not ok 1 p
`
	var b bytes.Buffer
	if err := WriteKTAP(&b, cases); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("KTAP (-want +got):\n%s", d)
	}
}

// TestBadNames: a name a KTAP line cannot carry is refused by both
// writers, at any depth.
func TestBadNames(t *testing.T) {
	for _, name := range []string{"", "a # b", "a\nb"} {
		cases := []*Case{{Name: "top", Cases: []*Case{Passf(name)}}}
		if err := WriteKTAP(&bytes.Buffer{}, cases); !errors.Is(err, ErrName) {
			t.Errorf("WriteKTAP with name %q: %v, want ErrName", name, err)
		}
		if err := WriteJUnit(&bytes.Buffer{}, "plan", cases); !errors.Is(err, ErrName) {
			t.Errorf("WriteJUnit with name %q: %v, want ErrName", name, err)
		}
	}
}

// TestJUnit: one <testsuite> per top-level case with its leaves as
// <testcase>s named by their path below it, the suite as classname;
// failures and skips with the reason, the diagnostics in <system-out>,
// the counts per suite and in all; a top-level leaf is a suite of itself.
func TestJUnit(t *testing.T) {
	cases := []*Case{
		{Name: "gov", Cases: []*Case{
			{Name: "P-core", Cases: []*Case{Passf("registers", "min 62", "max 62"), Failf("delivery", "too\nfast")}},
			Skipf("stability", "no trace"),
		}},
		Skipf("refused", "EBUSY"),
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, "hwpprobe conform", cases); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), xml.Header) {
		t.Errorf("no XML header:\n%s", b.String())
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	want := junitSuites{
		XMLName: xml.Name{Local: "testsuites"}, Name: "hwpprobe conform", Tests: 4, Failures: 1, Skipped: 2,
		Suites: []junitSuite{
			{Name: "gov", Tests: 3, Failures: 1, Skipped: 1, Cases: []junitCase{
				{Name: "P-core.registers", ClassName: "gov", SystemOut: "min 62\nmax 62"},
				{Name: "P-core.delivery", ClassName: "gov", Failure: &junitMessage{Message: "too fast"}},
				{Name: "stability", ClassName: "gov", Skipped: &junitMessage{Message: "no trace"}},
			}},
			{Name: "refused", Tests: 1, Skipped: 1, Cases: []junitCase{
				{Name: "refused", ClassName: "refused", Skipped: &junitMessage{Message: "EBUSY"}},
			}},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("JUnit (-want +got):\n%s\n%s", d, b.String())
	}
}

// TestExit: kselftest's exit codes: 1 when any case fails at any depth,
// 4 when every case is skipped or there is none, else 0 (skips beside a
// pass included).
func TestExit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cases   []*Case
		want    int
		summary string
	}{
		{"none", nil, ExitSkip, "every check skipped"},
		{"pass", []*Case{Passf("a")}, ExitPass, "1 checks passed"},
		{"pass and skip", []*Case{Passf("a"), Skipf("b", "x")}, ExitPass, "2 checks passed"},
		{"all skipped", []*Case{Skipf("a", "x"), {Name: "p", Cases: []*Case{Skipf("b", "y")}}}, ExitSkip, "every check skipped"},
		{"the plan skipped", []*Case{Skipf("conform", "no cpufreq")}, ExitSkip, "every check skipped: no cpufreq"},
		{"fail", []*Case{Passf("a"), Failf("b", "x")}, ExitFail, "1 of 2 checks failed"},
		{"fail nested", []*Case{{Name: "p", Cases: []*Case{Skipf("a", "x"), {Name: "q", Cases: []*Case{Failf("b", "y")}}}}}, ExitFail, "1 of 2 checks failed"},
		{"fail beside skips", []*Case{Skipf("a", "x"), Failf("b", "y")}, ExitFail, "1 of 2 checks failed"},
	} {
		if got := Exit(tc.cases); got != tc.want {
			t.Errorf("%s: Exit %d, want %d", tc.name, got, tc.want)
		}
		if got := Summary(tc.cases); got != tc.summary {
			t.Errorf("%s: Summary %q, want %q", tc.name, got, tc.summary)
		}
	}
}
