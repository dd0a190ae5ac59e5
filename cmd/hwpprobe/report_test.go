// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/browsertest"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

func TestReportOffline(t *testing.T) {
	dir := t.TempDir()
	exp := writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
	page := filepath.Join(dir, "exp.html")
	pngs := filepath.Join(dir, "png")
	if _, errOut, code := runBin(t, "report", exp, "-o", page, "--png", pngs); code != 0 {
		t.Fatalf("report: status %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(pngs, "run-times.png")); err != nil {
		t.Errorf("--png: %v", err)
	}
	b, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), `<div class="verdict" id="verdict">verdict: B is 22.`) {
		t.Errorf("page: %v\n%.2000s", err, b)
	}
	other := filepath.Join(dir, "diff.html")
	if out, errOut, code := runBin(t, "diff", exp, "--html", other); code != 0 || !strings.Contains(out, "verdict: B is 22.") {
		t.Fatalf("diff --html: status %d, stderr %q", code, errOut)
	}
	if b2, err := os.ReadFile(other); err != nil || string(b2) != string(b) {
		t.Errorf("diff --html wrote another page than report (%v)", err)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.hwpr")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cut := testexp.Seed()
	cut.CutAfter = 6
	b := cut.Bytes()
	truncated := filepath.Join(dir, "cut.hwpr")
	if err := os.WriteFile(truncated, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.html")
	tests := []struct {
		name    string
		args    []string
		want    string
		written bool
	}{
		{"no -o", []string{"report", empty}, "-o REPORT.html is required", false},
		{"no file", []string{"report", "-o", out}, "accepts between 1 and 2 arg(s)", false},
		{"empty", []string{"report", empty, "-o", out}, "not an hwpprobe recording", false},
		{"over its input", []string{"report", empty, "-o", empty}, "is also an input", false},
		{"bad alpha", []string{"report", empty, "-o", out, "--alpha", "1"}, "--alpha and --confidence must be in (0, 1)", false},
		{"cut short", []string{"report", truncated, "-o", out}, "truncated", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(out)
			_, errOut, code := runBin(t, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("status %d, stderr %q; want 2 and one line with %q", code, errOut, tt.want)
			}
			_, err := os.Stat(out)
			if written := err == nil; written != tt.written {
				t.Errorf("page written: %v, want %v", written, tt.written)
			}
		})
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), `id="missing"`) {
		t.Errorf("the page of a file cut short does not say what is missing (%v)", err)
	}
	if st, err := os.Stat(empty); err != nil || st.Size() != 0 {
		t.Errorf("the input was written over: %v", err)
	}
}

// TestReportUnwritable: a page or PNG charts that cannot be written exit 1
// with one line that names the command once.
func TestReportUnwritable(t *testing.T) {
	dir := t.TempDir()
	exp := writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", exp, "-o", filepath.Join(dir, "missing", "exp.html")},
		{"report", exp, "-o", filepath.Join(dir, "exp.html"), "--png", notDir},
	} {
		_, errOut, code := runBin(t, args...)
		if code != 1 || !strings.HasPrefix(errOut, "hwpprobe: report: ") || strings.Count(errOut, "report:") != 1 ||
			strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%q: status %d, stderr %q; want 1 and one line naming report once", args, code, errOut)
		}
	}
}

// TestReportEmulated: under the emulated Core Ultra 7 165U, `record`
// then `report`, and `diff --html` with the built-in workload kept small;
// both pages open in headless Chromium with no console error and every
// chart drawn.
func TestReportEmulated(t *testing.T) {
	dir := t.TempDir()
	script := `set -e
$H record -o rec.hwpr -- $H workload buildlike --size 1500 >/dev/null
$H report rec.hwpr -o rec.html
$H diff performance powersave:epp=performance --runs 2 --warmup 0 --size 1000 -o exp.hwpr --html exp.html >/dev/null
`
	out, code := emuDiff(t, "mtl-165u", dir, script)
	if code != 0 {
		t.Fatalf("status %d:\n%s", code, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	br, err := browsertest.Start(ctx, 1400, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	for _, name := range []string{"rec.html", "exp.html"} {
		res, err := br.Open(filepath.Join(dir, name), browsertest.Options{Screenshot: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name+".png"), res.Screenshot, 0o644); err != nil {
			t.Fatal(err)
		}
		if len(res.Console) > 0 || len(res.Errors) > 0 || res.Rendered != "ok" {
			t.Errorf("%s: console %q, errors %q, self-check %q", name, res.Console, res.Errors, res.Rendered)
		}
		for _, c := range res.Charts {
			if c.Pixels == 0 && !c.ExpectEmpty {
				t.Errorf("%s: chart %s drew nothing", name, c.ID)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.Contains(string(b), `id="emulated">EMULATED`) {
			t.Errorf("%s: no EMULATED banner (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "exp.html")); errors.Is(err, os.ErrNotExist) {
		t.Error("diff --html wrote no page")
	}
}
