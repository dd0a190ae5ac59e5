// SPDX-License-Identifier: Apache-2.0

// Package htmlreport writes `hwpprobe report`'s page: one self-contained
// HTML file (styles, scripts and data inline; nothing fetched) for an
// analysed experiment (package analysis) or a recording, with tables
// rendered here and charts drawn in the browser by uPlot, vendored under
// assets/ (docs/report.md says which version and why). It formats only:
// every figure comes from the analysis it is given.
package htmlreport

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

//go:embed assets/uPlot.iife.min.js assets/uPlot.min.css assets/uPlot.LICENSE assets/page.js assets/page.css page.tmpl
var assets embed.FS

// Info says where the page's result came from.
type Info struct {
	Version string // the hwpprobe making the page
	// Emulated is the emulated machine's name, "" on real hardware.
	Emulated string
}

// Options are what a page shows beyond the analysis.
type Options struct {
	Info Info
	// Timeline is the files' timelines (package analysis/timeline); nil
	// draws none.
	Timeline *timeline.Timeline
	// Charts are more charts, each naming its section ("runs" or
	// "timelines").
	Charts []Chart
}

// Section is a titled group of charts on the page.
type Section struct {
	ID, Title, Intro string
	// Columns lays its charts out in this many columns (the sides).
	Columns int
	Charts  []Chart
}

// page is what the template renders.
type page struct {
	Kind            string // "diff" or "record"
	ShowSide        bool   // the runs have sides (an experiment's)
	Title, Subtitle string
	Emulated        string
	Missing         []string
	Verdict         string
	Sides           []sideRow
	Cores           []coreRow
	Figures         []figureRow
	Notes           []string // the figures' notes (analysis.Result.Notes)
	Explain         []explainBlock
	Multi           []multiRow // more than two sides: each against the reference
	SideLabels      []string
	Requests        []requestRow
	Differs         []analysis.Difference
	DiffersHidden   string // words.DiffersHidden
	Runs            []runRow
	Facts           []factRow
	Summaries       []summaryRow
	Traces          []traceRow
	Writes          []writeRow
	WriteNotes      []string
	Warnings        []string
	Machine         []kv
	Sections        []Section
	Data            template.JS
	Style           template.CSS
	Script          template.JS
	// Contexts are the recordings' run contexts (words.ContextBlocks).
	Contexts []words.ContextBlock
}

var tmpl = template.Must(template.New("page.tmpl").Funcs(template.FuncMap{
	"add": func(a, b int) int { return a + b },
}).ParseFS(assets, "page.tmpl"))

// WriteDiff writes the page of an analysed experiment (or of two
// recordings compared).
func WriteDiff(w io.Writer, res *analysis.Result, o Options) error {
	emu := o.Info.Emulated
	if emu == "" {
		emu = res.Meta.Emulated
	}
	sides := slices.Clone(res.Sides[:])
	for i := range sides {
		if len(sides[i].Settings) == 0 { // two recordings: what their runs found
			sides[i].Settings = observed(res.Runs, sides[i].Label)
		}
	}
	p := &page{Kind: "diff", Emulated: emu, Missing: slices.Clone(res.Missing),
		Verdict: res.Verdict(), Sides: sideRows(sides), Cores: coreRows(sides), Figures: figureRows(res), Multi: multiRows(res),
		Notes: notes(res), Explain: explainBlocks(res),
		Requests: requestRows(sides), Differs: res.Differs,
		DiffersHidden: words.DiffersHidden(res.DiffersNotSignificant), Runs: runRows(res.Runs), Facts: factRows(res.Runs), Warnings: res.Warnings,
		Machine: machineRows(res.Meta, res.Sources, o.Info)}
	p.Title = "hwpprobe diff: " + strings.Join(res.Labels(), " vs ")
	p.Contexts = words.ContextBlocks(res.Sources, res.Contexts)
	p.ShowSide = true
	p.Subtitle = subtitle(res.Runs)
	for _, s := range res.Sides {
		p.SideLabels = append(p.SideLabels, s.Label)
	}
	sections := []Section{{ID: "runs", Title: "Every run", Columns: 2,
		Intro: "Wall time and package energy of each measured run, in the order they ran, with each side's median (dashed) and its interval (shaded). Runs left out of the statistics are drawn apart."}}
	if o.Timeline != nil {
		cols := diffColumns(res, o.Timeline)
		sections = append(sections, timelineSection(cols))
		p.Writes, p.WriteNotes = writeRows(cols)
		p.Missing = appendNew(p.Missing, o.Timeline.Missing...)
	}
	return render(w, p, sections, append(runCharts(res), o.Charts...))
}

// explainBlock is one figure's attribution of hwpprobe explain
// (analysis.Attribution) in words.
type explainBlock struct {
	Header      string
	Rows        []words.StepRow
	Interaction string
}

func explainBlocks(res *analysis.Result) []explainBlock {
	var out []explainBlock
	for _, at := range res.Attributions {
		out = append(out, explainBlock{Header: words.AttributionHeader(at), Rows: words.StepRows(at), Interaction: words.InteractionLine(at)})
	}
	return out
}

// notes are a two-side experiment's notes on its figures; none for more
// sides (each comparison's are in its row's cells).
func notes(res *analysis.Result) []string {
	if len(res.Multi) > 0 {
		return nil
	}
	return res.Notes()
}

// WriteRecord writes the page of a recording.
func WriteRecord(w io.Writer, rec *analysis.RecordResult, o Options) error {
	emu := o.Info.Emulated
	if emu == "" {
		emu = rec.Meta.Emulated
	}
	ev := rec.Evidence
	if len(ev.Settings) == 0 {
		ev.Settings = observed(rec.Runs, ev.Label)
	}
	sides := []analysis.SideResult{ev}
	p := &page{Kind: "record", Emulated: emu, Missing: slices.Clone(rec.Missing),
		Sides: sideRows(sides), Cores: coreRows(sides), Requests: requestRows(sides), SideLabels: []string{"recorded"},
		Runs: runRows(rec.Runs), Facts: factRows(rec.Runs), Summaries: summaryRows(rec.Runs), Traces: traceRows(rec.Runs),
		Machine: machineRows(rec.Meta, []string{rec.Source}, o.Info)}
	p.Title = "hwpprobe " + orNA(rec.Meta.Kind) + ": " + rec.Source
	p.Contexts = words.ContextBlocks([]string{rec.Source}, []*recording.Context{rec.Meta.Context})
	p.ShowSide = slices.ContainsFunc(rec.Runs, func(r analysis.RunResult) bool { return r.Summary().Start.Side != "" })
	p.Subtitle = subtitle(rec.Runs)
	var sections []Section
	if o.Timeline != nil {
		cols, missing := recordColumns(o.Timeline)
		sections = append(sections, timelineSection(cols))
		p.Writes, p.WriteNotes = writeRows(cols)
		p.Missing = appendNew(p.Missing, append(missing, o.Timeline.Missing...)...)
	}
	return render(w, p, sections, o.Charts)
}

func subtitle(runs []analysis.RunResult) string {
	var cmds []string
	for _, r := range runs {
		if c := quoteArgs(r.Command); c != "" && !contains(cmds, c) {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) == 0 {
		return ""
	}
	return "command: " + strings.Join(cmds, " | ")
}

func contains(s []string, x string) bool { return slices.Contains(s, x) }

// appendNew appends the lines not in dst already.
func appendNew(dst []string, lines ...string) []string {
	for _, l := range lines {
		if !slices.Contains(dst, l) {
			dst = append(dst, l)
		}
	}
	return dst
}

// render places the charts in their sections and writes the page.
func render(w io.Writer, p *page, sections []Section, charts []Chart) error {
	for _, c := range charts {
		for i := range sections {
			if sections[i].ID == c.Section {
				sections[i].Charts = append(sections[i].Charts, c)
			}
		}
	}
	var all []Chart
	for _, s := range sections {
		if len(s.Charts) > 0 {
			p.Sections = append(p.Sections, s)
			all = append(all, s.Charts...)
		}
	}
	data, err := json.Marshal(struct {
		Charts []Chart `json:"charts"`
	}{all})
	if err != nil {
		return fmt.Errorf("html report: chart data: %w", err)
	}
	p.Data = template.JS(data) // json.Marshal escapes <, > and &: no "</script>" inside
	if err := p.loadAssets(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func (p *page) loadAssets() error {
	read := func(name string) (string, error) {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return "", fmt.Errorf("html report: asset %s: %w", name, err)
		}
		return string(b), nil
	}
	var parts [5]string
	for i, name := range []string{"uPlot.min.css", "page.css", "uPlot.iife.min.js", "page.js", "uPlot.LICENSE"} {
		s, err := read(name)
		if err != nil {
			return err
		}
		parts[i] = s
	}
	p.Style = template.CSS(parts[0] + "\n" + parts[1])
	// uPlot's licence (MIT) travels with every copy of it.
	p.Script = template.JS("/* uPlot, vendored by hwpprobe:\n" + parts[4] + "*/\n" + parts[2] + "\n" + parts[3])
	return nil
}

// observed is the settings the side's first run found at its start.
func observed(runs []analysis.RunResult, side string) []recording.Setting {
	for _, r := range runs {
		if r.Side == side {
			return r.Summary().Start.Observed
		}
	}
	return nil
}
