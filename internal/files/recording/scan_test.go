// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// scanFile returns a recording of one run with nbatch batches of 10
// samples of 64 CPUs, with registers, and a trace batch after each.
func scanFile(t *testing.T, nbatch int) []byte {
	t.Helper()
	return scanFileEnc(t, nbatch, false)
}

// scanFileEnc is scanFile with every batch's columns compressed one by
// one (encoding 3) when packed, else as the writer chooses.
func scanFileEnc(t *testing.T, nbatch int, packed bool) []byte {
	t.Helper()
	records := []Record{RunStart{Run: 1}}
	for b := range nbatch {
		s := Samples{Run: 1, CPUColumns: SamplerCPUColumns(), PackageColumns: SamplerPackageColumns()}
		for i := range 10 {
			smp := Sample{TimeNs: int64(b*10+i) * 1e8, IntervalNs: 1e8,
				Packages:  []PackageRow{{Values: []Value{12.5, 3, NA(), NA(), NA(), 50}, Regs: []Reg{{0x64f, 0}}}},
				Summaries: []SummaryRow{{Type: "all", CPUs: 64, Values: []Value{1, 2, 3, 4, 5, 6}, PackageValues: []Value{1, 2, 3, 4, 5, 6}}}}
			for c := range 64 {
				f := Value(b*640 + i*64 + c)
				smp.CPUs = append(smp.CPUs, CPURow{CPU: c, Core: c / 2, CoreType: "P",
					Values: []Value{800 + f, f / 100, 3000, 1700.001, NA(), 50},
					Regs:   []Reg{{0x774, 0x80002e17}, {0x1b0, 6}}})
			}
			s.Samples = append(s.Samples, smp)
		}
		records = append(records, s, Trace{Run: 1, Events: []TraceEvent{{TimeNs: int64(b), CPU: 1, Comm: "kworker/1:1", MSR: 0x774, Value: uint64(b)}}})
	}
	return writeRecords(t, packed, records...)
}

// TestScanReusesBuffers: scanning allocates per batch, not per row: 45
// more batches of 640 CPU rows cost under one allocation per 10 rows
// (0.04 measured: a few dozen per batch), and what a batch function sees
// is what Read returns.
func TestScanReusesBuffers(t *testing.T) {
	small, large := scanFile(t, 5), scanFile(t, 50)
	allocs := func(b []byte) float64 {
		return testing.AllocsPerRun(3, func() {
			if _, err := Scan(bytes.NewReader(b), func(Record) error { return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
	perRow := (allocs(large) - allocs(small)) / (45 * 640)
	if perRow > 0.1 {
		t.Errorf("%.3f allocations per CPU row scanned", perRow)
	}
	whole, err := Read(bytes.NewReader(large))
	if err != nil || !whole.Complete() {
		t.Fatal(err, whole.Problem)
	}
	var rows, events int
	var sum float64
	rec, err := Scan(bytes.NewReader(large), func(r Record) error {
		switch b := r.(type) {
		case Samples:
			for _, s := range b.Samples {
				for _, c := range s.CPUs {
					rows++
					sum += float64(c.Value(0))
				}
			}
		case Trace:
			events += len(b.Events)
		}
		return nil
	})
	if err != nil || !rec.Complete() || len(rec.Runs) != 1 || len(rec.Runs[0].Samples) != 0 || len(rec.Runs[0].CPUColumns) != 6 {
		t.Fatalf("scan: err %v, recording %+v", err, rec)
	}
	var wantSum float64
	for _, s := range whole.Runs[0].Samples {
		for _, c := range s.CPUs {
			wantSum += float64(c.Value(0))
		}
	}
	if rows != 50*640 || events != 50 || sum != wantSum {
		t.Errorf("scanned %d rows (sum %v), %d events; want %d (sum %v), 50", rows, sum, events, 50*640, wantSum)
	}
}

// scanned returns deep copies of the samples batches of a scan with parts.
func scanned(t *testing.T, b []byte, parts Parts) []Samples {
	t.Helper()
	var out []Samples
	if _, err := ScanParts(bytes.NewReader(b), parts, func(r Record) error {
		if s, ok := r.(Samples); ok {
			out = append(out, deepCopy(t, s))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func deepCopy(t *testing.T, s Samples) Samples {
	t.Helper()
	c := Samples{Run: s.Run, CPUColumns: s.CPUColumns, PackageColumns: s.PackageColumns, SameCPUs: s.SameCPUs}
	j, _ := json.Marshal(s.Samples)
	if err := json.Unmarshal(j, &c.Samples); err != nil {
		t.Fatal(err)
	}
	for _, rc := range s.CPURegs {
		c.CPURegs = append(c.CPURegs, RegColumn{MSR: rc.MSR, Values: slices.Clone(rc.Values), Has: slices.Clone(rc.Has),
			Period: rc.Period, Changes: slices.Clone(rc.Changes)})
	}
	return c
}

// TestScanParts: a scan that selects parts gives the rows of a whole scan
// with the other parts left zero, and the register columns of the rows,
// whatever the format version; one that selects none gives the rows'
// CPUs and the samples' times alone.
func TestScanParts(t *testing.T) {
	files := map[string][]byte{"3.0": scanFile(t, 2), "3.0 encoding 3": scanFileEnc(t, 2, true),
		"2.1": v2Fixture(t, "synth-14.rec"), "1.0": v1Fixture(t, "synthetic-2runs.rec")}
	if encs := encodings(t, files["3.0 encoding 3"]); !encs[encColumns] || encs[encZstdBatch] {
		t.Fatalf("encoding 3 file: batches of encodings %v", encs)
	}
	for name, b := range files {
		whole := scanned(t, b, PartRows)
		for _, parts := range []Parts{0, PartCPUFigures, PartCPUPlaces, PartCPURegs, PartPackages, PartSummaries,
			PartCPURegColumns | PartSummaries, PartCPURegColumns | PartCPURegs | PartCPUFigures} {
			want := make([]Samples, len(whole))
			for i, s := range whole {
				want[i] = deepCopy(t, s).keep(parts)
			}
			got := scanned(t, b, parts)
			// What the encoding tells of the rows is checked by
			// TestEncodingTells.
			opts := cmp.Options{valueCmp, cmpopts.EquateEmpty(),
				cmpopts.IgnoreFields(RegColumn{}, "Period", "Changes"), cmpopts.IgnoreFields(Samples{}, "SameCPUs")}
			if diff := cmp.Diff(want, got, opts); diff != "" {
				t.Errorf("%s, parts %#x (-want +got):\n%s", name, parts, diff)
			}
		}
	}
}

// TestEncodingTells: what a scan says of a batch's rows from its encoding
// holds: with SameCPUs every sample has the first's CPUs, in order; with
// a register column's Period every row past it not in Changes holds the
// value of the row Period before. The files tell it (one register
// changes once, between batches and within one), and 2.x and 1.0 files
// tell nothing.
func TestEncodingTells(t *testing.T) {
	files := map[string][]byte{"3.0": changingFile(t, false), "3.0 encoding 3": changingFile(t, true),
		"2.1": v2Fixture(t, "synth-14.rec"), "1.0": v1Fixture(t, "synthetic-2runs.rec")}
	for name, b := range files {
		var same, periods, changes int
		for _, s := range scanned(t, b, PartCPURegColumns) {
			if s.SameCPUs {
				same++
				for _, x := range s.Samples {
					if !slices.EqualFunc(x.CPUs, s.Samples[0].CPUs, func(a, b CPURow) bool { return a.CPU == b.CPU }) {
						t.Errorf("%s: SameCPUs, but sample %d holds other CPUs", name, x.TimeNs)
					}
				}
			}
			for _, c := range s.CPURegs {
				if c.Period == 0 {
					continue
				}
				periods++
				changes += len(c.Changes)
				for i := c.Period; i < len(c.Values); i++ {
					if !slices.Contains(c.Changes, i) && c.Values[i] != c.Values[i-c.Period] {
						t.Errorf("%s: register %#x row %d differs from row %d, not a change", name, c.MSR, i, i-c.Period)
					}
				}
			}
		}
		if old := name == "2.1" || name == "1.0"; old != (same == 0 && periods == 0) || !old && changes != 1 {
			t.Errorf("%s: %d batches with SameCPUs, %d register columns with a period, %d changes", name, same, periods, changes)
		}
	}
}

// changingFile is a recording of two batches of ten samples of 64 CPUs,
// whose register 0x774 changes on CPU 5 in the middle of the second batch.
func changingFile(t *testing.T, packed bool) []byte {
	t.Helper()
	records := []Record{RunStart{Run: 1}}
	for b := range 2 {
		s := Samples{Run: 1, CPUColumns: []string{"Busy%"}}
		for i := range 10 {
			smp := Sample{TimeNs: int64(b*10+i) * 1e8, IntervalNs: 1e8}
			for c := range 64 {
				hwp := uint64(0x80002e17)
				if c == 5 && b*10+i >= 15 {
					hwp = 0x00002e17
				}
				smp.CPUs = append(smp.CPUs, CPURow{CPU: c, Values: []Value{Value(c + i)}, Regs: []Reg{{0x774, hwp}, {0x1b0, 6}}})
			}
			s.Samples = append(s.Samples, smp)
		}
		records = append(records, s)
	}
	return writeRecords(t, packed, records...)
}
