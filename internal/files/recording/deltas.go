// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"encoding/binary"
	"math/bits"
)

// Delta-encoded values, the integers of columnar batches
// (docs/recording-format.md, "Columnar batches"): the encoder picks a
// period and a form, the decoder reads them back.

// Forms of delta-encoded values.
const (
	formDense  = 0 // a zigzag varint per value
	formSparse = 1 // the deltas that are not 0, each behind the count of zero deltas before it
)

// appendDeltas appends xs as deltas (docs/recording-format.md, "Columnar
// batches"): period times 2 plus the form, then in the form that takes
// fewer bytes (dense at equal length) each value minus the one period
// values before it, the first period values minus the value before them,
// the first minus 0: dense, every delta; sparse, those that are not 0.
func appendDeltas(b []byte, xs []uint64, period int) []byte {
	delta := func(i int) int64 {
		switch {
		case i >= period:
			return int64(xs[i] - xs[i-period])
		case i > 0:
			return int64(xs[i] - xs[i-1])
		}
		return int64(xs[0])
	}
	dense, sparse, changes, skip := 0, 0, 0, 0
	for i := range xs {
		d := delta(i)
		dense += varintLen(d)
		if d == 0 {
			skip++
			continue
		}
		sparse += uvarintLen(uint64(skip)) + varintLen(d)
		changes, skip = changes+1, 0
	}
	if sparse += uvarintLen(uint64(changes)); sparse >= dense {
		b = binary.AppendUvarint(b, uint64(period)<<1|formDense)
		for i := range xs {
			b = binary.AppendVarint(b, delta(i))
		}
		return b
	}
	b = binary.AppendUvarint(b, uint64(period)<<1|formSparse)
	b, skip = binary.AppendUvarint(b, uint64(changes)), 0
	for i := range xs {
		if d := delta(i); d != 0 {
			b = binary.AppendUvarint(b, uint64(skip))
			b, skip = binary.AppendVarint(b, d), 0
		} else {
			skip++
		}
	}
	return b
}

func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

func varintLen(x int64) int { return uvarintLen(uint64(x<<1) ^ uint64(x>>63)) }

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

// stopBits are the continuation bits of 8 varint bytes.
const stopBits = 0x8080808080808080
