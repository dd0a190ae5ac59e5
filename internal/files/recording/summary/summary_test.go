// SPDX-License-Identifier: Apache-2.0

package summary

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

func run(samples ...recording.Sample) *recording.Run {
	return &recording.Run{
		Start:          recording.RunStart{Run: 1, Command: []string{"make", "-j8"}, TimeNs: 1e18},
		End:            &recording.RunEnd{Run: 1, TimeNs: 1e18 + 4e8},
		CPUColumns:     recording.SamplerCPUColumns(),
		PackageColumns: recording.SamplerPackageColumns(),
		Samples:        samples,
	}
}

// all builds an "all" summary row: Avg_MHz, Busy%, Bzy_MHz, TSC_MHz, IPC,
// CoreTmp; PkgWatt.
func all(dt int64, avg, busy, bzy, ipc, tmp, watt recording.Value) recording.Sample {
	na := recording.NA()
	return recording.Sample{IntervalNs: dt, Summaries: []recording.SummaryRow{{Type: "all", CPUs: 2,
		Values:        []recording.Value{avg, busy, bzy, 2000, ipc, tmp},
		PackageValues: []recording.Value{watt, na, na, na, na, na}}}}
}

// TestRowsWeighting: the run averages must keep turbostat's identity
// Avg_MHz = Busy% x Bzy_MHz / 100 (turbostat.c: Avg_MHz from APERF over
// the interval, Bzy_MHz from APERF over MPERF, Busy% from MPERF over TSC),
// which holds per interval and so must hold for the run: it does only when
// Bzy_MHz is weighted by busy time. Energy is the sum of watts x seconds.
func TestRowsWeighting(t *testing.T) {
	// Each interval satisfies the identity: 1000 = 50% x 2000, 3000 = 100% x 3000.
	r := run(all(1e8, 1000, 50, 2000, 1.0, 40, 10), all(3e8, 3000, 100, 3000, 2.0, 55, 20))
	s := Summarize(&recording.Recording{}, r)
	if len(s.Rows) != 1 {
		t.Fatalf("rows %+v", s.Rows)
	}
	row := s.Rows[0]
	if got := float64(row.BusyPct) * float64(row.BzyMHz) / 100; math.Abs(got-float64(row.AvgMHz)) > 1e-9 {
		t.Errorf("Busy%% %v x Bzy_MHz %v / 100 = %v, Avg_MHz %v", row.BusyPct, row.BzyMHz, got, row.AvgMHz)
	}
	// Avg_MHz by time: (1000 x 0.1 + 3000 x 0.3) / 0.4.
	// IPC by APERF (Avg_MHz x time): (1 x 100 + 2 x 900) / 1000.
	// Energy: 10 W x 0.1 s + 20 W x 0.3 s = 7 J over 0.4 s.
	want := map[string]float64{"Avg_MHz": 2500, "Busy%": 87.5, "IPC": 1.9, "TSC_MHz": 2000, "CoreTmp": 55,
		"Pkg_J": 7, "PkgWatt": 17.5}
	got := map[string]float64{"Avg_MHz": float64(row.AvgMHz), "Busy%": float64(row.BusyPct), "IPC": float64(row.IPC),
		"TSC_MHz": float64(row.TSCMHz), "CoreTmp": float64(row.CoreTmp), "Pkg_J": float64(row.Joule("PkgWatt")),
		"PkgWatt": float64(row.Watt("PkgWatt"))}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if v := row.Watt("RAMWatt"); v.Valid() {
		t.Errorf("RAMWatt never measured, got %v", v)
	}
}

// TestRowsSkipMissing: an interval without a figure does not count as 0.
func TestRowsSkipMissing(t *testing.T) {
	na := recording.NA()
	r := run(all(1e8, 1000, 50, 2000, na, na, na), all(1e8, na, na, na, na, na, na))
	row := Summarize(&recording.Recording{}, r).Rows[0]
	if row.AvgMHz != 1000 || row.IPC.Valid() || row.CoreTmp.Valid() || row.Watt("PkgWatt").Valid() {
		t.Errorf("%+v", row)
	}
}

// TestTraceWrites decodes the kernel's writes with the register catalog:
// 0x80002e17 is the Whiskey Lake request of vectors/registers.tsv
// ("MSR_HWP_REQUEST: 0x80002e17 (min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0)").
func TestTraceWrites(t *testing.T) {
	r := run()
	r.Trace = []recording.TraceEvent{
		{CPU: 2, MSR: 0x774, Value: 0x80002e17, PID: 41, Comm: "kworker/2:1"},
		{CPU: 0, MSR: 0x774, Value: 0x80002e17, PID: 40, Comm: "kworker/0:1"},
		{CPU: 0, MSR: 0x774, Value: 0x00002727, Failed: true, PID: 40, Comm: "kworker/0:1"},
		{CPU: 1, MSR: 0x6e0, Value: 5},
		{CPU: 5, MSR: 0x774, Value: 0x00002727, Old: 0x80002e17, Emulated: true, PID: 4242, Comm: "sh"},
	}
	s := Summarize(&recording.Recording{}, r)
	// By register address, the kernel's first; values and writers most
	// written first.
	want := []RegWrites{
		{MSR: 0x6e0, Name: "MSR 0x6e0", Writes: 1, CPUs: cpus.List{1}, Values: []ValueCount{{5, 1, ""}},
			Writers: []Writer{{Writes: 1}}},
		{MSR: 0x774, Name: "IA32_HWP_REQUEST", Writes: 3, Failed: 1, CPUs: cpus.List{0, 2}, Values: []ValueCount{
			{0x80002e17, 2, "min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0"},
			{0x00002727, 1, "min 39 max 39 des 0 epp 0x0 window 0x0 pkg 0x0"},
		}, Writers: []Writer{{40, "kworker/0:1", 2}, {41, "kworker/2:1", 1}}},
		{MSR: 0x774, Name: "IA32_HWP_REQUEST", Emulated: true, Writes: 1, CPUs: cpus.List{5}, Values: []ValueCount{
			{0x00002727, 1, "min 39 max 39 des 0 epp 0x0 window 0x0 pkg 0x0"},
		}, Writers: []Writer{{4242, "sh", 1}}},
	}
	if diff := cmp.Diff(want, s.Trace); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.TraceN != 5 || s.Emulated != 1 {
		t.Errorf("TraceN %d Emulated %d, want 5 and 1", s.TraceN, s.Emulated)
	}
	var b strings.Builder
	s.writeTrace(&printer{w: &b})
	for _, line := range []string{
		"  register writes: 5 events (1 by the emulated machine's model, 4 by the kernel), 0 lost\n",
		"    IA32_HWP_REQUEST (0x774) [emulated]: 1 writes on CPUs 5, 1 distinct values\n",
		"      by kworker/0:1 (pid 40) 2, kworker/2:1 (pid 41) 1\n",
		"      by sh (pid 4242) 1\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
}

func TestSampledChanges(t *testing.T) {
	smp := func(v uint64) recording.Sample {
		return recording.Sample{CPUs: []recording.CPURow{
			{CPU: 0, Regs: []recording.Reg{{MSR: 0x774, Value: v}, {MSR: 0x1b0, Value: 6}}},
			{CPU: 1, Regs: []recording.Reg{{MSR: 0x774, Value: 0x80002e17}}},
		}}
	}
	r := run(smp(0x40003e05), smp(0x40003e05), smp(0x3e3e), smp(0x40003e05))
	got := Summarize(&recording.Recording{}, r).Changes
	want := []RegChange{{MSR: 0x774, Name: "IA32_HWP_REQUEST", CPU: 0, Values: []uint64{0x40003e05, 0x3e3e, 0x40003e05}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSampledChangesRowsMove: a change is seen whatever row position a
// CPU's row takes, also when a sample holds a CPU twice.
func TestSampledChangesRowsMove(t *testing.T) {
	const a, b, x = 0x80002e17, 0x2e17, 0x40003e05
	row := func(cpu int, v uint64) recording.CPURow {
		return recording.CPURow{CPU: cpu, Regs: []recording.Reg{{MSR: 0x774, Value: v}}}
	}
	smp := func(rows ...recording.CPURow) recording.Sample { return recording.Sample{CPUs: rows} }
	r := run(
		smp(row(0, a), row(1, x)),
		smp(row(1, x), row(0, a)),
		smp(row(0, b), row(1, x)),
		smp(row(1, x), row(0, b)),
		smp(row(0, a), row(0, b)),
		smp(row(0, a), row(0, b)),
		smp(row(0, b), row(1, x)),
	)
	got := Summarize(&recording.Recording{}, r).Changes
	want := []RegChange{{MSR: 0x774, Name: "IA32_HWP_REQUEST", CPU: 0, Values: []uint64{a, b, a, b, a, b}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWriteText(t *testing.T) {
	r := run(all(1e8, 1000, 50, 2000, recording.NA(), 40, 10))
	r.End.ExitCode, r.End.Signal, r.End.Interrupted = 130, "interrupt", true
	r.Process = []recording.Process{{PID: 7, Counts: []recording.Count{
		{Event: "task-clock", Supported: true, Value: 200e6, EnabledNs: 200e6, RunningNs: 200e6},
		{Event: "cycles", Error: "not supported by this machine's PMU"},
	}}}
	var b bytes.Buffer
	if err := Summarize(&recording.Recording{}, r).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"run 1: make -j8",
		"elapsed:   0.400 s",
		"exit:      killed by signal: interrupt (status 130), interrupted",
		"all     2     1000  50.00     2000     2000    -       40       -    10.00   1.00        -        -",
		"task-clock     200.00 msec  # 0.500 CPUs utilized",
		"cycles         <not supported>",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
	// A run cut short says so.
	r.End = nil
	b.Reset()
	Summarize(&recording.Recording{}, r).WriteText(&b)
	if !strings.Contains(b.String(), "exit:      unknown: the recording was cut during the run") {
		t.Errorf("cut run:\n%s", b.String())
	}
}

// TestSampledChangesEncoded: the register changes of a recording scanned
// as show scans it, where the encoding tells which rows changed
// (recording.RegColumn.Changes), are those of the same recording read
// whole and compared row by row; the synthetic EPP flips of 512 CPUs over
// 20 s change registers within batches and between them.
func TestSampledChangesEncoded(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Config{CPUs: 512, Hz: 10, Seconds: 20, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	whole, err := recording.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want := Summarize(whole, whole.Runs[0]).Changes
	col := NewCollector()
	told := 0
	scanned, err := recording.ScanParts(bytes.NewReader(buf.Bytes()), Parts, func(r recording.Record) error {
		if s, ok := r.(recording.Samples); ok {
			for _, c := range s.CPURegs {
				told += len(c.Changes)
			}
		}
		col.Add(r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := col.Summary(scanned, scanned.Runs[0]).Changes
	if diff := cmp.Diff(want, got); diff != "" || len(want) < 5 || told == 0 {
		t.Errorf("%d changes, %d told by the encoding (-whole +scanned):\n%s", len(want), told, diff)
	}
}

// TestWriteHeaderEmulated: show's header says a recording is emulated
// and, when its context holds them, hwpemu's model variant and loop; a
// real machine's and an emulated one without hwpemu's files say so.
func TestWriteHeaderEmulated(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta recording.Meta
		want []string
		not  []string
	}{
		{"real", recording.Meta{}, nil, []string{"EMULATED"}},
		{"emulated", recording.Meta{Emulated: "mtl-165u", Context: &recording.Context{Emulator: &recording.Emulator{
			Variant: recording.Fact{Value: "min-pins"}, Loop: recording.Fact{Value: "closed, slowdown 5.488"}}}},
			[]string{`EMULATED: machine "mtl-165u" (hwpemu)`, "EMULATED: model variant min-pins; loop closed, slowdown 5.488\n"}, nil},
		{"emulated without the files", recording.Meta{Emulated: "mtl-165u", Context: &recording.Context{Emulator: &recording.Emulator{
			Variant: recording.Fact{Missing: "not present"}, Loop: recording.Fact{Missing: "not present"}}}},
			[]string{"EMULATED: model variant missing (not present); loop missing (not present)\n"}, nil},
		{"emulated, no context", recording.Meta{Emulated: "mtl-165u"}, []string{`EMULATED: machine "mtl-165u"`}, []string{"model variant"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHeader(&b, tc.meta, nil, nil); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in:\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("%q in:\n%s", n, b.String())
				}
			}
		})
	}
}
