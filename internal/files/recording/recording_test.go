// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// bigReg is a 64-bit register value with bits above 2^53 set (valid bits
// 63:59 of IA32_HWP_REQUEST over the Whiskey Lake request 0x80002e17 in
// regs/testdata/registers.tsv): the container must carry any uint64
// exactly, which a float64 (or JSON read by JavaScript) would not.
const bigReg = 0xF800_0000_8000_2E17

func sampleRecords() []Record {
	return []Record{
		RunStart{Run: 1, Side: "A", Settings: []Setting{{"scaling_governor", "performance"}},
			Observed: []Setting{{"scaling_governor", "powersave (0-3), performance (4-7)"}},
			Figures: &Figures{Sources: map[string]string{"Avg_MHz": "perf", "IPC": ""},
				Notes: []FigureNote{{"IPC", "no instructions event"}}},
			Command: []string{"sleep", "2"}, Dir: "/tmp", UID: 65534, GID: 65534, PID: 4242, TimeNs: 1_700_000_000_000_000_000},
		Snapshot{Run: 1, Phase: PhaseBefore, TimeNs: 1_700_000_000_000_000_001, Format: "test/1",
			Data: json.RawMessage(`{"cpus":[{"cpu":0,"epp":128}]}`)},
		Samples{Run: 1, CPUColumns: []string{"Avg_MHz", "Busy%", "IPC"}, PackageColumns: []string{"PkgWatt"},
			Samples: []Sample{{TimeNs: 1_700_000_000_100_000_000, IntervalNs: 100_000_000,
				CPUs: []CPURow{
					{CPU: 0, Core: 0, CoreType: "P", Values: []Value{2400.5, 37.25, NA()}, Regs: []Reg{{0x774, bigReg}}},
					{CPU: 1, Core: 1, Package: 0, Values: []Value{800, 0, 1.5}},
				},
				Packages:  []PackageRow{{Package: 0, Values: []Value{12.75}, Regs: []Reg{{0x64F, 0x1c000000}}}},
				Summaries: []SummaryRow{{Type: "all", CPUs: 2, Values: []Value{1600.25, 18.625, 1.5}, PackageValues: []Value{12.75}}}}}},
		Trace{Run: 1, Lost: 3, Events: []TraceEvent{
			{TimeNs: 1_700_000_000_050_000_000, CPU: 1, PID: 12, Comm: "kworker/1:1", MSR: 0x774, Value: bigReg},
			{TimeNs: 1_700_000_000_050_000_001, CPU: 0, PID: 0, Comm: "swapper/0", MSR: 0x1B0, Value: 6, Failed: true},
		}},
		Process{Run: 1, PID: 4242, Counts: []Count{
			{Event: "cycles", Error: "not supported by this CPU's PMU"},
			{Event: "task-clock", Supported: true, Value: 1234567, EnabledNs: 1234567, RunningNs: 1234567},
		}},
		Note{Run: 1, TimeNs: 1_700_000_000_200_000_000, Text: "sampling stopped: no space left on device"},
		RunEnd{Run: 1, TimeNs: 1_700_000_002_000_000_000, ExitCode: 130, Signal: "interrupt", Interrupted: true,
			UserNs: 1000, SysNs: 2000, MaxRSSKiB: 1024},
		Note{TimeNs: 1_700_000_002_000_000_001, Text: "file note"},
	}
}

func testMeta() Meta {
	return Meta{Tool: "hwpprobe", ToolVersion: "test", Kind: "record", CommandLine: []string{"hwpprobe", "record"},
		TimeNs: 1_700_000_000_000_000_000, IntervalNs: 100_000_000, CPUs: "0-1",
		Host:     Host{Hostname: "h", Kernel: "6.18.0", Arch: "x86_64", Vendor: "GenuineIntel", CPUModel: "m", Family: 6, Model: 0xAA, Microcode: "0x1c", OnlineCPU: "0-1"},
		Emulated: "mtl-165u", Sides: []Side{{Label: "A", Settings: []Setting{{"scaling_governor", "performance"}}}}}
}

// writeFile returns a complete recording of sampleRecords.
func writeFile(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sampleRecords() {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(End{TimeNs: 1_700_000_002_000_000_002, Status: StatusInterrupted}); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != w.Offset() {
		t.Fatalf("Offset %d, wrote %d bytes", w.Offset(), buf.Len())
	}
	return buf.Bytes()
}

// valueCmp compares Values with NaN equal to NaN.
var valueCmp = cmp.Comparer(func(a, b Value) bool {
	return a == b || (math.IsNaN(float64(a)) && math.IsNaN(float64(b)))
})

func readAllRecords(t *testing.T, b []byte) ([]Record, error) {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var out []Record
	for {
		r, err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

func TestRoundTripEveryRecordType(t *testing.T) {
	b := writeFile(t)
	got, err := readAllRecords(t, b)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]Record{testMeta()}, sampleRecords()...)
	want = append(want, End{TimeNs: 1_700_000_002_000_000_002, Status: StatusInterrupted})
	if diff := cmp.Diff(want, got, valueCmp); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	seen := map[RecordType]bool{}
	for _, r := range got {
		seen[r.Type()] = true
	}
	for _, typ := range RecordTypes() {
		if !seen[typ] {
			t.Errorf("round trip does not cover record type %s", typ)
		}
	}
}

func TestReadAssemblesRuns(t *testing.T) {
	rec, err := Read(bytes.NewReader(writeFile(t)))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Problem != nil || !rec.Complete() {
		t.Fatalf("Problem %v, Complete %v", rec.Problem, rec.Complete())
	}
	if len(rec.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(rec.Runs))
	}
	r := rec.Runs[0]
	if r.End == nil || r.End.ExitCode != 130 || len(r.Samples) != 1 || len(r.Trace) != 2 || r.TraceLost != 3 ||
		len(r.Process) != 1 || len(r.Notes) != 1 || len(rec.Notes) != 1 || r.Snapshot(PhaseBefore) == nil || r.Snapshot(PhaseAfter) != nil {
		t.Errorf("run assembled wrongly: %+v", r)
	}
	if got := r.Trace[0].Value; got != bigReg {
		t.Errorf("64-bit register value %#x came back as %#x", uint64(bigReg), got)
	}
	if v := r.Samples[0].CPUs[0].Value(r.Column("IPC")); v.Valid() {
		t.Errorf("missing IPC came back as %v, want NA()", v)
	}
}

// TestTruncatedAtEveryOffset cuts the file at every byte and checks that the
// reader returns exactly the whole records before the cut, then
// ErrTruncated (or io.EOF at a record boundary), without panicking.
func TestTruncatedAtEveryOffset(t *testing.T) {
	for name, b := range map[string][]byte{"encoding 4": writeFile(t), "encoding 3": packedFile(t)} {
		t.Run(name, func(t *testing.T) { truncatedAtEveryOffset(t, b) })
	}
}

// packedFile is a small recording whose batches are stored with encoding 3.
func packedFile(t *testing.T) []byte {
	t.Helper()
	steady := steadySamples()
	b := writeRecords(t, true, RunStart{Run: steady.Run}, steady,
		Trace{Run: steady.Run, Events: []TraceEvent{{TimeNs: 1, CPU: 3, Comm: "kworker/3:1", MSR: 0x774, Value: bigReg}}})
	if encs := encodings(t, b); !encs[encColumns] {
		t.Fatalf("batches of encodings %v", encs)
	}
	return b
}

// writeRecords writes a complete recording of testMeta and records, its
// batches with encoding 3 when packed, else as the writer chooses.
func writeRecords(t testing.TB, packed bool, records ...Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	w.packAlways = packed
	for _, r := range records {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(End{Status: StatusComplete}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// truncatedAtEveryOffset cuts b at every offset and checks what a reader
// gives back.
func truncatedAtEveryOffset(t *testing.T, b []byte) {
	all, err := readAllRecords(t, b)
	if err != nil {
		t.Fatal(err)
	}
	// Record boundaries: offsets at which a cut loses nothing.
	bounds := map[int]int{} // offset -> records before it
	off := fileHeaderLen
	bounds[off] = 0
	for i := range all {
		off += frameHeaderLen + int(binary.LittleEndian.Uint32(b[off+4:]))
		bounds[off] = i + 1
	}
	if off != len(b) {
		t.Fatalf("frames end at %d, file is %d bytes", off, len(b))
	}
	for cut := 0; cut < len(b); cut++ {
		got, err := readAllRecords(t, b[:cut])
		switch {
		case cut == 0:
			if !errors.Is(err, ErrNotRecording) {
				t.Errorf("cut %d: err %v, want ErrNotRecording", cut, err)
			}
			continue
		case cut < len(Magic):
			if !errors.Is(err, ErrNotRecording) {
				t.Errorf("cut %d: err %v, want ErrNotRecording", cut, err)
			}
			continue
		case cut < fileHeaderLen:
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("cut %d: err %v, want ErrTruncated", cut, err)
			}
			continue
		}
		n, atBound := bounds[cut]
		if atBound {
			if err != nil {
				t.Errorf("cut %d at a record boundary: err %v, want none", cut, err)
			}
		} else {
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("cut %d: err %v, want ErrTruncated", cut, err)
			}
			for o, k := range bounds {
				if o < cut && k > n {
					n = k
				}
			}
		}
		if diff := cmp.Diff(all[:n], got, valueCmp, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("cut %d: records (-want +got):\n%s", cut, diff)
		}
	}
}

func TestReadTruncatedFileKeepsRecords(t *testing.T) {
	b := writeFile(t)
	rec, err := Read(bytes.NewReader(b[:len(b)-5]))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rec.Problem, ErrTruncated) || rec.End != nil || rec.Complete() {
		t.Errorf("Problem %v End %v, want ErrTruncated and no end", rec.Problem, rec.End)
	}
	if len(rec.Runs) != 1 || rec.Runs[0].End == nil || len(rec.Runs[0].Samples) != 1 {
		t.Errorf("records before the cut were lost: %+v", rec.Runs)
	}
	if !strings.Contains(rec.Problem.Error(), "unfinished record") {
		t.Errorf("problem %q does not say what happened", rec.Problem)
	}
}

func TestVersionRejected(t *testing.T) {
	b := writeFile(t)
	tests := []struct {
		major, minor uint16
		want         error
	}{
		{VersionMajor, VersionMinor, nil},
		{VersionMajor, VersionMinor + 7, nil}, // newer minor: read
		{VersionMajor + 1, 0, ErrVersion},
		{0, 9, ErrVersion},
	}
	for _, tt := range tests {
		c := bytes.Clone(b)
		binary.LittleEndian.PutUint16(c[8:], tt.major)
		binary.LittleEndian.PutUint16(c[10:], tt.minor)
		_, err := Read(bytes.NewReader(c))
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("version %d.%d: err %v, want %v", tt.major, tt.minor, err, tt.want)
		}
		if tt.want != nil && !strings.Contains(err.Error(), fmt.Sprintf("%d.%d", tt.major, tt.minor)) {
			t.Errorf("version error %q does not name the version", err)
		}
	}
}

func TestNotARecording(t *testing.T) {
	for _, in := range []string{"", "hello world, not a recording", "\x89HWPREC\r"} {
		if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotRecording) {
			t.Errorf("%q: err %v, want ErrNotRecording", in, err)
		}
	}
}

func TestCorruptRecord(t *testing.T) {
	b := writeFile(t)
	// Flip a byte inside the third record's payload (run-start is second).
	off := fileHeaderLen
	for range 2 {
		off += frameHeaderLen + int(binary.LittleEndian.Uint32(b[off+4:]))
	}
	c := bytes.Clone(b)
	c[off+frameHeaderLen+3] ^= 0xff
	rec, err := Read(bytes.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rec.Problem, ErrCorrupt) || len(rec.Runs) != 1 || len(rec.Runs[0].Snapshots) != 0 {
		t.Errorf("Problem %v, runs %+v: want ErrCorrupt after the run start", rec.Problem, rec.Runs)
	}
	// A huge length field must not allocate it.
	c = bytes.Clone(b)
	binary.LittleEndian.PutUint32(c[off+4:], 0xffffffff)
	if rec, err := Read(bytes.NewReader(c)); err != nil || !errors.Is(rec.Problem, ErrCorrupt) {
		t.Errorf("huge length: err %v problem %v, want ErrCorrupt", err, rec.Problem)
	}
}

func TestOrphanRecordIsCorrupt(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, testMeta())
	w.Write(Samples{Run: 9})
	rec, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rec.Problem, ErrCorrupt) || !strings.Contains(rec.Problem.Error(), "run 9") {
		t.Errorf("Problem %v, want ErrCorrupt naming run 9", rec.Problem)
	}
}

func TestColumnsMergeAcrossBatches(t *testing.T) {
	x := &Run{}
	x.addSamples(Samples{CPUColumns: []string{"Avg_MHz", "Busy%"}, Samples: []Sample{{CPUs: []CPURow{{Values: []Value{1, 2}}}}}})
	x.addSamples(Samples{CPUColumns: []string{"Busy%", "IPC"}, Samples: []Sample{{CPUs: []CPURow{{Values: []Value{3, 4}}}}}})
	if diff := cmp.Diff([]string{"Avg_MHz", "Busy%", "IPC"}, x.CPUColumns); diff != "" {
		t.Fatal(diff)
	}
	got := [][]Value{}
	for _, s := range x.Samples {
		r := s.CPUs[0]
		got = append(got, []Value{r.Value(0), r.Value(1), r.Value(2)})
	}
	want := [][]Value{{1, 2, NA()}, {NA(), 3, 4}}
	if diff := cmp.Diff(want, got, valueCmp); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

// TestWriterStopsAtFullDisk writes to a 64 KiB tmpfs until ENOSPC and checks
// that the file then ends on a whole record and reads back.
func TestWriterStopsAtFullDisk(t *testing.T) {
	dir := mountTmpfs(t, "64k")
	f, err := os.Create(filepath.Join(dir, "rec"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(RunStart{Run: 1}); err != nil {
		t.Fatal(err)
	}
	// Incompressible payload so the disk fills quickly.
	var werr error
	for i := 0; i < 1000 && werr == nil; i++ {
		ev := make([]TraceEvent, 64)
		for j := range ev {
			ev[j] = TraceEvent{TimeNs: int64(i*64 + j), Value: uint64(i*64+j) * 0x9E3779B97F4A7C15, Comm: fmt.Sprint(i * j * 7919)}
		}
		werr = w.Write(Trace{Run: 1, Events: ev})
	}
	if werr == nil || !strings.Contains(werr.Error(), "no space left") {
		t.Fatalf("write error %v, want ENOSPC", werr)
	}
	if err := w.Write(Note{Text: "after"}); !errors.Is(err, ErrClosed) {
		t.Errorf("write after failure: %v, want ErrClosed", err)
	}
	st, _ := f.Stat()
	if st.Size() != w.Offset() {
		t.Errorf("file is %d bytes, whole records end at %d", st.Size(), w.Offset())
	}
	rec, err := ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Problem != nil || rec.End != nil || len(rec.Runs) != 1 || len(rec.Runs[0].Trace) == 0 {
		t.Errorf("Problem %v End %v runs %d", rec.Problem, rec.End, len(rec.Runs))
	}
}

func TestValueJSON(t *testing.T) {
	b, err := json.Marshal([]Value{1.5, NA(), Value(math.Inf(1)), 0})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "[1.5,null,null,0]" {
		t.Errorf("got %s", b)
	}
	var v []Value
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Value{1.5, NA(), NA(), 0}, v, valueCmp, cmpopts.EquateEmpty()); diff != "" {
		t.Error(diff)
	}
}
