// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// Errors of Analyze.
var (
	// ErrNotExperiment: one file was given and it is not a diff
	// experiment with two or more sides.
	ErrNotExperiment = errors.New("not an experiment")
	// ErrTooFewRuns: a side has no complete, successful run.
	ErrTooFewRuns = errors.New("a side has no complete run")
	// ErrNotHeld: a side's settings did not hold in any of its complete,
	// successful measured runs; there is nothing to compare.
	ErrNotHeld = errors.New("settings did not hold")
)

// Source is one recording given to Analyze, with the name it came from.
type Source struct {
	Name string
	Rec  *recording.Recording
	// scan is what ReadSources gathered while scanning the file (Rec
	// then has no samples or trace events); nil for a Rec read whole.
	scan *scanner
}

// scanner returns what ReadSources gathered for s, or scans s's runs when
// its recording was read whole.
func (s Source) scanner() *scanner {
	if s.scan != nil {
		return s.scan
	}
	sc := newScanner(s.Rec.Meta.Host)
	for _, run := range s.Rec.Runs {
		sc.addRun(run)
	}
	return sc
}

// noteIncomplete adds to res.Missing why s's recording ends early: the
// problem that stopped the reading (shown says what is used of it) or
// the missing end record; and which records of a newer format version
// were skipped (docs/recording-format.md, "Version policy").
func (res *Result) noteIncomplete(s Source, shown string) {
	if s.Rec.Problem != nil {
		res.Missing = append(res.Missing, fmt.Sprintf("%s: %v; %s", s.Name, s.Rec.Problem, shown))
	} else if s.Rec.End == nil {
		res.Missing = append(res.Missing, s.Name+": the file has no end record (the writer stopped)")
	}
	if err := s.Rec.SkippedError(); err != nil {
		res.Missing = append(res.Missing, fmt.Sprintf("%s: %v", s.Name, err))
	}
}

// RunResult is one run as the analysis sees it.
type RunResult struct {
	Side     string   `json:"side"`
	Run      int      `json:"run"`   // run id in its file
	Order    int      `json:"order"` // position among the measured runs, from 0
	Source   string   `json:"source"`
	Warmup   bool     `json:"warmup,omitempty"`
	Seconds  float64  `json:"seconds"`
	ExitCode int      `json:"exit_code"`
	Command  []string `json:"command"`
	Joules   float64  `json:"joules"`   // package energy; NaN when not measured
	PkgWatts float64  `json:"pkg_watt"` // mean package power; NaN when not measured
	// Excluded says why the run is left out of the statistics; "" when
	// it is counted.
	Excluded     string        `json:"excluded,omitempty"`
	Disturbances []Disturbance `json:"disturbances,omitempty"`
	// Facts is what the run showed of the hardware (RunFacts).
	Facts    RunFacts `json:"evidence"`
	summary  summary.Summary
	evidence runEvidence
	// checked: the run's settings were checked just before its command
	// started (recording.Held).
	checked bool
}

// Counted reports whether the run is in the statistics.
func (r RunResult) Counted() bool { return r.Excluded == "" }

// TypeEvidence is a side's evidence for one core type.
type TypeEvidence struct {
	Type    topology.CoreType `json:"type"`
	CPUs    int               `json:"cpus"`
	Held    Fields            `json:"held"`    // request fields and EPB the sampled registers held
	Written []Writer          `json:"written"` // what each process's traced writes set
	AvgMHz  float64           `json:"avg_mhz"` // medians over the counted runs
	BzyMHz  float64           `json:"bzy_mhz"`
	BusyPct float64           `json:"busy_pct"`
	IPC     float64           `json:"ipc"`
	CoreTmp float64           `json:"core_tmp_max"` // median of the runs' maxima, °C
	// Excursions is the share of this type's CPU-samples whose
	// IA32_HWP_STATUS had Excursion_To_Minimum set; NaN when not sampled.
	Excursions float64 `json:"hwp_excursions"`
	// LevelKHz is the kHz one HWP performance level stands for on this
	// type's CPUs (LevelKHz), from the first counted run's snapshot; 0
	// when not known.
	LevelKHz int64 `json:"level_khz,omitempty"`
}

// LevelText is a request field's level with its frequency where one level's
// is known: "62 (4960 MHz)", else "62". EPP and EPB are no levels, and
// 0 (desired: the hardware chooses) none either.
func (t TypeEvidence) LevelText(field string, v uint64) string {
	s := strconv.FormatUint(v, 10)
	if t.LevelKHz == 0 || v == 0 || field == "epp" || field == "epb" {
		return s
	}
	return fmt.Sprintf("%s (%d MHz)", s, int64(v)*t.LevelKHz/1000)
}

// SideResult is one side.
type SideResult struct {
	Label     string              `json:"label"`
	Settings  []recording.Setting `json:"settings,omitempty"`
	Counted   int                 `json:"counted_runs"`
	CoreTypes []TypeEvidence      `json:"core_types"`
	PkgTmp    float64             `json:"pkg_tmp_max"` // median of the runs' maxima, °C
	// LimitShares is the share of samples with each limit reason active
	// (MSR_CORE_PERF_LIMIT_REASONS); empty when not sampled.
	LimitShares map[string]float64 `json:"limit_shares,omitempty"`
	// Excursions is the share of CPU-samples (each CPU row of each sample)
	// whose IA32_HWP_STATUS had Excursion_To_Minimum (bit 2) set; NaN when
	// HWP_STATUS was not sampled. The bit is sticky: it may have been set
	// before the sample's interval (docs/diff.md).
	Excursions float64 `json:"hwp_excursions"`
	// NewExcursions sums the counted runs' newly set excursion bits per
	// core type (RunFacts.ExcursionEdges); nil when HWP_STATUS was not
	// read. ExcursionRuns counts the runs with at least one.
	NewExcursions map[string]int `json:"hwp_excursions_new"`
	ExcursionRuns int            `json:"hwp_excursion_runs"`
	// LimitSeconds is, per limit reason, the median over the counted runs
	// of the seconds it was active (RunFacts.LimitSeconds); nil when not
	// sampled.
	LimitSeconds map[string]float64 `json:"limit_seconds"`
	// PL2Share is the median over the counted runs of the share of their
	// time spent inside the PL2 window (RunFacts.PL2Share); NaN when not
	// known.
	PL2Share float64 `json:"pl2_window_share"`
}

// Figure compares one figure between the sides.
type Figure struct {
	Name       string     `json:"name"` // "time", "energy", "pkg_watt", "bzy_mhz P", ...
	Unit       string     `json:"unit"`
	Comparison Comparison `json:"comparison"`
}

// Result is an experiment analysed.
type Result struct {
	Meta    recording.Meta `json:"-"`
	Sources []string       `json:"sources"`
	Options Options        `json:"-"`
	Sides   []SideResult   `json:"sides"`
	Runs    []RunResult    `json:"runs"`
	// Time, Figures and Differs compare the two sides of a two-side
	// experiment; with more sides they are empty and Multi compares.
	Time    Figure       `json:"time"`
	Figures []Figure     `json:"figures"`
	Differs []Difference `json:"differs"`
	// DiffersNotSignificant counts the measured figures whose medians
	// differ without a significant test: Differs leaves them out.
	DiffersNotSignificant int      `json:"differs_not_significant"`
	Drift                 Drift    `json:"drift"`
	Warnings              []string `json:"warnings"`
	// Missing says what the files lack: runs cut short, a truncated file.
	Missing []string `json:"missing,omitempty"`
	// Reference is the index of the side the others are compared with
	// (Multi).
	Reference int `json:"-"`
	// Multi compares, in an experiment of more than two sides, each side
	// with the reference (CompareN): the time, then the energy where
	// every side measured it.
	Multi []MultiFigure `json:"-"`
	// Attributions attribute, in an experiment of hwpprobe explain, the
	// change from A to B to the chain's steps (Explain): the time, then
	// the energy.
	Attributions []Attribution `json:"-"`
	// Contexts are the run contexts the sources recorded (meta's
	// context), in Sources' order; nil for a file written without one.
	Contexts []*recording.Context `json:"-"`
	// Stopping is the stopping rule's account of an experiment run with
	// `--runs auto` (its end record's); nil otherwise. The time is then
	// tested at its last look's level (StoppingTime).
	Stopping *recording.Stopping `json:"-"`
}

// MultiFigure compares one figure between every side and the reference.
type MultiFigure struct {
	Name    string
	Unit    string
	Samples []Sample // the counted runs' values per side
	Multi   MultiComparison
}

// Analyze analyses one experiment file (Kind "diff", two or more sides)
// or two recordings, each the runs of one side. keepDisturbed counts
// disturbed runs. With more than two sides each is compared with the
// first (Multi; CompareSides chooses another reference).
func Analyze(srcs []Source, o Options, keepDisturbed bool) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	o = Options{Alpha: o.alpha(), Confidence: o.confidence()}
	res := &Result{Meta: srcs[0].Rec.Meta, Options: o}
	if err := res.collectRuns(srcs); err != nil {
		return nil, err
	}
	res.exclude(keepDisturbed)
	if !keepDisturbed {
		if err := res.checkSidesHeld(); err != nil {
			return nil, err
		}
	}
	if len(res.Sides) > 2 {
		if err := res.CompareSides(0); err != nil {
			return nil, err
		}
	} else {
		var err error
		if res.Time, err = res.figure("time", "s", func(r RunResult) float64 { return r.Seconds }); err != nil {
			return nil, err
		}
		if err := res.stoppingTime(srcs); err != nil {
			return nil, err
		}
		res.compareFigures()
	}
	for i := range res.Sides {
		res.Sides[i] = res.side(res.Sides[i])
	}
	res.warn()
	if len(res.Sides) == 2 {
		res.Differs, res.DiffersNotSignificant = differences(res)
	}
	return res, nil
}

// stoppingTime tests the time, in an experiment run with `--runs auto`,
// at the level the live run's last look spent (recording.Stopping), not
// at Options.Alpha: the level the stopping rule's guarantee holds at.
func (res *Result) stoppingTime(srcs []Source) error {
	if len(srcs) != 1 || srcs[0].Rec.End == nil || srcs[0].Rec.End.Stopping == nil || len(srcs[0].Rec.End.Stopping.Looks) == 0 {
		return nil
	}
	st := srcs[0].Rec.End.Stopping
	res.Stopping = st
	last := st.Looks[len(st.Looks)-1]
	a, b := res.values(res.Sides[0].Label, Seconds), res.values(res.Sides[1].Label, Seconds)
	c, err := CompareAtLevel(a, b, last.Level)
	if err != nil {
		return err
	}
	c.Notes = append(c.Notes, StoppingNote(st))
	res.Time.Comparison = c
	return nil
}

// StoppingNote says how the adaptive stopping rule ended and at which
// level the time is tested.
func StoppingNote(st *recording.Stopping) string {
	last := st.Looks[len(st.Looks)-1]
	settled := "settled: " + last.Verdict
	if !st.Settled {
		settled = fmt.Sprintf("not settled at %d runs per side (%s at the last look)", st.MaxRuns, last.Verdict)
	}
	return fmt.Sprintf("--runs auto: %d looks (the last at %d+%d runs), %s; alpha %.4g spent of %g; the time is tested at the last look's level %.4g, as the live run did, not at --alpha",
		len(st.Looks), last.N, last.N, settled, st.Spent, st.Alpha, last.Level)
}

// Seconds and Joules are a run's time and package energy, the figures
// CompareSides compares.
func Seconds(r RunResult) float64 { return r.Seconds }

// Joules is a run's package energy (NaN when not measured).
func Joules(r RunResult) float64 { return r.Joules }

// timeAndEnergy are the figures CompareSides and Explain compare, in order:
// the time, then the energy where every side measured it.
var timeAndEnergy = []struct {
	name, unit string
	f          func(RunResult) float64
}{{"time", "s", Seconds}, {"energy", "J", Joules}}

// Samples are the counted runs' values of every side, labelled.
func (res *Result) Samples(f func(RunResult) float64) []Sample {
	out := make([]Sample, len(res.Sides))
	for i, s := range res.Sides {
		out[i] = Sample{Label: s.Label, Values: res.values(s.Label, f)}
	}
	return out
}

// SideIndex returns the index of the side labelled label, or -1.
func (res *Result) SideIndex(label string) int {
	return slices.IndexFunc(res.Sides, func(s SideResult) bool { return s.Label == label })
}

// CompareSides compares every side with side ref (CompareN) and sets
// Multi: the time, then the energy when every side measured it.
func (res *Result) CompareSides(ref int) error {
	res.Reference, res.Multi = ref, nil
	for _, f := range timeAndEnergy {
		samples := res.Samples(f.f)
		for _, s := range samples {
			if len(s.Values) == 0 {
				if f.name == "time" {
					return fmt.Errorf("%w: %s has no counted run", ErrTooFewRuns, s.Label)
				}
				return nil
			}
		}
		mc, err := CompareN(samples, ref, res.Options)
		if err != nil {
			return err
		}
		res.Multi = append(res.Multi, MultiFigure{Name: f.name, Unit: f.unit, Samples: samples, Multi: mc})
	}
	return nil
}

// collectRuns takes the runs of the sources and assigns their sides.
func (res *Result) collectRuns(srcs []Source) error {
	switch len(srcs) {
	case 1:
		m := srcs[0].Rec.Meta
		if m.Kind != "diff" || len(m.Sides) < 2 {
			return fmt.Errorf("%w: %s is a %q recording with %d sides; give an experiment from hwpprobe diff, or two recordings",
				ErrNotExperiment, srcs[0].Name, m.Kind, len(m.Sides))
		}
		for _, s := range m.Sides {
			res.Sides = append(res.Sides, SideResult{Label: s.Label, Settings: s.Settings})
		}
	case 2:
		for i, s := range srcs {
			res.Sides = append(res.Sides, SideResult{Label: string(rune('A'+i)) + " (" + s.Name + ")"})
		}
	default:
		return fmt.Errorf("%w: %d recordings given; give one experiment or two recordings", ErrNotExperiment, len(srcs))
	}
	for i, s := range srcs {
		res.Sources = append(res.Sources, s.Name)
		res.Contexts = append(res.Contexts, s.Rec.Meta.Context)
		res.noteIncomplete(s, "the complete runs before it are analysed")
		sc := s.scanner()
		for _, run := range s.Rec.Runs {
			side := res.Sides[i].Label
			if len(srcs) == 1 {
				side = run.Start.Side
			}
			res.Runs = append(res.Runs, newRunResult(s, sc, run, side))
		}
	}
	order := 0
	for i := range res.Runs {
		if !res.Runs[i].Warmup {
			res.Runs[i].Order = order
			order++
		}
	}
	return nil
}

func newRunResult(s Source, sc *scanner, run *recording.Run, side string) RunResult {
	sum, ev, facts := sc.result(s.Rec, run)
	r := RunResult{Facts: facts, Side: side, Run: run.Start.Run, Source: s.Name, Warmup: run.Start.Warmup,
		Seconds: sum.Duration.Seconds(), Command: run.Start.Command, Joules: math.NaN(), PkgWatts: math.NaN(), summary: sum,
		evidence: ev}
	if run.End != nil {
		r.ExitCode = run.End.ExitCode
	}
	if n := len(sum.Rows); n > 0 && sum.Rows[n-1].Type == string(topology.All) {
		if j := sum.Rows[n-1].Joule("PkgWatt"); j.Valid() {
			r.Joules = float64(j)
			r.PkgWatts = float64(sum.Rows[n-1].Watt("PkgWatt"))
		}
	}
	if h := run.Start.Held; h != nil {
		r.checked = true
		for _, u := range h.Unheld {
			r.Disturbances = append(r.Disturbances, Disturbance{CPU: u.CPU, Register: u.Name, OldHex: u.Want, NewHex: u.Got,
				AtStart: true, Checked: true})
		}
	}
	r.Disturbances = append(r.Disturbances, r.evidence.disturbance...)
	return r
}

// exclude marks the runs left out of the statistics.
func (res *Result) exclude(keepDisturbed bool) {
	res.checkHeld()
	for i := range res.Runs {
		r := &res.Runs[i]
		switch {
		case r.Warmup:
			r.Excluded = "warm-up"
		case r.summary.End == nil:
			r.Excluded = "cut short (no run-end record)"
			res.Missing = append(res.Missing, fmt.Sprintf("run %d (%s) of %s was cut short", r.Run, r.Side, r.Source))
		case r.summary.End.Interrupted:
			r.Excluded = "interrupted"
		case r.ExitCode != 0:
			r.Excluded = fmt.Sprintf("the command failed (status %d)", r.ExitCode)
		case len(r.Disturbances) > 0 && !keepDisturbed:
			r.Excluded = fmt.Sprintf("disturbed: %s", r.Disturbances[0])
		}
	}
}

// checkHeld marks as disturbed the runs not checked before their command
// started (recordings before format 3.1, `record` files) whose request
// registers, at their start, did not hold what most of their side's runs
// held (a setting changed between runs, by a daemon or a user): for each
// CPU and register, the value a strict majority of the side's unchecked
// runs started with.
func (res *Result) checkHeld() {
	for _, side := range res.Sides {
		votes := map[[2]uint64]map[uint64]int{}  // (cpu, msr) -> setting bits -> runs
		raw := map[[2]uint64]map[uint64]uint64{} // (cpu, msr) -> setting bits -> a raw value
		n := 0
		for _, r := range res.Runs {
			if r.Side != side.Label || r.Warmup || r.checked {
				continue
			}
			n++
			for k, v := range r.evidence.first {
				if votes[k] == nil {
					votes[k], raw[k] = map[uint64]int{}, map[uint64]uint64{}
				}
				b := SettingBits(uint32(k[1]), v, r.evidence.driver)
				votes[k][b]++
				raw[k][b] = v
			}
		}
		for i := range res.Runs {
			r := &res.Runs[i]
			if r.Side != side.Label || r.Warmup || r.checked {
				continue
			}
			for _, k := range slices.SortedFunc(maps.Keys(r.evidence.first), cmpKey) {
				got := r.evidence.first[k]
				if want, ok := majority(votes[k], n); ok && SettingBits(uint32(k[1]), got, r.evidence.driver) != want {
					d := disturbance("", 0, 0, int(k[0]), uint32(k[1]), raw[k][want], got)
					d.AtStart = true
					r.Disturbances = append(r.Disturbances, d)
					break
				}
			}
		}
	}
}

// checkSidesHeld returns an error wrapping ErrNotHeld when a side has
// complete, successful measured runs and every one of them was disturbed:
// its settings never held, so no verdict can say what they do. The one
// line names each such side, its settings and its first run's first
// disturbance.
func (res *Result) checkSidesHeld() error {
	var msgs []string
	for _, s := range res.Sides {
		n, first := 0, ""
		for _, r := range res.Runs {
			if r.Side != s.Label || r.Warmup || r.summary.End == nil || r.summary.End.Interrupted || r.ExitCode != 0 {
				continue
			}
			if len(r.Disturbances) == 0 {
				n = -1
				break
			}
			if n++; first == "" {
				first = fmt.Sprintf("run %d: %s", r.Run, r.Disturbances[0])
			}
		}
		side := "side " + s.Label
		if len(s.Settings) > 0 {
			side += " (" + recording.SettingsText(s.Settings) + ")"
		}
		switch {
		case n == 1:
			msgs = append(msgs, fmt.Sprintf("%s in its one run (%s)", side, first))
		case n > 1:
			msgs = append(msgs, fmt.Sprintf("%s in none of its %d runs (%s)", side, n, first))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s; no verdict (--keep-disturbed counts such runs)", ErrNotHeld, strings.Join(msgs, "; "))
}

func cmpKey(a, b [2]uint64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }

// majority returns the value more than half of n votes went to.
func majority(votes map[uint64]int, n int) (uint64, bool) {
	for v, c := range votes {
		if 2*c > n {
			return v, true
		}
	}
	return 0, false
}

// values returns the counted runs' values of a side, in run order.
func (res *Result) values(side string, f func(RunResult) float64) []float64 {
	var out []float64
	for _, r := range res.Runs {
		if r.Side == side && r.Counted() {
			if v := f(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
				out = append(out, v)
			}
		}
	}
	return out
}

func (res *Result) figure(name, unit string, f func(RunResult) float64) (Figure, error) {
	a, b := res.values(res.Sides[0].Label, f), res.values(res.Sides[1].Label, f)
	if len(a) == 0 || len(b) == 0 {
		return Figure{}, fmt.Errorf("%w: %s has %d, %s has %d counted runs with %s",
			ErrTooFewRuns, res.Sides[0].Label, len(a), res.Sides[1].Label, len(b), name)
	}
	c, err := Compare(a, b, res.Options)
	return Figure{Name: name, Unit: unit, Comparison: c}, err
}

// compareFigures compares energy, power and delivered frequency per core
// type, where both sides measured them.
func (res *Result) compareFigures() {
	add := func(name, unit string, f func(RunResult) float64) {
		if fig, err := res.figure(name, unit, f); err == nil {
			res.Figures = append(res.Figures, fig)
		}
	}
	add("energy", "J", func(r RunResult) float64 { return r.Joules })
	add("pkg_watt", "W", func(r RunResult) float64 { return r.PkgWatts })
	add("cor_watt", "W", rowValue(string(topology.All), func(r summary.Row) recording.Value { return r.Watt("CorWatt") }))
	for _, t := range res.coreTypes() {
		add("bzy_mhz "+t, "MHz", rowValue(t, func(r summary.Row) recording.Value { return r.BzyMHz }))
		add("avg_mhz "+t, "MHz", rowValue(t, func(r summary.Row) recording.Value { return r.AvgMHz }))
	}
}

func rowValue(t string, f func(summary.Row) recording.Value) func(RunResult) float64 {
	return func(r RunResult) float64 {
		for _, row := range r.summary.Rows {
			if row.Type == t && f(row).Valid() {
				return float64(f(row))
			}
		}
		return math.NaN()
	}
}

// coreTypes lists the summary rows' types in the order recorded.
func (res *Result) coreTypes() []string {
	var out []string
	for _, r := range res.Runs {
		for _, row := range r.summary.Rows {
			if !slices.Contains(out, row.Type) {
				out = append(out, row.Type)
			}
		}
	}
	return out
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return median(v)
}

// side condenses a side's counted runs (or all its runs when none is
// counted) into its evidence.
func (res *Result) side(s SideResult) SideResult {
	runs := res.sideRuns(s.Label)
	s.Counted = len(runs)
	held, written, writes := map[string]fieldCounter{}, map[string]map[string]fieldCounter{}, map[string]map[string]int{}
	limits, limitN, status := map[string]int{}, 0, map[string]statusCount{}
	for _, r := range runs {
		mergeCounters(held, r.evidence.held)
		for t, byComm := range r.evidence.written {
			if written[t] == nil {
				written[t], writes[t] = map[string]fieldCounter{}, map[string]int{}
			}
			mergeCounters(written[t], byComm)
			for c, n := range r.evidence.writes[t] {
				writes[t][c] += n
			}
		}
		for k, n := range r.evidence.limits {
			limits[k] += n
		}
		limitN += r.evidence.limitN
		for t, c := range r.evidence.status {
			status[t] = status[t].plus(c)
		}
	}
	var all statusCount
	for _, c := range status {
		all = all.plus(c)
	}
	s.Excursions = all.share()
	if limitN > 0 {
		s.LimitShares = map[string]float64{}
		for k, n := range limits {
			s.LimitShares[k] = float64(n) / float64(limitN)
		}
	}
	var pkgTmp []float64
	for _, t := range res.coreTypes() {
		ct := TypeEvidence{Type: topology.CoreType(t), Held: fieldsOf(held[t]), Excursions: status[t].share()}
		if topology.CoreType(t) == topology.All {
			ct.Excursions = all.share()
		}
		var avg, bzy, busy, ipc, tmp []float64
		for _, r := range runs {
			for _, row := range r.summary.Rows {
				if row.Type != t {
					continue
				}
				ct.CPUs = row.CPUs
				avg, bzy, busy = appendValid(avg, row.AvgMHz), appendValid(bzy, row.BzyMHz), appendValid(busy, row.BusyPct)
				ipc, tmp = appendValid(ipc, row.IPC), appendValid(tmp, row.CoreTmp)
				if t == string(topology.All) {
					pkgTmp = appendValid(pkgTmp, row.PkgTmp)
				}
			}
		}
		ct.AvgMHz, ct.BzyMHz, ct.BusyPct, ct.IPC, ct.CoreTmp = medianOf(avg), medianOf(bzy), medianOf(busy), medianOf(ipc), medianOf(tmp)
		for _, r := range runs {
			if k := r.Facts.levelKHz[t]; k > 0 && ct.LevelKHz == 0 {
				ct.LevelKHz = k
			}
		}
		for _, comm := range slices.Sorted(maps.Keys(written[t])) {
			ct.Written = append(ct.Written, Writer{Comm: comm, Writes: writes[t][comm], Fields: written[t][comm].fields()})
		}
		slices.SortStableFunc(ct.Written, func(a, b Writer) int { return cmp.Compare(b.Writes, a.Writes) })
		s.CoreTypes = append(s.CoreTypes, ct)
	}
	s.PkgTmp = medianOf(pkgTmp)
	s.sideFacts(runs)
	return s
}

// sideFacts condenses the runs' RunFacts: the new excursions summed, the
// limit seconds' and the PL2 window share's medians.
func (s *SideResult) sideFacts(runs []RunResult) {
	limits, pl2 := map[string][]float64{}, []float64(nil)
	s.PL2Share = math.NaN()
	for _, r := range runs {
		f := r.Facts
		if f.ExcursionEdges != nil {
			if s.NewExcursions == nil {
				s.NewExcursions = map[string]int{}
			}
			for t, n := range f.ExcursionEdges {
				s.NewExcursions[t] += n
			}
			if f.Edges() > 0 {
				s.ExcursionRuns++
			}
		}
		if !math.IsNaN(f.PL2Share) {
			pl2 = append(pl2, f.PL2Share)
		}
	}
	sampled := false
	for _, r := range runs {
		sampled = sampled || r.Facts.LimitSeconds != nil
		for k := range r.Facts.LimitSeconds {
			limits[k] = nil
		}
	}
	for k := range limits {
		for _, r := range runs {
			if r.Facts.LimitSeconds != nil {
				limits[k] = append(limits[k], r.Facts.LimitSeconds[k]) // 0 s where the run never had it
			}
		}
	}
	if sampled {
		s.LimitSeconds = map[string]float64{}
		for k, v := range limits {
			s.LimitSeconds[k] = medianOf(v)
		}
	}
	if len(pl2) > 0 {
		s.PL2Share = medianOf(pl2)
	}
}

func (res *Result) sideRuns(label string) []RunResult {
	var counted, all []RunResult
	for _, r := range res.Runs {
		if r.Side != label || r.Warmup {
			continue
		}
		all = append(all, r)
		if r.Counted() {
			counted = append(counted, r)
		}
	}
	if len(counted) == 0 {
		return all
	}
	return counted
}

func fieldsOf(fc fieldCounter) Fields {
	if fc == nil {
		return Fields{}
	}
	return fc.fields()
}

func mergeCounters[K comparable](dst, src map[K]fieldCounter) {
	for k, fc := range src {
		if dst[k] == nil {
			dst[k] = fieldCounter{}
		}
		for f, m := range fc {
			if dst[k][f] == nil {
				dst[k][f] = map[uint64]int{}
			}
			for v, n := range m {
				dst[k][f][v] += n
			}
		}
	}
}

func appendValid(dst []float64, v recording.Value) []float64 {
	if v.Valid() {
		return append(dst, float64(v))
	}
	return dst
}

// warn gathers the warnings: per side, the comparison's, drift, excluded
// runs.
func (res *Result) warn() {
	var runs []Run
	for _, s := range res.Sides {
		res.Warnings = append(res.Warnings, SideWarnings(s.Label, res.values(s.Label, func(r RunResult) float64 { return r.Seconds }))...)
	}
	res.Warnings = append(res.Warnings, res.Time.Comparison.Warnings...)
	for _, r := range res.Runs {
		if r.Counted() {
			runs = append(runs, Run{Side: r.Side, Index: r.Order, Value: r.Seconds})
		} else if !r.Warmup {
			res.Warnings = append(res.Warnings, fmt.Sprintf("run %d (%s) left out: %s", r.Run, r.Side, r.Excluded))
		}
	}
	res.Drift = DriftOf(runs, res.Options.alpha())
	res.Warnings = append(res.Warnings, res.Drift.Warnings...)
	if w := PL2Warning(res.Sides); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
}

// PL2Gap is the difference between two sides' median shares of time
// inside the PL2 window (RunFacts.PL2Share) above which PL2Warning warns.
const PL2Gap = 0.10

// PL2Warning warns when the sides' runs spent shares of their time inside
// the PL2 window (medians over each side's counted runs) more than PL2Gap
// apart: part of a difference in time may then come from how much of the
// power budget above PL1 each side's runs had, not from the settings.
// "" when they do not, or fewer than two sides know the share.
func PL2Warning(sides []SideResult) string {
	lo, hi := -1, -1
	for i, s := range sides {
		if math.IsNaN(s.PL2Share) {
			continue
		}
		if lo < 0 || s.PL2Share < sides[lo].PL2Share {
			lo = i
		}
		if hi < 0 || s.PL2Share > sides[hi].PL2Share {
			hi = i
		}
	}
	if lo < 0 || sides[hi].PL2Share-sides[lo].PL2Share <= PL2Gap {
		return ""
	}
	return fmt.Sprintf("side %s's runs spent %.0f%% of their time inside the PL2 window, side %s's %.0f%% (medians): part of the difference may come from the power budget above PL1 each had (the cool-down, the runs' length), not from the settings",
		sides[hi].Label, 100*sides[hi].PL2Share, sides[lo].Label, 100*sides[lo].PL2Share)
}
