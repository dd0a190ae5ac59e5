// SPDX-License-Identifier: Apache-2.0

package report

import (
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

// writeExplainText writes the attributions: per figure, each step's
// change with its interval, share and meaning, then the interaction.
func writeExplainText(e *errWriter, res *analysis.Result) {
	for _, at := range res.Attributions {
		e.printf("\n%s:\n", words.AttributionHeader(at))
		for _, r := range words.StepRows(at) {
			e.printf("  %s  %-26s %8s  ratio %s  share %5s  %s\n", r.Step, r.Changes, r.Change, r.Ratio, r.Share, r.Meaning)
		}
		if l := words.InteractionLine(at); l != "" {
			e.printf("  %s\n", l)
		}
	}
}

// writeExplainMarkdown writes the attributions as Markdown tables.
func writeExplainMarkdown(e *errWriter, res *analysis.Result) {
	for _, at := range res.Attributions {
		e.printf("\n### %s\n\n| step | changes | change | ratio [interval] | share | meaning |\n|---|---|---|---|---|---|\n", mdCell(words.AttributionHeader(at)))
		for _, r := range words.StepRows(at) {
			e.printf("| %s | %s | %s | %s | %s | %s |\n", r.Step, r.Changes, r.Change, r.Ratio, r.Share, mdCell(r.Meaning))
		}
		if l := words.InteractionLine(at); l != "" {
			e.printf("\n*%s*\n", mdCell(strings.ToUpper(l[:1])+l[1:]))
		}
	}
}

// jsonAttribution is one figure's attribution in the JSON report.
type jsonAttribution struct {
	Figure      string           `json:"figure"`
	Unit        string           `json:"unit"`
	A           string           `json:"a"`
	B           string           `json:"b"`
	LogRatio    jnum             `json:"log_ratio"`
	Precision   jnum             `json:"precision"`
	Confidence  jnum             `json:"confidence"`
	Level       jnum             `json:"level"`
	Steps       []jsonStep       `json:"steps"`
	Interaction *jsonInteraction `json:"interaction,omitempty"`
}

type jsonStep struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Fields   []string `json:"fields"`
	LogRatio jnum     `json:"log_ratio"`
	RatioLo  jnum     `json:"ratio_lo"`
	RatioHi  jnum     `json:"ratio_hi"`
	Verdict  string   `json:"verdict"`
	Meaning  string   `json:"meaning"`
}

type jsonInteraction struct {
	Fields   [2]string `json:"fields"`
	LogRatio jnum      `json:"log_ratio"`
	RatioLo  jnum      `json:"ratio_lo"`
	RatioHi  jnum      `json:"ratio_hi"`
	Verdict  string    `json:"verdict"`
	Meaning  string    `json:"meaning"`
}

func explainJSON(res *analysis.Result) []jsonAttribution {
	var out []jsonAttribution
	for _, at := range res.Attributions {
		j := jsonAttribution{Figure: at.Figure, Unit: at.Unit, A: at.A, B: at.B, LogRatio: jnum(at.Total), Precision: jnum(at.Precision),
			Confidence: jnum(at.Confidence), Level: jnum(at.Level), Steps: []jsonStep{}}
		for _, s := range at.Steps {
			fields := s.Fields
			if fields == nil {
				fields = []string{}
			}
			j.Steps = append(j.Steps, jsonStep{From: s.From, To: s.To, Fields: fields, LogRatio: jnum(s.LogRatio), RatioLo: jnum(s.Lo),
				RatioHi: jnum(s.Hi), Verdict: s.Verdict, Meaning: words.StepMeaning(s, at.Precision)})
		}
		if in := at.Interaction; in != nil {
			j.Interaction = &jsonInteraction{Fields: in.Fields, LogRatio: jnum(in.LogRatio), RatioLo: jnum(in.Lo), RatioHi: jnum(in.Hi),
				Verdict: in.Verdict, Meaning: words.InteractionMeaning(in, at.Precision)}
		}
		out = append(out, j)
	}
	return out
}
