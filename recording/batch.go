package recording

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Column names of columnar batches (docs/recording-format.md). Figure
// columns are named "v:" plus the figure, summary rows' package figures
// "p:" plus the figure, registers "r:" plus the MSR in hex ("r:0x774").
const (
	prefixValue    = "v:"
	prefixPkgValue = "p:"
	prefixReg      = "r:"
)

// batchEnc encodes sample and trace batches, reusing its buffers.
type batchEnc struct {
	colEnc
	cpus []*CPURow
	pkgs []*PackageRow
	sums []*SummaryRow
}

// encodeSamples returns the columnar payload of a samples record, valid
// until the next call.
func (e *batchEnc) encodeSamples(s Samples) ([]byte, error) {
	e.b, e.cpus, e.pkgs, e.sums = e.b[:0], e.cpus[:0], e.pkgs[:0], e.sums[:0]
	for i := range s.Samples {
		x := &s.Samples[i]
		for j := range x.CPUs {
			e.cpus = append(e.cpus, &x.CPUs[j])
		}
		for j := range x.Packages {
			e.pkgs = append(e.pkgs, &x.Packages[j])
		}
		for j := range x.Summaries {
			e.sums = append(e.sums, &x.Summaries[j])
		}
	}
	cpuRegs, err := regColumns(len(e.cpus), func(i int) []Reg { return e.cpus[i].Regs })
	if err != nil {
		return nil, err
	}
	pkgRegs, err := regColumns(len(e.pkgs), func(i int) []Reg { return e.pkgs[i].Regs })
	if err != nil {
		return nil, err
	}
	rows := max(len(s.Samples), len(e.cpus), len(e.pkgs), len(e.sums))
	cells := len(e.cpus)*(len(s.CPUColumns)+len(cpuRegs)) + len(e.pkgs)*(len(s.PackageColumns)+len(pkgRegs)) +
		len(e.sums)*(len(s.CPUColumns)+len(s.PackageColumns))
	if rows > maxBatchRows || cells > maxBatchCells {
		return nil, fmt.Errorf("recording: samples batch of %d rows, %d cells: %w", rows, cells, errTooLarge)
	}
	e.uvarint(uint64(s.Run))
	e.strs(s.CPUColumns)
	e.strs(s.PackageColumns)
	e.sampleTable(s.Samples)
	e.cpuTable(s.CPUColumns, cpuRegs)
	e.packageTable(s.PackageColumns, pkgRegs)
	e.summaryTable(s.CPUColumns, s.PackageColumns)
	return e.b, nil
}

func (e *batchEnc) sampleTable(s []Sample) {
	e.table(len(s), 5)
	e.ints("time_ns", len(s), func(i int) int64 { return s[i].TimeNs })
	e.ints("interval_ns", len(s), func(i int) int64 { return s[i].IntervalNs })
	e.ints("cpus", len(s), func(i int) int64 { return int64(len(s[i].CPUs)) })
	e.ints("packages", len(s), func(i int) int64 { return int64(len(s[i].Packages)) })
	e.ints("summaries", len(s), func(i int) int64 { return int64(len(s[i].Summaries)) })
}

func (e *batchEnc) cpuTable(cols []string, regs []uint32) {
	r := e.cpus
	n := len(r)
	e.table(n, 4+len(cols)+len(regs))
	e.ints("cpu", n, func(i int) int64 { return int64(r[i].CPU) })
	e.ints("core", n, func(i int) int64 { return int64(r[i].Core) })
	e.ints("package", n, func(i int) int64 { return int64(r[i].Package) })
	e.strings("core_type", n, func(i int) string { return r[i].CoreType })
	for j, c := range cols {
		e.floats(prefixValue+c, n, func(i int) Value { return r[i].Value(j) })
	}
	for _, m := range regs {
		e.uint64s(regName(m), n, func(i int) (uint64, bool) { return r[i].Reg(m) })
	}
}

func (e *batchEnc) packageTable(cols []string, regs []uint32) {
	r := e.pkgs
	n := len(r)
	e.table(n, 1+len(cols)+len(regs))
	e.ints("package", n, func(i int) int64 { return int64(r[i].Package) })
	for j, c := range cols {
		e.floats(prefixValue+c, n, func(i int) Value { return r[i].Value(j) })
	}
	for _, m := range regs {
		e.uint64s(regName(m), n, func(i int) (uint64, bool) { return r[i].Reg(m) })
	}
}

func (e *batchEnc) summaryTable(cols, pkgCols []string) {
	r := e.sums
	n := len(r)
	e.table(n, 2+len(cols)+len(pkgCols))
	e.strings("type", n, func(i int) string { return r[i].Type })
	e.ints("cpus", n, func(i int) int64 { return int64(r[i].CPUs) })
	for j, c := range cols {
		e.floats(prefixValue+c, n, func(i int) Value { return r[i].Value(j) })
	}
	for j, c := range pkgCols {
		e.floats(prefixPkgValue+c, n, func(i int) Value { return r[i].PackageValue(j) })
	}
}

func regName(msr uint32) string { return prefixReg + "0x" + strconv.FormatUint(uint64(msr), 16) }

// regColumns returns the registers of n rows in order of first
// appearance; a row holding a register twice is an error.
func regColumns(n int, regs func(int) []Reg) ([]uint32, error) {
	var out []uint32
	for i := range n {
		rs := regs(i)
		for k, g := range rs {
			if slices.ContainsFunc(rs[:k], func(h Reg) bool { return h.MSR == g.MSR }) {
				return nil, fmt.Errorf("recording: a sample row holds register %#x twice", g.MSR)
			}
			if !slices.Contains(out, g.MSR) {
				out = append(out, g.MSR)
			}
		}
	}
	return out, nil
}

// encodeTrace returns the columnar payload of a trace record.
func (e *batchEnc) encodeTrace(t Trace) ([]byte, error) {
	ev := t.Events
	n := len(ev)
	if n > maxBatchRows {
		return nil, fmt.Errorf("recording: trace batch of %d events: %w", n, errTooLarge)
	}
	e.b = e.b[:0]
	e.uvarint(uint64(t.Run))
	e.uvarint(t.Lost)
	// An emulated machine's writes add two columns (format 2.1).
	emulated := slices.ContainsFunc(ev, func(x TraceEvent) bool { return x.Emulated })
	if emulated {
		e.table(n, 9)
	} else {
		e.table(n, 7)
	}
	e.ints("time_ns", n, func(i int) int64 { return ev[i].TimeNs })
	e.ints("cpu", n, func(i int) int64 { return int64(ev[i].CPU) })
	e.ints("pid", n, func(i int) int64 { return int64(ev[i].PID) })
	e.strings("comm", n, func(i int) string { return ev[i].Comm })
	e.ints("msr", n, func(i int) int64 { return int64(ev[i].MSR) })
	e.uint64s("value", n, func(i int) (uint64, bool) { return ev[i].Value, true })
	e.bools("failed", n, func(i int) bool { return ev[i].Failed })
	if emulated {
		e.bools("emulated", n, func(i int) bool { return ev[i].Emulated })
		e.uint64s("old", n, func(i int) (uint64, bool) { return ev[i].Old, ev[i].Emulated })
	}
	return e.b, nil
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
	events  []TraceEvent
	ints    []int64
	cols    [4][]column
	strs    []string
}

// decodeSamples decodes a columnar samples payload.
func (bd *batchDec) decodeSamples(p []byte) (Samples, error) {
	d := &colDec{b: p}
	s := Samples{Run: d.count(maxInt32, "run id")}
	s.CPUColumns, s.PackageColumns = d.strs(), d.strs()
	var n [4]int
	for t := range bd.cols {
		n[t], bd.cols[t] = d.table(bd.cols[t][:0])
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
	if err := bd.sampleRows(n); err != nil {
		return Samples{}, err
	}
	bd.vals = resize(bd.vals, n[1]*nc+n[2]*np+n[3]*(nc+np))
	vals := bd.vals
	for _, step := range []func([]Value) ([]Value, error){
		func(v []Value) ([]Value, error) { return bd.cpuRows(n[1], s.CPUColumns, v) },
		func(v []Value) ([]Value, error) { return bd.packageRows(n[2], s.PackageColumns, v) },
		func(v []Value) ([]Value, error) { return bd.summaryRows(n[3], s.CPUColumns, s.PackageColumns, v) },
	} {
		var err error
		if vals, err = step(vals); err != nil {
			return Samples{}, err
		}
	}
	if err := bd.regRows(n[1], n[2]); err != nil {
		return Samples{}, err
	}
	if n[0] > 0 {
		s.Samples = bd.samples
	}
	return s, nil
}

const maxInt32 = 1<<31 - 1

// take splits the first n values off vals: nil when n is 0, as JSON
// without the field.
func take(vals []Value, n int) ([]Value, []Value) {
	if n == 0 {
		return nil, vals
	}
	return vals[:n:n], vals[n:]
}

// resize returns b with length n, reusing its array when large enough.
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// sampleRows decodes the samples table and slices the row tables'
// buffers among the samples.
func (bd *batchDec) sampleRows(n [4]int) error {
	cols := bd.cols[0]
	bd.samples = resize(bd.samples, n[0])
	bd.cpus, bd.pkgs, bd.sums = resize(bd.cpus, n[1]), resize(bd.pkgs, n[2]), resize(bd.sums, n[3])
	var sum [4]int
	for k, name := range []string{"time_ns", "interval_ns", "cpus", "packages", "summaries"} {
		v, err := bd.intColumn(cols, name, n[0], true)
		if err != nil {
			return err
		}
		for i, x := range v {
			s := &bd.samples[i]
			switch k {
			case 0:
				s.TimeNs = x
			case 1:
				s.IntervalNs = x
			default:
				if x < 0 || x > int64(n[k-1]-sum[k-1]) {
					return fmt.Errorf("%w: sample %d claims %d %s rows", errColumns, i, x, name)
				}
				lo := sum[k-1]
				sum[k-1] += int(x)
				if x == 0 {
					continue // nil, as JSON without the field
				}
				switch k {
				case 2:
					s.CPUs = bd.cpus[lo:sum[1]:sum[1]]
				case 3:
					s.Packages = bd.pkgs[lo:sum[2]:sum[2]]
				case 4:
					s.Summaries = bd.sums[lo:sum[3]:sum[3]]
				}
			}
		}
	}
	if sum[1] != n[1] || sum[2] != n[2] || sum[3] != n[3] {
		return fmt.Errorf("%w: samples hold %d/%d/%d rows, tables %d/%d/%d", errColumns, sum[1], sum[2], sum[3], n[1], n[2], n[3])
	}
	return nil
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

// intColumn decodes an integer column of n rows into a reused buffer; a
// missing column is an error when required, and zeros otherwise.
func (bd *batchDec) intColumn(cols []column, name string, n int, required bool) ([]int64, error) {
	bd.ints = resize(bd.ints, n)
	c := findColumn(cols, "", name)
	if c == nil {
		if required {
			return nil, fmt.Errorf("%w: no %s column", errColumns, name)
		}
		return bd.ints, nil
	}
	if c.kind != kindInt {
		return nil, fmt.Errorf("%w: column %s of kind %d, want %d", errColumns, name, c.kind, kindInt)
	}
	d := &colDec{b: c.data}
	prev := int64(0)
	for i := range bd.ints {
		prev += d.varint()
		bd.ints[i] = prev
	}
	d.done("an int column")
	return bd.ints, d.err
}

// rowInts sets an int field of each of n rows from a column.
func (bd *batchDec) rowInts(cols []column, name string, n int, required bool, set func(i int, v int)) error {
	v, err := bd.intColumn(cols, name, n, required)
	if err != nil {
		return err
	}
	for i, x := range v {
		if x < -maxInt32 || x > maxInt32 {
			return fmt.Errorf("%w: %s %d out of range", errColumns, name, x)
		}
		set(i, int(x))
	}
	return nil
}

func (bd *batchDec) cpuRows(n int, names []string, vals []Value) ([]Value, error) {
	cols, rows := bd.cols[1], bd.cpus
	for i := range rows {
		rows[i].Values, vals = take(vals, len(names))
	}
	err := errors.Join(
		bd.rowInts(cols, "cpu", n, true, func(i, v int) { rows[i].CPU = v }),
		bd.rowInts(cols, "core", n, true, func(i, v int) { rows[i].Core = v }),
		bd.rowInts(cols, "package", n, true, func(i, v int) { rows[i].Package = v }),
		bd.stringColumn(cols, "core_type", n, func(i int, s string) { rows[i].CoreType = s }))
	for j, name := range names {
		err = errors.Join(err, floatColumn(cols, prefixValue, name, n, func(i int, v Value) { rows[i].Values[j] = v }))
	}
	return vals, err
}

func (bd *batchDec) packageRows(n int, names []string, vals []Value) ([]Value, error) {
	cols, rows := bd.cols[2], bd.pkgs
	for i := range rows {
		rows[i].Values, vals = take(vals, len(names))
	}
	err := bd.rowInts(cols, "package", n, true, func(i, v int) { rows[i].Package = v })
	for j, name := range names {
		err = errors.Join(err, floatColumn(cols, prefixValue, name, n, func(i int, v Value) { rows[i].Values[j] = v }))
	}
	return vals, err
}

func (bd *batchDec) summaryRows(n int, names, pkgNames []string, vals []Value) ([]Value, error) {
	cols, rows := bd.cols[3], bd.sums
	for i := range rows {
		rows[i].Values, vals = take(vals, len(names))
		rows[i].PackageValues, vals = take(vals, len(pkgNames))
	}
	err := errors.Join(
		bd.stringColumn(cols, "type", n, func(i int, s string) { rows[i].Type = s }),
		bd.rowInts(cols, "cpus", n, true, func(i, v int) { rows[i].CPUs = v }))
	for j, name := range names {
		err = errors.Join(err, floatColumn(cols, prefixValue, name, n, func(i int, v Value) { rows[i].Values[j] = v }))
	}
	for j, name := range pkgNames {
		err = errors.Join(err, floatColumn(cols, prefixPkgValue, name, n, func(i int, v Value) { rows[i].PackageValues[j] = v }))
	}
	return vals, err
}

// stringColumn sets a string field of each of n rows from a dictionary
// column; a missing column leaves them empty.
func (bd *batchDec) stringColumn(cols []column, name string, n int, set func(i int, s string)) error {
	c := findColumn(cols, "", name)
	if c == nil {
		return nil
	}
	if c.kind != kindString {
		return fmt.Errorf("%w: column %s of kind %d, want %d", errColumns, name, c.kind, kindString)
	}
	d := &colDec{b: c.data}
	bd.strs = bd.strs[:0]
	for range d.count(len(c.data), "strings") {
		bd.strs = append(bd.strs, d.str())
	}
	for i := range n {
		k := d.count(len(bd.strs)-1, "string index")
		if d.err != nil {
			break
		}
		set(i, bd.strs[k])
	}
	d.done("a string column")
	return d.err
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

// floatColumn sets each of n rows' value from a float column; rows
// without a value, or a missing column, get NA.
func floatColumn(cols []column, prefix, name string, n int, set func(i int, v Value)) error {
	c := findColumn(cols, prefix, name)
	if c == nil {
		for i := range n {
			set(i, NA())
		}
		return nil
	}
	if c.kind != kindFloat {
		return fmt.Errorf("%w: column %s of kind %d, want %d", errColumns, c.name, c.kind, kindFloat)
	}
	d := &colDec{b: c.data}
	has := readPresence(d, n).has
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
	var prevInt int64
	var prevBits uint64
	for i := 0; i < n && d.err == nil; i++ {
		switch {
		case !has(i):
			set(i, NA())
		case rep == floatDecimal:
			prevInt += d.varint()
			set(i, Value(float64(prevInt)/pow10[exp]))
		default:
			if b := d.bytes(8); d.err == nil {
				prevBits ^= binary.LittleEndian.Uint64(b)
				set(i, Value(math.Float64frombits(prevBits)))
			}
		}
	}
	d.done("a float column")
	return d.err
}

// regRows decodes the register columns of the CPU and package tables.
func (bd *batchDec) regRows(ncpu, npkg int) error {
	cpuRegs, err := regColumnsOf(bd.cols[1])
	if err != nil {
		return err
	}
	pkgRegs, err := regColumnsOf(bd.cols[2])
	if err != nil {
		return err
	}
	bd.regs = resize(bd.regs, ncpu*len(cpuRegs)+npkg*len(pkgRegs))
	rest, err := rowRegs(cpuRegs, ncpu, bd.regs, func(i int) *[]Reg { return &bd.cpus[i].Regs })
	if err != nil {
		return err
	}
	_, err = rowRegs(pkgRegs, npkg, rest, func(i int) *[]Reg { return &bd.pkgs[i].Regs })
	return err
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

// regColumn is a register column of a table.
type regColumn struct {
	msr uint32
	c   *column
}

// regColumnsOf returns the register columns of a table.
func regColumnsOf(cols []column) ([]regColumn, error) {
	var out []regColumn
	for i := range cols {
		c := &cols[i]
		if !bytes.HasPrefix(c.name, []byte(prefixReg)) {
			continue
		}
		m, ok := parseHex32(c.name[len(prefixReg):])
		if !ok || c.kind != kindUint64 {
			return nil, fmt.Errorf("%w: register column %q", errColumns, c.name)
		}
		out = append(out, regColumn{m, c})
	}
	return out, nil
}

// rowRegs gives each of n rows its registers, in column order, as a
// slice of buf, and returns the rest of buf: a first pass counts each
// row's registers, a second fills them in.
func rowRegs(cols []regColumn, n int, buf []Reg, regs func(i int) *[]Reg) ([]Reg, error) {
	for i := range n {
		*regs(i) = nil
	}
	if len(cols) == 0 {
		return buf, nil
	}
	counts := make([]int32, n)
	for _, rc := range cols {
		d := &colDec{b: rc.c.data}
		has := readPresence(d, n).has
		if d.err != nil {
			return nil, d.err
		}
		for i := range n {
			if has(i) {
				counts[i]++
			}
		}
	}
	for i, k := range counts {
		if k > 0 {
			*regs(i), buf = buf[:0:k], buf[k:]
		}
	}
	for _, rc := range cols {
		if err := uint64Column(rc.c, n, func(i int, v uint64) {
			r := regs(i)
			*r = append(*r, Reg{rc.msr, v})
		}); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// uint64Column calls set for each of n rows that has a value.
func uint64Column(c *column, n int, set func(i int, v uint64)) error {
	d := &colDec{b: c.data}
	has := readPresence(d, n).has
	var prev uint64
	for i := 0; i < n && d.err == nil; i++ {
		if has(i) {
			prev += uint64(d.varint())
			set(i, prev)
		}
	}
	d.done("a uint64 column")
	return d.err
}

// decodeTrace decodes a columnar trace payload.
func (bd *batchDec) decodeTrace(p []byte) (Trace, error) {
	d := &colDec{b: p}
	t := Trace{Run: d.count(maxInt32, "run id"), Lost: d.uvarint()}
	var n int
	n, bd.cols[0] = d.table(bd.cols[0][:0])
	d.done("trace record")
	if d.err != nil {
		return Trace{}, d.err
	}
	cols := bd.cols[0]
	bd.events = resize(bd.events, n)
	ev := bd.events
	err := errors.Join(
		bd.rowInts(cols, "cpu", n, true, func(i, v int) { ev[i].CPU = v }),
		bd.rowInts(cols, "pid", n, true, func(i, v int) { ev[i].PID = v }),
		bd.stringColumn(cols, "comm", n, func(i int, s string) { ev[i].Comm = s }),
		bd.boolColumn(cols, "failed", n, func(i int) { ev[i].Failed = true }),
		bd.boolColumn(cols, "emulated", n, func(i int) { ev[i].Emulated = true }))
	if err != nil {
		return Trace{}, err
	}
	if c := findColumn(cols, "", "old"); c != nil {
		if c.kind != kindUint64 {
			return Trace{}, fmt.Errorf("%w: column old", errColumns)
		}
		if err := uint64Column(c, n, func(i int, v uint64) { ev[i].Old = v }); err != nil {
			return Trace{}, err
		}
	}
	times, err := bd.intColumn(cols, "time_ns", n, true)
	if err != nil {
		return Trace{}, err
	}
	for i, x := range times {
		ev[i].TimeNs = x
	}
	msrs, err := bd.intColumn(cols, "msr", n, true)
	if err != nil {
		return Trace{}, err
	}
	for i, x := range msrs {
		if x < 0 || x > math.MaxUint32 {
			return Trace{}, fmt.Errorf("%w: MSR %#x out of range", errColumns, x)
		}
		ev[i].MSR = uint32(x)
	}
	c := findColumn(cols, "", "value")
	if c == nil || c.kind != kindUint64 {
		return Trace{}, fmt.Errorf("%w: no value column", errColumns)
	}
	if err := uint64Column(c, n, func(i int, v uint64) { ev[i].Value = v }); err != nil {
		return Trace{}, err
	}
	if n > 0 {
		t.Events = ev
	}
	return t, nil
}

// boolColumn calls set for each of n rows whose bit is set; a missing
// column sets none.
func (bd *batchDec) boolColumn(cols []column, name string, n int, set func(i int)) error {
	c := findColumn(cols, "", name)
	if c == nil {
		return nil
	}
	if c.kind != kindBool || len(c.data) != (n+7)/8 {
		return fmt.Errorf("%w: column %s", errColumns, name)
	}
	for i := range n {
		if c.data[i/8]&(1<<(i%8)) != 0 {
			set(i)
		}
	}
	return nil
}
