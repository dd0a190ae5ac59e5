// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/klauspost/compress/zstd"
)

// Columnar payloads (encodings 3 and 4; 2 in format 2.x;
// docs/recording-format.md "Columnar batches"): a batch is a few tables,
// each a row count and named, typed columns, every column's data behind
// its length so that a reader skips columns it does not know. This file
// builds them (colEnc); coldec.go reads them, deltas.go holds the
// integers' delta coding both ways.

// Column kinds.
const (
	kindInt    = 1 // signed integers, deltas (deltas.go)
	kindUint64 = 2 // optional uint64 (registers): presence, then wrapping deltas
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

// Column codecs (encoding 3): how a column's data are stored.
const (
	codecRaw  = 0 // as they are
	codecZstd = 1 // as one zstd frame that declares its content size
)

// colEnc builds a columnar payload.
type colEnc struct {
	b      []byte    // the payload, every column raw
	col    []byte    // the column being built
	alt    []byte    // the column's deltas with another period
	vals   []uint64  // the column's values with a value, as uint64
	spans  []colSpan // the columns in b
	packed []byte    // the payload with columns compressed (pack)
	z      []byte    // a compressed column
}

// colSpan is where a column's codec byte, data and end lie in a payload.
type colSpan struct{ codec, data, end int }

// reset starts a new payload.
func (e *colEnc) reset() { e.b, e.spans = e.b[:0], e.spans[:0] }

// pack returns the payload with every column of at least compressMin
// bytes that zstd makes smaller stored compressed (codec 1), valid until
// the next call: a reader inflates only the columns it decodes.
func (e *colEnc) pack(z *zstd.Encoder) []byte {
	out, from := e.packed[:0], 0
	for _, s := range e.spans {
		out = append(out, e.b[from:s.codec]...)
		from = s.end
		if data := e.b[s.data:s.end]; len(data) >= compressMin {
			if e.z = z.EncodeAll(data, e.z[:0]); len(e.z) < len(data) {
				out = append(out, codecZstd)
				out = binary.AppendUvarint(out, uint64(len(e.z)))
				out = append(out, e.z...)
				continue
			}
		}
		out = append(out, e.b[s.codec:s.end]...)
	}
	e.packed = append(out, e.b[from:]...)
	return e.packed
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

// unpacked returns the payload without the columns' codec bytes
// (encoding 4), valid until the next call.
func (e *colEnc) unpacked() []byte {
	out, from := e.packed[:0], 0
	for _, s := range e.spans {
		out = append(out, e.b[from:s.codec]...)
		from = s.codec + 1
	}
	e.packed = append(out, e.b[from:]...)
	return e.packed
}

// endColumn appends the column built in e.col, raw.
func (e *colEnc) endColumn(name string, kind byte) {
	e.str(name)
	e.b = append(e.b, kind)
	at := len(e.b)
	e.b = append(e.b, codecRaw)
	e.uvarint(uint64(len(e.col)))
	e.spans = append(e.spans, colSpan{at, len(e.b), len(e.b) + len(e.col)})
	e.b = append(e.b, e.col...)
	e.col = e.col[:0]
}

// ints appends an integer column of n rows, row i being v(i), whose
// deltas take period rows (1 or the rows of a sample) if that is shorter.
func (e *colEnc) ints(name string, n, period int, v func(int) int64) {
	e.vals = e.vals[:0]
	for i := range n {
		e.vals = append(e.vals, uint64(v(i)))
	}
	e.deltas(period)
	e.endColumn(name, kindInt)
}

// deltas appends to e.col the values in e.vals as deltas (appendDeltas)
// with the period given unless 1 gives fewer bytes (at equal length,
// unchanged values decode faster from the sample before).
func (e *colEnc) deltas(period int) {
	start := len(e.col)
	e.col = appendDeltas(e.col, e.vals, 1)
	if period <= 1 || period >= len(e.vals) {
		return
	}
	e.alt = appendDeltas(e.alt[:0], e.vals, period)
	if len(e.alt) <= len(e.col)-start {
		e.col = append(e.col[:start], e.alt...)
	}
}

// periodOf returns the period of an optional column of n rows, of which
// the rows of one sample are rowsPer: how many of a sample's rows have a
// value when every sample has as many (so that a value's delta is taken
// from the same row of the sample before), or else 1.
func periodOf(n, rowsPer int, ok func(int) bool) int {
	if rowsPer <= 1 || n%rowsPer != 0 || n == rowsPer {
		return 1
	}
	per := -1
	for lo := 0; lo < n; lo += rowsPer {
		k := 0
		for i := lo; i < lo+rowsPer; i++ {
			if ok(i) {
				k++
			}
		}
		if per >= 0 && k != per {
			return 1
		}
		per = k
	}
	return max(per, 1)
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

// uint64s appends an optional uint64 column of n rows, of which a
// sample's are rowsPer (1 when that does not apply).
func (e *colEnc) uint64s(name string, n, rowsPer int, v func(int) (uint64, bool)) {
	ok := func(i int) bool { _, ok := v(i); return ok }
	e.presence(n, ok)
	e.vals = e.vals[:0]
	for i := range n {
		if x, ok := v(i); ok {
			e.vals = append(e.vals, x)
		}
	}
	e.deltas(periodOf(n, rowsPer, ok))
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

// floats appends an optional float column of n rows, of which a
// sample's are rowsPer (1 when that does not apply): as decimal integers
// with the fewest decimals that give every value back bit for bit, or
// else as float64 bits. A value that is not Valid is absent.
func (e *colEnc) floats(name string, n, rowsPer int, v func(int) Value) {
	ok := func(i int) bool { return v(i).Valid() }
	e.presence(n, ok)
	period := periodOf(n, rowsPer, ok)
	exp := decimals(n, v)
	e.vals = e.vals[:0]
	for i := range n {
		if x := v(i); x.Valid() && exp < 0 {
			e.vals = append(e.vals, math.Float64bits(float64(x)))
		} else if x.Valid() {
			e.vals = append(e.vals, uint64(int64(math.Round(float64(x)*pow10[exp]))))
		}
	}
	if exp < 0 {
		e.col = append(e.col, floatBits)
		e.xors(period)
	} else {
		e.col = append(e.col, floatDecimal, byte(exp))
		e.deltas(period)
	}
	e.endColumn(name, kindFloat)
}

// xors appends to e.col the float64 bits in e.vals as a period and each
// value's bits XOR those of the value period values before (of the value
// before for the first period values, 0 for the first), 8 bytes little
// endian. It takes the period given unless 1 leaves more zero bytes.
func (e *colEnc) xors(period int) {
	if period <= 1 || period >= len(e.vals) || zeroBytes(e.vals, period) < zeroBytes(e.vals, 1) {
		period = 1
	}
	e.col = binary.AppendUvarint(e.col, uint64(period))
	var prev uint64
	for i, x := range e.vals {
		if i >= period {
			prev = e.vals[i-period]
		}
		e.col = binary.LittleEndian.AppendUint64(e.col, x^prev)
		prev = x
	}
}

// zeroBytes counts the zero bytes of xs XORed with the period.
func zeroBytes(xs []uint64, period int) int {
	n := 0
	var prev uint64
	for i, x := range xs {
		if i >= period {
			prev = xs[i-period]
		}
		d := x ^ prev
		for ; d != 0; d >>= 8 {
			if d&0xff == 0 {
				n++
			}
		}
		n += 8 - (bits.Len64(x^prev)+7)/8
		prev = x
	}
	return n
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
