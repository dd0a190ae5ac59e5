// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/hwpprobe/hwpprobe/analysis"
)

// pct is a log-ratio as a signed percent change: "+3.2%".
func pct(logRatio float64) string {
	return fmt.Sprintf("%+.1f%%", 100*(math.Exp(logRatio)-1))
}

// stepChanges names what a step changes: "min", or "nothing (register
// twins)".
func stepChanges(s analysis.StepEffect) string {
	if len(s.Fields) == 0 {
		return "nothing (register twins)"
	}
	return strings.Join(s.Fields, ", ")
}

// stepMeaning says what a step's verdict means.
func stepMeaning(s analysis.StepEffect, precision float64) string {
	within := fmt.Sprintf("within ±%s%%", trimFloat(100*precision))
	if len(s.Fields) == 0 {
		switch s.Verdict {
		case analysis.Causes:
			return "the register twins differ: something other than the request registers and EPB differs between the two kernel paths (or a daemon acts on one)"
		case analysis.Equivalent:
			return "the register twins are equivalent " + within + ": the kernel path alone makes no difference"
		}
		return "undecided: the twins may or may not differ (more runs narrow the interval)"
	}
	f := strings.Join(s.Fields, ", ")
	switch s.Verdict {
	case analysis.Causes:
		return f + " causes a difference"
	case analysis.Equivalent:
		return f + " is shown not to matter: equivalent " + within
	}
	return f + ": undecided (more runs narrow the interval)"
}

// interactionMeaning says what the interaction's verdict means.
func interactionMeaning(in *analysis.Interaction, precision float64) string {
	switch in.Verdict {
	case analysis.Causes:
		return fmt.Sprintf("the effect of %s depends on %s: the two do not simply add up", in.Fields[1], in.Fields[0])
	case analysis.Equivalent:
		return fmt.Sprintf("no interaction within ±%s%%: the effects of %s and %s add up", trimFloat(100*precision), in.Fields[0], in.Fields[1])
	}
	return "undecided (more runs narrow the interval)"
}

// share is a step's part of the total change, "-" when there is none.
func share(step, total float64) string {
	if total == 0 || math.IsNaN(total) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*step/total)
}

func attributionHeader(at analysis.Attribution) string {
	return fmt.Sprintf("explain %s: %s -> %s %s (ratio of medians %.4f), attributed to the steps; intervals simultaneous at %s%% (each at %s%%, Bonferroni), precision ±%s%%",
		at.Figure, at.A, at.B, pct(at.Total), math.Exp(at.Total), trimFloat(100*at.Confidence), trimFloat(100*at.Level), trimFloat(100*at.Precision))
}

// writeExplainText writes the attributions: per figure, each step's
// change with its interval, share and meaning, then the interaction.
func writeExplainText(e *errWriter, res *analysis.Result) {
	for _, at := range res.Attributions {
		e.printf("\n%s:\n", attributionHeader(at))
		for _, s := range at.Steps {
			e.printf("  %s -> %s  %-26s %8s  ratio %.4f [%.4f, %s]  share %5s  %s\n", s.From, s.To, stepChanges(s), pct(s.LogRatio),
				math.Exp(s.LogRatio), s.Lo, bound(s.Hi), share(s.LogRatio, at.Total), stepMeaning(s, at.Precision))
		}
		if in := at.Interaction; in != nil {
			e.printf("  interaction of %s and %s: %s, ratio %.4f [%.4f, %s]: %s\n", in.Fields[0], in.Fields[1], pct(in.LogRatio),
				math.Exp(in.LogRatio), in.Lo, bound(in.Hi), interactionMeaning(in, at.Precision))
		}
	}
}

// writeExplainMarkdown writes the attributions as Markdown tables.
func writeExplainMarkdown(e *errWriter, res *analysis.Result) {
	for _, at := range res.Attributions {
		e.printf("\n### %s\n\n| step | changes | change | ratio [interval] | share | meaning |\n|---|---|---|---|---|---|\n", mdCell(attributionHeader(at)))
		for _, s := range at.Steps {
			e.printf("| %s -> %s | %s | %s | %.4f [%.4f, %s] | %s | %s |\n", s.From, s.To, stepChanges(s), pct(s.LogRatio),
				math.Exp(s.LogRatio), s.Lo, bound(s.Hi), share(s.LogRatio, at.Total), mdCell(stepMeaning(s, at.Precision)))
		}
		if in := at.Interaction; in != nil {
			e.printf("\n*Interaction of %s and %s:* %s, ratio %.4f [%.4f, %s]: %s\n", in.Fields[0], in.Fields[1], pct(in.LogRatio),
				math.Exp(in.LogRatio), in.Lo, bound(in.Hi), mdCell(interactionMeaning(in, at.Precision)))
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
				RatioHi: jnum(s.Hi), Verdict: s.Verdict, Meaning: stepMeaning(s, at.Precision)})
		}
		if in := at.Interaction; in != nil {
			j.Interaction = &jsonInteraction{Fields: in.Fields, LogRatio: jnum(in.LogRatio), RatioLo: jnum(in.Lo), RatioHi: jnum(in.Hi),
				Verdict: in.Verdict, Meaning: interactionMeaning(in, at.Precision)}
		}
		out = append(out, j)
	}
	return out
}
