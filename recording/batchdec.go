package recording

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

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
	// intInfo says how the last int column decoded was stored;
	// sameCPUs, from the cpu column, that every sample of the batch has
	// the first's CPU rows.
	intInfo  deltaInfo
	sameCPUs bool
	// packed: the columns have codecs (encoding 3).
	packed bool
	// zd inflates compressed columns into arena (encoding 3), at most
	// MaxPayload bytes a batch.
	zd    *zstd.Decoder
	arena []byte
}

// columnData returns a column's data, inflating a compressed column into
// the batch's arena the first time.
func (bd *batchDec) columnData(c *column) ([]byte, error) {
	if c.codec == codecRaw {
		return c.data, nil
	}
	n, _, err := zstdContentSize(c.data, true)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: column %s: %v", errColumns, c.name, err)
	case n > uint64(MaxPayload-len(bd.arena)):
		return nil, fmt.Errorf("%w: the batch's columns inflate to more than %d bytes", errColumns, MaxPayload)
	}
	if bd.zd == nil {
		if bd.zd, err = newDecoder(MaxPayload); err != nil {
			return nil, err
		}
	}
	if cap(bd.arena)-len(bd.arena) < int(n) {
		bd.arena = make([]byte, 0, max(2*cap(bd.arena), int(n)))
	}
	at := len(bd.arena)
	out, err := bd.zd.DecodeAll(c.data, bd.arena[at:at:at+int(n)])
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: column %s: %v", errColumns, c.name, err)
	case len(out) != int(n):
		return nil, fmt.Errorf("%w: column %s holds %d bytes, declares %d", errColumns, c.name, len(out), n)
	}
	bd.arena = bd.arena[:at+int(n)]
	c.data, c.codec = out, codecRaw
	return out, nil
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
	bd.arena = bd.arena[:0]
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

// findColumn returns the column of cols named prefix+name, or nil.
func findColumn(cols []column, prefix, name string) *column {
	for i := range cols {
		if cols[i].is(prefix, name) {
			return &cols[i]
		}
	}
	return nil
}

// intColumn decodes an integer column of n rows into a reused buffer.
func (bd *batchDec) intColumn(cols []column, name string, n int) ([]int64, error) {
	bd.ints = grow(bd.ints, n)
	c := findColumn(cols, "", name)
	if c == nil {
		return nil, fmt.Errorf("%w: no %s column", errColumns, name)
	}
	if c.kind != kindInt {
		return nil, fmt.Errorf("%w: column %s of kind %d, want %d", errColumns, name, c.kind, kindInt)
	}
	data, err := bd.columnData(c)
	if err != nil {
		return nil, err
	}
	d := &colDec{b: data}
	bd.intInfo = readDeltas(d, bd.v2, bd.ints, nil)
	d.done("an int column")
	if d.err != nil {
		return nil, fmt.Errorf("column %s: %w", name, d.err)
	}
	return bd.ints, nil
}

// readDeltas decodes len(out) delta-encoded values from d: in encodings 3
// and 4 behind a head giving their period and form (each value the delta
// from the one period values before, the first period values from the one
// before them, the first from 0; dense or sparse), in encoding 2 (v2) each
// dense and from the one before. It returns how they were stored, and
// appends to *changes, when not nil, the indexes of a sparse form's
// changes.
func readDeltas[T int64 | uint64](d *colDec, v2 bool, out []T, changes *[]int) deltaInfo {
	info := deltaInfo{period: 1}
	if !v2 {
		h := d.count(2*maxBatchRows+1, "period")
		if info.period, info.sparse = h>>1, h&1 == formSparse; info.period == 0 {
			d.fail("period 0")
		}
	}
	if d.err != nil {
		return info
	}
	var ok bool
	switch {
	case info.sparse:
		b := d.b
		if d.b, info.changes, ok = sparseDeltas(b, out, info.period); ok && changes != nil && info.changes > 0 {
			*changes = sparseChanges(*changes, b, info.period)
		}
	case info.period == 1:
		d.b, ok = varints(d.b, out)
	default:
		d.b, ok = periodDeltas(d.b, out, info.period)
	}
	if !ok {
		d.fail("bad deltas")
		d.b = nil
	}
	return info
}

// deltaInfo says how a column's deltas were stored: their period, and
// whether in the sparse form, with how many changes past the first period
// values.
type deltaInfo struct {
	period  int
	sparse  bool
	changes int
}

// steady reports whether the values repeat every period values without
// a change.
func (i deltaInfo) steady() bool { return i.sparse && i.changes == 0 }

// sparseDeltas decodes len(out) values in the sparse form from b: the
// count of changes, and for each the zero deltas before it and its delta.
// A value whose delta is zero is the one period values before it, copied
// (the one before it for the first period values, 0 for the first). It
// returns the count of changes past the first period values.
func sparseDeltas[T int64 | uint64](b []byte, out []T, period int) (rest []byte, changes int, ok bool) {
	n, p := binary.Uvarint(b)
	if p <= 0 || n > uint64(len(out)) {
		return nil, 0, false
	}
	i := 0
	for range n {
		// One-byte varints, the most, decoded here; longer ones by
		// binary.Uvarint.
		var skip, u uint64
		if p+1 < len(b) && b[p]|b[p+1] < 0x80 {
			skip, u = uint64(b[p]), uint64(b[p+1])
			p += 2
		} else {
			k, l := 0, 0
			if skip, k = uvarintAt(b, p); k > 0 {
				u, l = uvarintAt(b, p+k)
			}
			if k <= 0 || l <= 0 {
				return nil, 0, false
			}
			p += k + l
		}
		if skip >= uint64(len(out)-i) {
			return nil, 0, false
		}
		fillGap(out, i, i+int(skip), period)
		i += int(skip)
		delta := T(int64(u>>1) ^ -int64(u&1))
		switch {
		case i >= period:
			out[i] = out[i-period] + delta
			changes++
		case i > 0:
			out[i] = out[i-1] + delta
		default:
			out[0] = delta
		}
		i++
	}
	fillGap(out, i, len(out), period)
	return b[p:], changes, true
}

// uvarintAt decodes the uvarint at b[p:].
func uvarintAt(b []byte, p int) (uint64, int) {
	if p >= len(b) {
		return 0, 0
	}
	return binary.Uvarint(b[p:])
}

// sparseChanges appends to at the indexes past the first period values
// of the changes of the sparse deltas b of n values (checked by
// sparseDeltas before).
func sparseChanges(at []int, b []byte, period int) []int {
	n, p := binary.Uvarint(b)
	i := 0
	for range n {
		skip, k := uvarintAt(b, p)
		p += k
		_, k = uvarintAt(b, p)
		p += k
		if i += int(skip); i >= period {
			at = append(at, i)
		}
		i++
	}
	return at
}

// fillGap sets out[lo:hi], values whose delta is 0, to the value period
// values before each (the one before for the first period values, 0 for
// the first).
func fillGap[T int64 | uint64](out []T, lo, hi, period int) {
	for ; lo < min(hi, period); lo++ {
		if lo == 0 {
			out[0] = 0
		} else {
			out[lo] = out[lo-1]
		}
	}
	fill(out, lo, hi, period)
}

// fill sets out[lo:hi] each to the value period values before it: the
// period values before lo copied, then what is filled copied after
// itself, doubling.
func fill[T int64 | uint64](out []T, lo, hi, period int) {
	if lo >= hi {
		return
	}
	n := copy(out[lo:hi], out[lo-period:lo])
	for lo+n < hi {
		n += copy(out[lo+n:hi], out[lo:lo+n])
	}
}

// periodDeltas decodes len(out) zigzag varints from b: the first period
// as varints does, each later one added to the value period values
// before it. A run of zero bytes, rows as in the sample before, is copied
// from there, up to period values at a time.
func periodDeltas[T int64 | uint64](b []byte, out []T, period int) (rest []byte, ok bool) {
	first := min(period, len(out))
	if b, ok = varints(b, out[:first]); !ok {
		return nil, false
	}
	p := 0
	for i := first; i < len(out); {
		if p+8 <= len(b) && i+8 <= len(out) && binary.LittleEndian.Uint64(b[p:]) == 0 {
			z := 8 // zero bytes from p, at most period and the values left
			for z < period && i+z+8 <= len(out) && p+z+8 <= len(b) && binary.LittleEndian.Uint64(b[p+z:]) == 0 {
				z += 8
			}
			z = min(z, period)
			copy(out[i:i+z], out[i-period:])
			i, p = i+z, p+z
			continue
		}
		var u uint64
		var k int
		if p+8 <= len(b) && ^binary.LittleEndian.Uint64(b[p:])&stopBits != 0 {
			u, k = uvarint8(binary.LittleEndian.Uint64(b[p:]))
		} else {
			u, k = binary.Uvarint(b[p:])
		}
		if k <= 0 {
			return nil, false
		}
		p += k
		out[i] = out[i-period] + T(int64(u>>1)^-int64(u&1))
		i++
	}
	return b[p:], true
}

// int32Column is intColumn for a column whose values must fit an int32.
func (bd *batchDec) int32Column(cols []column, name string, n int) ([]int64, error) {
	v, err := bd.intColumn(cols, name, n)
	if err != nil {
		return nil, err
	}
	for _, x := range v {
		if x < -maxInt32 || x > maxInt32 {
			return nil, fmt.Errorf("%w: %s %d out of range", errColumns, name, x)
		}
	}
	return v, nil
}

// varints decodes len(out) zigzag varints from b, each the difference
// from the one before (the first from 0), into out, and returns the bytes
// after them; ok is false when b ends early or holds a bad varint.
func varints[T int64 | uint64](b []byte, out []T) (rest []byte, ok bool) {
	var prev T
	p, i := 0, 0
	for i < len(out) {
		var u uint64
		var k int
		if p+8 <= len(b) {
			// Branches that follow the data's shape, not each varint's
			// length: eight one-byte deltas at once (a run of small
			// changes), or one varint decoded without a loop.
			w := binary.LittleEndian.Uint64(b[p:])
			switch {
			case w&stopBits == 0 && i+8 <= len(out):
				prev = put8(out[i:i+8], w, prev)
				i, p = i+8, p+8
				continue
			case ^w&stopBits != 0:
				u, k = uvarint8(w)
			default:
				u, k = binary.Uvarint(b[p:])
			}
		} else {
			u, k = binary.Uvarint(b[p:])
		}
		if k <= 0 {
			return nil, false
		}
		p += k
		prev += T(int64(u>>1) ^ -int64(u&1)) // wraps as the writer's uint64 deltas
		out[i] = prev
		i++
	}
	return b[p:], true
}

// put8 decodes the eight one-byte zigzag deltas that are the bytes of w
// (little endian) into out[:8], adding them up from prev, and returns
// the last value.
func put8[T int64 | uint64](out []T, w uint64, prev T) T {
	out = out[:8]
	if w == 0 { // nothing changed
		for k := range out {
			out[k] = prev
		}
		return prev
	}
	for k := range out {
		u := w & 0xff
		w >>= 8
		prev += T(int64(u>>1) ^ -int64(u&1))
		out[k] = prev
	}
	return prev
}

// stopBits are the continuation bits of 8 varint bytes.
const stopBits = 0x8080808080808080

// uvarint8 decodes a varint of at most 8 bytes from the 8 bytes w (little
// endian), one of which ends it, without a loop: it returns the value and
// its length. The 7-bit groups are packed pairwise: into 14 bits per 16,
// 28 per 32, then 56.
func uvarint8(w uint64) (uint64, int) {
	n := bits.TrailingZeros64(^w&stopBits)/8 + 1
	w &= ^uint64(0) >> (64 - 8*n) & 0x7f7f7f7f7f7f7f7f
	w = w&0x007f007f007f007f | w&0x7f007f007f007f00>>1
	w = w&0x00003fff00003fff | w&0x3fff00003fff0000>>2
	return w&0x000000000fffffff | w&0x0fffffff00000000>>4, n
}

// cpuRows decodes the CPU table: ids always, places, figures (into vals)
// and registers as parts selects.
func (bd *batchDec) cpuRows(n int, names []string, vals []Value, parts Parts) error {
	cols, rows := bd.cols[1], bd.cpus
	ids, err := bd.intColumn(cols, "cpu", n)
	if err != nil {
		return err
	}
	bd.sameCPUs = bd.intInfo.steady()
	for i := range bd.samples {
		bd.sameCPUs = bd.sameCPUs && len(bd.samples[i].CPUs) == bd.intInfo.period
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

// stringColumn decodes a dictionary column of n rows: the dictionary into
// bd.strs, and each row's index into it; a missing column gives no rows
// (their strings stay empty).
func (bd *batchDec) stringColumn(cols []column, name string, n int) ([]int, error) {
	c := findColumn(cols, "", name)
	if c == nil {
		return nil, nil
	}
	if c.kind != kindString {
		return nil, fmt.Errorf("%w: column %s of kind %d, want %d", errColumns, name, c.kind, kindString)
	}
	data, err := bd.columnData(c)
	if err != nil {
		return nil, err
	}
	d := &colDec{b: data}
	bd.strs = bd.strs[:0]
	for range d.count(len(data), "strings") {
		bd.strs = append(bd.strs, bd.intern(d.bytes(d.count(len(d.b), "string bytes"))))
	}
	bd.strIdx = grow(bd.strIdx, n)
	for i := range n {
		bd.strIdx[i] = d.count(len(bd.strs)-1, "string index")
		if d.err != nil {
			return nil, d.err
		}
	}
	d.done("a string column")
	return bd.strIdx, d.err
}

// presence says which rows of an optional column have a value.
type presence struct {
	mode byte
	bm   []byte
}

// readPresence decodes an optional column's presence.
func readPresence(d *colDec, n int) presence {
	p := presence{mode: d.byte1()}
	switch p.mode {
	case presentAll, presentNone:
	case presentBitmap:
		p.bm = d.bytes((n + 7) / 8)
	default:
		d.fail("unknown presence mode %d", p.mode)
	}
	return p
}

// has reports whether row i has a value.
func (p presence) has(i int) bool {
	switch p.mode {
	case presentAll:
		return true
	case presentBitmap:
		return i/8 < len(p.bm) && p.bm[i/8]&(1<<(i%8)) != 0
	}
	return false
}

// count returns how many of n rows have a value.
func (p presence) count(n int) int {
	switch p.mode {
	case presentAll:
		return n
	case presentBitmap:
		k := 0
		for i, b := range p.bm {
			if rest := n - 8*i; rest < 8 {
				b &= 1<<rest - 1
			}
			k += bits.OnesCount8(b)
		}
		return k
	}
	return 0
}

// floatColumn decodes the float column prefix+name of n rows into
// dst[off], dst[off+stride], ... dst[off+(n-1)*stride]: NA for rows
// without a value, and for every row when the table lacks the column.
func (bd *batchDec) floatColumn(cols []column, prefix, name string, n int, dst []Value, off, stride int) error {
	if n == 0 {
		return nil
	}
	dst = dst[off:]
	c := findColumn(cols, prefix, name)
	if c == nil {
		for i := range n {
			dst[i*stride] = NA()
		}
		return nil
	}
	if c.kind != kindFloat {
		return fmt.Errorf("%w: column %s of kind %d, want %d", errColumns, c.name, c.kind, kindFloat)
	}
	data, err := bd.columnData(c)
	if err != nil {
		return err
	}
	d := &colDec{b: data}
	p := readPresence(d, n)
	v, err := bd.floatValues(d, name, p.count(n))
	if err != nil {
		return err
	}
	if p.mode == presentAll {
		for i, x := range v {
			dst[i*stride] = Value(x)
		}
		return nil
	}
	k := 0
	for i := range n {
		dst[i*stride] = NA()
		if p.has(i) {
			dst[i*stride] = Value(v[k])
			k++
		}
	}
	return nil
}

// floatValues decodes the m values of a float column after its presence.
func (bd *batchDec) floatValues(d *colDec, name string, m int) ([]float64, error) {
	rep := d.byte1()
	exp := 0
	if rep == floatDecimal {
		exp = int(d.byte1())
	}
	switch {
	case rep == floatDecimal && exp > maxDecimals:
		d.fail("column %s: %d decimals", name, exp)
	case rep != floatDecimal && rep != floatBits:
		d.fail("column %s: unknown float representation %d", name, rep)
	}
	if d.err != nil {
		return nil, d.err
	}
	bd.floats = grow(bd.floats, m)
	if rep == floatBits {
		bd.floatBits(d, m)
	} else {
		bd.ints = grow(bd.ints, m)
		readDeltas(d, bd.v2, bd.ints, nil)
		scale := pow10[exp]
		for i, x := range bd.ints {
			bd.floats[i] = float64(x) / scale
		}
	}
	d.done("a float column")
	return bd.floats, d.err
}

// floatBits decodes m float64 values stored as the XOR of their bits
// with an earlier value's (format 3: behind a period, as readDeltas; format
// 2: the value before) into bd.floats.
func (bd *batchDec) floatBits(d *colDec, m int) {
	period := 1
	if !bd.v2 {
		if period = d.count(maxBatchRows, "period"); period == 0 {
			d.fail("period 0")
		}
	}
	b := d.bytes(8 * m)
	if d.err != nil {
		return
	}
	w := grow(bd.words, m)
	bd.words = w
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	for i := 1; i < min(period, m); i++ {
		w[i] ^= w[i-1]
	}
	for i := period; i < m; i++ {
		w[i] ^= w[i-period]
	}
	for i, x := range w {
		bd.floats[i] = math.Float64frombits(x)
	}
}

// parseHex32 parses "0x" and 1 to 8 lower-case hex digits.
func parseHex32(b []byte) (uint32, bool) {
	if len(b) < 3 || len(b) > 10 || b[0] != '0' || b[1] != 'x' {
		return 0, false
	}
	var v uint32
	for _, c := range b[2:] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
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

// uint64Column decodes an optional uint64 column of n rows: its presence,
// and the values of the rows that have one, appended to buf, which it
// returns too (values appended before stay valid when buf must grow:
// they keep the old array), and how they were stored, appending the
// indexes of a sparse form's changes to *changes when not nil.
func (bd *batchDec) uint64Column(c *column, n int, buf []uint64, changes *[]int) (has presence, vals, rest []uint64, info deltaInfo, err error) {
	data, err := bd.columnData(c)
	if err != nil {
		return presence{}, nil, nil, info, err
	}
	d := &colDec{b: data}
	has = readPresence(d, n)
	if d.err != nil {
		return presence{}, nil, nil, info, d.err
	}
	k := has.count(n)
	if cap(buf)-len(buf) < k {
		buf = make([]uint64, 0, 2*cap(buf)+k)
	}
	vals = buf[len(buf) : len(buf)+k]
	if info = readDeltas(d, bd.v2, vals, changes); d.err != nil || len(d.b) != 0 {
		return presence{}, nil, nil, info, fmt.Errorf("%w: column %s holds %d bytes for %d values", errColumns, c.name, len(data), k)
	}
	return has, vals, buf[:len(buf)+k], info, nil
}

// decodeTrace decodes a columnar trace payload.
func (bd *batchDec) decodeTrace(p []byte) (Trace, error) {
	d := &colDec{b: p}
	t := Trace{Run: d.count(maxInt32, "run id"), Lost: d.uvarint()}
	var n int
	bd.arena = bd.arena[:0]
	n, bd.cols[0] = d.table(bd.cols[0][:0], bd.packed)
	d.done("trace record")
	if d.err != nil {
		return Trace{}, d.err
	}
	bd.events = resize(bd.events, n)
	if err := bd.traceInts(n); err != nil {
		return Trace{}, err
	}
	if err := bd.traceFlags(n); err != nil {
		return Trace{}, err
	}
	for _, name := range []string{"value", "old"} {
		c := findColumn(bd.cols[0], "", name)
		if c == nil && name == "old" {
			break
		}
		if c == nil || c.kind != kindUint64 {
			return Trace{}, fmt.Errorf("%w: column %s missing or not uint64", errColumns, name)
		}
		has, v, buf, _, err := bd.uint64Column(c, n, bd.regVals[0][:0], nil)
		if err != nil {
			return Trace{}, err
		}
		bd.regVals[0] = buf
		for i, k := 0, 0; i < n; i++ {
			if !has.has(i) {
				continue
			}
			if name == "value" {
				bd.events[i].Value = v[k]
			} else {
				bd.events[i].Old = v[k]
			}
			k++
		}
	}
	if n > 0 {
		t.Events = bd.events
	}
	return t, nil
}

// traceInts decodes a trace batch's integer columns.
func (bd *batchDec) traceInts(n int) error {
	cols, ev := bd.cols[0], bd.events
	for _, name := range []string{"time_ns", "cpu", "pid", "msr"} {
		v, err := bd.intColumn(cols, name, n)
		if err != nil {
			return err
		}
		for i, x := range v {
			switch {
			case name == "time_ns":
				ev[i].TimeNs = x
			case name == "msr" && (x < 0 || x > math.MaxUint32):
				return fmt.Errorf("%w: MSR %#x out of range", errColumns, x)
			case name == "msr":
				ev[i].MSR = uint32(x)
			case x < -maxInt32 || x > maxInt32:
				return fmt.Errorf("%w: %s %d out of range", errColumns, name, x)
			case name == "cpu":
				ev[i].CPU = int(x)
			default:
				ev[i].PID = int(x)
			}
		}
	}
	return nil
}

// traceFlags decodes a trace batch's comm, failed and emulated columns.
func (bd *batchDec) traceFlags(n int) error {
	cols, ev := bd.cols[0], bd.events
	idx, err := bd.stringColumn(cols, "comm", n)
	if err != nil {
		return err
	}
	for i, k := range idx {
		ev[i].Comm = bd.strs[k]
	}
	for _, name := range []string{"failed", "emulated"} {
		c := findColumn(cols, "", name)
		if c == nil {
			continue
		}
		data, err := bd.columnData(c)
		if err != nil {
			return err
		}
		if c.kind != kindBool || len(data) != (n+7)/8 {
			return fmt.Errorf("%w: column %s", errColumns, name)
		}
		for i := range n {
			if data[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			if name == "failed" {
				ev[i].Failed = true
			} else {
				ev[i].Emulated = true
			}
		}
	}
	return nil
}
