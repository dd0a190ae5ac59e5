// SPDX-License-Identifier: Apache-2.0

package export

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

func TestWriteCSV(t *testing.T) {
	na := recording.NA()
	start := int64(1_800_000_000_000_000_000)
	rec := &recording.Recording{Runs: []*recording.Run{
		{
			Start:          recording.RunStart{Run: 1, Side: "A", TimeNs: start},
			CPUColumns:     []string{"Avg_MHz", "Busy%"},
			PackageColumns: []string{"PkgWatt"},
			Samples: []recording.Sample{{TimeNs: start + 100_000_000, IntervalNs: 100_000_000,
				CPUs: []recording.CPURow{
					{CPU: 0, Core: 0, CoreType: "P", Values: []recording.Value{2400.5, na}, Regs: []recording.Reg{{MSR: 0x774, Value: 0x80002e17}}},
				},
				Packages:  []recording.PackageRow{{Package: 0, Values: []recording.Value{12.25}, Regs: []recording.Reg{{MSR: 0x64f, Value: 0}}}},
				Summaries: []recording.SummaryRow{{Type: "all", CPUs: 1, Values: []recording.Value{2400.5, 10}, PackageValues: []recording.Value{12.25}}},
			}},
		},
		{
			// A second run with a column the first lacks.
			Start:      recording.RunStart{Run: 2, Side: "B", TimeNs: start + 1e9},
			CPUColumns: []string{"Busy%", "IPC"},
			Samples: []recording.Sample{{TimeNs: start + 1_500_000_000, IntervalNs: 500_000_000,
				CPUs: []recording.CPURow{{CPU: 1, Core: 1, Package: 0, Values: []recording.Value{0, 1.25}}}}},
		},
	}}
	var b bytes.Buffer
	if err := WriteCSV(&b, rec); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"run", "side", "time", "elapsed_s", "interval_s", "row", "Type", "Package", "Core", "CPU", "Avg_MHz", "Busy%", "IPC", "PkgWatt", "IA32_HWP_REQUEST", "MSR_CORE_PERF_LIMIT_REASONS"},
		{"1", "A", "2027-01-15T08:00:00.1Z", "0.1", "0.1", "cpu", "P", "0", "0", "0", "2400.5", "", "", "", "0x80002e17", ""},
		{"1", "A", "2027-01-15T08:00:00.1Z", "0.1", "0.1", "package", "", "0", "", "", "", "", "", "12.25", "", "0x0"},
		{"1", "A", "2027-01-15T08:00:00.1Z", "0.1", "0.1", "summary", "all", "", "", "", "2400.5", "10", "", "12.25", "", ""},
		{"2", "B", "2027-01-15T08:00:01.5Z", "0.5", "0.5", "cpu", "", "0", "1", "1", "", "0", "1.25", "", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
