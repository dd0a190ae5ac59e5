// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// Request fields reported per core type.
var requestFields = []string{"min", "max", "desired", "epp"}

// FieldCount is one value of a register field and how many samples held
// it (or how many writes wrote it).
type FieldCount struct {
	Value uint64 `json:"value"`
	Count int    `json:"count"`
}

// Fields maps a field name ("min", "max", "desired", "epp", "epb") to its
// values, most frequent first.
type Fields map[string][]FieldCount

// Writer is one process's writes to the request registers of a core type.
type Writer struct {
	Comm   string `json:"comm"`
	Writes int    `json:"writes"`
	Fields Fields `json:"fields"`
}

// Disturbance is a register change during a run that the side's settings
// did not make: another writer, or a sampled value that changed.
type Disturbance struct {
	Comm     string `json:"comm,omitempty"` // "" for a sampled change
	PID      int    `json:"pid,omitempty"`
	OffsetNs int64  `json:"offset_ns"` // from the run's start
	CPU      int    `json:"cpu"`
	Register string `json:"register"`
	Old, New uint64 `json:"-"`
	OldHex   string `json:"old"`
	NewHex   string `json:"new"`
	// AtStart: the run started with this value (New) where most of its
	// side's runs started with Old; no write was seen.
	AtStart bool `json:"at_start,omitempty"`
	// Checked: found by the check just before the run's command started
	// (recording.Held): Register is a sysfs file or a register, OldHex
	// what it held right after hwpprobe applied the side, NewHex what the
	// check found. CPU is -1 for a machine-wide file.
	Checked bool `json:"checked,omitempty"`
}

// String names the disturbance in one line, the change as old -> new.
func (d Disturbance) String() string {
	switch {
	case d.Checked && d.CPU < 0:
		return fmt.Sprintf("at its start %s had changed since the side was applied: %s -> %s", d.Register, d.OldHex, d.NewHex)
	case d.Checked:
		return fmt.Sprintf("at its start CPU %d %s had changed since the side was applied: %s -> %s", d.CPU, d.Register, d.OldHex, d.NewHex)
	case d.AtStart:
		return fmt.Sprintf("at its start CPU %d held %s %s where the side's other runs held %s", d.CPU, d.Register, d.NewHex, d.OldHex)
	}
	who := "sampled change"
	if d.Comm != "" {
		who = fmt.Sprintf("%s (pid %d)", d.Comm, d.PID)
	}
	return fmt.Sprintf("%s at +%.2fs on CPU %d: %s %s -> %s", who, float64(d.OffsetNs)/1e9, d.CPU, d.Register, d.OldHex, d.NewHex)
}

// requestMSRs are the registers whose writes during a run disturb it.
var requestMSRs = append(regs.SettingAddresses(), hwp.MSR_IA32_PERF_CTL)

// RequestMSRs returns the registers a side's settings fix some bits of
// (SettingBits): a change of those bits during a run disturbs it.
func RequestMSRs() []uint32 { return slices.Clone(requestMSRs) }

// activeDrivers are the cpufreq drivers that set the request registers
// only when a setting changes (intel_pstate active mode, amd-pstate-epp):
// under them a change of min or max during a run is a disturbance. In
// passive mode (intel_cpufreq, amd-pstate) the governor itself writes
// min, max, desired and PERF_CTL as the load changes.
var activeDrivers = []string{"intel_pstate", "amd-pstate-epp"}

// SettingBits is the part of a request register's value that the side's
// settings fix, under the cpufreq driver named: EPB's bits 3:0; the EPP of
// request registers (regs.Requests), and their min and max under an
// active driver (never desired, which hardware or the governor chooses);
// PERF_CTL under an active driver; 0 for any other register. A change of
// these bits during a run disturbs it.
func SettingBits(msr uint32, v uint64, driver string) uint64 {
	active := slices.Contains(activeDrivers, driver)
	r, ok := regs.ByAddress(msr)
	if !ok {
		return 0
	}
	switch r.Role {
	case regs.RoleBias:
		return uint64(hwp.DecodeEPB(v))
	case regs.RoleRequest:
		if active {
			return v & 0xff00ffff // EPP, max, min (desired, bits 23:16, left out)
		}
		return v & 0xff000000
	case regs.RoleControl:
		if active {
			return v
		}
	}
	return 0
}

// decodeFields splits a request register into its fields.
func decodeFields(msr uint32, v uint64) map[string]uint64 {
	if r, ok := regs.ByAddress(msr); ok && r.Role == regs.RoleBias {
		return map[string]uint64{"epb": uint64(hwp.DecodeEPB(v))}
	}
	if q, ok := regs.RequestFrom(msr, v); ok && q.Register.Role == regs.RoleRequest {
		return map[string]uint64{"min": uint64(q.Min), "max": uint64(q.Max), "desired": uint64(q.Desired), "epp": uint64(q.EPP)}
	}
	return nil
}

// fieldCounter counts field values.
type fieldCounter map[string]map[uint64]int

func (fc fieldCounter) add(msr uint32, v uint64, n int) {
	for f, x := range decodeFields(msr, v) {
		if fc[f] == nil {
			fc[f] = map[uint64]int{}
		}
		fc[f][x] += n
	}
}

func (fc fieldCounter) fields() Fields {
	out := Fields{}
	for f, m := range fc {
		for v, n := range m {
			out[f] = append(out[f], FieldCount{v, n})
		}
		slices.SortFunc(out[f], func(a, b FieldCount) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
		})
	}
	return out
}

// runEvidence is what one run shows about its settings, per core type.
type runEvidence struct {
	held        map[string]fieldCounter            // core type -> sampled fields
	written     map[string]map[string]fieldCounter // core type -> comm -> written fields
	writes      map[string]map[string]int          // core type -> comm -> count
	limits      map[string]int                     // limit reason -> samples with it active
	limitN      int                                // samples with the limit register
	status      map[string]statusCount             // core type ("" when not hybrid) -> HWP_STATUS CPU-samples
	disturbance []Disturbance
	// first are the request registers of the run's first sample, by
	// (cpu, msr).
	first  map[[2]uint64]uint64
	driver string // the cpufreq driver (settingBits)
}

// limitReasons names the active bits (15:0) of MSR_CORE_PERF_LIMIT_REASONS:
// with the SDM's table on the client models it covers
// (hwp.SDMCoreLimitTable, as snapshot, watch and the timelines name
// them), turbostat's where it has one, "bitN" otherwise (the bits are
// model-specific).
func limitReasons(v uint64, host recording.Host) []string {
	f, m := uint32(host.Family), uint32(host.Model)
	t, ok := hwp.SDMCoreLimitTable(f, m)
	if !ok {
		t, ok = hwp.CoreLimitTable(f, m)
	}
	if ok {
		active, _ := hwp.DecodeLimitReasons(v, t)
		return active
	}
	var out []string
	for b := range 16 {
		if v>>b&1 != 0 {
			out = append(out, fmt.Sprintf("bit%d", b))
		}
	}
	return out
}

// statusCount counts the CPU-samples that read IA32_HWP_STATUS and those
// whose Excursion_To_Minimum bit (2) was set. The bit is sticky (set by
// the processor, cleared only by software writing 0, which hwpprobe never
// does): a set bit says the CPU was delivered less than its request's
// minimum at some time since the last clear, not necessarily within the
// sample's interval.
type statusCount struct {
	n, excursions int
}

// add counts one CPU-sample's register value.
func (c statusCount) add(v uint64) statusCount {
	c.n++
	if hwp.DecodeStatus(v).ExcursionMin {
		c.excursions++
	}
	return c
}

// plus returns the counts of c and o together.
func (c statusCount) plus(o statusCount) statusCount {
	return statusCount{c.n + o.n, c.excursions + o.excursions}
}

// share is the share of CPU-samples with the bit set; NaN when none read
// the register.
func (c statusCount) share() float64 {
	if c.n == 0 {
		return math.NaN()
	}
	return float64(c.excursions) / float64(c.n)
}

func disturbance(comm string, pid int, off int64, cpu int, msr uint32, old, new uint64) Disturbance {
	return Disturbance{Comm: comm, PID: pid, OffsetNs: off, CPU: cpu, Register: summary.RegName(msr),
		Old: old, New: new, OldHex: fmt.Sprintf("%#x", old), NewHex: fmt.Sprintf("%#x", new)}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
