package analysis

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/recording"
	"github.com/hwpprobe/hwpprobe/recording/summary"
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
}

// String names the disturbance in one line.
func (d Disturbance) String() string {
	if d.AtStart {
		return fmt.Sprintf("at its start CPU %d held %s %s where the side's other runs held %s", d.CPU, d.Register, d.NewHex, d.OldHex)
	}
	who := "sampled change"
	if d.Comm != "" {
		who = fmt.Sprintf("%s (pid %d)", d.Comm, d.PID)
	}
	return fmt.Sprintf("%s at +%.2fs on CPU %d: %s %s -> %s", who, float64(d.OffsetNs)/1e9, d.CPU, d.Register, d.OldHex, d.NewHex)
}

// requestMSRs are the registers whose writes during a run disturb it.
var requestMSRs = []uint32{hwp.MSR_IA32_HWP_REQUEST, hwp.MSR_IA32_ENERGY_PERF_BIAS, hwp.MSR_AMD_CPPC_REQ, hwp.MSR_IA32_PERF_CTL}

// activeDrivers are the cpufreq drivers that set the request registers
// only when a setting changes (intel_pstate active mode, amd-pstate-epp):
// under them a change of min or max during a run is a disturbance. In
// passive mode (intel_cpufreq, amd-pstate) the governor itself writes
// min, max, desired and PERF_CTL as the load changes.
var activeDrivers = []string{"intel_pstate", "amd-pstate-epp"}

// settingBits is the part of a request register's value that the side's
// settings fix: EPB's bits 3:0; the EPP of IA32_HWP_REQUEST or
// MSR_AMD_CPPC_REQ, and their min and max under an active driver (never
// desired, which hardware or the governor chooses); PERF_CTL under an
// active driver. A change of these bits during a run disturbs it.
func settingBits(msr uint32, v uint64, driver string) uint64 {
	active := slices.Contains(activeDrivers, driver)
	switch msr {
	case hwp.MSR_IA32_ENERGY_PERF_BIAS:
		return uint64(hwp.DecodeEPB(v))
	case hwp.MSR_IA32_HWP_REQUEST, hwp.MSR_AMD_CPPC_REQ:
		if active {
			return v & 0xff00ffff // EPP, max, min (desired, bits 23:16, left out)
		}
		return v & 0xff000000
	case hwp.MSR_IA32_PERF_CTL:
		if active {
			return v
		}
	}
	return 0
}

// decodeFields splits a request register into its fields.
func decodeFields(msr uint32, v uint64) map[string]uint64 {
	switch msr {
	case hwp.MSR_IA32_HWP_REQUEST:
		r := hwp.DecodeRequest(v)
		return map[string]uint64{"min": uint64(r.Min), "max": uint64(r.Max), "desired": uint64(r.Desired), "epp": uint64(r.EPP)}
	case hwp.MSR_AMD_CPPC_REQ:
		r := hwp.DecodeCPPCReq(v)
		return map[string]uint64{"min": uint64(r.Min), "max": uint64(r.Max), "desired": uint64(r.Desired), "epp": uint64(r.EPP)}
	case hwp.MSR_IA32_ENERGY_PERF_BIAS:
		return map[string]uint64{"epb": uint64(hwp.DecodeEPB(v))}
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
	excursions  int                                // samples with an HWP_STATUS excursion
	statusN     int
	disturbance []Disturbance
	// first are the request registers of the run's first sample, by
	// (cpu, msr).
	first  map[[2]uint64]uint64
	driver string // the cpufreq driver (settingBits)
}

// coreTypes maps each CPU of a run to its core type ("" -> "all").
func coreTypes(run *recording.Run) map[int]string {
	m := map[int]string{}
	for _, s := range run.Samples {
		for _, c := range s.CPUs {
			t := c.CoreType
			if t == "" {
				t = "all"
			}
			m[c.CPU] = t
		}
	}
	return m
}

func evidenceOf(run *recording.Run, host recording.Host) runEvidence {
	driver := host.Driver
	ev := runEvidence{driver: driver, held: map[string]fieldCounter{}, written: map[string]map[string]fieldCounter{},
		writes: map[string]map[string]int{}, limits: map[string]int{}}
	types := coreTypes(run)
	ev.first = map[[2]uint64]uint64{}
	last := map[[2]uint64]uint64{} // (cpu, msr) -> last value seen
	for _, s := range run.Samples {
		for _, c := range s.CPUs {
			t := types[c.CPU]
			if ev.held[t] == nil {
				ev.held[t] = fieldCounter{}
			}
			for _, g := range c.Regs {
				ev.held[t].add(g.MSR, g.Value, 1)
				k := [2]uint64{uint64(c.CPU), uint64(g.MSR)}
				old, seen := last[k]
				if seen && settingBits(g.MSR, old, driver) != settingBits(g.MSR, g.Value, driver) && slices.Contains(requestMSRs, g.MSR) {
					ev.disturbance = append(ev.disturbance, disturbance("", 0, s.TimeNs-run.Start.TimeNs, c.CPU, g.MSR, old, g.Value))
				}
				if !seen && slices.Contains(requestMSRs, g.MSR) {
					ev.first[k] = g.Value
				}
				last[k] = g.Value
			}
		}
		for _, p := range s.Packages {
			ev.addPackage(p, host)
		}
	}
	ev.addTrace(run, types, driver)
	// The writers first (they name the cause), then by time.
	slices.SortStableFunc(ev.disturbance, func(a, b Disturbance) int {
		return cmp.Or(cmp.Compare(b2i(a.Comm == ""), b2i(b.Comm == "")), cmp.Compare(a.OffsetNs, b.OffsetNs))
	})
	return ev
}

func (ev *runEvidence) addPackage(p recording.PackageRow, host recording.Host) {
	if v, ok := p.Reg(hwp.MSR_CORE_PERF_LIMIT_REASONS); ok {
		ev.limitN++
		for _, r := range limitReasons(v, host) {
			ev.limits[r]++
		}
	}
	if v, ok := p.Reg(hwp.MSR_IA32_HWP_STATUS); ok {
		ev.statusN++
		if hwp.DecodeStatus(v).ExcursionMin {
			ev.excursions++
		}
	}
}

// limitReasons names the active bits (15:0) of MSR_CORE_PERF_LIMIT_REASONS:
// with turbostat's table where it has one, "bitN" otherwise (the bits are
// model-specific).
func limitReasons(v uint64, host recording.Host) []string {
	if t, ok := hwp.CoreLimitTable(uint32(host.Family), uint32(host.Model)); ok {
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

// addTrace counts the kernel's writes by core type and writer, and marks
// every write during the run that changed a request register's value.
func (ev *runEvidence) addTrace(run *recording.Run, types map[int]string, driver string) {
	held := map[[2]uint64]uint64{}
	for _, s := range run.Samples[:min(1, len(run.Samples))] {
		for _, c := range s.CPUs {
			for _, g := range c.Regs {
				held[[2]uint64{uint64(c.CPU), uint64(g.MSR)}] = g.Value
			}
		}
	}
	for _, e := range run.Trace {
		t := types[e.CPU]
		if t == "" {
			t = "all"
		}
		if ev.written[t] == nil {
			ev.written[t], ev.writes[t] = map[string]fieldCounter{}, map[string]int{}
		}
		if ev.written[t][e.Comm] == nil {
			ev.written[t][e.Comm] = fieldCounter{}
		}
		ev.written[t][e.Comm].add(e.MSR, e.Value, 1)
		ev.writes[t][e.Comm]++
		if e.Failed || !slices.Contains(requestMSRs, e.MSR) || e.TimeNs < run.Start.TimeNs {
			continue
		}
		k := [2]uint64{uint64(e.CPU), uint64(e.MSR)}
		old, ok := held[k]
		if !ok && slices.Contains(activeDrivers, driver) || ok && settingBits(e.MSR, old, driver) != settingBits(e.MSR, e.Value, driver) {
			d := disturbance(e.Comm, e.PID, e.TimeNs-run.Start.TimeNs, e.CPU, e.MSR, old, e.Value)
			if !ok {
				d.OldHex = "?"
			}
			ev.disturbance = append(ev.disturbance, d)
		}
		held[k] = e.Value
	}
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
