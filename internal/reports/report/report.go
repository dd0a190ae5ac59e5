// SPDX-License-Identifier: Apache-2.0

// Package report writes an analysed experiment (package analysis) as
// terminal text, as Markdown for a bug tracker and as JSON for CI
// (docs/diff.md describes the JSON schema). It formats only: every figure
// comes from analysis.Result.
package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

// Info is what the report says about where the result came from.
type Info struct {
	Version string // hwpprobe's version
	// Emulated is the emulated machine's name, "" on real hardware.
	Emulated string
}

// requestText is "min 48 max 48 desired 0 epp 0 epb 0" for fields.
func requestText(f analysis.Fields) string {
	var parts []string
	for _, k := range []string{"min", "max", "desired", "epp", "epb"} {
		if v, ok := f[k]; ok {
			parts = append(parts, k+" "+words.FieldCounts(v))
		}
	}
	if len(parts) == 0 {
		return "not sampled"
	}
	return strings.Join(parts, "  ")
}

func num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
