// SPDX-License-Identifier: Apache-2.0

package export

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

// fixtures are recordings hwpprobe wrote: an emulated hybrid laptop and
// 224-CPU server, a VM's, one cut short, and two runs with sides, columns
// changing between batches and 64-bit register values.
var fixtures = []string{"emu-mtl", "emu-mtl-cut", "emu-spr", "vm-trace", "synthetic-2runs"}

// TestParquetDuckDB exports recordings as CSV and as Parquet, reads the
// Parquet file with DuckDB and compares, row for row, every value with
// the CSV's: the same columns in the same order, typed, null exactly
// where the CSV field is empty.
func TestParquetDuckDB(t *testing.T) {
	duckdb(t) // installed once, or the test fails once
	dir := t.TempDir()
	for _, name := range append(fixtures, "synth-8cpu", "row-groups", "pipe") {
		t.Run(name, func(t *testing.T) {
			rec := filepath.Join("..", "testdata", "v1", name+".rec")
			switch name {
			case "synth-8cpu":
				rec = synthFile(t, dir, 8, 3)
			case "row-groups": // 300 rows in 4 row groups, ending inside samples
				defer func(n int64) { parquetRowGroupRows = n }(parquetRowGroupRows)
				parquetRowGroupRows = 97
				rec = synthFile(t, dir, 8, 3)
			case "pipe": // read whole into memory (WriteParquet)
				rec = filepath.Join("..", "testdata", "v1", "synthetic-2runs.rec")
			}
			want := exportCSV(t, rec)
			pq := filepath.Join(dir, name+".parquet")
			writeParquet(t, pq, rec, name == "pipe")
			tab := readDuckDB(t, pq)
			checkSchema(t, tab, want[0])
			if diff := cmp.Diff(csvTyped(t, tab, want[1:]), duckdbTyped(t, tab)); diff != "" {
				t.Errorf("DuckDB's rows (-CSV +Parquet):\n%s", diff)
			}
			checkNanoseconds(t, pq, want[1:])
			if groups := rowGroups(t, pq); name == "row-groups" && groups != 4 || name != "row-groups" && groups != 1 {
				t.Errorf("%d row groups", groups)
			}
		})
	}
}

// synthFile writes a synthetic recording of cpus CPUs and seconds.
func synthFile(t testing.TB, dir string, cpus, seconds int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("synth-%d-%d.rec", cpus, seconds))
	var b bytes.Buffer
	if err := synth.Write(&b, synth.Config{CPUs: cpus, Hz: 10, Seconds: seconds, Seed: 1, TracePerSecond: 20}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func exportCSV(t *testing.T, rec string) [][]string {
	t.Helper()
	var b bytes.Buffer
	if _, err := WriteCSVFile(&b, rec); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// writeParquet exports rec to path, through WriteParquetFile or, when
// whole, through WriteParquet after reading the recording whole.
func writeParquet(t *testing.T, path, rec string, whole bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if whole {
		r, err := recording.ReadFile(rec)
		if err == nil {
			err = WriteParquet(f, r)
		}
		if err != nil {
			t.Fatal(err)
		}
	} else if _, err := WriteParquetFile(f, rec); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// duckdbType is the DuckDB type each column must read as: the fixed
// columns', registers as UBIGINT, figures as DOUBLE.
func duckdbType(col string) string {
	switch col {
	case "run", "Package", "Core", "CPU":
		return "BIGINT"
	case "side", "row", "Type":
		return "VARCHAR"
	case "time":
		return "TIMESTAMP WITH TIME ZONE"
	}
	if strings.HasPrefix(col, "IA32_") || strings.HasPrefix(col, "MSR_") {
		return "UBIGINT"
	}
	return "DOUBLE"
}

// parquetType is the physical type and repetition each column must have
// in the file: the fixed columns', registers as INT64 (unsigned), figures
// as DOUBLE, both optional.
func parquetType(col string) string {
	switch col {
	case "run", "time":
		return "INT64 REQUIRED"
	case "elapsed_s", "interval_s":
		return "DOUBLE REQUIRED"
	case "row":
		return "BYTE_ARRAY REQUIRED"
	case "side", "Type":
		return "BYTE_ARRAY OPTIONAL"
	case "Package", "Core", "CPU":
		return "INT64 OPTIONAL"
	}
	if duckdbType(col) == "UBIGINT" {
		return "INT64 OPTIONAL"
	}
	return "DOUBLE OPTIONAL"
}

// checkSchema compares the columns DuckDB reads, and the Parquet
// columns of the file, with the CSV header and the types above, and
// checks the logical types of time and registers.
func checkSchema(t *testing.T, tab duckdbTable, header []string) {
	t.Helper()
	var got, want, gotPq, wantPq []string
	for _, c := range tab.Columns {
		got = append(got, c.Name+" "+c.Type)
	}
	for _, c := range header {
		want = append(want, c+" "+duckdbType(c))
		wantPq = append(wantPq, c+" "+parquetType(c))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	for _, s := range tab.Schema {
		gotPq = append(gotPq, s.Name+" "+s.Type+" "+s.Repetition)
		var ok bool
		switch {
		case s.Name == "time":
			ok = strings.Contains(s.LogicalType, "isAdjustedToUTC=1") && strings.Contains(s.LogicalType, "NANOS=NanoSeconds()")
		case duckdbType(s.Name) == "UBIGINT":
			ok = strings.Contains(s.LogicalType, "isSigned=0")
		default:
			ok = true
		}
		if !ok {
			t.Errorf("column %s: Parquet logical type %q", s.Name, s.LogicalType)
		}
	}
	if diff := cmp.Diff(wantPq, gotPq); diff != "" {
		t.Errorf("Parquet columns (-want +got):\n%s", diff)
	}
}

// typed reads a field as its column's type: nil for null (or an empty
// CSV field), int64, uint64 (a register, hex in the CSV), float64,
// string; a time is Unix nanoseconds to the microsecond, as DuckDB reads
// it.
func typed(typ string, s *string, fromCSV bool) (any, error) {
	if s == nil || fromCSV && *s == "" {
		return nil, nil
	}
	switch typ {
	case "BIGINT":
		return strconv.ParseInt(*s, 10, 64)
	case "UBIGINT":
		return strconv.ParseUint(*s, 0, 64)
	case "DOUBLE":
		return strconv.ParseFloat(*s, 64)
	case "TIMESTAMP WITH TIME ZONE":
		if !fromCSV {
			return strconv.ParseInt(*s, 10, 64)
		}
		at, err := time.Parse(time.RFC3339Nano, *s)
		ns := at.UnixNano()
		return ns - ns%1000, err
	}
	return *s, nil
}

func csvTyped(t *testing.T, tab duckdbTable, rows [][]string) [][]any {
	t.Helper()
	out := make([][]any, len(rows))
	for i, row := range rows {
		for j, f := range row {
			v, err := typed(duckdbType(tab.Columns[j].Name), &f, true)
			if err != nil {
				t.Fatalf("CSV row %d column %s: %v", i+1, tab.Columns[j].Name, err)
			}
			out[i] = append(out[i], v)
		}
	}
	return out
}

func duckdbTyped(t *testing.T, tab duckdbTable) [][]any {
	t.Helper()
	out := make([][]any, len(tab.Rows))
	for i, row := range tab.Rows {
		for j, f := range row {
			v, err := typed(tab.Columns[j].Type, f, false)
			if err != nil {
				t.Fatalf("DuckDB row %d column %s: %v", i+1, tab.Columns[j].Name, err)
			}
			out[i] = append(out[i], v)
		}
	}
	return out
}

// rowGroups returns the number of row groups of a Parquet file.
func rowGroups(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return len(f.RowGroups())
}

// checkNanoseconds compares the time column, read with parquet-go, with
// the CSV's to the nanosecond (DuckDB reads it to the microsecond).
func checkNanoseconds(t *testing.T, path string, rows [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := parquet.NewReader(f)
	defer r.Close()
	var got, want []string
	buf := make([]parquet.Row, 256)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			got = append(got, time.Unix(0, row[pqTime].Int64()).UTC().Format(time.RFC3339Nano))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range rows {
		want = append(want, row[pqTime])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("time to the nanosecond (-CSV +Parquet):\n%s", diff)
	}
}

// BenchmarkExport exports the same synthetic recording (14 and 224 CPUs,
// 10 Hz, 60 s) as CSV and as Parquet, to a discarding writer, and
// reports the time per exported row and the bytes per row of each
// format.
func BenchmarkExport(b *testing.B) {
	for _, n := range []int{14, 224} {
		path := synthFile(b, b.TempDir(), n, 60)
		for _, f := range []struct {
			name  string
			write func(io.Writer, string) (*recording.Recording, error)
		}{{"csv", WriteCSVFile}, {"parquet", WriteParquetFile}} {
			b.Run(fmt.Sprintf("cpus=%d/%s", n, f.name), func(b *testing.B) {
				var cw countingWriter
				for b.Loop() {
					cw = countingWriter{}
					if _, err := f.write(&cw, path); err != nil {
						b.Fatal(err)
					}
				}
				rows := float64(60 * 10 * (n + 1 + 1)) // CPUs, the package, the summary
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
				b.ReportMetric(float64(cw.n)/rows, "B/row")
			})
		}
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestParquetEdges: a recording without samples is a table of the fixed
// columns and no rows; a name shared by a CPU and a package column, or a
// CPU and a package register, is made unique.
func TestParquetEdges(t *testing.T) {
	start := int64(1_800_000_000_000_000_000)
	for _, tt := range []struct {
		name string
		rec  *recording.Recording
		cols []string
		rows int64
	}{
		{"empty", &recording.Recording{}, FixedColumns(), 0},
		{"no samples", &recording.Recording{Runs: []*recording.Run{{Start: recording.RunStart{Run: 1}, CPUColumns: []string{"Busy%"}}}},
			append(FixedColumns(), "Busy%"), 0},
		{"shared names", &recording.Recording{Runs: []*recording.Run{{
			Start: recording.RunStart{Run: 1, TimeNs: start}, CPUColumns: []string{"X"}, PackageColumns: []string{"X", "X_2"},
			Samples: []recording.Sample{{TimeNs: start, CPUs: []recording.CPURow{{Values: []recording.Value{1}, Regs: []recording.Reg{{MSR: 0x774, Value: 1}}}},
				Packages: []recording.PackageRow{{Values: []recording.Value{2, 3}, Regs: []recording.Reg{{MSR: 0x774, Value: 2}}}}}},
		}}}, append(FixedColumns(), "X", "X_2", "X_2_2", "IA32_HWP_REQUEST", "IA32_HWP_REQUEST_2"), 2},
	} {
		var b bytes.Buffer
		if err := WriteParquet(&b, tt.rec); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var cols []string
		for _, c := range f.Schema().Fields() {
			cols = append(cols, c.Name())
		}
		if diff := cmp.Diff(tt.cols, cols); diff != "" || f.NumRows() != tt.rows {
			t.Errorf("%s: %d rows, columns (-want +got):\n%s", tt.name, f.NumRows(), diff)
		}
	}
}
