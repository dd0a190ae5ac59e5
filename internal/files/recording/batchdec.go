// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// Parts selects the parts of sample batches that a scan decodes
// (ScanParts): a reader that needs a few figures of a recording does not
// pay for decoding the others. Every sample's time, interval and CPU rows
// (with CPURow.CPU) are always decoded.
type Parts uint

// The parts of a samples batch.
const (
	PartCPUFigures Parts = 1 << iota // CPURow.Values
	PartCPUPlaces                    // CPURow.Core, Package and CoreType
	PartCPURegs                      // CPURow.Regs
	PartPackages                     // Sample.Packages, with their registers
	PartSummaries                    // Sample.Summaries
	// PartCPURegColumns: Samples.CPURegs, the CPU rows' registers column
	// by column, for readers that look at one register of every row.
	PartCPURegColumns

	// PartRows are the parts of the rows: what Scan decodes.
	PartRows = PartCPUFigures | PartCPUPlaces | PartCPURegs | PartPackages | PartSummaries
)

// keep clears what parts does not select from a batch decoded whole
// (JSON), and adds the register columns if selected, so that a scan gives
// the same batch whatever the encoding.
func (s Samples) keep(parts Parts) Samples {
	if parts&PartCPURegColumns != 0 {
		s.CPURegs = RegColumnsOf(s.Samples)
	}
	for i := range s.Samples {
		x := &s.Samples[i]
		if parts&PartPackages == 0 {
			x.Packages = nil
		}
		if parts&PartSummaries == 0 {
			x.Summaries = nil
		}
		for j := range x.CPUs {
			r := &x.CPUs[j]
			if parts&PartCPUFigures == 0 {
				r.Values = nil
			}
			if parts&PartCPUPlaces == 0 {
				r.Core, r.Package, r.CoreType = 0, 0, ""
			}
			if parts&PartCPURegs == 0 {
				r.Regs = nil
			}
		}
	}
	return s
}

// batchDec decodes columnar batches into buffers it reuses: the rows of
// a batch it returns stay valid until its next decode. Its zero value is
// ready to use.
type batchDec struct {
	samples []Sample
	cpus    []CPURow
	pkgs    []PackageRow
	sums    []SummaryRow
	vals    []Value
	regs    []Reg
	regRows [][]Reg
	// regCols and regVals are the register columns of each table and
	// their values; cpuRegCols the CPU table's by row (Samples.CPURegs),
	// spread over spreadVals and spreadHas where not every row has one.
	regCols    [4][]regColumn
	regVals    [4][]uint64
	changes    [4][]int
	cpuRegCols []RegColumn
	spreadVals []uint64
	spreadHas  []bool
	// regsFrom is where in regs the next table's registers go.
	regsFrom int
	events   []TraceEvent
	ints     []int64
	floats   []float64
	strIdx   []int
	cols     [4][]column
	strs     []string
	// names are the last batch's CPU and package column names, handed
	// out again while they do not change; interned are the strings of
	// string columns seen: neither is allocated per batch.
	names    [2][]string
	nameBuf  [][]byte
	interned map[string]string
	// parts are the parts the buffers were last decoded with: fields of
	// parts not selected are never written, so they stay zero until the
	// parts change.
	parts Parts
	// v2: the batches are encoding 2's (format 2.x), whose deltas run row
	// to row and carry no period, and whose columns have no codec.
	v2    bool
	words []uint64
	// sameCPUs: the cpu column says that every sample of the batch has
	// the first's CPU rows.
	sameCPUs bool
	// packed: the columns have codecs (encoding 3).
	packed bool
	// zd inflates compressed columns into arena (encoding 3), inflated
	// bytes of them so far in the batch, at most MaxPayload.
	zd       *zstd.Decoder
	arena    []byte
	inflated int
	// budget is the file's (Reader.budget), charged with the columns
	// inflated.
	budget *budget
}

// maxInterned bounds the strings a batchDec keeps.
const maxInterned = 1024

// intern returns b as a string, allocated once.
func (bd *batchDec) intern(b []byte) string {
	if s, ok := bd.interned[string(b)]; ok {
		return s
	}
	if bd.interned == nil || len(bd.interned) >= maxInterned {
		bd.interned = map[string]string{}
	}
	s := string(b)
	bd.interned[s] = s
	return s
}

// columnNames reads a list of column names: the list of the batch before
// when it is the same (k: 0 for CPU columns, 1 for package columns).
func (bd *batchDec) columnNames(d *colDec, k int) []string {
	bd.nameBuf = bd.nameBuf[:0]
	for range d.count(len(d.b), "strings") {
		bd.nameBuf = append(bd.nameBuf, d.bytes(d.count(len(d.b), "string bytes")))
	}
	last := bd.names[k]
	same := last != nil && len(last) == len(bd.nameBuf)
	for i := 0; same && i < len(last); i++ {
		same = string(bd.nameBuf[i]) == last[i]
	}
	if !same {
		last = make([]string, len(bd.nameBuf))
		for i, b := range bd.nameBuf {
			last[i] = string(b)
		}
		bd.names[k] = last
	}
	return last
}

// decodeSamples decodes the parts of a columnar samples payload that
// parts selects.
func (bd *batchDec) decodeSamples(p []byte, parts Parts) (Samples, error) {
	d := &colDec{b: p}
	s := Samples{Run: d.count(maxInt32, "run id")}
	s.CPUColumns, s.PackageColumns = bd.columnNames(d, 0), bd.columnNames(d, 1)
	var n [4]int
	bd.arena, bd.inflated = bd.arena[:0], 0
	for t := range bd.cols {
		n[t], bd.cols[t] = d.table(bd.cols[t][:0], bd.packed)
	}
	d.done("samples record")
	if d.err != nil {
		return Samples{}, d.err
	}
	nc, np := len(s.CPUColumns), len(s.PackageColumns)
	cells := n[1]*(nc+len(bd.cols[1])) + n[2]*(np+len(bd.cols[2])) + n[3]*(nc+np)
	if cells > maxBatchCells {
		return Samples{}, fmt.Errorf("%w: %d cells, more than %d", errColumns, cells, maxBatchCells)
	}
	if err := bd.sampleRows(n, parts); err != nil {
		return Samples{}, err
	}
	if err := bd.tables(n, s.CPUColumns, s.PackageColumns, parts); err != nil {
		return Samples{}, err
	}
	if n[0] > 0 {
		s.Samples = bd.samples
	}
	if len(bd.cpuRegCols) > 0 {
		s.CPURegs = bd.cpuRegCols
	}
	s.SameCPUs = bd.sameCPUs && n[0] > 0
	return s, nil
}

// tables decodes the selected parts of the CPU, package and summary
// tables into rows sliced by sampleRows.
func (bd *batchDec) tables(n [4]int, names, pkgNames []string, parts Parts) error {
	nc, np := len(names), len(pkgNames)
	var cpuVals, pkgVals, sumVals int
	if parts&PartCPUFigures != 0 {
		cpuVals = n[1] * nc
	}
	if parts&PartPackages != 0 {
		pkgVals = n[2] * np
	}
	if parts&PartSummaries != 0 {
		sumVals = n[3] * (nc + np)
	}
	bd.vals = grow(bd.vals, cpuVals+pkgVals+sumVals)
	vals := bd.vals
	bd.regsFrom, bd.cpuRegCols = 0, bd.cpuRegCols[:0]
	if err := bd.cpuRows(n[1], names, vals[:cpuVals], parts); err != nil {
		return err
	}
	if parts&PartPackages != 0 {
		if err := bd.packageRows(n[2], pkgNames, vals[cpuVals:cpuVals+pkgVals]); err != nil {
			return err
		}
	}
	if parts&PartSummaries != 0 {
		if err := bd.summaryRows(n[3], names, pkgNames, vals[cpuVals+pkgVals:]); err != nil {
			return err
		}
	}
	return nil
}

const maxInt32 = 1<<31 - 1

// resize returns b with length n and every element zero, reusing its
// array when large enough.
func resize[T any](b []T, n int) []T {
	b = grow(b, n)
	clear(b)
	return b
}

// grow returns b with length n, reusing its array when large enough; the
// elements are left as they were.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// sampleRows decodes the samples table and slices the row tables'
// buffers among the samples (the package and summary rows only when
// parts selects them).
func (bd *batchDec) sampleRows(n [4]int, parts Parts) error {
	cols := bd.cols[0]
	bd.samples = resize(bd.samples, n[0])
	bd.pkgs, bd.sums = resize(bd.pkgs, n[2]), resize(bd.sums, n[3])
	// The many CPU rows are not cleared: cpuRows writes every field that
	// parts selects.
	if bd.parts == parts {
		bd.cpus = grow(bd.cpus, n[1])
	} else {
		bd.cpus, bd.parts = resize(bd.cpus, n[1]), parts
	}
	for k, name := range []string{"time_ns", "interval_ns"} {
		v, err := bd.intColumn(cols, name, n[0])
		if err != nil {
			return err
		}
		for i, x := range v {
			if k == 0 {
				bd.samples[i].TimeNs = x
			} else {
				bd.samples[i].IntervalNs = x
			}
		}
	}
	var err error
	if bd.cpus, err = sliceRows(bd, "cpus", n[0], bd.cpus, func(s *Sample, r []CPURow) { s.CPUs = r }); err != nil {
		return err
	}
	if bd.pkgs, err = sliceRows(bd, "packages", n[0], bd.pkgs, func(s *Sample, r []PackageRow) {
		if parts&PartPackages != 0 {
			s.Packages = r
		}
	}); err != nil {
		return err
	}
	bd.sums, err = sliceRows(bd, "summaries", n[0], bd.sums, func(s *Sample, r []SummaryRow) {
		if parts&PartSummaries != 0 {
			s.Summaries = r
		}
	})
	return err
}

// sliceRows gives each of n samples its rows of a table, as many as the
// samples table's column name says, and returns rows.
func sliceRows[R any](bd *batchDec, name string, n int, rows []R, set func(*Sample, []R)) ([]R, error) {
	v, err := bd.intColumn(bd.cols[0], name, n)
	if err != nil {
		return nil, err
	}
	lo := 0
	for i, x := range v {
		if x < 0 || x > int64(len(rows)-lo) {
			return nil, fmt.Errorf("%w: sample %d claims %d %s rows", errColumns, i, x, name)
		}
		hi := lo + int(x)
		if x > 0 { // else nil, as JSON without the field
			set(&bd.samples[i], rows[lo:hi:hi])
		}
		lo = hi
	}
	if lo != len(rows) {
		return nil, fmt.Errorf("%w: samples hold %d %s rows, the table %d", errColumns, lo, name, len(rows))
	}
	return rows, nil
}

// cpuRows decodes the CPU table: ids always, places, figures (into vals)
// and registers as parts selects.
func (bd *batchDec) cpuRows(n int, names []string, vals []Value, parts Parts) error {
	cols, rows := bd.cols[1], bd.cpus
	ids, info, err := bd.intColumnInfo(cols, "cpu", n)
	if err != nil {
		return err
	}
	bd.sameCPUs = info.steady()
	for i := range bd.samples {
		bd.sameCPUs = bd.sameCPUs && len(bd.samples[i].CPUs) == info.period
	}
	for i, x := range ids {
		if x < -maxInt32 || x > maxInt32 {
			return fmt.Errorf("%w: cpu %d out of range", errColumns, x)
		}
		rows[i].CPU = int(x)
	}
	if parts&PartCPUPlaces != 0 {
		if err := bd.cpuPlaces(n); err != nil {
			return err
		}
	}
	if parts&PartCPUFigures != 0 {
		nc := len(names)
		for i := range rows {
			rows[i].Values = rowValues(vals, i, nc, nc, 0)
		}
		for j, name := range names {
			if err := bd.floatColumn(cols, prefixValue, name, n, vals, j, nc); err != nil {
				return err
			}
		}
	}
	if parts&(PartCPURegs|PartCPURegColumns) == 0 {
		return nil
	}
	rcs, total, err := bd.regColumns(1, n)
	if err != nil {
		return err
	}
	if parts&PartCPURegColumns != 0 {
		bd.byRow(rcs, n)
	}
	if parts&PartCPURegs != 0 {
		for i, r := range bd.rowRegs(rcs, total, n) {
			rows[i].Regs = r
		}
	}
	return nil
}

// rowValues returns row i's n values, from off on in a row, of a table
// whose rows are stride values apart in vals: nil when n is 0, as JSON
// without the field.
func rowValues(vals []Value, i, n, stride, off int) []Value {
	if n == 0 {
		return nil
	}
	lo := i*stride + off
	return vals[lo : lo+n : lo+n]
}

// cpuPlaces decodes the CPU table's core, package and core type.
func (bd *batchDec) cpuPlaces(n int) error {
	cols, rows := bd.cols[1], bd.cpus
	for k, name := range []string{"core", "package"} {
		v, err := bd.int32Column(cols, name, n)
		if err != nil {
			return err
		}
		for i, x := range v {
			if k == 0 {
				rows[i].Core = int(x)
			} else {
				rows[i].Package = int(x)
			}
		}
	}
	idx, err := bd.stringColumn(cols, "core_type", n)
	if idx == nil {
		for i := range rows {
			rows[i].CoreType = ""
		}
	}
	for i, k := range idx {
		rows[i].CoreType = bd.strs[k]
	}
	return err
}

func (bd *batchDec) packageRows(n int, names []string, vals []Value) error {
	cols, rows := bd.cols[2], bd.pkgs
	v, err := bd.int32Column(cols, "package", n)
	if err != nil {
		return err
	}
	np := len(names)
	for i, x := range v {
		rows[i].Package = int(x)
		rows[i].Values = rowValues(vals, i, np, np, 0)
	}
	for j, name := range names {
		if err := bd.floatColumn(cols, prefixValue, name, n, vals, j, np); err != nil {
			return err
		}
	}
	rcs, total, err := bd.regColumns(2, n)
	if err != nil {
		return err
	}
	for i, r := range bd.rowRegs(rcs, total, n) {
		rows[i].Regs = r
	}
	return nil
}

func (bd *batchDec) summaryRows(n int, names, pkgNames []string, vals []Value) error {
	cols, rows := bd.cols[3], bd.sums
	nc, np := len(names), len(pkgNames)
	idx, err := bd.stringColumn(cols, "type", n)
	if err != nil {
		return err
	}
	for i, k := range idx {
		rows[i].Type = bd.strs[k]
	}
	v, err := bd.int32Column(cols, "cpus", n)
	if err != nil {
		return err
	}
	for i, x := range v {
		rows[i].CPUs = int(x)
		rows[i].Values = rowValues(vals, i, nc, nc+np, 0)
		rows[i].PackageValues = rowValues(vals, i, np, nc+np, nc)
	}
	for j, name := range names {
		if err := bd.floatColumn(cols, prefixValue, name, n, vals, j, nc+np); err != nil {
			return err
		}
	}
	for j, name := range pkgNames {
		if err := bd.floatColumn(cols, prefixPkgValue, name, n, vals, nc+j, nc+np); err != nil {
			return err
		}
	}
	return nil
}

// regColumn is a register column of a table, its values decoded.
type regColumn struct {
	msr  uint32
	has  presence
	vals []uint64 // the values of the rows that have one, in order
	// info says how the values were stored; changes are the indexes of
	// the values of a sparse form's changes.
	info    deltaInfo
	changes []int
}

// rowRegs gives each of a table's n rows its registers, in column order,
// each row's a slice of bd.regs after those of the tables decoded before,
// and returns them (valid until the next call).
func (bd *batchDec) rowRegs(rcs []regColumn, total, n int) [][]Reg {
	bd.regRows = resize(bd.regRows, n)
	if len(rcs) == 0 {
		return bd.regRows
	}
	from := bd.regsFrom
	bd.regsFrom += total
	bd.regs = grow(bd.regs, bd.regsFrom)
	buf := bd.regs[from:bd.regsFrom]
	if k := len(rcs); total == n*k { // every row has every register
		for i := range n {
			r := buf[i*k : (i+1)*k : (i+1)*k]
			for j := range rcs {
				r[j] = Reg{rcs[j].msr, rcs[j].vals[i]}
			}
			bd.regRows[i] = r
		}
		return bd.regRows
	}
	for i := range n {
		k := 0
		for _, rc := range rcs {
			if rc.has.has(i) {
				k++
			}
		}
		if k > 0 {
			bd.regRows[i], buf = buf[:0:k], buf[k:]
		}
	}
	for _, rc := range rcs {
		k := 0
		for i := range n {
			if rc.has.has(i) {
				bd.regRows[i] = append(bd.regRows[i], Reg{rc.msr, rc.vals[k]})
				k++
			}
		}
	}
	return bd.regRows
}

// byRow sets bd.cpuRegCols, the CPU table's registers by row, from its
// register columns.
func (bd *batchDec) byRow(rcs []regColumn, n int) {
	spread := 0
	for _, rc := range rcs {
		if rc.has.mode != presentAll {
			spread++
		}
	}
	bd.spreadVals, bd.spreadHas = grow(bd.spreadVals, spread*n), grow(bd.spreadHas, spread*n)
	vals, has := bd.spreadVals, bd.spreadHas
	for _, rc := range rcs {
		c := RegColumn{MSR: rc.msr, Values: rc.vals}
		if rc.has.mode == presentAll && rc.info.sparse && rc.info.period > 1 {
			c.Period, c.Changes = rc.info.period, rc.changes
		}
		if rc.has.mode != presentAll {
			c.Values, c.Has, vals, has = vals[:n:n], has[:n:n], vals[n:], has[n:]
			k := 0
			for i := range n {
				c.Values[i], c.Has[i] = 0, rc.has.has(i)
				if c.Has[i] {
					c.Values[i] = rc.vals[k]
					k++
				}
			}
		}
		bd.cpuRegCols = append(bd.cpuRegCols, c)
	}
}

// regColumns decodes the register columns of table t, of n rows, and
// returns them (valid until the table's next decode) with how many
// values they hold.
func (bd *batchDec) regColumns(t, n int) ([]regColumn, int, error) {
	rcs, buf, changes := bd.regCols[t][:0], bd.regVals[t][:0], bd.changes[t][:0]
	cols, total := bd.cols[t], 0
	for i := range cols {
		c := &cols[i]
		if !bytes.HasPrefix(c.name, []byte(prefixReg)) {
			continue
		}
		m, ok := parseHex32(c.name[len(prefixReg):])
		if !ok || c.kind != kindUint64 {
			return nil, 0, fmt.Errorf("%w: register column %q", errColumns, c.name)
		}
		from := len(changes)
		has, vals, rest, info, err := bd.uint64Column(c, n, buf, &changes)
		if err != nil {
			return nil, 0, err
		}
		buf, total = rest, total+len(vals)
		// changes holds from and to until every column has appended its.
		rcs = append(rcs, regColumn{msr: m, has: has, vals: vals, info: info, changes: []int{from, len(changes)}})
	}
	for i := range rcs {
		c := &rcs[i]
		c.changes = changes[c.changes[0]:c.changes[1]:c.changes[1]]
	}
	bd.regCols[t], bd.regVals[t], bd.changes[t] = rcs, buf, changes
	return rcs, total, nil
}
