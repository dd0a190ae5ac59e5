// SPDX-License-Identifier: Apache-2.0

package report

import (
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// The fixtures: testdata/README.md says how they were made.
const (
	diffFixture   = "testdata/emu-mtl-diff.hwpr"
	diff3Fixture  = "testdata/emu-mtl-diff3.hwpr" // three sides
	recordFixture = "testdata/emu-mtl-record.hwpr"
)

func writePage(t *testing.T, paths ...string) (string, string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "page.html")
	err := Page(PageOptions{Paths: paths, Output: out, Info: Info{Version: "test"}})
	b, rerr := os.ReadFile(out)
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		t.Fatal(rerr)
	}
	return out, string(b), err
}

// external matches anything that would make the page fetch: a script or
// image source, a stylesheet link, a CSS import or url().
var external = regexp.MustCompile(`(?i)<script[^>]+src=|<link[^>]+href=|<img[^>]+src=|<iframe|@import|url\(\s*['"]?(https?:|//)`)

func TestPageContent(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		keep  bool
		want  []string
	}{
		{"experiment", []string{diffFixture}, false, []string{
			`id="emulated">EMULATED machine &ldquo;mtl-165u&rdquo;`,
			`<div class="verdict" id="verdict">verdict: ~ no significant difference in time between A and B`,
			`governor=powersave epp=performance`,
			`<tr class="differs"><td><b>P</b></td><td>min</td><td class="mono">62</td><td class="mono">5</td>`,
			`<h2 id="differs">What differs</h2>`, `<td>epp held P</td><td class="num">0</td><td class="num">16</td>`,
			`<h2 id="statistics">Statistics</h2>`, `id="runs-time"`, `id="runs-energy"`,
			`Intel(R) Core(TM) Ultra 7 165U (GenuineIntel family 6 model 0xaa stepping 4)`, `<th>microcode</th><td class="mono">0x1f</td>`,
			`<td>no: warm-up</td>`,
			// Run 2's evidence: its samples' intervals above PL1 (15 W, by
			// more than 5%) sum to 0.807 s of 0.850 s (all but the last, at
			// 13.2 W), 95%.
			`<h3 id="run-evidence">Per-run evidence</h3>`,
			`<tr><td class="num">2</td><td>B</td><td>HWP_STATUS not read</td><td>PkgPwrL2 0.5 s of 0.9 s</td><td>0.8 s (95%)</td><td>package 52.4 W = cores 49.9 &#43; graphics 1.8 &#43; rest 0.8; psys 55.4 W</td>`,
			`<td>before MSR 15/57 W (28s), intel-rapl:0 15/57 W (28s); after as before</td>`,
		}},
		{"recording", []string{recordFixture}, false, []string{
			`id="emulated">EMULATED`, `<h1>hwpprobe record: emu-mtl-record.hwpr</h1>`,
			`<h3>Averages per run and core type</h3>`, `<h3>Kernel register writes per run</h3>`,
			`IA32_HWP_REQUEST (emulated)`, `<td>epp</td><td class="mono">255 (64%), 64 (36%)</td><td class="mono">sh x4: 255</td>`,
		}},
		// The recording's EPP changed during its run: only counted with
		// keep-disturbed.
		{"two recordings", []string{recordFixture, recordFixture}, true, []string{
			`hwpprobe diff: A (emu-mtl-record.hwpr) vs B (emu-mtl-record.hwpr)`, `id="runs-time"`,
			`<td class="mono">scaling_governor=powersave energy_performance_preference=balance_performance`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "page.html")
			if err := Page(PageOptions{Paths: tt.paths, Output: out, KeepDisturbed: tt.keep, Info: Info{Version: "test"}}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			if m := external.FindString(page); m != "" {
				t.Errorf("page refers to something outside it: %q", m)
			}
			if strings.Contains(page, `id="missing"`) {
				t.Errorf("a complete file's page says something is missing")
			}
		})
	}
}

// TestPageVerdictAsText: the page's verdict is the text report's.
func TestPageVerdictAsText(t *testing.T) {
	srcs, err := analysis.ReadSources([]string{diffFixture})
	if err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Analyze(srcs, analysis.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, page, err := writePage(t, diffFixture)
	if err != nil {
		t.Fatal(err)
	}
	if want := "verdict: " + res.Verdict(); !strings.Contains(html.UnescapeString(page), want) {
		t.Errorf("page lacks the text report's %q", want)
	}
}

// TestPageBadInput: nothing readable gives one error and no file.
func TestPageBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.hwpr")
	text := filepath.Join(dir, "notes.txt")
	corrupt := filepath.Join(dir, "corrupt.hwpr")
	metaOnly := filepath.Join(dir, "meta.hwpr")
	b, err := os.ReadFile(recordFixture)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), b...)
	for i := len(recording.Magic) + 4; i < len(bad); i++ {
		bad[i] ^= 0x5a
	}
	for p, data := range map[string][]byte{empty: nil, text: []byte("not a recording\n"), corrupt: bad, metaOnly: b[:firstRunOffset(t, b)]} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		opts PageOptions
		want string
	}{
		{"empty", PageOptions{Paths: []string{empty}}, "not an hwpprobe recording"},
		{"text", PageOptions{Paths: []string{text}}, "not an hwpprobe recording"},
		{"corrupt", PageOptions{Paths: []string{corrupt}}, "corrupt"},
		{"no run", PageOptions{Paths: []string{metaOnly}}, "no run"},
		{"missing", PageOptions{Paths: []string{filepath.Join(dir, "nope.hwpr")}}, "no such file"},
		{"over its input", PageOptions{Paths: []string{empty}, Output: empty}, "is also an input"},
		{"three files", PageOptions{Paths: []string{recordFixture, recordFixture, recordFixture}}, "3 recordings given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := tt.opts.Output
			if out == "" {
				out = filepath.Join(t.TempDir(), "page.html")
				tt.opts.Output = out
			}
			err := Page(tt.opts)
			var in InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Page = %v, want one line InputError with %q", err, tt.want)
			}
			if out != empty {
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a page was written for bad input (stat: %v)", err)
				}
			} else if st, _ := os.Stat(empty); st.Size() != 0 {
				t.Errorf("the input was overwritten")
			}
		})
	}
}

// firstRunOffset is where the record after the meta record starts.
func firstRunOffset(t *testing.T, b []byte) int {
	t.Helper()
	// header, then one frame: 12-byte frame header and its payload.
	const hdr = 12
	n := int(b[hdr+4]) | int(b[hdr+5])<<8 | int(b[hdr+6])<<16 | int(b[hdr+7])<<24
	return hdr + 12 + n
}

// TestPageCutShort: a recording cut short gives the page of what it holds,
// saying what is missing, and then an InputError; an experiment cut before
// its second side had a run, the page of its runs without the comparison.
func TestPageCutShort(t *testing.T) {
	tests := []struct {
		name, fixture string
		keep          float64 // the share of the file kept
		want          string
	}{
		{"experiment", diffFixture, 0.75, `<div class="verdict" id="verdict">`},
		{"experiment, one side", diffFixture, 0.2, `<li>the comparison: a side has no complete run`},
		{"recording", recordFixture, 0.75, `<h1>hwpprobe record: cut.hwpr</h1>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(tt.fixture)
			if err != nil {
				t.Fatal(err)
			}
			cut := filepath.Join(t.TempDir(), "cut.hwpr")
			if err := os.WriteFile(cut, b[:int(float64(len(b))*tt.keep)], 0o644); err != nil {
				t.Fatal(err)
			}
			_, page, err := writePage(t, cut)
			var in InputError
			if !errors.As(err, &in) || !errors.Is(err, analysis.ErrIncomplete) {
				t.Fatalf("Page = %v, want an InputError wrapping ErrIncomplete", err)
			}
			if !strings.Contains(page, `id="missing"`) || !strings.Contains(page, "truncated") || !strings.Contains(page, tt.want) {
				t.Errorf("the page does not say what is missing, or lacks %q:\n%.3000s", tt.want, page)
			}
		})
	}
}
