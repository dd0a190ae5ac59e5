// SPDX-License-Identifier: Apache-2.0

package export

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// appendField appends s as a field of encoding/csv's Writer (comma,
// no CRLF) would be written: quoted, its quotes doubled, when it holds a
// comma, quote or line break, starts with a space or is `\.`.
func appendField(b []byte, s string) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// needsQuotes is encoding/csv's rule for a comma-separated field.
func needsQuotes(s string) bool {
	switch {
	case s == "":
		return false
	case s == `\.`, strings.ContainsAny(s, ",\"\r\n"):
		return true
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// appendSeconds appends ns nanoseconds in seconds, as strconv formats the
// float.
func appendSeconds(b []byte, ns int64) []byte {
	return strconv.AppendFloat(b, float64(ns)/1e9, 'f', -1, 64)
}

// maxDecimals is the most decimals appendValue tries; pow10 their scales.
const maxDecimals = 9

var pow10 = [maxDecimals + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// appendValue appends v as strconv.FormatFloat(v, 'f', -1, 64) does,
// without its shortest-digits search for the figures hwpprobe records: a
// value that is an integer k of at most 15 digits divided by 10^d (d up
// to 9; the recorder rounds figures so) has k's digits with a decimal
// point as its shortest form, since no other decimal of 15 digits or
// fewer rounds to the same float64. *decimals is the d found last for
// the column, tried first; other values go to strconv.
func appendValue(b []byte, v float64, decimals *int) []byte {
	if k, ok := scaled(v, *decimals); ok {
		return appendDecimal(b, k, *decimals)
	}
	for d := range maxDecimals + 1 {
		if k, ok := scaled(v, d); ok {
			*decimals = d
			return appendDecimal(b, k, d)
		}
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// scaled returns the integer k, of at most 15 digits, for which k / 10^d
// is v bit for bit (so not for -0), and whether there is one.
func scaled(v float64, d int) (int64, bool) {
	if d < 0 || d > maxDecimals {
		return 0, false
	}
	s := math.Round(v * pow10[d])
	if !(math.Abs(s) < 1e15) {
		return 0, false
	}
	k := int64(s)
	return k, math.Float64bits(float64(k)/pow10[d]) == math.Float64bits(v)
}

// appendDecimal appends k / 10^d in decimal, without trailing zeros after
// the point, nor the point when nothing follows it: as strconv would, but
// writing the digits in place, two at a time.
func appendDecimal(b []byte, k int64, d int) []byte {
	u := uint64(k)
	if k < 0 {
		u = -u
	}
	for d > 0 && u%10 == 0 {
		u /= 10
		d--
	}
	ip, fp := u, uint64(0)
	if d > 0 {
		ip, fp = u/uint64(pow10[d]), u%uint64(pow10[d])
	}
	ni := digits(ip)
	size := ni
	if d > 0 {
		size += 1 + d
	}
	if k < 0 {
		size++
	}
	b = slices.Grow(b, size)
	out := b[len(b) : len(b)+size]
	end := size // of the integer part
	if d > 0 {
		end = size - d - 1
		out[end] = '.'
		putDigits(out[end+1:], fp)
	}
	putDigits(out[end-ni:end], ip)
	if k < 0 {
		out[0] = '-'
	}
	return b[:len(b)+size]
}

// pairs are the two-digit numbers 00 to 99.
const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// putDigits writes the last len(out) decimal digits of v into out,
// zero-padded.
func putDigits(out []byte, v uint64) {
	n := len(out)
	for ; n >= 2; n -= 2 {
		q := v / 100
		r := v - q*100
		out[n-2], out[n-1] = pairs[2*r], pairs[2*r+1]
		v = q
	}
	if n == 1 {
		out[0] = '0' + byte(v%10)
	}
}

// digits returns how many decimal digits u has (1 for 0).
func digits(u uint64) int {
	n := 1
	for ; u >= 10000; u /= 10000 {
		n += 4
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// appendHex appends "0x" and u in lower-case hex, as fmt's %#x would.
func appendHex(b []byte, u uint64) []byte {
	n := max(1, (bits.Len64(u)+3)/4)
	b = slices.Grow(b, n+2)
	out := b[len(b) : len(b)+n+2]
	out[0], out[1] = '0', 'x'
	for i := n + 1; i >= 2; i-- {
		out[i] = "0123456789abcdef"[u&15]
		u >>= 4
	}
	return b[:len(b)+n+2]
}
