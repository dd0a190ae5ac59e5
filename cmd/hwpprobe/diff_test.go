// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// recordedInputs writes the inputs the file commands read into dir: a
// recording of `true` made by the binary (run.rec) and the seed
// experiment (exp.hwpr).
func recordedInputs(t *testing.T, dir string) (rec, exp string) {
	t.Helper()
	rec = filepath.Join(dir, "run.rec")
	if _, stderr, code := runBin(t, "record", "--no-trace", "-o", rec, "--", "true"); code != 0 {
		t.Fatalf("record: %d %s", code, stderr)
	}
	return rec, writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
}

func writeExperiment(t *testing.T, dir, name string, e testexp.Experiment) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, e.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeTruncated writes the seed experiment cut after 6 records and then
// mid-record (its last 5 bytes gone) as dir/cut.hwpr and returns the path.
func writeTruncated(t *testing.T, dir string) string {
	t.Helper()
	cut := testexp.Seed()
	cut.CutAfter = 6
	b := cut.Bytes()
	p := filepath.Join(dir, "cut.hwpr")
	if err := os.WriteFile(p, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiffOffline(t *testing.T) {
	dir := t.TempDir()
	exp := writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
	md, js := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.json")
	out, errOut, code := runBin(t, "diff", exp, "--markdown", md, "--json", js, "--fail-if", "B slower than A by 5%")
	if code != 0 || !strings.Contains(out, "verdict: B is 22.") {
		t.Fatalf("status %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	mdText, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(mdText), "**Verdict:** B is 22.") {
		t.Errorf("Markdown: %v\n%s", err, mdText)
	}
	var j struct {
		Schema     string `json:"schema"`
		Thresholds []struct {
			Crossed bool `json:"crossed"`
		} `json:"thresholds"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &j) != nil || j.Schema != "hwpprobe-diff/1" || len(j.Thresholds) != 1 {
		t.Errorf("JSON: %v %+v", err, j)
	}
	_, errOut, code = runBin(t, "diff", exp, "--fail-if", "B faster than A by 5%")
	if code != exitCrossed || !strings.Contains(errOut, "threshold crossed: B faster than A by 5%") {
		t.Errorf("crossed threshold: status %d, stderr %q", code, errOut)
	}
}

func TestDiffEqualSides(t *testing.T) {
	e := testexp.Seed()
	e.B = e.A
	e.B.Label = "B"
	e.B.Seconds = []float64{333.0, 331.2, 335.5, 332.9}
	out, _, code := runBin(t, "diff", writeExperiment(t, t.TempDir(), "aa.hwpr", e))
	if code != 0 || !strings.Contains(out, "verdict: ~ no significant difference") {
		t.Errorf("A = A: status %d:\n%s", code, out)
	}
}

func TestDiffTwoRecordings(t *testing.T) {
	dir := t.TempDir()
	a := testexp.Seed()
	a.Record = true
	b := testexp.Seed()
	b.Record = true
	b.A = b.B
	pa, pb := writeExperiment(t, dir, "a.hwpr", a), writeExperiment(t, dir, "b.hwpr", b)
	out, errOut, code := runBin(t, "diff", pa, pb)
	if code != 0 || !strings.Contains(out, "verdict: B (b.hwpr) is 22.") {
		t.Errorf("two recordings: status %d %q:\n%s", code, errOut, out)
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	truncated := writeTruncated(t, dir)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello\n"), 0o644)
	rec := testexp.Seed()
	rec.Record = true
	one := writeExperiment(t, dir, "one.hwpr", rec)
	exp := writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"truncated", []string{truncated}, "recording is incomplete"},
		{"not a recording", []string{text}, "not an hwpprobe recording"},
		{"experiment flag on files", []string{exp, "--runs", "4"}, "--runs runs an experiment; it does not apply to recordings"},
		{"one record", []string{one}, "not an experiment"},
		{"alpha", []string{exp, "--alpha", "1"}, "--alpha and --confidence must be in (0, 1)"},
		{"fail-if", []string{exp, "--fail-if", "B slower"}, "bad --fail-if"},
		{"three", []string{exp, exp, exp}, "give one experiment or two recordings, not 3 files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runBin(t, append([]string{"diff"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("status %d, stderr %q; want 2 and one line with %q", code, errOut, tc.want)
			}
			if tc.name == "truncated" && !strings.Contains(out, "missing: cut.hwpr") {
				t.Errorf("truncated: the complete runs' report should say what is missing:\n%s", out)
			}
		})
	}
}

func TestBuiltinWorkload(t *testing.T) {
	_, errOut, code := runBin(t, "workload", "buildlike", "--size", "300", "--jobs", "2")
	if code != 0 {
		t.Errorf("buildlike: status %d %q", code, errOut)
	}
}

// TestDiffSkippedRecords: an experiment of a newer minor format version
// holding records of a type this hwpprobe does not know is compared (a
// reader of a major reads its newer minors, docs/recording-format.md),
// and the report says which records were skipped, as show says the file
// is incomplete; the exit status is 0, as show's and export's.
func TestDiffSkippedRecords(t *testing.T) {
	dir := t.TempDir()
	exp := testexp.Seed().Bytes()
	// After the meta record: two records of type 9 in a file of the next
	// minor version.
	at := 24 + int(binary.LittleEndian.Uint32(exp[16:]))
	unknown := bytes.Repeat(recordFrame(9, 0, []byte(`{"run":1}`)), 2)
	newer := append(append(bytes.Clone(exp[:at]), unknown...), exp[at:]...)
	binary.LittleEndian.PutUint16(newer[10:], recording.VersionMinor+1)
	cur := fmt.Sprintf("%d.%d", recording.VersionMajor, recording.VersionMinor)
	next := fmt.Sprintf("%d.%d", recording.VersionMajor, recording.VersionMinor+1)
	tests := []struct {
		name string
		file []byte
		want string // the report's missing line; "" for none
	}{
		{cur, exp, ""},
		{next + " with type 9", newer, "missing: exp.hwpr: records were skipped: 2 records of types this hwpprobe does not know (9; the file is version " + next + ", this hwpprobe knows " + cur + ")\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "exp.hwpr")
			if err := os.WriteFile(p, tc.file, 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runBin(t, "diff", p)
			if code != 0 || !strings.Contains(out, "verdict: B is 22.") {
				t.Fatalf("status %d, stderr %q, stdout:\n%s", code, errOut, out)
			}
			if got := strings.Contains(out, "missing:"); got != (tc.want != "") || !strings.Contains(out, tc.want) {
				t.Errorf("want the line %q in the report:\n%s", tc.want, out)
			}
		})
	}
}
