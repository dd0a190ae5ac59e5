// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// Schema names the JSON report's schema of a two-side experiment;
// docs/diff.md describes it. A change that removes or retypes a field
// changes the number.
const Schema = "hwpprobe-diff/1"

// SchemaN names the JSON report's schema of an experiment of more than
// two sides: Schema's fields, figures and differs empty, and "multi":
// each figure compared between every side and the reference.
const SchemaN = "hwpprobe-diff/2"

// jnum is a number that is null in JSON when not finite (not measured, or
// an interval with too few runs).
type jnum float64

// MarshalJSON writes null for NaN and infinities.
func (v jnum) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// JSONSchema is jnum's JSON form (internal/schema): a number or null.
func (jnum) JSONSchema() map[string]any {
	return map[string]any{"type": []any{"number", "null"}}
}

type jsonSummary struct {
	N          int      `json:"n"`
	Values     []jnum   `json:"values"`
	Median     jnum     `json:"median"`
	Lo         jnum     `json:"lo"`
	Hi         jnum     `json:"hi"`
	Confidence jnum     `json:"confidence"`
	Warnings   []string `json:"warnings,omitempty"`
}

type jsonFigure struct {
	Name            string      `json:"name"`
	Unit            string      `json:"unit"`
	A               jsonSummary `json:"a"`
	B               jsonSummary `json:"b"`
	P               jnum        `json:"p"`
	Alpha           jnum        `json:"alpha"`
	Significant     bool        `json:"significant"`
	Delta           string      `json:"delta"`
	Ratio           jnum        `json:"ratio"`
	RatioLo         jnum        `json:"ratio_lo"`
	RatioHi         jnum        `json:"ratio_hi"`
	RatioConfidence jnum        `json:"ratio_confidence"`
	// Warnings are the test's footnotes (the sides' are in a and b),
	// Notes hwpprobe's (analysis.Comparison).
	Warnings []string `json:"warnings,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

type jsonCoreType struct {
	Type    topology.CoreType `json:"type"`
	CPUs    int               `json:"cpus"`
	Held    analysis.Fields   `json:"held"`
	Written []analysis.Writer `json:"written"`
	AvgMHz  jnum              `json:"avg_mhz"`
	BzyMHz  jnum              `json:"bzy_mhz"`
	BusyPct jnum              `json:"busy_pct"`
	IPC     jnum              `json:"ipc"`
	CoreTmp jnum              `json:"core_tmp_max"`
	// Excursions: the type's share of CPU-samples with HWP_STATUS's
	// Excursion_To_Minimum set (null: not sampled).
	Excursions jnum `json:"hwp_excursions"`
}

type jsonSide struct {
	Label       string              `json:"label"`
	Settings    []recording.Setting `json:"settings"`
	Counted     int                 `json:"counted_runs"`
	CoreTypes   []jsonCoreType      `json:"core_types"`
	PkgTmp      jnum                `json:"pkg_tmp_max"`
	LimitShares map[string]float64  `json:"limit_shares"`
	Excursions  jnum                `json:"hwp_excursions"`
	// NewExcursions, ExcursionRuns, LimitSeconds, PL2Share: the counted
	// runs' evidence condensed (analysis.SideResult).
	NewExcursions map[string]int     `json:"hwp_excursions_new"`
	ExcursionRuns int                `json:"hwp_excursion_runs"`
	LimitSeconds  map[string]float64 `json:"limit_seconds"`
	PL2Share      jnum               `json:"pl2_window_share"`
}

// jsonFacts is a run's evidence (analysis.RunFacts), NaN as null.
type jsonFacts struct {
	ExcursionEdges map[string]int     `json:"hwp_excursions_new"`
	LimitSeconds   map[string]float64 `json:"limit_seconds"`
	SampledSeconds jnum               `json:"sampled_seconds"`
	Power          struct {
		Package  jnum `json:"package"`
		Cores    jnum `json:"cores"`
		Graphics jnum `json:"graphics"`
		Rest     jnum `json:"rest"`
		Psys     jnum `json:"psys"`
	} `json:"watts"`
	Parallel   jsonPhase       `json:"parallel"`
	Serial     jsonPhase       `json:"serial"`
	Limits     []jsonLimitStep `json:"power_limits"`
	PL2Seconds jnum            `json:"pl2_window_seconds"`
	PL2Share   jnum            `json:"pl2_window_share"`
}

type jsonPhase struct {
	Seconds jnum               `json:"seconds"`
	BzyMHz  map[string]float64 `json:"bzy_mhz"`
}

type jsonLimitStep struct {
	T        jnum   `json:"t"`
	Source   string `json:"source"`
	How      string `json:"how"`
	PL1W     jnum   `json:"pl1_w"`
	PL1TimeS jnum   `json:"pl1_time_s"`
	PL2W     jnum   `json:"pl2_w"`
}

func factsJSON(f analysis.RunFacts) jsonFacts {
	j := jsonFacts{ExcursionEdges: f.ExcursionEdges, LimitSeconds: f.LimitSeconds, SampledSeconds: jnum(f.SampledSeconds),
		Parallel: jsonPhase{jnum(f.Parallel.Seconds), f.Parallel.BzyMHz}, Serial: jsonPhase{jnum(f.Serial.Seconds), f.Serial.BzyMHz},
		PL2Seconds: jnum(f.PL2Seconds), PL2Share: jnum(f.PL2Share), Limits: []jsonLimitStep{}}
	j.Power.Package, j.Power.Cores, j.Power.Graphics = jnum(f.Power.Package), jnum(f.Power.Cores), jnum(f.Power.Graphics)
	j.Power.Rest, j.Power.Psys = jnum(f.Power.Rest), jnum(f.Power.Psys)
	for _, l := range f.Limits {
		j.Limits = append(j.Limits, jsonLimitStep{T: jnum(l.T), Source: l.Source, How: l.How, PL1W: jnum(l.PL1W), PL1TimeS: jnum(l.PL1TimeS), PL2W: jnum(l.PL2W)})
	}
	return j
}

type jsonRun struct {
	Run          int                    `json:"run"`
	Side         string                 `json:"side"`
	Order        int                    `json:"order"`
	Source       string                 `json:"source"`
	Warmup       bool                   `json:"warmup"`
	Seconds      jnum                   `json:"seconds"`
	ExitCode     int                    `json:"exit_code"`
	Command      []string               `json:"command"`
	Joules       jnum                   `json:"joules"`
	PkgWatts     jnum                   `json:"pkg_watt"`
	Counted      bool                   `json:"counted"`
	Excluded     string                 `json:"excluded,omitempty"`
	Disturbances []analysis.Disturbance `json:"disturbances,omitempty"`
	// Evidence is what the run showed of the hardware (analysis.RunFacts).
	Evidence jsonFacts `json:"evidence"`
}

type jsonThreshold struct {
	Text    string `json:"text"`
	Crossed bool   `json:"crossed"`
}

// DiffJSON is the Go form of WriteJSON's document, for its schema
// (docs/schemas/diff.schema.json).
type DiffJSON = jsonReport

type jsonReport struct {
	Schema      string                `json:"schema"`
	Version     string                `json:"hwpprobe_version"`
	Emulated    string                `json:"emulated,omitempty"`
	Host        recording.Host        `json:"host"`
	CommandLine []string              `json:"command_line"`
	Sources     []string              `json:"sources"`
	Alpha       jnum                  `json:"alpha"`
	Confidence  jnum                  `json:"confidence"`
	Sides       []jsonSide            `json:"sides"`
	Runs        []jsonRun             `json:"runs"`
	Figures     []jsonFigure          `json:"figures"`
	Differs     []analysis.Difference `json:"differs"`
	// DiffersNotSignificant: the measured figures left out of differs.
	DiffersNotSignificant int `json:"differs_not_significant"`
	Drift                 struct {
		Tau    jnum `json:"tau"`
		P      jnum `json:"p"`
		PerRun jnum `json:"per_run"`
		N      int  `json:"n"`
	} `json:"drift"`
	Warnings   []string        `json:"warnings"`
	Notes      []string        `json:"notes,omitempty"`
	Missing    []string        `json:"missing"`
	Verdict    string          `json:"verdict"`
	Thresholds []jsonThreshold `json:"thresholds"`
	// Contexts: each source's run context (null when it recorded none).
	Contexts []jsonContext `json:"contexts"`
	// Multi: SchemaN's N-side comparisons.
	Multi []jsonMulti `json:"multi,omitempty"`
	// Stopping: the stopping rule's account of a `--runs auto`
	// experiment (recording.Stopping), absent otherwise.
	Stopping *recording.Stopping `json:"stopping,omitempty"`
	// Explain: hwpprobe explain's attributions (docs/explain.md).
	Explain []jsonAttribution `json:"explain,omitempty"`
}

type jsonContext struct {
	Source  string             `json:"source"`
	Context *recording.Context `json:"context"`
}

func jsonValues(v []float64) []jnum {
	out := make([]jnum, len(v))
	for i, x := range v {
		out[i] = jnum(x)
	}
	return out
}

func summaryJSON(s analysis.Summary) jsonSummary {
	return jsonSummary{N: s.N, Values: jsonValues(s.Values), Median: jnum(s.Median), Lo: jnum(s.Lo), Hi: jnum(s.Hi),
		Confidence: jnum(s.Confidence), Warnings: s.Warnings}
}

func figureJSON(f analysis.Figure) jsonFigure {
	c := f.Comparison
	return jsonFigure{Name: f.Name, Unit: f.Unit, A: summaryJSON(c.A), B: summaryJSON(c.B), P: jnum(c.P), Alpha: jnum(c.Alpha),
		Significant: c.Significant, Delta: c.Delta(), Ratio: jnum(c.Ratio), RatioLo: jnum(c.RatioLo), RatioHi: jnum(c.RatioHi),
		RatioConfidence: jnum(c.RatioConfidence), Warnings: c.Warnings, Notes: c.Notes}
}

func sideJSON(s analysis.SideResult) jsonSide {
	js := jsonSide{Label: s.Label, Settings: s.Settings, Counted: s.Counted, PkgTmp: jnum(s.PkgTmp),
		LimitShares: s.LimitShares, Excursions: jnum(s.Excursions),
		NewExcursions: s.NewExcursions, ExcursionRuns: s.ExcursionRuns, LimitSeconds: s.LimitSeconds, PL2Share: jnum(s.PL2Share)}
	for _, ct := range s.CoreTypes {
		js.CoreTypes = append(js.CoreTypes, jsonCoreType{Type: ct.Type, CPUs: ct.CPUs, Held: ct.Held, Written: ct.Written,
			AvgMHz: jnum(ct.AvgMHz), BzyMHz: jnum(ct.BzyMHz), BusyPct: jnum(ct.BusyPct), IPC: jnum(ct.IPC), CoreTmp: jnum(ct.CoreTmp),
			Excursions: jnum(ct.Excursions)})
	}
	return js
}

// WriteJSON writes the report as one JSON object (schema Schema), with
// the thresholds checked.
func WriteJSON(w io.Writer, res *analysis.Result, in Info, thresholds []analysis.Threshold) error {
	j := jsonReport{Schema: Schema, Version: in.Version, Emulated: in.Emulated, Host: res.Meta.Host,
		CommandLine: res.Meta.CommandLine, Sources: res.Sources, Alpha: jnum(res.Options.Alpha),
		Confidence: jnum(res.Options.Confidence), Differs: res.Differs, DiffersNotSignificant: res.DiffersNotSignificant, Warnings: res.Warnings, Missing: res.Missing,
		Verdict: res.Verdict(), Thresholds: []jsonThreshold{}, Notes: figureNotes(res)}
	for _, s := range res.Sides {
		j.Sides = append(j.Sides, sideJSON(s))
	}
	for _, r := range res.Runs {
		j.Runs = append(j.Runs, jsonRun{Run: r.Run, Side: r.Side, Order: r.Order, Source: r.Source, Warmup: r.Warmup,
			Seconds: jnum(r.Seconds), ExitCode: r.ExitCode, Command: r.Command, Joules: jnum(r.Joules), PkgWatts: jnum(r.PkgWatts),
			Counted: r.Counted(), Excluded: r.Excluded, Disturbances: r.Disturbances, Evidence: factsJSON(r.Facts)})
	}
	if len(res.Multi) > 0 {
		j.Schema, j.Multi, j.Figures, j.Notes = SchemaN, multiJSON(res), []jsonFigure{}, nil
	} else {
		for _, f := range res.AllFigures() {
			j.Figures = append(j.Figures, figureJSON(f))
		}
	}
	j.Explain = explainJSON(res)
	j.Stopping = res.Stopping
	j.Drift.Tau, j.Drift.P, j.Drift.PerRun, j.Drift.N = jnum(res.Drift.Tau), jnum(res.Drift.P), jnum(res.Drift.PerRun), res.Drift.N
	j.Contexts = []jsonContext{}
	for i, c := range res.Contexts {
		j.Contexts = append(j.Contexts, jsonContext{Source: res.Sources[i], Context: c})
	}
	for _, t := range thresholds {
		j.Thresholds = append(j.Thresholds, jsonThreshold{Text: t.Text, Crossed: t.Crossed(res)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
