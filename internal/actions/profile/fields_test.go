// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ip(v int) *int { return &v }

// row is a verification row of the CPUs with min, max, EPP (desired 0,
// EPB 6).
func row(list string, min, max, epp int) Row {
	return Row{CPUs: list, Min: ip(min), Max: ip(max), Desired: ip(0), RegEPP: ip(epp), EPB: ip(6)}
}

// TestChangedFields: the fields that differ on some CPU, register twins,
// a field's one value and min = max, as the Meteor Lake matrix shows them
// (docs/matrix.md).
func TestChangedFields(t *testing.T) {
	perf := &Verification{Rows: []Row{row("0-3", 62, 62, 0), row("4-11", 38, 38, 0)}}
	twin := &Verification{Rows: []Row{row("0-1", 62, 62, 0), row("2-3", 62, 62, 0), row("4-11", 38, 38, 0)}}
	epp0 := &Verification{Rows: []Row{row("0-3", 5, 62, 0), row("4-11", 4, 38, 0)}}
	eppPerf := &Verification{Rows: []Row{row("0-3", 5, 62, 16), row("4-11", 4, 38, 16)}}
	lpOnly := &Verification{Rows: []Row{row("0-3", 62, 62, 0), row("4-11", 38, 38, 16)}}
	refused := &Verification{Refused: "EBUSY"}
	tests := []struct {
		name  string
		a, b  *Verification
		want  []string
		ok    bool
		twins bool
	}{
		{"twins", perf, twin, nil, true, true},
		{"min", perf, epp0, []string{"min"}, true, false},
		{"min and epp", perf, eppPerf, []string{"min", "epp"}, true, false},
		{"epp on some CPUs", perf, lpOnly, []string{"epp"}, true, false},
		{"refused", perf, refused, nil, false, false},
	}
	for _, tc := range tests {
		got, ok := ChangedFields(tc.a, tc.b)
		if d := cmp.Diff(tc.want, got); d != "" || ok != tc.ok || Twins(tc.a, tc.b) != tc.twins {
			t.Errorf("%s: ok %v twins %v, fields (-want +got):\n%s", tc.name, ok, Twins(tc.a, tc.b), d)
		}
	}
	if v, ok := FieldValue(eppPerf, "epp"); !ok || v != 16 {
		t.Errorf("FieldValue(epp) = %d, %v; want 16", v, ok)
	}
	if _, ok := FieldValue(lpOnly, "epp"); ok {
		t.Error("FieldValue(epp) of 0 and 16 is one value")
	}
	if !FieldsEqual(perf, "min", "max") || FieldsEqual(epp0, "min", "max") {
		t.Error("FieldsEqual(min, max): want true under performance, false under powersave")
	}
}
