// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"io"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// LimitReasons is MSR_CORE_PERF_LIMIT_REASONS (0x64F): which reasons hold
// the cores below the requested frequency now (status bits 15:0) and
// which have since their logs were last cleared (bits 31:16, sticky).
type LimitReasons struct {
	Raw Hex `json:"raw"`
	// Table names the bit table used (hwp.SDMCoreLimitTable); "" where
	// the model has none and the bits are named "bitN".
	Table  string   `json:"table,omitempty"`
	Active []string `json:"active"`
	Logged []string `json:"logged"`
}

// HWPStatus is IA32_HWP_STATUS (0x777) of one CPU. Its bits are sticky:
// the processor sets them and only software clears them (hwpprobe never
// writes it), so a set bit says the event happened since the last clear.
type HWPStatus struct {
	Raw Hex `json:"raw"`
	// ExcursionMin is Excursion_To_Minimum (bit 2): the delivered
	// performance fell below HWP_REQUEST's Minimum_Performance.
	ExcursionMin         bool `json:"excursion_to_minimum"`
	GuaranteedPerfChange bool `json:"guaranteed_performance_change"` // bit 0
	HighestChange        bool `json:"highest_change"`                // bit 3
}

// hwpStatus reads a CPU's IA32_HWP_STATUS (the CPU has HWP).
func (b *builder) hwpStatus(cpu int, u map[string]string) *HWPStatus {
	v, ok := b.reg(cpu, hwp.MSR_IA32_HWP_STATUS, "IA32_HWP_STATUS", u)
	if !ok {
		return nil
	}
	d := hwp.DecodeStatus(v)
	return &HWPStatus{Raw: Hex(v), ExcursionMin: d.ExcursionMin, GuaranteedPerfChange: d.GuaranteedPerfChange, HighestChange: d.HighestChange}
}

// limitReasons reads and decodes a package's MSR_CORE_PERF_LIMIT_REASONS
// with the SDM's table for the model, bit numbers where it has none.
func (b *builder) limitReasons(cpu int, u map[string]string) *LimitReasons {
	v, ok := b.reg(cpu, hwp.MSR_CORE_PERF_LIMIT_REASONS, "MSR_CORE_PERF_LIMIT_REASONS", u)
	if !ok {
		return nil
	}
	l := &LimitReasons{Raw: Hex(v)}
	var table *hwp.LimitTable
	if t, ok := hwp.SDMCoreLimitTable(uint32(b.s.Machine.Family), uint32(b.s.Machine.Model)); ok {
		l.Table, table = t.Name, &t
	}
	a, g := hwp.LimitReasonNames(v, table)
	l.Active, l.Logged = append([]string{}, a...), append([]string{}, g...)
	return l
}

// writeExcursions writes a group's line on IA32_HWP_STATUS's excursion
// bit: the CPUs that have it set, when any CPU of the group read it.
func writeExcursions(b io.Writer, g Group) {
	var set, read cpus.List
	for _, c := range g.CPUs {
		if s := c.Registers.HWPStatus; s != nil {
			read = append(read, c.CPU)
			if s.ExcursionMin {
				set = append(set, c.CPU)
			}
		}
	}
	if len(read) == 0 {
		return
	}
	fmt.Fprintf(b, "  HWP_STATUS Excursion_To_Minimum (sticky, since last cleared): set on %d of %d CPUs", len(set), len(read))
	if len(set) > 0 {
		fmt.Fprintf(b, " (%s)", set)
	}
	fmt.Fprintln(b)
}

// writeLimitState writes a package's limit state: the limit reasons
// active and logged, and the package temperature against the TCC
// activation point (TjMax minus the offset).
func writeLimitState(b io.Writer, p Package) {
	if l := p.LimitReasons; l != nil {
		table := l.Table
		if table == "" {
			table = "no bit table for this model: bit numbers"
		}
		fmt.Fprintf(b, "  limit reasons 0x%08x: active %s; logged %s (%s)\n", uint64(l.Raw), noneList(l.Active), noneList(l.Logged), table)
	}
	if p.TjMaxC != nil && p.TCCOffsetC != nil && p.TemperatureC != nil {
		act := *p.TjMaxC - *p.TCCOffsetC
		fmt.Fprintf(b, "  thermal: package %d C, %d C below TCC activation at %d C (TjMax %d - offset %d)\n",
			*p.TemperatureC, act-*p.TemperatureC, act, *p.TjMaxC, *p.TCCOffsetC)
	}
}

func noneList(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
