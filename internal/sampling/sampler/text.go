// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// ErrUnknownColumn is wrapped by ParseColumns for a name it does not know.
var ErrUnknownColumn = errors.New("unknown column")

// column is one figure column of the text table.
type column struct {
	name string
	// source is the Setup figure whose absence hides the column by
	// default (a key of Info.Sources).
	source string
	cpu    func(*CPU) string
	pkg    func(*Package) string
	sum    func(*Summary, []CPU, []int) string
	// all, when set, gives the machine's summary row from the packages
	// (the core-type rows show "-").
	all func([]Package) string
}

const width = 8

func num(v Value, prec int) string {
	switch {
	case v.Src == SrcNone:
		return "-"
	case v.Flags&FlagReadsZero != 0:
		return "(zero)"
	}
	s := strconv.FormatFloat(v.V, 'f', prec, 64)
	if v.Flags&FlagMultiplexed != 0 {
		s += "*"
	}
	return s
}

// A field reads one value out of a raw register with package hwp's
// decoders.
type field func(raw uint64) uint8

// requestFields returns the min, max, desired and EPP fields of the
// request register reg, read through the catalog's vendor-neutral
// regs.Request. A register that is not a request register (0 in samples
// written before Info.HWPRegister existed) is read as Intel's.
func requestFields(reg uint32) (min, max, des, epp field) {
	if _, ok := regs.RequestFrom(reg, 0); !ok {
		reg = regs.RequestOf(regs.Intel).Address
	}
	get := func(f func(regs.Request) uint8) field {
		return func(v uint64) uint8 {
			q, _ := regs.RequestFrom(reg, v)
			return f(q)
		}
	}
	return get(func(q regs.Request) uint8 { return q.Min }), get(func(q regs.Request) uint8 { return q.Max }),
		get(func(q regs.Request) uint8 { return q.Desired }), get(func(q regs.Request) uint8 { return q.EPP })
}

// hwpColumns are the request's columns for register reg, in table order.
func hwpColumns(reg uint32) []column {
	min, max, des, epp := requestFields(reg)
	col := func(name string, f field) column {
		get := func(c *CPU) string { return regField(c.HWPRequest, f) }
		return column{name: name, source: "HWP_REQUEST", cpu: get, sum: uniform(get)}
	}
	return []column{col("HWPmin", min), col("HWPmax", max), col("HWPdes", des), col("EPP", epp)}
}

func epbField(c *CPU) string { return regField(c.EPB, hwp.DecodeEPB) }

func regField(r Reg, f field) string {
	if r.Src == SrcNone {
		return "-"
	}
	v := f(r.Raw)
	s := strconv.FormatUint(uint64(v), 10)
	if r.Changed && f(r.Prev) != v {
		s += "!"
	}
	return s
}

// uniform shows a register field in a summary row when every CPU of the
// row agrees, "var" otherwise.
func uniform(get func(*CPU) string) func(*Summary, []CPU, []int) string {
	return func(_ *Summary, cpus []CPU, rows []int) string {
		out := ""
		for _, i := range rows {
			v := strings.TrimSuffix(get(&cpus[i]), "!")
			switch {
			case out == "":
				out = v
			case out != v:
				return "var"
			}
		}
		if out == "" {
			return "-"
		}
		return out
	}
}

var columns = []column{
	{name: "Avg_MHz", source: "Avg_MHz", cpu: func(c *CPU) string { return num(c.AvgMHz, 0) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.AvgMHz, 0) }},
	{name: "Busy%", source: "Busy%", cpu: func(c *CPU) string { return num(c.BusyPct, 2) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.BusyPct, 2) }},
	{name: "Bzy_MHz", source: "Bzy_MHz", cpu: func(c *CPU) string { return num(c.BzyMHz, 0) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.BzyMHz, 0) }},
	{name: "TSC_MHz", source: "TSC_MHz", cpu: func(c *CPU) string { return num(c.TSCMHz, 0) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.TSCMHz, 0) }},
	{name: "IPC", source: "IPC", cpu: func(c *CPU) string { return num(c.IPC, 2) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.IPC, 2) }},
	{name: "CoreTmp", source: "CoreTmp", cpu: func(c *CPU) string { return num(c.CoreTmp, 0) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.CoreTmp, 0) }},
	{name: "PkgTmp", source: "PkgTmp", pkg: func(p *Package) string { return num(p.PkgTmp, 0) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.PkgTmp, 0) }},
	{name: "PkgWatt", source: "PkgWatt", pkg: func(p *Package) string { return num(p.PkgWatt, 2) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.PkgWatt, 2) }},
	{name: "CorWatt", source: "CorWatt", pkg: func(p *Package) string { return num(p.CorWatt, 2) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.CorWatt, 2) }},
	{name: "GFXWatt", source: "GFXWatt", pkg: func(p *Package) string { return num(p.GFXWatt, 2) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.GFXWatt, 2) }},
	{name: "RAMWatt", source: "RAMWatt", pkg: func(p *Package) string { return num(p.RAMWatt, 2) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.RAMWatt, 2) }},
	{name: "SysWatt", source: "SysWatt", pkg: func(p *Package) string { return num(p.SysWatt, 2) }, sum: func(s *Summary, _ []CPU, _ []int) string { return num(s.SysWatt, 2) }},
	// HWPmin, HWPmax, HWPdes and EPP come here: hwpColumns, which
	// NewTable builds for the request register the sampler reads.
	{name: "HWPmin", source: "HWP_REQUEST"}, {name: "HWPmax", source: "HWP_REQUEST"},
	{name: "HWPdes", source: "HWP_REQUEST"}, {name: "EPP", source: "HWP_REQUEST"},
	{name: "EPB", source: "EPB", cpu: epbField, sum: uniform(epbField)},
	{name: "LimRsn", source: "LIMIT_REASONS", pkg: func(p *Package) string {
		if p.LimitReasons.Src == SrcNone {
			return "-"
		}
		return fmt.Sprintf("0x%04x", p.LimitReasons.Raw&0xffff)
	}, sum: func(*Summary, []CPU, []int) string { return "" }},
	// Limits comes here: limitsColumn, which NewTable builds with the
	// model's bit names.
	{name: "Limits", source: "LIMIT_REASONS"},
	{name: "ExcMin", source: "HWP_STATUS", cpu: excMin, sum: excMinSum},
}

// ColumnNames lists every figure column the table knows, in table order.
func ColumnNames() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.name
	}
	return out
}

// ParseColumns parses a --show list ("Avg_MHz,Busy%,PkgWatt"; names
// case-insensitive, as turbostat's --show) into canonical names.
func ParseColumns(spec string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		found := ""
		for _, c := range columns {
			if strings.EqualFold(c.name, n) {
				found = c.name
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownColumn, n, strings.Join(ColumnNames(), ","))
		}
		out = append(out, found)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty column list", ErrUnknownColumn)
	}
	return out, nil
}

// DefaultColumns returns the columns whose figures the setup provides.
func DefaultColumns(st *Setup) []string {
	src := st.Info().Sources
	var out []string
	for _, c := range columns {
		if src[c.source] != SrcNone {
			out = append(out, c.name)
		}
	}
	return out
}

// Table writes samples as turbostat-like text: a header, one row per
// summary (core types, then the machine as "-"), and with perCPU (NewTable) one row
// per CPU; package columns appear on each package's first CPU row, as in
// turbostat.
type Table struct {
	cols   []*column
	hybrid bool
	perCPU bool
}

// NewTable returns a Table showing names (from ParseColumns or
// DefaultColumns), with per-CPU rows if perCPU.
func NewTable(st *Setup, names []string, perCPU bool) *Table {
	t := &Table{perCPU: perCPU}
	for _, n := range names {
		for i := range columns {
			if columns[i].name != n {
				continue
			}
			c := &columns[i]
			if c.cpu == nil && c.pkg == nil { // a column built for the setup
				for _, hc := range append(hwpColumns(st.HWPRegister), limitsColumn(st.LimitTable)) {
					if hc.name == n {
						c = &hc
					}
				}
			}
			t.cols = append(t.cols, c)
		}
	}
	for _, c := range st.CPUs {
		if c.Type != topology.Uniform {
			t.hybrid = true
		}
	}
	return t
}

// Rows returns the number of rows (header excluded) a sample gives.
func (t *Table) Rows(s *Sample) int {
	n := len(s.Summaries)
	if !t.hybrid {
		n = 1
	}
	if t.perCPU {
		n += len(s.CPUs)
	}
	return n
}

// pad appends s right-aligned to width, after a space unless it is the
// first cell of a line.
func pad(b *strings.Builder, s string) {
	if line := b.String(); len(line) > 0 && line[len(line)-1] != '\n' {
		b.WriteByte(' ')
	}
	for i := len(s); i < width; i++ {
		b.WriteByte(' ')
	}
	b.WriteString(s)
}

// WriteHeader writes the column header line.
func (t *Table) WriteHeader(w io.Writer) error {
	var b strings.Builder
	if t.hybrid {
		pad(&b, "Type")
	}
	pad(&b, "Package")
	pad(&b, "Core")
	pad(&b, "CPU")
	for _, c := range t.cols {
		pad(&b, c.name)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRows writes a sample's rows.
func (t *Table) WriteRows(w io.Writer, s *Sample) error {
	var b strings.Builder
	rows := make([]int, 0, len(s.CPUs))
	for _, sm := range s.Summaries {
		if !t.hybrid && sm.Type != topology.All {
			continue
		}
		rows = rows[:0]
		for i := range s.CPUs {
			if sm.Type == topology.All || s.CPUs[i].Type == sm.Type {
				rows = append(rows, i)
			}
		}
		label := string(sm.Type)
		if sm.Type == topology.All {
			label = "-"
		}
		if t.hybrid {
			pad(&b, label)
		}
		pad(&b, "-")
		pad(&b, "-")
		pad(&b, "-")
		for _, c := range t.cols {
			switch {
			case c.all == nil:
				pad(&b, c.sum(&sm, s.CPUs, rows))
			case sm.Type == topology.All:
				pad(&b, c.all(s.Packages))
			default:
				pad(&b, "-")
			}
		}
		b.WriteByte('\n')
	}
	if t.perCPU {
		seen := map[int]bool{}
		for i := range s.CPUs {
			c := &s.CPUs[i]
			typ := string(c.Type)
			if typ == "" {
				typ = "-"
			}
			if t.hybrid {
				pad(&b, typ)
			}
			pad(&b, strconv.Itoa(c.Package))
			pad(&b, strconv.Itoa(c.Core))
			pad(&b, strconv.Itoa(c.CPU))
			var pk *Package
			if !seen[c.Package] {
				seen[c.Package] = true
				for j := range s.Packages {
					if s.Packages[j].Package == c.Package {
						pk = &s.Packages[j]
					}
				}
			}
			for _, col := range t.cols {
				switch {
				case col.cpu != nil:
					pad(&b, col.cpu(c))
				case pk != nil:
					pad(&b, col.pkg(pk))
				default:
					pad(&b, "")
				}
			}
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Legend explains the markers the table uses.
const Legend = `"-": not available (see the notes above); "(zero)": the counter exists but did not advance, not a measurement;
"*": perf counters were multiplexed and scaled by time_enabled/time_running; "!": the field changed since the previous sample;
"var": CPUs of the row hold different values.`
