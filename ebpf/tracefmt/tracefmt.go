// SPDX-License-Identifier: Apache-2.0

// Package tracefmt writes the events of an ebpf.Tracer as text (one line
// per event, decoded with package regs, with what changed since the same
// CPU's previous write of the register) or as JSON lines, and ends with a
// summary per register and CPU and the lost-event count.
package tracefmt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// Writer formats events. It is not safe for concurrent use.
type Writer struct {
	w    *bufio.Writer
	json bool
	// prev holds each (MSR, CPU)'s previous decode, for the changes.
	prev   map[key]regs.Decoded
	counts map[key]*count
	events map[string]int // tracepoint hits by "group:name"
	buf    []byte
}

type key struct {
	msr      uint32
	cpu      uint32
	emulated bool // an emulated machine's write: its CPU numbers are not the host's
}

type count struct {
	writes, failed uint64
	last           uint64
}

// New returns a Writer to w, of JSON lines when jsonLines is set.
func New(w io.Writer, jsonLines bool) *Writer {
	return &Writer{
		w: bufio.NewWriter(w), json: jsonLines,
		prev: map[key]regs.Decoded{}, counts: map[key]*count{}, events: map[string]int{},
	}
}

// Name returns the register's catalog name ("IA32_HWP_REQUEST") or, for a
// register package regs does not know, "MSR_0x6e0".
func Name(msr uint32) string {
	if r, ok := regs.ByAddress(msr); ok {
		return r.Name
	}
	return fmt.Sprintf("MSR_%#x", msr)
}

// Event writes one event.
func (w *Writer) Event(e *ebpf.Event) error {
	if e.Tracepoint != nil {
		return w.tracepoint(e)
	}
	k := key{e.MSR, e.CPU, e.Emulated}
	c := w.counts[k]
	if c == nil {
		c = &count{}
		w.counts[k] = c
	}
	c.writes++
	c.last = e.Value
	if e.Failed {
		c.failed++
	}
	var d regs.Decoded
	r, known := regs.ByAddress(e.MSR)
	if known {
		d = r.Decode(e.Value, nil)
	}
	prev, hadPrev := w.prev[k]
	if known {
		w.prev[k] = d
		if e.Emulated { // the old value is known exactly
			prev, hadPrev = r.Decode(e.Old, nil), true
		}
	}
	if w.json {
		return w.jsonMSR(e, r, d)
	}
	b := w.buf[:0]
	b = appendTime(b, e.TimeNs)
	b = fmt.Appendf(b, " cpu%d %s %s 0x%x", e.CPU, e.Comm, Name(e.MSR), e.Value)
	if known && d.Summary != "" {
		b = append(b, ' ')
		b = append(b, d.Summary...)
	}
	if known && hadPrev {
		b = appendChanges(b, prev, d)
	}
	if e.Failed {
		b = append(b, " #GP"...)
	}
	if e.Emulated {
		b = fmt.Appendf(b, " [emulated, was 0x%x, pid %d]", e.Old, e.PID)
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// appendTime writes CLOCK_MONOTONIC nanoseconds as ftrace prints its
// timestamps: seconds with six decimals.
func appendTime(b []byte, ns uint64) []byte {
	return fmt.Appendf(b, "%d.%06d", ns/1e9, ns%1e9/1e3)
}

// appendChanges writes " (epp 0 -> 128, max 45 -> 46)" for the fields that
// differ from the previous write on this CPU; nothing when none does.
func appendChanges(b []byte, prev, cur regs.Decoded) []byte {
	n := 0
	for _, f := range cur.Fields {
		old, ok := prev.Field(f.Name)
		if !ok || old == f.Value {
			continue
		}
		if n == 0 {
			b = append(b, " ("...)
		} else {
			b = append(b, ", "...)
		}
		n++
		b = fmt.Appendf(b, "%s %v -> %v", f.Name, old, f.Value)
	}
	if n > 0 {
		b = append(b, ')')
	}
	return b
}

// msrJSON is the JSON form of an MSR write: time_ns (CLOCK_MONOTONIC), cpu,
// pid, comm, msr and value (hex strings, as `hwpprobe decode --json`
// writes addresses and raw values), failed, and for registers package regs
// knows, register and the decoded fields. An emulated machine's write has
// emulated true and old, the value before it (pid and comm are then the
// process whose sysfs write caused it).
type msrJSON struct {
	TimeNs   uint64          `json:"time_ns"`
	CPU      uint32          `json:"cpu"`
	PID      uint32          `json:"pid"`
	Comm     string          `json:"comm"`
	MSR      string          `json:"msr"`
	Value    string          `json:"value"`
	Failed   bool            `json:"failed"`
	Emulated bool            `json:"emulated,omitempty"`
	Old      string          `json:"old,omitempty"`
	Register string          `json:"register,omitempty"`
	Fields   json.RawMessage `json:"fields,omitempty"`
}

func (w *Writer) jsonMSR(e *ebpf.Event, r *regs.Register, d regs.Decoded) error {
	j := msrJSON{
		TimeNs: e.TimeNs, CPU: e.CPU, PID: e.PID, Comm: e.Comm,
		MSR: "0x" + strconv.FormatUint(uint64(e.MSR), 16), Value: "0x" + strconv.FormatUint(e.Value, 16),
		Failed: e.Failed, Emulated: e.Emulated,
	}
	if e.Emulated {
		j.Old = "0x" + strconv.FormatUint(e.Old, 16)
	}
	if r != nil {
		j.Register = r.Name
		fields, err := fieldsJSON(d.Fields)
		if err != nil {
			return err
		}
		j.Fields = fields
	}
	return w.writeJSON(j)
}

// fieldsJSON writes fields as one object, in register order.
func fieldsJSON(fields []regs.Field) (json.RawMessage, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.Name)
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
}

// summaryJSON is the JSON form of the summary, the last line.
type summaryJSON struct {
	Summary Summary `json:"summary"`
}

// JSONLines are the forms of a line of the JSON output, one value of
// each Go type, for its schema (docs/schemas/trace.schema.json): a
// register write, another tracepoint's event, the summary.
var JSONLines = []any{msrJSON{}, tracepointJSON{}, summaryJSON{}}

// tracepointJSON is the JSON form of another tracepoint's event: event is
// "group:name", fields as the kernel's format file names them.
type tracepointJSON struct {
	TimeNs uint64          `json:"time_ns"`
	CPU    uint32          `json:"cpu"`
	PID    uint32          `json:"pid"`
	Comm   string          `json:"comm"`
	Event  string          `json:"event"`
	Fields json.RawMessage `json:"fields"`
}

func (w *Writer) tracepoint(e *ebpf.Event) error {
	name := e.Tracepoint.Event()
	w.events[name]++
	fv := e.Fields()
	if w.json {
		fields := make([]regs.Field, len(fv))
		for i, f := range fv {
			fields[i] = regs.Field{Name: f.Name, Value: f.Value}
		}
		raw, err := fieldsJSON(fields)
		if err != nil {
			return err
		}
		return w.writeJSON(tracepointJSON{e.TimeNs, e.CPU, e.PID, e.Comm, name, raw})
	}
	b := appendTime(w.buf[:0], e.TimeNs)
	b = fmt.Appendf(b, " cpu%d %s %s", e.CPU, e.Comm, name)
	for _, f := range fv {
		b = fmt.Appendf(b, " %s=%v", f.Name, f.Value)
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

func (w *Writer) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.w.Write(b)
	return w.w.WriteByte('\n')
}

// Flush writes out buffered lines.
func (w *Writer) Flush() error { return w.w.Flush() }

// RegisterCount is one summary row: the writes of one register on one CPU.
// In count-only mode only the kernel's count is known: Failed and Last are
// left out.
type RegisterCount struct {
	MSR      string  `json:"msr"`
	Register string  `json:"register"`
	CPU      uint32  `json:"cpu"`
	Emulated bool    `json:"emulated,omitempty"` // the emulated machine's writes (its CPU numbering)
	Writes   uint64  `json:"writes"`
	Failed   *uint64 `json:"failed,omitempty"`
	Last     string  `json:"last,omitempty"` // value of the last write
}

// Summary is what a trace ends with.
type Summary struct {
	DurationNs  int64           `json:"duration_ns"`
	Registers   []RegisterCount `json:"registers"`
	Tracepoints map[string]int  `json:"tracepoints"`
	CountOnly   bool            `json:"count_only"`
	Stats       ebpf.Stats      `json:"counters"`
}

// Summary builds the summary from the events written and the tracer's
// counters. In count-only mode (no events) the rows come from counts, the
// tracer's in-kernel counts per MSR and CPU.
func (w *Writer) Summary(st ebpf.Stats, d time.Duration, countOnly bool, counts []ebpf.MSRCount) Summary {
	s := Summary{
		DurationNs: d.Nanoseconds(), Tracepoints: w.events, CountOnly: countOnly, Stats: st,
		Registers: []RegisterCount{},
	}
	if countOnly {
		for _, c := range counts {
			s.Registers = append(s.Registers, RegisterCount{
				MSR: "0x" + strconv.FormatUint(uint64(c.MSR), 16), Register: Name(c.MSR), CPU: uint32(c.CPU), Writes: c.Writes,
				Emulated: c.Emulated,
			})
		}
	}
	for k, c := range w.counts {
		s.Registers = append(s.Registers, RegisterCount{
			MSR: "0x" + strconv.FormatUint(uint64(k.msr), 16), Register: Name(k.msr), CPU: k.cpu, Emulated: k.emulated,
			Writes: c.writes, Failed: &c.failed, Last: "0x" + strconv.FormatUint(c.last, 16),
		})
	}
	slices.SortFunc(s.Registers, func(a, b RegisterCount) int {
		if a.Register != b.Register {
			return strings.Compare(a.Register, b.Register)
		}
		if a.Emulated != b.Emulated { // the host's CPUs first
			if a.Emulated {
				return 1
			}
			return -1
		}
		return int(a.CPU) - int(b.CPU)
	})
	return s
}

// WriteSummary writes the summary: a table in text mode, one
// {"summary":{...}} line in JSON mode.
func (w *Writer) WriteSummary(s Summary) error {
	if w.json {
		if err := w.writeJSON(summaryJSON{s}); err != nil {
			return err
		}
		return w.Flush()
	}
	fmt.Fprintf(w.w, "\nsummary: %.3f s\n", time.Duration(s.DurationNs).Seconds())
	if len(s.Registers) > 0 {
		fmt.Fprintf(w.w, "%-24s %-10s %4s %8s %6s  %s\n", "register", "msr", "cpu", "writes", "failed", "last")
		for _, r := range s.Registers {
			failed, last := "-", "-"
			if r.Failed != nil {
				failed, last = strconv.FormatUint(*r.Failed, 10), r.Last
			}
			src := ""
			if r.Emulated {
				src = "  emulated"
			}
			fmt.Fprintf(w.w, "%-24s %-10s %4d %8d %6s  %s%s\n", r.Register, r.MSR, r.CPU, r.Writes, failed, last, src)
		}
	}
	names := make([]string, 0, len(s.Tracepoints))
	for n := range s.Tracepoints {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w.w, "%-35s %8d events\n", n, s.Tracepoints[n])
	}
	st := s.Stats
	fmt.Fprintf(w.w, "msr:write_msr: ")
	if st.Seen > 0 {
		fmt.Fprintf(w.w, "%d hits, ", st.Seen)
	}
	fmt.Fprintf(w.w, "%d matched the filter; ", st.Matched)
	if s.CountOnly {
		fmt.Fprintf(w.w, "count only: no events streamed")
	} else {
		fmt.Fprintf(w.w, "events: %d delivered, %d lost (ring buffer full)", st.Delivered, st.Lost)
	}
	if st.Emulated > 0 {
		fmt.Fprintf(w.w, "; %d of them emulated (hwpemu's model, not the kernel)", st.Emulated)
	}
	fmt.Fprintf(w.w, ", %d missed (another BPF program was running)\n", st.Missed)
	return w.Flush()
}
