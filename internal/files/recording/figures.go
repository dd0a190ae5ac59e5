// SPDX-License-Identifier: Apache-2.0

package recording

import "math"

// SamplerCPUColumns returns the names of the CPU values the recorder
// fills from the sampler (recorder.FromSampler): turbostat's.
func SamplerCPUColumns() []string {
	return []string{"Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz", "IPC", "CoreTmp"}
}

// SamplerPackageColumns returns the names of the package values the
// recorder fills from the sampler: turbostat's.
func SamplerPackageColumns() []string {
	return []string{"PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "SysWatt", "PkgTmp"}
}

// figureDecimals is how many decimals the recorder keeps of each figure:
// finer than the figures are measured (1 kHz of a MHz figure, 0.0001% of
// Busy%, 0.1 mW where RAPL counts in 61 uJ units, 0.01 degree of a sensor
// that reads whole degrees), so that rounding loses nothing measured and
// the columnar encoding stores each value as a small integer.
var figureDecimals = map[string]int{
	"Avg_MHz": 3, "Busy%": 4, "Bzy_MHz": 3, "TSC_MHz": 3, "IPC": 4, "CoreTmp": 2,
	"PkgWatt": 4, "CorWatt": 4, "GFXWatt": 4, "RAMWatt": 4, "SysWatt": 4, "PkgTmp": 2,
}

// FigureDecimals returns the decimals the recorder keeps of a figure, and
// false for a figure it does not know.
func FigureDecimals(figure string) (int, bool) {
	d, ok := figureDecimals[figure]
	return d, ok
}

// Round returns v rounded to decimals places (0 to 9); NA stays NA.
func (v Value) Round(decimals int) Value {
	if !v.Valid() {
		return v
	}
	p := pow10[decimals]
	return Value(math.Round(float64(v)*p) / p)
}
