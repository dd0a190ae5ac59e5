// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

func seedResult(t *testing.T) *analysis.Result {
	t.Helper()
	e := testexp.Seed()
	e.Warmup = true
	return analyzed(t, e)
}

// analyzed is experiment e written, read back and analysed.
func analyzed(t *testing.T, e testexp.Experiment) *analysis.Result {
	t.Helper()
	rec, err := recording.Read(bytes.NewReader(e.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Analyze([]analysis.Source{{Name: "exp.hwpr", Rec: rec}}, analysis.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, seedResult(t), Info{Version: "test", Emulated: "mtl-165u"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"EMULATED machine \"mtl-165u\"",
		"A: scaling_governor=performance  (4 runs counted)",
		"held:    min 48  max 48  desired 0  epp 0  epb 0",
		"held:    min 4  max 48  desired 0  epp 16  epb 0",
		"written: hwpprobe x4: min 48  max 48  desired 0  epp 0",
		"[warm-up]",
		// Bit 10 of 0x64F (named by the SDM's table for model 0xAA) is set
		// in every odd one-second sample: A's counted runs of 330, 335,
		// 334 and 332 samples had it 165, 168, 167 and 166 s.
		"limits (median per run): PkgPwrL1 166.5 s",
		"    2 A excursions HWP_STATUS not read; limits PkgPwrL1 165.0 s of 330.0 s; PL2 window not known (no PL1 or package power)",
		"power: package 28.0 W = cores 14.0 + rest 14.0",
		"what differs (settings, registers, then significant figures, largest first):",
		"  scaling_governor A performance    B powersave",
		"  min held P       A 48             B 4",
		"verdict: B is 22.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, seedResult(t), Info{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"**Verdict:** B is 22.",
		"| machine | Intel(R) Core(TM) Ultra 7 165U (family 6 model 0xaa stepping 0), microcode 0x20 |",
		"| side B | `scaling_governor=powersave energy_performance_preference=performance` |",
		"| command | `make -j4` |",
		"| B | P | 2 | min 4  max 48  desired 0  epp 16  epb 0 | hwpprobe x4: min 4  max 48  desired 0  epp 16 |",
		"| 1 | A | 364.056 |",
		"### Per-run evidence",
		"| 2 | A | HWP_STATUS not read | PkgPwrL1 165.0 s of 330.0 s | not known (no PL1 or package power) | package 28.0 W = cores 14.0 + rest 14.0 |",
		"no: warm-up",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown report lacks %q:\n%s", want, out)
		}
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	th, _ := analysis.ParseThreshold("B slower than A by 5%")
	if err := WriteJSON(&b, seedResult(t), Info{Version: "test"}, []analysis.Threshold{th}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema string `json:"schema"`
		Sides  []struct {
			Label        string             `json:"label"`
			LimitSeconds map[string]float64 `json:"limit_seconds"`
			CoreTypes    []struct {
				Type string                           `json:"type"`
				Held map[string][]analysis.FieldCount `json:"held"`
			} `json:"core_types"`
		} `json:"sides"`
		Figures []struct {
			Name        string   `json:"name"`
			Significant bool     `json:"significant"`
			Ratio       float64  `json:"ratio"`
			RatioHi     *float64 `json:"ratio_hi"`
		} `json:"figures"`
		Runs []struct {
			Counted  bool `json:"counted"`
			Evidence struct {
				LimitSeconds map[string]float64  `json:"limit_seconds"`
				Watts        map[string]*float64 `json:"watts"`
			} `json:"evidence"`
		} `json:"runs"`
		Thresholds []struct {
			Crossed bool `json:"crossed"`
		} `json:"thresholds"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.Schema != Schema || len(got.Sides) != 2 || len(got.Runs) != 9 || got.Runs[0].Counted {
		t.Fatalf("schema %q, %d sides, %d runs", got.Schema, len(got.Sides), len(got.Runs))
	}
	want := [2][3]uint64{{48, 48, 0}, {4, 48, 16}}
	for i, s := range got.Sides {
		for _, ct := range s.CoreTypes {
			if ct.Type == "all" { // the hybrid machine's CPU rows are P or E
				continue
			}
			h := [3]uint64{ct.Held["min"][0].Value, ct.Held["max"][0].Value, ct.Held["epp"][0].Value}
			if h != want[i] {
				t.Errorf("side %s %s held min/max/epp %v, want %v", s.Label, ct.Type, h, want[i])
			}
		}
	}
	ev := got.Runs[1].Evidence // A's first counted run, 330 samples
	if ev.LimitSeconds["PkgPwrL1"] != 165 || ev.Watts["rest"] == nil || *ev.Watts["rest"] != 14 || ev.Watts["psys"] != nil ||
		got.Sides[0].LimitSeconds["PkgPwrL1"] != 166.5 {
		t.Errorf("run 2's evidence %+v, side A's limit seconds %v: want PkgPwrL1 165 s, rest 14 W, psys null; A's median 166.5 s",
			ev, got.Sides[0].LimitSeconds)
	}
	f := got.Figures[0]
	if f.Name != "time" || !f.Significant || f.Ratio > 0.8 || f.RatioHi == nil || got.Thresholds[0].Crossed {
		t.Errorf("time figure %+v, threshold %+v", f, got.Thresholds)
	}
}

func TestJSONNullForInfinite(t *testing.T) {
	e := testexp.Seed()
	e.A.Seconds, e.B.Seconds = e.A.Seconds[:3], e.B.Seconds[:3]
	rec, _ := recording.Read(bytes.NewReader(e.Bytes()))
	res, err := analysis.Analyze([]analysis.Source{{Name: "x", Rec: rec}}, analysis.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, res, Info{}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"ratio_hi": null`) || !strings.Contains(b.String(), `"delta": "~"`) {
		t.Errorf("3+3 runs: want a null interval bound and ~:\n%.2000s", b.String())
	}
}

// TestFootnotesEveryFormat: with 3+3 runs benchstat's footnotes (too few
// runs for an interval, too few to detect a difference) are marked and
// printed in the text and Markdown reports as in the JSON, and the note on
// the several figures tested is in each.
func TestFootnotesEveryFormat(t *testing.T) {
	e := testexp.Seed()
	e.A.Seconds, e.B.Seconds = e.A.Seconds[:3], e.B.Seconds[:3]
	res := analyzed(t, e)
	family := analysis.FamilyNote(len(res.AllFigures()), 0.05)
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  []string
	}{
		{"text", func(b *bytes.Buffer) error { return WriteText(b, res, Info{}) }, []string{
			"¹ need >= 6 samples for confidence interval at level 0.95\n",
			"² need >= 4 samples to detect a difference at alpha level 0.05\n",
			"~ (p=0.100 n=3) ²\n",
			"note: " + family + "\n",
		}},
		{"markdown", func(b *bytes.Buffer) error { return WriteMarkdown(b, res, Info{}) }, []string{
			"¹ need >= 6 samples for confidence interval at level 0.95  \n",
			"² need >= 4 samples to detect a difference at alpha level 0.05  \n",
			"| p=0.100 n=3 ² |",
			"*Note:* " + family + "  \n",
		}},
		{"json", func(b *bytes.Buffer) error { return WriteJSON(b, res, Info{}, nil) }, []string{
			`"need \u003e= 6 samples for confidence interval at level 0.95"`,
			`"need \u003e= 4 samples to detect a difference at alpha level 0.05"`,
			`"multiple comparisons: `,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			var missing []string
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					missing = append(missing, w)
				}
			}
			if d := cmp.Diff([]string(nil), missing); d != "" {
				t.Errorf("missing (-none +missing):\n%s\n%s", d, b.String())
			}
		})
	}
}

func TestSuperscript(t *testing.T) {
	got := []string{superscript(1), superscript(9), superscript(10), superscript(23)}
	if d := cmp.Diff([]string{"¹", "⁹", "¹⁰", "²³"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
