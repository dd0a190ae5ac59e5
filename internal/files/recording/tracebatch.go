// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"fmt"
	"math"
	"slices"
)

// Trace batches as columns (docs/recording-format.md, "Columnar
// batches"): one row per kernel MSR write.

// encodeTrace returns the columnar payload of a trace record.
func (e *batchEnc) encodeTrace(t Trace) ([]byte, error) {
	ev := t.Events
	n := len(ev)
	if n > maxBatchRows {
		return nil, fmt.Errorf("recording: trace batch of %d events: %w", n, errTooLarge)
	}
	e.reset()
	e.uvarint(uint64(t.Run))
	e.uvarint(t.Lost)
	// An emulated machine's writes add two columns (format 2.1).
	emulated := slices.ContainsFunc(ev, func(x TraceEvent) bool { return x.Emulated })
	if emulated {
		e.table(n, 9)
	} else {
		e.table(n, 7)
	}
	e.ints("time_ns", n, 1, func(i int) int64 { return ev[i].TimeNs })
	e.ints("cpu", n, 1, func(i int) int64 { return int64(ev[i].CPU) })
	e.ints("pid", n, 1, func(i int) int64 { return int64(ev[i].PID) })
	e.strings("comm", n, func(i int) string { return ev[i].Comm })
	e.ints("msr", n, 1, func(i int) int64 { return int64(ev[i].MSR) })
	e.uint64s("value", n, 1, func(i int) (uint64, bool) { return ev[i].Value, true })
	e.bools("failed", n, func(i int) bool { return ev[i].Failed })
	if emulated {
		e.bools("emulated", n, func(i int) bool { return ev[i].Emulated })
		e.uint64s("old", n, 1, func(i int) (uint64, bool) { return ev[i].Old, ev[i].Emulated })
	}
	return e.b, nil
}

// decodeTrace decodes a columnar trace payload.
func (bd *batchDec) decodeTrace(p []byte) (Trace, error) {
	d := &colDec{b: p}
	t := Trace{Run: d.count(maxInt32, "run id"), Lost: d.uvarint()}
	var n int
	bd.arena, bd.inflated = bd.arena[:0], 0
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
