// SPDX-License-Identifier: Apache-2.0

// Package timeline turns recordings (`hwpprobe record`) and experiments
// (`hwpprobe diff`) into per-run time series for plots: delivered MHz,
// Busy%, watts with the power limits, temperatures with TjMax, limit
// reason and HWP_STATUS excursion bands, the HWP request as steps and
// every kernel register write as a marker, all aligned to the run's start
// in seconds.
//
// It reads each file once, batch by batch (recording.ScanFile), keeping
// no samples: every series is decimated as it is read to at most
// Options.MaxPoints buckets that keep each bucket's minimum, maximum and
// mean, so that spikes survive and memory does not grow with the
// recording's length (the bucket grid is described on type clock). The
// result is JSON with stable field names (report's HTML page embeds it).
package timeline

import (
	"errors"
)

// ErrUnreadable is wrapped by Build's error for a file that holds no
// timeline at all: not a recording, empty, corrupt before its first run,
// or without any run.
var ErrUnreadable = errors.New("no timeline")

// Defaults of Options.
const (
	DefaultMaxPoints = 2000
	DefaultMaxWrites = 5000
)

// Options shape a timeline.
type Options struct {
	// MaxPoints bounds the buckets of every series of a run
	// (DefaultMaxPoints when 0).
	MaxPoints int
	// MaxWrites bounds the register writes kept per run; the rest are
	// counted in Run.WritesDropped (DefaultMaxWrites when 0).
	MaxWrites int
	// PerCPU adds Avg_MHz, Bzy_MHz and Busy% series per CPU (group
	// "cpuN") next to those per core type. Memory grows with the CPUs:
	// about 3 x CPUs x MaxPoints x 32 bytes.
	PerCPU bool
}

func (o Options) maxPoints() int {
	if o.MaxPoints > 0 {
		return o.MaxPoints
	}
	return DefaultMaxPoints
}

func (o Options) maxWrites() int {
	if o.MaxWrites > 0 {
		return o.MaxWrites
	}
	return DefaultMaxWrites
}

// Timeline is every run of the files given.
type Timeline struct {
	Sources []Source `json:"sources"`
	// Emulated names the emulated machine when any file was recorded
	// under hwpemu: every figure of such a file is emulated.
	Emulated  string `json:"emulated,omitempty"`
	MaxPoints int    `json:"max_points"`
	Runs      []Run  `json:"runs"`
	// Missing says what the files lack: a file cut short or damaged, a
	// run without its end; what is there is in Runs.
	Missing []string `json:"missing,omitempty"`
}

// Source is one file read.
type Source struct {
	Name     string `json:"name"` // the file's base name
	Kind     string `json:"kind"` // "record" or "diff"
	Emulated string `json:"emulated,omitempty"`
	Complete bool   `json:"complete"` // its end record was read and nothing was damaged
}

// Run is one run's timeline. Times are seconds from the run's start
// (RunStart.TimeNs); a series bucket covers [T, T+BucketSeconds).
type Run struct {
	Source string `json:"source"` // Source.Name
	Run    int    `json:"run"`    // run id in its file
	Side   string `json:"side,omitempty"`
	// Profile is the side's settings in an experiment, as
	// "governor=performance, epp=performance"; "" for a recording.
	Profile string  `json:"profile,omitempty"`
	Warmup  bool    `json:"warmup,omitempty"`
	StartNs int64   `json:"start_ns"` // Unix ns
	Seconds float64 `json:"seconds"`  // wall time, run start to run end (to the last sample when cut short)
	Ended   bool    `json:"ended"`    // its run-end record was read
	// ExitCode is the command's status as a shell reports it (Ended only).
	ExitCode      int      `json:"exit_code"`
	BucketSeconds float64  `json:"bucket_s"` // the width of every series' buckets
	Series        []Series `json:"series"`
	// TjMaxC is the package's TjMax from the run's snapshot; absent when
	// not recorded.
	TjMaxC *float64 `json:"tjmax_c,omitempty"`
	// PowerLimits are PL1 and PL2 over the run: the snapshot's values at
	// 0, then one step per traced write of MSR_PKG_POWER_LIMIT; empty
	// when not recorded.
	PowerLimits []PowerLimit `json:"power_limits,omitempty"`
	// LimitTable says how limit reasons are named: the SDM's table for
	// the model (hwp.SDMCoreLimitTable), or raw bits ("bitN") where
	// hwpprobe has none.
	LimitTable   string `json:"limit_table,omitempty"`
	LimitReasons []Band `json:"limit_reasons,omitempty"`
	// Excursions are the intervals where IA32_HWP_STATUS had
	// Excursion_To_Minimum set, per core type.
	Excursions []Band  `json:"hwp_excursions,omitempty"`
	Requests   []Steps `json:"requests,omitempty"`
	Writes     []Write `json:"writes"`
	// WritesDropped counts the writes past Options.MaxWrites.
	WritesDropped int `json:"writes_dropped,omitempty"`
	// WritesLost counts the events the tracer had no room for.
	WritesLost uint64   `json:"writes_lost,omitempty"`
	Notes      []string `json:"notes,omitempty"` // the recording's notes about the run
}

// Series is one figure of one group, decimated: point i is bucket
// [T[i], T[i]+Run.BucketSeconds) with the minimum, maximum and mean of
// the N samples in it. Buckets without samples are left out.
type Series struct {
	Figure string `json:"figure"` // turbostat's column name: Avg_MHz, Bzy_MHz, Busy%, CoreTmp, PkgWatt, CorWatt, RAMWatt, PkgTmp, ...
	// Group is a core type ("P", "E", "LP-E"), "all" (the machine, as
	// turbostat's summary row), "cpuN" (Options.PerCPU) or "package"
	// (package figures: watts summed over packages, the hottest
	// package's temperature).
	Group string    `json:"group"`
	Unit  string    `json:"unit"` // "MHz", "%", "W", "°C"
	T     []float64 `json:"t"`
	Min   []float64 `json:"min"`
	Max   []float64 `json:"max"`
	Mean  []float64 `json:"mean"`
	N     []int     `json:"n"`
}

// PowerLimit is the package power limits from T on.
type PowerLimit struct {
	T      float64  `json:"t"`
	PL1W   *float64 `json:"pl1_w"`
	PL2W   *float64 `json:"pl2_w"`
	Source string   `json:"source"` // "snapshot" or "write"
}

// Band is an interval [From, To) where a condition held in some of the
// samples: Share is the fraction of samples (of packages for limit
// reasons, of CPUs for excursions) in it that had it.
type Band struct {
	Name  string  `json:"name"`  // the limit reason ("PkgPwrL1", "bit10") or "excursion_to_minimum"
	Group string  `json:"group"` // "package" for limit reasons; the core type for excursions
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Share float64 `json:"share"`
}

// Steps is one field of the sampled request register of a core type's
// CPUs over time: each step holds from T to the next step's T, with the
// lowest and highest value any of the group's CPUs held.
type Steps struct {
	Register string `json:"register"` // a request register's catalog name (regs.Requests)
	Field    string `json:"field"`    // "min", "max", "desired", "epp"
	Group    string `json:"group"`    // core type or "all"
	Steps    []Step `json:"steps"`
}

// Step is one value range from T on.
type Step struct {
	T  float64 `json:"t"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Write is one traced register write: the kernel's (msr:write_msr) or an
// emulated machine's model's (Emulated).
type Write struct {
	T        float64 `json:"t"`
	CPU      int     `json:"cpu"`
	CoreType string  `json:"core_type,omitempty"`
	Register string  `json:"register"` // catalog name, or "MSR 0x..."
	MSR      string  `json:"msr"`      // address, "0x199"
	// Old is the value before the write, "" when unknown: the emulated
	// model's, else the previous traced write's or the snapshot's
	// before the run.
	Old    string  `json:"old,omitempty"`
	New    string  `json:"new"`
	Text   string  `json:"text"`   // the new value decoded in turbostat's words
	Fields []Field `json:"fields"` // the decoded fields, old next to new
	Comm   string  `json:"comm"`
	PID    int     `json:"pid"`
	// Emulated: hwpemu's model made the write; Comm and PID are the
	// process whose sysfs write caused it.
	Emulated bool `json:"emulated,omitempty"`
	Failed   bool `json:"failed,omitempty"` // the wrmsr faulted
}

// Field is one decoded field of a written register (package regs' names
// and values); Old is null when the old value is unknown.
type Field struct {
	Name    string `json:"name"`
	Old     any    `json:"old"`
	New     any    `json:"new"`
	Changed bool   `json:"changed,omitempty"`
}
