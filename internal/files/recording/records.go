// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// RecordType identifies the kind of a record in the stream. The numbers are
// part of the file format (docs/recording-format.md) and never reused.
type RecordType uint8

// Record types.
const (
	TypeMeta     RecordType = 1  // Meta: first record of every file
	TypeRunStart RecordType = 2  // RunStart: a run of the workload begins
	TypeSnapshot RecordType = 3  // Snapshot: the machine's state at a point of a run
	TypeSamples  RecordType = 4  // Samples: a batch of interval samples
	TypeTrace    RecordType = 5  // Trace: a batch of kernel MSR writes
	TypeProcess  RecordType = 6  // Process: counters of the workload's process tree
	TypeRunEnd   RecordType = 7  // RunEnd: a run's outcome
	TypeNote     RecordType = 8  // Note: a problem or remark met while recording
	TypeEnd      RecordType = 15 // End: the writer finished the file
)

// String returns the type's name as used in docs/recording-format.md.
func (t RecordType) String() string {
	switch t {
	case TypeMeta:
		return "meta"
	case TypeRunStart:
		return "run-start"
	case TypeSnapshot:
		return "snapshot"
	case TypeSamples:
		return "samples"
	case TypeTrace:
		return "trace"
	case TypeProcess:
		return "process"
	case TypeRunEnd:
		return "run-end"
	case TypeNote:
		return "note"
	case TypeEnd:
		return "end"
	}
	return "type-" + strconv.Itoa(int(t))
}

// RecordTypes returns every record type this version knows, in number
// order.
func RecordTypes() []RecordType {
	return []RecordType{TypeMeta, TypeRunStart, TypeSnapshot, TypeSamples, TypeTrace, TypeProcess, TypeRunEnd, TypeNote, TypeEnd}
}

// Record is one typed record of a recording. The implementations are the
// record structs of this package; a reader returns *Unknown for record
// types newer than it knows.
type Record interface {
	Type() RecordType
}

// Meta describes the whole file: the experiment, the tool that wrote it and
// the machine. It is always the first record.
type Meta struct {
	Tool        string   `json:"tool"`         // "hwpprobe"
	ToolVersion string   `json:"tool_version"` // hwpprobe's version string
	Kind        string   `json:"kind"`         // "record" (one run) or "diff" (an experiment)
	CommandLine []string `json:"command_line"` // hwpprobe's own argv
	TimeNs      int64    `json:"time_ns"`      // when the file was created, Unix ns
	IntervalNs  int64    `json:"interval_ns"`  // sampling interval
	CPUs        string   `json:"cpus"`         // CPUs sampled, as a CPU list ("0-3,8")
	Host        Host     `json:"host"`
	// Emulated is the emulated machine's name (sysfs.FS.Emulated) when the
	// figures come from hwpemu, "" on real hardware.
	Emulated string `json:"emulated,omitempty"`
	// Sides are the settings compared by an experiment (diff); empty for a
	// plain record.
	Sides []Side `json:"sides,omitempty"`
	// Context is what surrounded the recording (power daemons, platform
	// profile, power supply, firmware, kernel command line), read when
	// it began; nil in files written before hwpprobe recorded it.
	Context *Context `json:"context,omitempty"`
	// Explain is the chain of an experiment made by hwpprobe explain
	// (docs/explain.md); nil for a plain diff.
	Explain *Explain `json:"explain,omitempty"`
}

// Explain says which sides of an experiment form hwpprobe explain's chain
// from its first profile to its last, each step changing one field of
// the request register or EPB (docs/explain.md).
type Explain struct {
	// Chain lists the sides (indices into Meta.Sides) from A to B.
	Chain []int `json:"chain"`
	// Fields names, for each step Chain[k] -> Chain[k+1], the fields it
	// changes ("min", "max", "desired", "epp", "epb"); none for a step
	// between register twins.
	Fields [][]string `json:"fields"`
	// Corners are, with two changed fields, the four sides of the 2x2
	// design: both fields at A's values, the first at B's, the second at
	// B's, both at B's; empty otherwise.
	Corners []int `json:"corners,omitempty"`
}

// Host identifies the machine and kernel.
type Host struct {
	Hostname  string `json:"hostname"`
	Kernel    string `json:"kernel"`         // uname -r
	KernelVer string `json:"kernel_version"` // uname -v
	Arch      string `json:"arch"`           // uname -m
	Vendor    string `json:"vendor"`         // /proc/cpuinfo vendor_id
	CPUModel  string `json:"cpu_model"`      // /proc/cpuinfo model name
	Family    int    `json:"family"`
	Model     int    `json:"model"`
	Stepping  int    `json:"stepping"`
	Microcode string `json:"microcode"`      // /proc/cpuinfo microcode, as written there
	OnlineCPU string `json:"online_cpus"`    // CPU list
	Driver    string `json:"cpufreq_driver"` // scaling_driver, "" without cpufreq
}

// Side is one setting compared by an experiment.
type Side struct {
	Label    string    `json:"label"` // "A", "B", or the profile's name
	Settings []Setting `json:"settings,omitempty"`
}

// Setting is a named power-management setting and its value, such as
// scaling_governor=powersave. When CPUs differ, Value lists them as
// "powersave (0-3), performance (4-7)".
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SettingsText is settings as "governor=powersave epp=power"; "" for
// none.
func SettingsText(set []Setting) string {
	parts := make([]string, len(set))
	for i, x := range set {
		parts[i] = x.Name + "=" + x.Value
	}
	return strings.Join(parts, " ")
}

// RunStart begins a run of the workload.
type RunStart struct {
	Run    int    `json:"run"`              // run id, unique in the file, from 1
	Side   string `json:"side,omitempty"`   // Side.Label of an experiment
	Warmup bool   `json:"warmup,omitempty"` // a warm-up run, left out of statistics
	// Settings applied by hwpprobe before the run (empty for record).
	Settings []Setting `json:"settings,omitempty"`
	// Observed are the settings read from sysfs at the start of the run.
	Observed []Setting `json:"observed,omitempty"`
	// Held is an experiment's check, just before the command starts, that
	// the settings its side fixes still hold; nil when not checked (a
	// record, or a file before format 3.1).
	Held *Held `json:"held,omitempty"`
	// Figures says where each sampled figure came from (turbostat column
	// name to "perf", "msr", "powercap", "sysfs", "clock"; "" absent) and
	// why absent ones are absent.
	Figures *Figures `json:"figures,omitempty"`
	Command []string `json:"command"`
	Dir     string   `json:"dir,omitempty"`
	UID     int      `json:"uid"` // credentials the workload ran with
	GID     int      `json:"gid"`
	PID     int      `json:"pid,omitempty"` // 0 when the command did not start
	TimeNs  int64    `json:"time_ns"`
}

// Held is the check an experiment (diff) makes just before each run's
// command starts, after --prepare and the cool-down: do the sysfs files
// the side's settings write, and the request registers of the sampled
// CPUs, still hold what they held right after hwpprobe applied the side?
type Held struct {
	// TimeNs is when the check began: register writes traced from then
	// on, and every sample, are checked against Regs.
	TimeNs int64 `json:"time_ns"`
	// Regs are the request registers (IA32_HWP_REQUEST or AMD's CPPC
	// request, IA32_ENERGY_PERF_BIAS, IA32_PERF_CTL) of the
	// sampled CPUs as the check read them.
	Regs []HeldReg `json:"regs,omitempty"`
	// Unheld lists what did not hold, one entry per file or register;
	// empty when the settings held.
	Unheld []Unheld `json:"unheld,omitempty"`
}

// HeldReg is one register of one CPU as a check read it.
type HeldReg struct {
	CPU int `json:"cpu"`
	Reg     // msr, value
}

// Unheld is one setting a check found changed: Want is what it held
// right after hwpprobe applied the side, Got what the check found.
type Unheld struct {
	CPU int `json:"cpu"` // -1 for a machine-wide setting
	// Name is the sysfs file's name (scaling_governor,
	// energy_performance_preference, energy_perf_bias, no_turbo, ...) or
	// the register's (IA32_HWP_REQUEST, ...).
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"` // "(unreadable)" when the file could not be read
}

// Figures describes the sampler's sources for a run.
type Figures struct {
	Sources map[string]string `json:"sources"`
	Notes   []FigureNote      `json:"notes,omitempty"`
}

// FigureNote says why a figure is absent or how it is qualified.
type FigureNote struct {
	Figure string `json:"figure"`
	Reason string `json:"reason"`
}

// Type implements Record.
func (RunStart) Type() RecordType { return TypeRunStart }

// Type implements Record.
func (Meta) Type() RecordType { return TypeMeta }

// Snapshot phases.
const (
	PhaseBefore = "before"
	PhaseAfter  = "after"
)

// Snapshot holds the machine's state (sysfs and registers per CPU) at a
// point of a run. Data is the snapshot in the JSON form named by Format, so
// that the container does not change when the snapshot grows fields.
type Snapshot struct {
	Run    int             `json:"run"`
	Phase  string          `json:"phase"` // PhaseBefore, PhaseAfter
	TimeNs int64           `json:"time_ns"`
	Format string          `json:"format"` // e.g. "hwpprobe-snapshot/1"
	Data   json.RawMessage `json:"data"`
}

// Type implements Record.
func (Snapshot) Type() RecordType { return TypeSnapshot }

// Samples is a batch of interval samples of one run. Values of CPU and
// package rows are in the order of CPUColumns and PackageColumns, named as
// turbostat names its columns (Avg_MHz, Busy%, Bzy_MHz, TSC_MHz, IPC,
// PkgWatt, ...).
type Samples struct {
	Run            int      `json:"run"`
	CPUColumns     []string `json:"cpu_columns"`
	PackageColumns []string `json:"package_columns,omitempty"`
	Samples        []Sample `json:"samples"`
	// CPURegs are the CPU rows' registers column by column, set by a
	// scan that asks for PartCPURegColumns (nil otherwise, and when no
	// row has a register); writers ignore them.
	CPURegs []RegColumn `json:"-"`
	// SameCPUs: every sample holds the first sample's CPU rows, the same
	// CPUs in the same order, as the batch's encoding tells (a columnar
	// batch whose CPU ids repeat every sample); false when not known.
	// Writers ignore it.
	SameCPUs bool `json:"-"`
}

// Type implements Record.
func (Samples) Type() RecordType { return TypeSamples }

// Sample is the figures of one interval.
type Sample struct {
	TimeNs     int64        `json:"time_ns"`     // end of the interval, Unix ns
	IntervalNs int64        `json:"interval_ns"` // its measured length
	CPUs       []CPURow     `json:"cpus"`
	Packages   []PackageRow `json:"packages,omitempty"`
	// Summaries are the sampler's summary rows: one per hybrid core type
	// and the whole machine (Type "all"), as turbostat's summary row.
	Summaries []SummaryRow `json:"summaries,omitempty"`
}

// SummaryRow aggregates the CPUs of one core type, or the machine.
type SummaryRow struct {
	Type          string  `json:"type"` // "P", "E", "LP-E" or "all"
	CPUs          int     `json:"cpus"`
	Values        []Value `json:"values"`         // in CPUColumns order
	PackageValues []Value `json:"package_values"` // in PackageColumns order (watts summed, PkgTmp max)
}

// CPURow is one logical CPU's figures for an interval.
type CPURow struct {
	CPU      int     `json:"cpu"`
	Core     int     `json:"core"`
	Package  int     `json:"package"`
	CoreType string  `json:"core_type,omitempty"` // topology.CoreType: "P", "E", "LP-E"; "" when not hybrid
	Values   []Value `json:"values"`
	// Regs are raw register values read at the end of the interval
	// (IA32_HWP_REQUEST, IA32_ENERGY_PERF_BIAS, ...).
	Regs []Reg `json:"regs,omitempty"`
}

// PackageRow is one package's figures for an interval.
type PackageRow struct {
	Package int     `json:"package"`
	Values  []Value `json:"values"`
	// Regs are raw package registers (MSR_CORE_PERF_LIMIT_REASONS,
	// IA32_PACKAGE_THERM_STATUS) read on the package's first CPU.
	Regs []Reg `json:"regs,omitempty"`
}

// Reg is a raw register value.
type Reg struct {
	MSR   uint32 `json:"msr"`
	Value uint64 `json:"value"`
}

// Value is a measured figure. NaN means "not available" and is stored as
// JSON null, never as 0.
type Value float64

// NA returns the value of a figure that could not be measured (NaN).
func NA() Value { return Value(math.NaN()) }

// Valid reports whether the figure was measured.
func (v Value) Valid() bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// MarshalJSON writes null for NaN and infinities.
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.Valid() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(v), 'g', -1, 64), nil
}

// UnmarshalJSON reads null as NaN.
func (v *Value) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = NA()
		return nil
	}
	// A JSON number is valid input to ParseFloat; strings and the like
	// are not, and fail here.
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("figure %s is not a number", b)
	}
	*v = Value(f)
	return nil
}

// Trace is a batch of register writes by the kernel, from the msr:write_msr
// tracepoint.
type Trace struct {
	Run    int          `json:"run"`
	Events []TraceEvent `json:"events"`
	// Lost counts events the tracer dropped since the previous Trace
	// record of the run (ring buffer full).
	Lost uint64 `json:"lost,omitempty"`
}

// Type implements Record.
func (Trace) Type() RecordType { return TypeTrace }

// TraceEvent is one kernel write to an MSR, or one an emulated machine's
// model made (Emulated: PID and Comm are then the process whose sysfs
// write caused it, and Old is the register's value before the write).
type TraceEvent struct {
	TimeNs   int64  `json:"time_ns"` // Unix ns
	CPU      int    `json:"cpu"`
	PID      int    `json:"pid"`
	Comm     string `json:"comm"`
	MSR      uint32 `json:"msr"`
	Value    uint64 `json:"value"`
	Failed   bool   `json:"failed,omitempty"`   // the wrmsr faulted
	Emulated bool   `json:"emulated,omitempty"` // written by hwpemu's model, not the kernel
	Old      uint64 `json:"old,omitempty"`      // Emulated: the value before (absent: 0)
}

// Process holds counters of the workload's process tree (the command and
// every descendant, counted with perf's inherit).
type Process struct {
	Run    int     `json:"run"`
	PID    int     `json:"pid"`
	Counts []Count `json:"counts"`
}

// Type implements Record.
func (Process) Type() RecordType { return TypeProcess }

// Count is one perf counter of a process tree.
type Count struct {
	Event     string `json:"event"` // perf's name: cycles, instructions, task-clock
	Supported bool   `json:"supported"`
	Value     uint64 `json:"value"` // scaled by enabled/running time; ns for task-clock
	EnabledNs uint64 `json:"enabled_ns"`
	RunningNs uint64 `json:"running_ns"`
	Error     string `json:"error,omitempty"` // why it is unsupported
}

// RunEnd is a run's outcome.
type RunEnd struct {
	Run    int   `json:"run"`
	TimeNs int64 `json:"time_ns"`
	// ExitCode is the status hwpprobe exits with for this run as a shell
	// would report it: the command's status, 128+signal when a signal
	// killed it, 127 when it was not found, 126 when it could not run.
	ExitCode    int    `json:"exit_code"`
	Signal      string `json:"signal,omitempty"` // the signal that killed it ("interrupt")
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"` // why the command did not start
	UserNs      int64  `json:"user_ns"`         // CPU time of the reaped tree (rusage)
	SysNs       int64  `json:"sys_ns"`
	MaxRSSKiB   int64  `json:"max_rss_kib"`
}

// Type implements Record.
func (RunEnd) Type() RecordType { return TypeRunEnd }

// Note is a problem or remark met while recording ("sampling stopped: ...").
// Run is 0 for notes about the whole file.
type Note struct {
	Run    int    `json:"run,omitempty"`
	TimeNs int64  `json:"time_ns"`
	Text   string `json:"text"`
}

// Type implements Record.
func (Note) Type() RecordType { return TypeNote }

// End statuses.
const (
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// End closes the file. A file without it was cut short (crash, kill, full
// disk).
type End struct {
	TimeNs int64  `json:"time_ns"`
	Status string `json:"status"` // StatusComplete, StatusInterrupted, StatusFailed
	// Stopping is the adaptive stopping rule's account of an experiment
	// run with `--runs auto` (format 3.2); nil otherwise.
	Stopping *Stopping `json:"stopping,omitempty"`
}

// Stopping is what the adaptive stopping rule of `diff --runs auto`
// decided (analysis.StopRule): the rule, every look at the runs, the
// significance level spent, and whether the verdict settled. An offline
// analysis of the experiment tests the time at the last look's level.
type Stopping struct {
	Alpha     float64 `json:"alpha"`
	Precision float64 `json:"precision"`
	MinRuns   int     `json:"min_runs"`
	MaxRuns   int     `json:"max_runs"`
	Looks     []Look  `json:"looks"`
	// Spent is the sum of the looks' levels: the share of Alpha spent.
	Spent float64 `json:"spent_alpha"`
	// Settled: the last look settled the verdict (significant or
	// equivalent); false when the experiment reached MaxRuns unsettled.
	Settled bool `json:"settled"`
}

// Look is one look of the stopping rule: the runs per side, the level it
// tested at, the U test's p-value, and its verdict ("significant",
// "equivalent" or "unsettled").
type Look struct {
	N       int     `json:"n"`
	Level   float64 `json:"level"`
	P       float64 `json:"p"`
	Verdict string  `json:"verdict"`
}

// Type implements Record.
func (End) Type() RecordType { return TypeEnd }

// Unknown is a record of a type this reader does not know (written by a
// newer minor version). Readers skip it.
type Unknown struct {
	RecType RecordType
	Payload []byte
}

// Type implements Record.
func (u Unknown) Type() RecordType { return u.RecType }

// Value returns the row's figure in column i, NA when the row lacks it.
func (r CPURow) Value(i int) Value {
	if i < 0 || i >= len(r.Values) {
		return NA()
	}
	return r.Values[i]
}

// Reg returns the row's raw register msr and whether it was read.
func (r CPURow) Reg(msr uint32) (uint64, bool) { return findReg(r.Regs, msr) }

// Reg returns the row's raw register msr and whether it was read.
func (r PackageRow) Reg(msr uint32) (uint64, bool) { return findReg(r.Regs, msr) }

func findReg(regs []Reg, msr uint32) (uint64, bool) {
	for _, g := range regs {
		if g.MSR == msr {
			return g.Value, true
		}
	}
	return 0, false
}

// Value returns the figure in column i, NA when the row lacks it.
func (r SummaryRow) Value(i int) Value { return valueAt(r.Values, i) }

// PackageValue returns the figure in package column i, NA when absent.
func (r SummaryRow) PackageValue(i int) Value { return valueAt(r.PackageValues, i) }

func valueAt(v []Value, i int) Value {
	if i < 0 || i >= len(v) {
		return NA()
	}
	return v[i]
}

// Value returns the row's figure in column i, NA when the row lacks it.
func (r PackageRow) Value(i int) Value {
	if i < 0 || i >= len(r.Values) {
		return NA()
	}
	return r.Values[i]
}
