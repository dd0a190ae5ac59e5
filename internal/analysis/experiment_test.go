// SPDX-License-Identifier: Apache-2.0

package analysis_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

func analyze(t *testing.T, e testexp.Experiment, keep bool) *analysis.Result {
	t.Helper()
	rec, err := recording.Read(bytes.NewReader(e.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Analyze([]analysis.Source{{Name: "exp.hwpr", Rec: rec}}, analysis.Options{}, keep)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func held(ct analysis.TypeEvidence, f string) uint64 { return ct.Held[f][0].Value }

func TestAnalyzeSeed(t *testing.T) {
	e := testexp.Seed()
	e.Warmup = true
	res := analyze(t, e, false)
	c := res.Time.Comparison
	if !c.Significant || c.Ratio > 0.8 || c.RatioHi > 0.8 || c.A.N != 4 || c.B.N != 4 {
		t.Errorf("time: %+v, want B significantly faster, 4+4 runs (the warm-up left out)", c)
	}
	if v := res.Verdict(); !strings.HasPrefix(v, "B is 22.") || !strings.Contains(v, "faster than A") {
		t.Errorf("verdict %q", v)
	}
	for i, want := range []struct{ min, max, epp uint64 }{{0x30, 0x30, 0}, {4, 0x30, 16}} {
		s := res.Sides[i]
		for _, ct := range s.CoreTypes {
			if ct.Type == "all" {
				continue
			}
			if got := [3]uint64{held(ct, "min"), held(ct, "max"), held(ct, "epp")}; got != [3]uint64{want.min, want.max, want.epp} {
				t.Errorf("side %s %s held min/max/epp %v, want %v", s.Label, ct.Type, got, want)
			}
			if len(ct.Written) != 1 || ct.Written[0].Comm != "hwpprobe" || ct.Written[0].Fields["epp"][0].Value != want.epp {
				t.Errorf("side %s %s written %+v, want hwpprobe's writes of EPP %d", s.Label, ct.Type, ct.Written, want.epp)
			}
		}
		// Bit 10 of MSR_CORE_PERF_LIMIT_REASONS, PL1 in the SDM's table for
		// the seed's model 0xAA (hwp.SDMCoreLimitTable).
		if s.LimitShares["PkgPwrL1"] < 0.4 || s.LimitShares["PkgPwrL1"] > 0.6 {
			t.Errorf("side %s limit shares %v, want PkgPwrL1 (bit 10) about half the samples", s.Label, s.LimitShares)
		}
	}
	var whats []string
	for _, d := range res.Differs {
		whats = append(whats, d.What)
	}
	for _, w := range []string{"time", "epp held P", "min held E", "pkg_watt", "cor_watt", "bzy_mhz P"} {
		if !strings.Contains(strings.Join(whats, ","), w) {
			t.Errorf("what differs %q lacks %q", whats, w)
		}
	}
	// The settings first, then the largest register difference.
	var kinds []string
	for _, d := range res.Differs {
		if k := d.Kind; len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
	}
	if d := res.Differs[2]; !slices.Equal(kinds, []string{analysis.DiffSetting, analysis.DiffRegister, analysis.DiffFigure}) ||
		res.Differs[0].What != "scaling_governor" || d.What != "min held P" && d.What != "epp held P" {
		t.Errorf("what differs in kinds %q, first %q, first register %q", kinds, res.Differs[0].What, d.What)
	}
}

func TestAnalyzeEqualSides(t *testing.T) {
	e := testexp.Seed()
	e.B = e.A
	e.B.Label = "B"
	e.B.Seconds = []float64{333.0, 331.2, 335.5, 332.9}
	res := analyze(t, e, false)
	if res.Time.Comparison.Significant || res.Time.Comparison.Delta() != "~" {
		t.Errorf("A = A: %+v, want ~", res.Time.Comparison)
	}
}

func TestAnalyzeDisturbed(t *testing.T) {
	e := testexp.Seed()
	e.Disturb = true
	res := analyze(t, e, false)
	var excluded []analysis.RunResult
	for _, r := range res.Runs {
		if !r.Counted() {
			excluded = append(excluded, r)
		}
	}
	if len(excluded) != 1 || !strings.Contains(excluded[0].Excluded, "thermald (pid 777)") ||
		!strings.Contains(excluded[0].Excluded, "IA32_HWP_REQUEST 0x10003004 -> 0x80003004") {
		t.Fatalf("%d excluded runs, want B's first, naming thermald's write", len(excluded))
	}
	if res.Time.Comparison.B.N != 3 {
		t.Errorf("B counted %d runs, want 3", res.Time.Comparison.B.N)
	}
	if kept := analyze(t, e, true); kept.Time.Comparison.B.N != 4 {
		t.Errorf("--keep-disturbed: B counted %d runs, want 4", kept.Time.Comparison.B.N)
	}
}

func TestAnalyzeTruncated(t *testing.T) {
	e := testexp.Seed()
	e.CutAfter = 6
	b := e.Bytes()
	rec, err := recording.Read(bytes.NewReader(b[:len(b)-3]))
	if err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Analyze([]analysis.Source{{Name: "cut.hwpr", Rec: rec}}, analysis.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Time.Comparison.A.N + res.Time.Comparison.B.N; n != 6 || len(res.Missing) == 0 {
		t.Errorf("cut after 6 runs: %d runs counted, missing %q", n, res.Missing)
	}
}

func TestAnalyzeNotExperiment(t *testing.T) {
	e := testexp.Seed()
	rec, _ := recording.Read(bytes.NewReader(e.Bytes()))
	rec.Meta.Kind = "record"
	rec.Meta.Sides = nil
	if _, err := analysis.Analyze([]analysis.Source{{Name: "run.hwpr", Rec: rec}}, analysis.Options{}, false); !errors.Is(err, analysis.ErrNotExperiment) {
		t.Errorf("one record: %v, want ErrNotExperiment", err)
	}
	// Two recordings are two sides.
	res, err := analysis.Analyze([]analysis.Source{{Name: "a.hwpr", Rec: rec}, {Name: "b.hwpr", Rec: rec}}, analysis.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sides[0].Label != "A (a.hwpr)" || res.Time.Comparison.A.N != 8 || res.Time.Comparison.Significant {
		t.Errorf("two recordings: sides %q, %d runs, %+v", res.Sides[0].Label, res.Time.Comparison.A.N, res.Time.Comparison)
	}
}

func TestThreshold(t *testing.T) {
	res := analyze(t, testexp.Seed(), false)
	tests := []struct {
		text    string
		crossed bool
	}{
		{"B slower than A by 5%", false},
		{"B faster than A by 5%", true},
		{"B faster than A by 30%", false},
		{"A slower than B by 25%", true},
	}
	for _, tc := range tests {
		th, err := analysis.ParseThreshold(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Crossed(res); got != tc.crossed {
			t.Errorf("%q crossed = %v, want %v", tc.text, got, tc.crossed)
		}
	}
	for _, bad := range []string{"B slower than B by 5%", "B slower by 5%", "B slower than A by x%"} {
		if _, err := analysis.ParseThreshold(bad); !errors.Is(err, analysis.ErrThreshold) {
			t.Errorf("%q: %v, want ErrThreshold", bad, err)
		}
	}
}

func TestAnalyzeMisheld(t *testing.T) {
	e := testexp.Seed()
	e.Misheld = true
	res := analyze(t, e, false)
	var excluded []string
	for _, r := range res.Runs {
		if !r.Counted() {
			excluded = append(excluded, r.Excluded)
		}
	}
	want := "disturbed: at its start CPU 0 held IA32_HWP_REQUEST 0x80003004 where the side's other runs held 0x10003004"
	if len(excluded) != 1 || excluded[0] != want {
		t.Errorf("excluded %q, want one: %q", excluded, want)
	}
}
