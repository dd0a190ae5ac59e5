// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Reading columnar payloads: the primitives, the table directory, and
// a decoder per column kind (docs/recording-format.md, "Columnar
// batches").

// errColumns: a columnar payload is malformed.
var errColumns = errors.New("malformed columnar payload")

// colDec reads a columnar payload; the first error sticks.
type colDec struct {
	b   []byte
	err error
}

func (d *colDec) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errColumns, fmt.Sprintf(format, a...))
	}
}

func (d *colDec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count no larger than limit.
func (d *colDec) count(limit int, what string) int {
	v := d.uvarint()
	if v > uint64(limit) {
		d.fail("%d %s, more than %d", v, what, limit)
		return 0
	}
	return int(v)
}

func (d *colDec) bytes(n int) []byte {
	if n > len(d.b) {
		d.fail("data ends early")
		d.b = nil
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *colDec) byte1() byte {
	b := d.bytes(1)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// done fails unless every byte of the column or record what was read.
func (d *colDec) done(what string) {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes left over in %s", len(d.b), what)
	}
}

// column is one column of a table as read: its data not yet decoded, nor
// inflated when its codec is codecZstd. Its name is the payload's bytes
// (no allocation per column).
type column struct {
	name  []byte
	kind  byte
	codec byte
	data  []byte
}

// is reports whether the column is named prefix+name.
func (c *column) is(prefix, name string) bool {
	return len(c.name) == len(prefix)+len(name) && string(c.name[:len(prefix)]) == prefix && string(c.name[len(prefix):]) == name
}

// table reads a table's row count and columns, appending them to cols;
// packed says that each column has a codec (encoding 3).
func (d *colDec) table(cols []column, packed bool) (int, []column) {
	n := d.count(maxBatchRows, "rows")
	ncols := d.count(len(d.b), "columns")
	for range ncols {
		c := column{name: d.bytes(d.count(len(d.b), "name bytes"))}
		c.kind = d.byte1()
		if packed {
			if c.codec = d.byte1(); c.codec != codecRaw && c.codec != codecZstd {
				d.fail("column %q of unknown codec %d", c.name, c.codec)
			}
		}
		c.data = d.bytes(d.count(len(d.b), "column bytes"))
		cols = append(cols, c)
	}
	return n, cols
}

// columnData returns a column's data, inflating a compressed column into
// the batch's arena the first time, within what the batch's columns
// inflated before leave of MaxPayload.
func (bd *batchDec) columnData(c *column) ([]byte, error) {
	if c.codec == codecRaw {
		return c.data, nil
	}
	n, _, err := frameSize(c.data, MaxPayload-bd.inflated, true)
	if err != nil {
		return nil, fmt.Errorf("%w: column %s: %v", errColumns, c.name, err)
	}
	if err := bd.budget.charge(n, "column "+string(c.name)); err != nil {
		return nil, fmt.Errorf("%w: %v", errColumns, err)
	}
	if bd.zd == nil {
		if bd.zd, err = newDecoder(MaxPayload); err != nil {
			return nil, err
		}
	}
	if cap(bd.arena)-len(bd.arena) < n {
		bd.arena = make([]byte, 0, max(2*cap(bd.arena), n))
	}
	at := len(bd.arena)
	out, err := inflateInto(bd.zd, bd.arena[at:at:at+n], c.data, true)
	if err != nil {
		return nil, fmt.Errorf("%w: column %s: %v", errColumns, c.name, err)
	}
	bd.arena, bd.inflated = bd.arena[:at+n], bd.inflated+n
	c.data, c.codec = out, codecRaw
	return out, nil
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
	v, _, err := bd.intColumnInfo(cols, name, n)
	return v, err
}

// intColumnInfo is intColumn that also says how the values were stored.
func (bd *batchDec) intColumnInfo(cols []column, name string, n int) ([]int64, deltaInfo, error) {
	bd.ints = grow(bd.ints, n)
	c := findColumn(cols, "", name)
	if c == nil {
		return nil, deltaInfo{}, fmt.Errorf("%w: no %s column", errColumns, name)
	}
	if c.kind != kindInt {
		return nil, deltaInfo{}, fmt.Errorf("%w: column %s of kind %d, want %d", errColumns, name, c.kind, kindInt)
	}
	data, err := bd.columnData(c)
	if err != nil {
		return nil, deltaInfo{}, err
	}
	d := &colDec{b: data}
	info := readDeltas(d, bd.v2, bd.ints, nil)
	d.done("an int column")
	if d.err != nil {
		return nil, deltaInfo{}, fmt.Errorf("column %s: %w", name, d.err)
	}
	return bd.ints, info, nil
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
