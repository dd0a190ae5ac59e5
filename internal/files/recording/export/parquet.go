// SPDX-License-Identifier: Apache-2.0

package export

import (
	"io"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

// parquetRowGroupRows is the number of rows in each row group of a
// Parquet export but the last (a variable for the tests). The writer
// holds one row group in memory, so that memory does not grow with the
// recording but for the footer (docs/export.md); at 512 CPUs and 10 Hz a
// row group is about 13 seconds of recording.
var parquetRowGroupRows int64 = 64 << 10

// parquetBatch is how many rows are handed to the Parquet writer at once.
const parquetBatch = 1024

// WriteParquet writes the rows and columns WriteCSV writes as one Parquet
// table (docs/export.md): run, Package, Core, CPU as INT64, time as
// TIMESTAMP(NANOS) adjusted to UTC, elapsed_s, interval_s and the figures
// as DOUBLE, registers as INT64 with the unsigned logical type (uint64),
// side, row and Type as strings. A figure that was not measured, or does
// not apply to the row, is null, as is an empty side or Type.
func WriteParquet(w io.Writer, rec *recording.Recording) error {
	return writeWhole(rec, func(l *layout) rowSink { return newParquet(w, l) })
}

// WriteParquetFile writes the Parquet table of the recording at path, as
// WriteParquet would, reading the file twice batch by batch as
// WriteCSVFile does, so that memory does not grow with the recording. A
// path that is not a regular file (a pipe) is read once, its bytes kept
// as stored for the second scan. It returns the recording read (without samples), whose Issue says what was
// lost.
func WriteParquetFile(w io.Writer, path string) (*recording.Recording, error) {
	return scanTwice(path, func(l *layout) rowSink { return newParquet(w, l) })
}

// parquetOut writes the rows of sample batches to a Parquet writer, a
// batch of rows at a time; the first error sticks.
type parquetOut struct {
	w     *parquet.GenericWriter[any]
	l     *layout
	blank parquet.Row              // every optional column null
	rows  []parquet.Row            // the batch being filled, reused
	n     int                      // rows filled in rows
	strs  map[string]parquet.Value // string values seen (row kinds, types, sides)
	err   error
}

// Column indexes of the fixed columns (FixedColumns' order).
const (
	pqRun = iota
	pqSide
	pqTime
	pqElapsed
	pqInterval
	pqRow
	pqType
	pqPackage
	pqCore
	pqCPU
	pqFixed
)

func newParquet(w io.Writer, l *layout) *parquetOut {
	schema := parquetSchema(l)
	n := len(schema.Columns())
	p := &parquetOut{l: l, blank: make(parquet.Row, n), rows: make([]parquet.Row, parquetBatch), strs: map[string]parquet.Value{}}
	for i := range p.blank {
		p.blank[i] = parquet.NullValue().Level(0, 0, i)
	}
	for i := range p.rows {
		p.rows[i] = make(parquet.Row, n)
	}
	p.w = parquet.NewGenericWriter[any](w, schema, parquet.MaxRowsPerRowGroup(parquetRowGroupRows),
		parquet.Compression(&zstdCodec{}))
	return p
}

// zstdCodec is parquet-go's ZSTD codec with one encoder kept for the
// whole file, whose window is a page (parquet-go's codec takes a new
// encoder, with an 8 MiB window, from a sync.Pool that each garbage
// collection empties: some 30 MiB more of memory).
type zstdCodec struct {
	pqzstd.Codec
	mu  sync.Mutex
	enc *zstd.Encoder
}

// Encode compresses a page as one zstd frame.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.enc == nil {
		var err error
		c.enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(parquet.DefaultPageBufferSize),
			zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
	}
	return c.enc.EncodeAll(src, dst[:0]), nil
}

// parquetSchema returns the table's columns: the fixed ones, then as in
// the CSV header the figure and register columns. A name that repeats (a
// CPU and a package column of the same name) gets a suffix, _2 and on, as
// Parquet needs every column name once.
func parquetSchema(l *layout) *parquet.Schema {
	i64 := parquet.Int(64)
	str := parquet.Optional(parquet.String())
	num := parquet.Optional(parquet.Leaf(parquet.DoubleType))
	reg := parquet.Optional(parquet.Uint(64))
	nodes := []parquet.Node{pqRun: i64, pqSide: str,
		pqTime:    parquet.TimestampAdjusted(parquet.Nanosecond, true),
		pqElapsed: parquet.Leaf(parquet.DoubleType), pqInterval: parquet.Leaf(parquet.DoubleType),
		pqRow: parquet.String(), pqType: str,
		pqPackage: parquet.Optional(i64), pqCore: parquet.Optional(i64), pqCPU: parquet.Optional(i64)}
	names := FixedColumns()
	for range len(l.cpuCols) + len(l.pkgCols) {
		nodes = append(nodes, num)
	}
	names = append(append(names, l.cpuCols...), l.pkgCols...)
	for _, m := range append(slices.Clone(l.cpuRegs), l.pkgRegs...) {
		nodes = append(nodes, reg)
		names = append(names, summary.RegName(m))
	}
	g := orderedGroup{fields: make([]parquet.Field, len(nodes))}
	seen := map[string]bool{}
	for i, name := range names {
		for k := 2; seen[name]; k++ {
			name = names[i] + "_" + strconv.Itoa(k)
		}
		seen[name] = true
		g.fields[i] = &field{Node: nodes[i], name: name}
	}
	return parquet.NewSchema("hwpprobe_samples", g)
}

// orderedGroup is a group whose columns keep the order given
// (parquet.Group sorts them by name).
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

// Fields returns the group's columns in order.
func (g orderedGroup) Fields() []parquet.Field { return g.fields }

// field is a named column of an orderedGroup. Rows are written as
// parquet.Row, never from Go values, so it maps no Go value.
type field struct {
	parquet.Node
	name string
}

// Name returns the column's name.
func (f *field) Name() string { return f.name }

// Value returns no value: the group is never read from Go values.
func (f *field) Value(reflect.Value) reflect.Value { return reflect.Value{} }

// samples writes the rows of samples of the run that start began, whose
// figures are in the columns cpuCols and pkgCols.
func (p *parquetOut) samples(start recording.RunStart, cpuCols, pkgCols []string, samples []recording.Sample) {
	l := p.l
	nCPU, nPkg := len(l.cpuCols), len(l.pkgCols)
	ci, pi := indexes(l.cpuCols, cpuCols), indexes(l.pkgCols, pkgCols)
	regs := pqFixed + nCPU + nPkg
	for i := range samples {
		s := &samples[i]
		eachRow(s, func(r *rowCells) {
			row := p.next(start, s, r.kind, r.typ)
			for j, x := range r.place[:r.places] {
				row[pqPackage+j] = parquet.Int64Value(int64(x)).Level(0, 1, pqPackage+j)
			}
			setFigures(row, pqFixed, ci, r.cpuVals)
			setFigures(row, pqFixed+nCPU, pi, r.pkgVals)
			setRegs(row, regs, l.cpuRegs, r.cpuRegs)
			setRegs(row, regs+len(l.cpuRegs), l.pkgRegs, r.pkgRegs)
		})
	}
}

// next returns the next row of the batch, its fixed columns set and the
// others null, after writing the batch when it is full.
func (p *parquetOut) next(start recording.RunStart, s *recording.Sample, kind, typ string) parquet.Row {
	if p.n == len(p.rows) {
		p.writeBatch()
	}
	row := p.rows[p.n]
	p.n++
	copy(row, p.blank)
	row[pqRun] = parquet.Int64Value(int64(start.Run)).Level(0, 0, pqRun)
	p.setString(row, pqSide, start.Side, 1)
	row[pqTime] = parquet.Int64Value(s.TimeNs).Level(0, 0, pqTime)
	row[pqElapsed] = parquet.DoubleValue(float64(s.TimeNs-start.TimeNs)/1e9).Level(0, 0, pqElapsed)
	row[pqInterval] = parquet.DoubleValue(float64(s.IntervalNs)/1e9).Level(0, 0, pqInterval)
	p.setString(row, pqRow, kind, 0)
	p.setString(row, pqType, typ, 1)
	return row
}

// setString sets column i to s, at definition level def (0 for a
// required column, 1 for an optional one, which stays null when s is
// empty). The few distinct strings are converted once.
func (p *parquetOut) setString(row parquet.Row, i int, s string, def int) {
	if s == "" && def > 0 {
		return
	}
	v, ok := p.strs[s]
	if !ok {
		v = parquet.ByteArrayValue([]byte(s))
		p.strs[s] = v
	}
	row[i] = v.Level(0, def, i)
}

// setFigures sets the figures vals, in the columns idx maps them to from
// column base on; a value not available stays null.
func setFigures(row parquet.Row, base int, idx []int, vals []recording.Value) {
	for i, v := range vals {
		if i < len(idx) && idx[i] >= 0 && v.Valid() {
			c := base + idx[i]
			row[c] = parquet.DoubleValue(float64(v)).Level(0, 1, c)
		}
	}
}

// setRegs sets the registers regs in the columns of order, from column
// base on; a register not read stays null.
func setRegs(row parquet.Row, base int, order []uint32, regs []recording.Reg) {
	for _, g := range regs {
		if i, ok := slices.BinarySearch(order, g.MSR); ok {
			c := base + i
			row[c] = parquet.Int64Value(int64(g.Value)).Level(0, 1, c)
		}
	}
}

func (p *parquetOut) writeBatch() {
	if p.err == nil && p.n > 0 {
		_, p.err = p.w.WriteRows(p.rows[:p.n])
	}
	p.n = 0
}

// failed returns the first error met writing.
func (p *parquetOut) failed() error { return p.err }

// close writes the last rows and the file's footer.
func (p *parquetOut) close() error {
	p.writeBatch()
	if p.err != nil {
		return p.err
	}
	return p.w.Close()
}
