// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/zstd"
)

// bitsCmp compares Values bit for bit (so -0 differs from 0), all NaNs
// equal.
var bitsCmp = cmp.Comparer(func(a, b Value) bool {
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) || (math.IsNaN(float64(a)) && math.IsNaN(float64(b)))
})

// TestColumnarRoundTrip: sample and trace batches come back from the
// columnar encoding exactly: every float bit for bit, NA as NA, 64-bit
// registers, absent registers absent.
func TestColumnarRoundTrip(t *testing.T) {
	negZero := Value(math.Copysign(0, -1))
	s := Samples{Run: 7, CPUColumns: []string{"Avg_MHz", "Busy%", "IPC", "Odd"}, PackageColumns: []string{"PkgWatt"},
		Samples: []Sample{
			{TimeNs: 1_700_000_000_100_000_000, IntervalNs: 100_000_000,
				CPUs: []CPURow{
					{CPU: 0, Core: 0, CoreType: "P", Values: []Value{2400.123, 37.25, NA(), 1e300}, Regs: []Reg{{0x774, bigReg}, {0x1b0, 6}}},
					{CPU: 1, Core: 1, Package: 1, CoreType: "LP-E", Values: []Value{800, 0, 1.5, negZero}, Regs: []Reg{{0x1b0, 7}}},
					{CPU: 2, Core: -1, Values: []Value{-5.5, 100, 2.25, Value(math.Pi)}},
				},
				Packages:  []PackageRow{{Package: 0, Values: []Value{12.75}, Regs: []Reg{{0x64F, 0x1c000000}}}, {Package: 1, Values: []Value{NA()}}},
				Summaries: []SummaryRow{{Type: "all", CPUs: 3, Values: []Value{1600.25, 18.625, 1.5, NA()}, PackageValues: []Value{12.75}}}},
			{TimeNs: 1_700_000_000_200_000_000, IntervalNs: 99_999_999},
			{TimeNs: 1_700_000_000_300_000_000, IntervalNs: 100_000_001,
				CPUs: []CPURow{{CPU: 0, Values: []Value{2400.124, NA(), NA(), NA()}, Regs: []Reg{{0x774, 0}}}}},
		}}
	tr := Trace{Run: 7, Lost: 3, Events: []TraceEvent{
		{TimeNs: 1_700_000_000_050_000_000, CPU: 1, PID: 12, Comm: "kworker/1:1", MSR: 0x774, Value: bigReg},
		{TimeNs: 1_700_000_000_040_000_000, CPU: 0, PID: 0, Comm: "swapper/0", MSR: 0xC00102B3, Value: 6, Failed: true},
		{TimeNs: 1_700_000_000_060_000_000, CPU: 0, PID: 12, Comm: "kworker/1:1", MSR: 0x1b0, Value: 0},
	}}
	// An emulated machine's writes (format 2.1) beside the kernel's: old 0
	// is kept apart from no old value.
	emu := Trace{Run: 7, Events: []TraceEvent{
		{TimeNs: 1_700_000_000_050_000_000, CPU: 1, PID: 12, Comm: "kworker/1:1", MSR: 0x774, Value: bigReg},
		{TimeNs: 1_700_000_000_070_000_000, CPU: 13, PID: 4242, Comm: "sh", MSR: 0x774, Value: 0x3e3e, Old: bigReg, Emulated: true},
		{TimeNs: 1_700_000_000_080_000_000, CPU: 0, PID: 4242, Comm: "sh", MSR: 0x610, Value: 0x42, Old: 0, Emulated: true},
	}}
	z, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, r := range []Record{s, tr, emu, steadySamples(), Samples{Run: 1}, Trace{Run: 1}} {
		var e batchEnc
		var err error
		switch r := r.(type) {
		case Samples:
			_, err = e.encodeSamples(r)
		case Trace:
			_, err = e.encodeTrace(r)
		}
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		// The three forms of a payload: every column raw behind its codec
		// byte, compressed columns (encoding 3), no codec bytes (encoding 4).
		forms := []struct {
			name    string
			p       []byte
			packed  bool
			inflate bool
		}{
			{"raw", bytes.Clone(e.b), true, false},
			{"packed", bytes.Clone(e.pack(z)), true, true},
			{"unpacked", bytes.Clone(e.unpacked()), false, false},
		}
		for _, f := range forms {
			bd := &batchDec{packed: f.packed}
			var got Record
			if _, ok := r.(Samples); ok {
				got, err = bd.decodeSamples(f.p, PartRows)
			} else {
				got, err = bd.decodeTrace(f.p)
			}
			if err != nil {
				t.Fatalf("%T %s: %v", r, f.name, err)
			}
			if diff := cmp.Diff(r, got, bitsCmp, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Samples{}, "SameCPUs")); diff != "" {
				t.Errorf("%T %s (-want +got):\n%s", r, f.name, diff)
			}
			// Of these batches only the steady one has the same CPUs
			// in every sample.
			if g, ok := got.(Samples); ok && g.SameCPUs != (g.Run == steadySamples().Run) {
				t.Errorf("%s: batch of run %d: SameCPUs %v", f.name, g.Run, g.SameCPUs)
			}
		}
	}
}

// steadySamples are ten samples of the same four CPUs, their registers
// unchanged but for one, their figures wandering, some missing in every
// sample alike, some as float64 bits: the encoder takes a period of four
// rows for their columns.
func steadySamples() Samples {
	s := Samples{Run: 2, CPUColumns: []string{"Avg_MHz", "Odd", "Gappy"}, PackageColumns: []string{"PkgWatt"}}
	for k := range 10 {
		x := Sample{TimeNs: int64(k) * 100_000_000, IntervalNs: 100_000_000}
		for c := range 4 {
			row := CPURow{CPU: c, Core: c / 2, CoreType: "P",
				Values: []Value{Value(800 + 400*c + k), Value(math.Pi * float64(c+k)), NA()},
				Regs:   []Reg{{0x774, bigReg + uint64(c)}, {0x1b0, 6}}}
			if c%2 == 0 {
				row.Values[2] = Value(c + k)
			}
			if c == 3 && k > 5 {
				row.Regs[0].Value = 0x80002020
			}
			x.CPUs = append(x.CPUs, row)
		}
		x.Packages = []PackageRow{{Package: 0, Values: []Value{Value(10 + k)}, Regs: []Reg{{0x64F, uint64(k)}}}}
		s.Samples = append(s.Samples, x)
	}
	return s
}

// TestDecimals: a column is stored as integers with the fewest decimals
// that give every value back, or as float64 bits.
func TestDecimals(t *testing.T) {
	tests := []struct {
		vals []Value
		want int
	}{
		{[]Value{1, 2, NA(), 3000}, 0},
		{[]Value{2400.123, 800.5}, 3},
		{[]Value{Value(37.123456789).Round(4), 0.0001}, 4},
		{[]Value{0.1, Value(math.Pi)}, -1},
		{[]Value{Value(math.Copysign(0, -1))}, -1},
		{[]Value{1 << 60}, -1},
		{[]Value{NA()}, 0},
	}
	for _, tt := range tests {
		if got := decimals(len(tt.vals), func(i int) Value { return tt.vals[i] }); got != tt.want {
			t.Errorf("%v: %d decimals, want %d", tt.vals, got, tt.want)
		}
	}
}

// TestVarints: the decoder's fast paths agree with encoding/binary on
// varints of every length, at every position near the end of the data.
func TestVarints(t *testing.T) {
	var want []int64
	var b []byte
	prev := int64(0)
	vals := []int64{0, 1, -1, 63, -64, 64, 1 << 20, -(1 << 27), 1 << 34, 1 << 48, 1 << 55, -(1 << 56), math.MaxInt64, math.MinInt64, 5}
	for i := range 40 { // runs of one-byte deltas, some zero
		vals = append(vals, 5+int64(i%7)-int64(i%3)*int64(i/20))
	}
	for range 17 { // a run of no change
		vals = append(vals, 7)
	}
	for _, v := range vals {
		b = binary.AppendVarint(b, v-prev)
		prev = v
		want = append(want, v)
	}
	for cut := range len(b) + 1 {
		got := make([]int64, len(want))
		n := 0
		for k := range want {
			if _, ok := varints(b[:cut], got[:k+1]); ok {
				n = k + 1
			}
		}
		if diff := cmp.Diff(want[:n], got[:n]); diff != "" {
			t.Errorf("cut at %d (-want +got):\n%s", cut, diff)
		}
		if rest, ok := varints(b, got); !ok || len(rest) != 0 || !cmp.Equal(want, got) {
			t.Fatalf("whole: ok %v, %d bytes left, %v", ok, len(rest), got)
		}
	}
}

// TestPeriods: the encoder takes a CPU's row in the sample before as the
// base of a delta where every sample has as many rows (with a value),
// unless the row before gives fewer bytes.
func TestPeriods(t *testing.T) {
	var e batchEnc
	if _, err := e.encodeSamples(steadySamples()); err != nil {
		t.Fatal(err)
	}
	d := &colDec{b: e.b}
	d.count(maxInt32, "run")
	var bd batchDec
	bd.columnNames(d, 0)
	bd.columnNames(d, 1)
	got := map[string]uint64{}
	for table := range 4 {
		n, cols := d.table(nil, true)
		for _, c := range cols {
			cd := &colDec{b: c.data}
			switch c.kind {
			case kindUint64:
				readPresence(cd, n)
			case kindFloat:
				if readPresence(cd, n); cd.byte1() != floatDecimal {
					continue // float64 bits: the period that leaves more zero bytes
				}
				cd.byte1()
			case kindInt:
			default:
				continue
			}
			got[fmt.Sprintf("%d %s", table, c.name)] = cd.uvarint() >> 1
		}
	}
	want := map[string]uint64{
		"0 time_ns": 1, "0 interval_ns": 1, "0 cpus": 1, "0 packages": 1, "0 summaries": 1,
		"1 cpu": 4, "1 core": 4, "1 v:Avg_MHz": 4, "1 v:Gappy": 2, "1 r:0x774": 4,
		// The same value in every row: one change, whatever the period.
		"1 package": 4, "1 r:0x1b0": 4,
		// One package row a sample: the period is 1.
		"2 package": 1, "2 v:PkgWatt": 1, "2 r:0x64f": 1,
	}
	for k := range got {
		if k[0] == '3' { // no summary rows
			delete(got, k)
		}
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("periods (-want +got):\n%s", diff)
	}
}

// TestPeriodDeltas: deltas taken period values back, dense (with copied
// runs of zero deltas) and sparse, come back as appendDeltas encoded them,
// for periods shorter and longer than a run, runs cut by a change, and
// data cut anywhere (refused, never read past).
func TestPeriodDeltas(t *testing.T) {
	for _, period := range []int{1, 2, 3, 7, 8, 9, 16, 40} {
		for _, wander := range []bool{false, true} {
			var want []uint64
			for i := range 6 * period {
				switch {
				case i < period:
					want = append(want, uint64(i)*0x9E3779B97F4A7C15)
				case i%period == period/2 && i/period == 3: // one change in a steady column
					want = append(want, want[i-period]^0x80<<24)
				case wander || i/period == 5: // samples that wander
					want = append(want, want[i-period]+uint64(i%5))
				default:
					want = append(want, want[i-period])
				}
			}
			b := appendDeltas(nil, want, period)
			h, _ := binary.Uvarint(b)
			if int(h>>1) != period || (h&1 == formSparse) == wander {
				t.Errorf("period %d, wandering %v: encoded as period %d, form %d", period, wander, h>>1, h&1)
			}
			got := make([]uint64, len(want))
			d := &colDec{b: b}
			var changes, wantChanges []int
			info := readDeltas(d, false, got, &changes)
			if diff := cmp.Diff(want, got); d.err != nil || len(d.b) != 0 || diff != "" {
				t.Fatalf("period %d, wandering %v: %v, %d bytes left (-want +got):\n%s", period, wander, d.err, len(d.b), diff)
			}
			for i := period; i < len(want) && info.sparse; i++ {
				if want[i] != want[i-period] {
					wantChanges = append(wantChanges, i)
				}
			}
			if diff := cmp.Diff(wantChanges, changes); diff != "" || info.changes != len(changes) || info.period != period {
				t.Errorf("period %d, wandering %v: %+v, changes (-want +got):\n%s", period, wander, info, diff)
			}
			for cut := range len(b) {
				d := &colDec{b: b[:cut]}
				if readDeltas(d, false, got, nil); d.err == nil {
					t.Errorf("period %d, wandering %v: data cut at %d of %d bytes decoded", period, wander, cut, len(b))
				}
			}
		}
	}
}

// TestColumnsInflateLimit: the compressed columns of one batch inflate to
// at most MaxPayload bytes together, however the decoder's arena grows:
// three columns of 6 MiB each (zstd makes them a few bytes) are refused
// at the third.
func TestColumnsInflateLimit(t *testing.T) {
	z, err := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	frame := z.EncodeAll(make([]byte, 6<<20), nil)
	bd := &batchDec{packed: true}
	for i := range 3 {
		c := &column{name: []byte("v:x"), kind: kindFloat, codec: codecZstd, data: frame}
		_, err := bd.columnData(c)
		if got, want := err != nil, i == 2; got != want {
			t.Fatalf("column %d of 6 MiB: error %v", i+1, err)
		}
		if i == 2 && !errors.Is(err, errColumns) {
			t.Errorf("third column: error %v, want errColumns", err)
		}
	}
}
