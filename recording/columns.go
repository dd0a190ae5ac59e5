package recording

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Columnar payloads (encoding 2, docs/recording-format.md "Columnar
// batches"): a batch is a few tables, each a row count and named, typed
// columns, every column's data behind its length so that a reader skips
// columns it does not know.

// Column kinds.
const (
	kindInt    = 1 // signed integers, delta-encoded zigzag varints
	kindUint64 = 2 // optional uint64 (registers): presence, then wrapping deltas as zigzag varints
	kindString = 3 // dictionary of strings, then an index per row
	kindFloat  = 4 // optional float: presence, then scaled decimal integers or float64 bits
	kindBool   = 5 // bitmap
)

// Presence modes of optional columns.
const (
	presentAll    = 0
	presentNone   = 1
	presentBitmap = 2
)

// Float representations.
const (
	floatDecimal = 0 // value = integer / 10^exp, integers delta-encoded
	floatBits    = 1 // float64 bits, each XORed with the previous value's, 8 bytes LE
)

// maxDecimals is the largest decimal exponent of floatDecimal.
const maxDecimals = 9

// Limits on a batch, so that a reader's memory stays bounded by them
// whatever a payload claims: rows of one table, and figure and register
// cells of the whole batch. The writer splits batches that exceed them.
const (
	maxBatchRows  = 1 << 18
	maxBatchCells = 1 << 22
)

var pow10 = [maxDecimals + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// colEnc builds a columnar payload.
type colEnc struct {
	b   []byte // the payload
	col []byte // the column being built
}

func (e *colEnc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *colEnc) str(s string) {
	e.uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *colEnc) strs(ss []string) {
	e.uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

// table starts a table of n rows and ncols columns.
func (e *colEnc) table(n, ncols int) {
	e.uvarint(uint64(n))
	e.uvarint(uint64(ncols))
}

// endColumn appends the column built in e.col.
func (e *colEnc) endColumn(name string, kind byte) {
	e.str(name)
	e.b = append(e.b, kind)
	e.uvarint(uint64(len(e.col)))
	e.b = append(e.b, e.col...)
	e.col = e.col[:0]
}

// ints appends an integer column of n rows, row i being v(i).
func (e *colEnc) ints(name string, n int, v func(int) int64) {
	prev := int64(0)
	for i := range n {
		x := v(i)
		e.col = binary.AppendVarint(e.col, x-prev)
		prev = x
	}
	e.endColumn(name, kindInt)
}

// presence appends the presence of n rows to e.col.
func (e *colEnc) presence(n int, ok func(int) bool) {
	all, none := true, true
	for i := range n {
		if ok(i) {
			none = false
		} else {
			all = false
		}
	}
	switch {
	case all:
		e.col = append(e.col, presentAll)
	case none:
		e.col = append(e.col, presentNone)
	default:
		e.col = append(e.col, presentBitmap)
		e.col = appendBitmap(e.col, n, ok)
	}
}

func appendBitmap(b []byte, n int, bit func(int) bool) []byte {
	for i := 0; i < n; i += 8 {
		var x byte
		for j := 0; j < 8 && i+j < n; j++ {
			if bit(i + j) {
				x |= 1 << j
			}
		}
		b = append(b, x)
	}
	return b
}

// uint64s appends an optional uint64 column.
func (e *colEnc) uint64s(name string, n int, v func(int) (uint64, bool)) {
	e.presence(n, func(i int) bool { _, ok := v(i); return ok })
	prev := uint64(0)
	for i := range n {
		if x, ok := v(i); ok {
			e.col = binary.AppendVarint(e.col, int64(x-prev))
			prev = x
		}
	}
	e.endColumn(name, kindUint64)
}

// strings appends a dictionary-encoded string column.
func (e *colEnc) strings(name string, n int, v func(int) string) {
	var dict []string
	idx := map[string]int{}
	for i := range n {
		if _, ok := idx[v(i)]; !ok {
			idx[v(i)] = len(dict)
			dict = append(dict, v(i))
		}
	}
	e.col = binary.AppendUvarint(e.col, uint64(len(dict)))
	for _, s := range dict {
		e.col = binary.AppendUvarint(e.col, uint64(len(s)))
		e.col = append(e.col, s...)
	}
	for i := range n {
		e.col = binary.AppendUvarint(e.col, uint64(idx[v(i)]))
	}
	e.endColumn(name, kindString)
}

// bools appends a bitmap column.
func (e *colEnc) bools(name string, n int, v func(int) bool) {
	e.col = appendBitmap(e.col, n, v)
	e.endColumn(name, kindBool)
}

// floats appends an optional float column: as decimal integers with the
// fewest decimals that give every value back bit for bit, or else as
// float64 bits. A value that is not Valid is absent.
func (e *colEnc) floats(name string, n int, v func(int) Value) {
	e.presence(n, func(i int) bool { return v(i).Valid() })
	exp := decimals(n, v)
	if exp < 0 {
		e.col = append(e.col, floatBits)
		prev := uint64(0)
		for i := range n {
			if x := v(i); x.Valid() {
				bits := math.Float64bits(float64(x))
				e.col = binary.LittleEndian.AppendUint64(e.col, bits^prev)
				prev = bits
			}
		}
	} else {
		e.col = append(e.col, floatDecimal, byte(exp))
		prev := int64(0)
		for i := range n {
			if x := v(i); x.Valid() {
				s := int64(math.Round(float64(x) * pow10[exp]))
				e.col = binary.AppendVarint(e.col, s-prev)
				prev = s
			}
		}
	}
	e.endColumn(name, kindFloat)
}

// decimals returns the fewest decimals (0 to maxDecimals) with which every
// valid value is an integer divided by 10^decimals exactly, or -1.
func decimals(n int, v func(int) Value) int {
	exp := 0
	for i := 0; i < n; i++ {
		x := v(i)
		if !x.Valid() {
			continue
		}
		for !exactDecimal(float64(x), exp) {
			if exp++; exp > maxDecimals {
				return -1
			}
		}
	}
	return exp
}

// exactDecimal reports whether the integer round(x*10^exp), divided by
// 10^exp as a reader does, gives x back bit for bit (-0 does not).
func exactDecimal(x float64, exp int) bool {
	s := math.Round(x * pow10[exp])
	if math.Abs(s) > 1<<53 {
		return false
	}
	return math.Float64bits(float64(int64(s))/pow10[exp]) == math.Float64bits(x)
}

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

// column is one column of a table as read: its data not yet decoded. Its
// name is the payload's bytes (no allocation per column).
type column struct {
	name []byte
	kind byte
	data []byte
}

// is reports whether the column is named prefix+name.
func (c *column) is(prefix, name string) bool {
	return len(c.name) == len(prefix)+len(name) && string(c.name[:len(prefix)]) == prefix && string(c.name[len(prefix):]) == name
}

// table reads a table's row count and columns, appending them to cols.
func (d *colDec) table(cols []column) (int, []column) {
	n := d.count(maxBatchRows, "rows")
	ncols := d.count(len(d.b), "columns")
	for range ncols {
		c := column{name: d.bytes(d.count(len(d.b), "name bytes"))}
		c.kind = d.byte1()
		c.data = d.bytes(d.count(len(d.b), "column bytes"))
		cols = append(cols, c)
	}
	return n, cols
}
