// SPDX-License-Identifier: Apache-2.0

package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendValue: figures come out as strconv.FormatFloat(v, 'f', -1,
// 64) writes them, whether they are decimals appendValue formats itself
// (rounded to 0 to 9 places, of up to 15 digits and beyond) or others it
// leaves to strconv, whatever decimals the column had before.
func TestAppendValue(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, -0.05, 2400.5, 1699.999, 37.1234, 1e-9, -1e-9, 123456789012345,
		999999999999999, 1e15, 1e15 + 1, 99999999.9999999, 0.1 + 0.2, math.Pi, 1e300, -1e-300,
		math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 12345.678901234}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		d := r.IntN(11)
		k := r.Int64N(1<<53) >> r.IntN(53)
		if r.IntN(2) == 0 {
			k = -k
		}
		vals = append(vals, float64(k)/math.Pow(10, float64(d)), r.NormFloat64()*math.Pow(10, float64(r.IntN(30)-10)))
	}
	for _, v := range vals {
		want := strconv.FormatFloat(v, 'f', -1, 64)
		for _, hint := range []int{0, 3, 9, -1} {
			h := hint
			if got := string(appendValue([]byte("x,"), v, &h)); got != "x,"+want {
				t.Fatalf("%v (%b) with decimals %d: %q, want %q", v, math.Float64bits(v), hint, got, "x,"+want)
			}
		}
	}
}

// TestAppendInts: integers and registers come out as strconv and fmt
// write them.
func TestAppendInts(t *testing.T) {
	for _, k := range []int64{0, 1, -1, 9, 10, 99, 100, -100, 9999, 10000, 123456789, math.MaxInt32, -math.MaxInt32, math.MaxInt64, math.MinInt64} {
		if got, want := string(appendDecimal(nil, k, 0)), strconv.FormatInt(k, 10); got != want {
			t.Errorf("%d: %q, want %q", k, got, want)
		}
	}
	for _, u := range []uint64{0, 1, 0xf, 0x10, 0x80002e17, 0x1c000000, math.MaxUint64} {
		if got, want := string(appendHex(nil, u)), fmt.Sprintf("0x%x", u); got != want {
			t.Errorf("%#x: %q, want %q", u, got, want)
		}
	}
}

// TestAppendField: text fields are quoted as encoding/csv quotes them.
func TestAppendField(t *testing.T) {
	for _, s := range []string{"", "P", "LP-E", "a,b", `say "hi"`, "line\nbreak", "cr\r", " lead", "\tlead", `\.`, `\.x`,
		"\u00a0nbsp", "trail ", "é", `"`, "\u2028"} {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		w.Write([]string{"x", s})
		w.Flush()
		got := append(appendField([]byte("x,"), s), '\n')
		if string(got) != want.String() {
			t.Errorf("%q: %q, want %q", s, got, want.String())
		}
	}
}
