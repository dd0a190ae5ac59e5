// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// limitNames returns the reasons active (bits 15:0) in a
// MSR_CORE_PERF_LIMIT_REASONS value: the table's names, or "bitN" without
// a table.
func limitNames(v uint64, t *hwp.LimitTable) []string {
	a, _ := hwp.LimitReasonNames(v, t)
	return a
}

// limitsColumn is the Limits column: per package the limit reasons
// active at the end of the interval, joined by ","; "none" when none;
// the machine's row joins those of every package.
func limitsColumn(t *hwp.LimitTable) column {
	text := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ",")
	}
	return column{name: "Limits", source: "LIMIT_REASONS",
		pkg: func(p *Package) string {
			if !p.LimitReasons.OK() {
				return "-"
			}
			return text(limitNames(p.LimitReasons.Raw, t))
		},
		all: func(pkgs []Package) string {
			var names []string
			read := false
			for i := range pkgs {
				if r := pkgs[i].LimitReasons; r.OK() {
					read = true
					for _, n := range limitNames(r.Raw, t) {
						if !slices.Contains(names, n) {
							names = append(names, n)
						}
					}
				}
			}
			if !read {
				return "-"
			}
			return text(names)
		}}
}

// excMin is a CPU's ExcMin cell: IA32_HWP_STATUS bit 2 (Excursion To
// Minimum) as 1 or 0, with "!" when the bit changed since the previous
// sample; "-" when not read.
func excMin(c *CPU) string {
	if !c.HWPStatus.OK() {
		return "-"
	}
	return regField(c.HWPStatus, func(v uint64) uint8 {
		if hwp.DecodeStatus(v).ExcursionMin {
			return 1
		}
		return 0
	})
}

// excMinSum is a summary row's ExcMin: how many of the row's CPUs that
// read IA32_HWP_STATUS have the excursion bit set, "SET/READ".
func excMinSum(_ *Summary, cpus []CPU, rows []int) string {
	set, read := 0, 0
	for _, i := range rows {
		if r := cpus[i].HWPStatus; r.OK() {
			read++
			if hwp.DecodeStatus(r.Raw).ExcursionMin {
				set++
			}
		}
	}
	if read == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", set, read)
}
