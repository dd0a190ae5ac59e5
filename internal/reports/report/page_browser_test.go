// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/browsertest"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/htmlreport"
)

// pageChartIDs returns the ids of the charts in a page's data.
func pageChartIDs(t *testing.T, page string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="hwp-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no chart data")
	}
	var data struct {
		Charts []struct {
			ID string `json:"id"`
		} `json:"charts"`
	}
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatalf("chart data: %v", err)
	}
	var ids []string
	for _, c := range data.Charts {
		ids = append(ids, c.ID)
	}
	return ids
}

// checkInBrowser opens the page at path in headless Chromium and checks
// what a reader would see: no console error or exception, the page's
// self-check done, and every chart of its data drawn with something in
// its plot area. The screenshot goes to the test's artifacts.
func checkInBrowser(t *testing.T, br *browsertest.Browser, path, name string, dark bool) *browsertest.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := pageChartIDs(t, string(b))
	res, err := br.Open(path, browsertest.Options{Screenshot: true, Dark: dark, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("open %s in chromium: %v", path, err)
	}
	shot := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(shot, res.Screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d charts drawn in %.0f ms (%.0f ms from navigation); screenshot %s", name, len(res.Charts), res.RenderMs, res.LoadMs, shot)
	for _, m := range res.Console {
		t.Errorf("console: %s", m)
	}
	for _, e := range res.Errors {
		t.Errorf("page error: %s", e)
	}
	var got []string
	for _, c := range res.Charts {
		got = append(got, c.ID)
		switch {
		case c.ExpectEmpty && c.Pixels > 0:
			t.Errorf("chart %s (%q) is said to be empty but drew %d coloured pixels", c.ID, c.Title, c.Pixels)
		case !c.ExpectEmpty && c.Pixels == 0:
			t.Errorf("chart %s (%q) drew nothing in its plot area", c.ID, c.Title)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("charts drawn %q, want %q", got, want)
	}
	if res.Rendered != "ok" {
		t.Errorf("the page's self-check says %q", res.Rendered)
	}
	return res
}

// startBrowser starts headless Chromium for the test, for at most two
// minutes. It does not skip: CI installs chromium (scripts/install-deps.sh).
func startBrowser(t *testing.T) *browsertest.Browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	br, err := browsertest.Start(ctx, 1400, 1000)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Close(); cancel() })
	return br
}

// TestPageInBrowser renders the pages of an emulated experiment, of an
// emulated recording, of two recordings and of a three-side experiment, and looks at them in headless
// Chromium (light and dark).
func TestPageInBrowser(t *testing.T) {
	// The recording hit no limit: it has no lane chart.
	timelines := []string{"tl-mhz-0", "tl-busy-0", "tl-power-0", "tl-temp-0", "tl-request-0", "tl-writes-0"}
	tests := []struct {
		name         string
		paths        []string
		dark, perCPU bool
		want, not    []string // charts drawn, and not drawn
	}{
		{"experiment", []string{diffFixture}, false, false, append([]string{"runs-time", "runs-energy", "tl-mhz-1", "tl-limits-0"}, timelines...), []string{"tl-cpumhz-0"}},
		{"experiment-dark", []string{diffFixture}, true, false, []string{"runs-time", "tl-mhz-0", "tl-mhz-1"}, nil},
		{"recording", []string{recordFixture}, false, false, timelines, []string{"runs-time", "tl-mhz-1", "tl-cpumhz-0", "tl-limits-0"}},
		{"recording-per-cpu", []string{recordFixture}, false, true, append([]string{"tl-cpumhz-0"}, timelines...), nil},
		{"two-recordings", []string{recordFixture, recordFixture}, false, false, append([]string{"runs-time", "tl-mhz-1"}, timelines...), nil},
		{"three-sides", []string{diff3Fixture}, false, false, []string{"runs-time", "tl-mhz-0", "tl-mhz-1", "tl-mhz-2"}, nil},
	}
	// The experiment cut short inside its last runs (a crash): the page
	// of what it holds.
	b, err := os.ReadFile(diffFixture)
	if err != nil {
		t.Fatal(err)
	}
	cut, early := filepath.Join(t.TempDir(), "cut.hwpr"), filepath.Join(t.TempDir(), "early.hwpr")
	if err := os.WriteFile(cut, b[:len(b)*3/4], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(early, b[:len(b)/5], 0o644); err != nil { // before B's first counted run
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name         string
		paths        []string
		dark, perCPU bool
		want, not    []string
	}{"cut-short", []string{cut}, false, false, []string{"runs-time", "tl-mhz-0", "tl-mhz-1"}, nil},
		struct {
			name         string
			paths        []string
			dark, perCPU bool
			want, not    []string
		}{"cut-early", []string{early}, false, false, []string{"tl-mhz-0"}, []string{"runs-time"}})
	br := startBrowser(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tt.name+".html")
			err := Page(PageOptions{Paths: tt.paths, Output: out, KeepDisturbed: true, PerCPU: tt.perCPU, Info: Info{Version: "test"}})
			if err != nil && (!strings.HasPrefix(tt.name, "cut-") || !errors.Is(err, analysis.ErrIncomplete)) {
				t.Fatal(err)
			}
			res := checkInBrowser(t, br, out, tt.name, tt.dark)
			drawn := func(id string) bool {
				return slices.ContainsFunc(res.Charts, func(c browsertest.Chart) bool { return c.ID == id })
			}
			for _, id := range tt.want {
				if !drawn(id) {
					t.Errorf("no chart %s", id)
				}
			}
			for _, id := range tt.not {
				if drawn(id) {
					t.Errorf("chart %s drawn", id)
				}
			}
		})
	}
}

// TestBrowserCheckCatches: the checks can fail. A chart with nothing to
// draw is reported empty and the page's self-check says "error"; a page
// that throws and logs errors has them collected.
func TestBrowserCheckCatches(t *testing.T) {
	br := startBrowser(t)
	srcs, err := analysis.ReadSources([]string{diffFixture})
	if err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Analyze(srcs, analysis.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	empty := htmlreport.Chart{ID: "empty", Section: "runs", Title: "nothing", XLabel: "x", YLabel: "y",
		X: htmlreport.Numbers{1, 2}, Series: []htmlreport.Series{{Label: "gaps", Color: "#1f77d0", Kind: htmlreport.KindLine,
			Values: htmlreport.Numbers{htmlreport.NaN, htmlreport.NaN}}},
		XMin: htmlreport.Number(htmlreport.NaN), XMax: htmlreport.Number(htmlreport.NaN), YMin: htmlreport.Number(0), YMax: htmlreport.Number(1)}
	var b bytes.Buffer
	if err := htmlreport.WriteDiff(&b, res, htmlreport.Options{Charts: []htmlreport.Chart{empty}}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "empty.html")
	throws := filepath.Join(dir, "throws.html")
	for p, s := range map[string]string{page: b.String(), throws: `<!DOCTYPE html><html><body><script>
console.error("logged");
document.documentElement.setAttribute("data-rendered", "ok");
window.hwpCheck = {charts: [], errors: []};
throw new Error("thrown");
</script></body></html>`} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := br.Open(page, browsertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Rendered != "error" || !slices.ContainsFunc(got.Charts, func(c browsertest.Chart) bool { return c.ID == "empty" && c.Pixels == 0 }) {
		t.Errorf("an empty chart passed: rendered %q, charts %+v", got.Rendered, got.Charts)
	}
	got, err = br.Open(throws, browsertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(got.Console, "\n")
	if !strings.Contains(joined, "logged") || !strings.Contains(joined, "thrown") {
		t.Errorf("console errors not collected: %q", got.Console)
	}
}

// TestPageInteractions: zooming one timeline zooms every timeline of the
// page, both sides; hovering a register write's marker shows the write
// decoded, with its writer, in the legend.
func TestPageInteractions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "page.html")
	if err := Page(PageOptions{Paths: []string{recordFixture, recordFixture}, Output: out, KeepDisturbed: true}); err != nil {
		t.Fatal(err)
	}
	// uPlot applies a scale in a microtask: wait a frame before reading.
	const settle = "new Promise(r => requestAnimationFrame(() => setTimeout(r, 20)))"
	scales := `hwpPlots.filter(u => u.hwpGroup).map(u => [u.hwpSpec.id, u.scales.x.min, u.scales.x.max, u.hwpSpec.xMin, u.hwpSpec.xMax])`
	zoom := `(async () => {
		hwpPlots.filter(u => u.hwpGroup)[0].setScale("x", {min: 0.5, max: 1.25});
		await ` + settle + `;
		return ` + scales + `;
	})()`
	zoomOut := `(async () => {
		const u = hwpPlots.filter(u => u.hwpGroup)[3];
		u.over.dispatchEvent(new MouseEvent("dblclick", {bubbles: true, clientX: 50, clientY: 50}));
		await ` + settle + `;
		return ` + scales + `;
	})()`
	hover := `(async () => {
		const u = hwpPlots.find(u => u.hwpSpec.id === "tl-writes-1");
		for (let s = 1; s < u.data.length; s++) {
			const i = u.data[s].findIndex(v => v != null);
			if (i < 0) continue;
			u.setCursor({left: u.valToPos(u.data[0][i], "x"), top: u.valToPos(u.data[s][i], "y")});
			await ` + settle + `;
			return u.root.querySelectorAll(".u-legend .u-value")[s].textContent;
		}
		return "no point";
	})()`
	br := startBrowser(t)
	res, err := br.Open(out, browsertest.Options{Eval: []string{zoom, zoomOut, hover}})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []string{"zoom to 0.5..1.25 s", "zoom out to the page's range"} {
		var got [][]any
		if err := json.Unmarshal(res.Evals[k], &got); err != nil {
			t.Fatalf("%s: %v", res.Evals[k], err)
		}
		if len(got) < 12 {
			t.Errorf("only %d timelines", len(got))
		}
		for _, s := range got {
			lo, hi := s[3], s[4]
			if k == 0 {
				lo, hi = 0.5, 1.25
			}
			if s[1] != lo || s[2] != hi {
				t.Errorf("%s: timeline %v is at %v..%v", want, s[0], s[1], s[2])
			}
		}
	}
	var text string
	if err := json.Unmarshal(res.Evals[2], &text); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\+\d+\.\d{3} s CPU \d+ \((P|E|LP-E)\): 0x[0-9a-f]+ -> 0x[0-9a-f]+: epp 64 -> 255 by sh\[\d+\] \(emulated\)$`).MatchString(text) {
		t.Errorf("hovering a write shows %q", text)
	}
}
