// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"reflect"
	"strconv"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// writeLog keeps a run's traced register writes up to a limit, with the
// value each one replaced, and the power limits they set.
type writeLog struct {
	start   int64
	limit   int
	ctx     regs.Context
	pkgOf   map[int]int
	last    map[regKey]uint64 // each register's value after the writes so far
	kept    []keptWrite
	dropped int
	limits  []PowerLimit
}

// keptWrite is a write kept, decoded when the run is finished.
type keptWrite struct {
	e     recording.TraceEvent
	old   uint64
	known bool // old is known
}

func newWriteLog(m recording.Meta, start int64, limit int) writeLog {
	ctx := regs.Context{regs.CPUSignature: regs.Signature(uint32(m.Host.Family), uint32(m.Host.Model))}
	return writeLog{start: start, limit: limit, ctx: ctx, pkgOf: map[int]int{}, last: map[regKey]uint64{}}
}

// setBefore takes the registers' values and the power limits the run
// started with from its snapshot.
func (w *writeLog) setBefore(s snapInfo) {
	for k, v := range s.regs {
		if _, ok := w.last[k]; !ok {
			w.last[k] = v
		}
	}
	w.pkgOf = s.pkgOf
	if s.units != nil {
		w.ctx[rapl.MSR_RAPL_POWER_UNIT] = *s.units
	}
	if s.pl1 != nil || s.pl2 != nil {
		w.limits = append(w.limits, PowerLimit{T: 0, PL1W: s.pl1, PL2W: s.pl2, Source: "snapshot"})
	}
}

// key is the register a write went to: the CPU's, or its package's for a
// package-scope register.
func (w *writeLog) key(cpu int, msr uint32) regKey {
	if r, ok := regs.ByAddress(msr); ok && r.Scope == regs.Package {
		return regKey{-1 - w.pkgOf[cpu], msr}
	}
	return regKey{cpu, msr}
}

func (w *writeLog) add(evs []recording.TraceEvent) {
	for _, e := range evs {
		k := w.key(e.CPU, e.MSR)
		old, known := w.last[k]
		if e.Emulated {
			old, known = e.Old, true
		}
		if !e.Failed {
			w.last[k] = e.Value
			if e.MSR == rapl.MSR_PKG_POWER_LIMIT {
				w.addLimit(e)
			}
		}
		if len(w.kept) >= w.limit {
			w.dropped++
			continue
		}
		w.kept = append(w.kept, keptWrite{e: e, old: old, known: known})
	}
}

// addLimit adds a step of the power limits for a write of
// MSR_PKG_POWER_LIMIT, decoded with the snapshot's RAPL units (the
// default units, as regs assumes them, when it had none).
func (w *writeLog) addLimit(e recording.TraceEvent) {
	if len(w.limits) >= w.limit {
		return
	}
	u, ok := w.ctx[rapl.MSR_RAPL_POWER_UNIT]
	if !ok {
		u = rapl.DefaultPowerUnitRaw
	}
	l := rapl.DecodePowerLimit(e.Value, rapl.DecodePowerUnit(u))
	pl1, pl2 := l.PL1.Power, l.PL2.Power
	w.limits = append(w.limits, PowerLimit{T: seconds(e.TimeNs - w.start), PL1W: &pl1, PL2W: &pl2, Source: "write"})
}

// writes decodes the kept writes; typeOf names a CPU's core type.
func (w *writeLog) writes(typeOf func(cpu int) string) []Write {
	out := make([]Write, 0, len(w.kept))
	for _, k := range w.kept {
		e := k.e
		wr := Write{T: seconds(e.TimeNs - w.start), CPU: e.CPU, CoreType: typeOf(e.CPU), Register: regName(e.MSR),
			MSR: hexString(uint64(e.MSR)), New: hexString(e.Value), Comm: e.Comm, PID: e.PID,
			Emulated: e.Emulated, Failed: e.Failed, Fields: []Field{}}
		if k.known {
			wr.Old = hexString(k.old)
		}
		if r, ok := regs.ByAddress(e.MSR); ok {
			d := r.Decode(e.Value, w.ctx)
			wr.Text = d.Summary
			var od regs.Decoded
			if k.known {
				od = r.Decode(k.old, w.ctx)
			}
			for _, f := range d.Fields {
				fd := Field{Name: f.Name, New: f.Value}
				if ov, ok := od.Field(f.Name); ok {
					fd.Old, fd.Changed = ov, !reflect.DeepEqual(ov, f.Value)
				}
				wr.Fields = append(wr.Fields, fd)
			}
		}
		out = append(out, wr)
	}
	return out
}

func hexString(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// seconds converts ns to seconds, rounded to the microsecond.
func seconds(ns int64) float64 { return float64(ns/1000) / 1e6 }
