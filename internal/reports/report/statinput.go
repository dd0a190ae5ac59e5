// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// Limits of hwpprobe stat's input.
const (
	StatMinFiles  = 2
	StatMaxFiles  = 8
	statMinValues = 2 // per side: the U test needs two values a side to be anything
)

// ReadStatInput is `hwpprobe stat`'s input: it checks the files
// (distinct, existing, reference "" for the first or one of them) and
// reads each side's values (a number per line, or Go benchmark lines of
// one benchmark and unit). Every error it returns is the input's, naming
// the file and line.
func ReadStatInput(paths []string, reference string, opts analysis.Options) (StatInput, error) {
	if opts.Alpha <= 0 || opts.Alpha >= 1 || opts.Confidence <= 0 || opts.Confidence >= 1 {
		return StatInput{}, errors.New("--alpha and --confidence must be in (0, 1)")
	}
	in := StatInput{Files: paths, Reference: -1, Name: "value", Stats: opts}
	var ref os.FileInfo // the --reference file, nil when none or unreadable
	if reference != "" {
		ref, _ = os.Stat(reference)
	}
	var ids []os.FileInfo
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return in, err
		}
		for j, prev := range ids {
			if os.SameFile(fi, prev) {
				return in, fmt.Errorf("%s and %s are the same file", cli.OneLine(paths[j]), cli.OneLine(p))
			}
		}
		ids = append(ids, fi)
		if ref != nil && os.SameFile(fi, ref) {
			in.Reference = i
		}
	}
	switch {
	case reference == "":
		in.Reference = 0
	case in.Reference < 0:
		return in, fmt.Errorf("--reference %s is not one of the files", cli.OneLine(reference))
	}
	units := map[string]string{} // unit -> the first file with it
	for i, p := range paths {
		s, err := readStatFile(p)
		if err != nil {
			return in, err
		}
		if len(s.values) < statMinValues {
			return in, fmt.Errorf("%s: %d values, need at least %d per side", cli.OneLine(p), len(s.values), statMinValues)
		}
		units[s.unit] = p
		if len(units) > 1 {
			return in, fmt.Errorf("%s holds %s, another file %s: compare one figure", cli.OneLine(p), unitWords(s.unit), unitWords(in.Unit))
		}
		if s.name != "" {
			in.Name = s.name
		}
		in.Unit = s.unit
		short := string(rune('A' + i))
		in.Short = append(in.Short, short)
		in.Samples = append(in.Samples, analysis.Sample{Label: short + " (" + filepath.Base(p) + ")", Values: s.values})
	}
	return in, nil
}

func unitWords(unit string) string {
	if unit == "" {
		return "plain numbers"
	}
	return "unit " + unit
}

// statSample is one file's values, with the benchmark's name and unit
// when the lines are Go benchmark lines.
type statSample struct {
	values     []float64
	name, unit string
}

// benchLine is a Go benchmark result line: name, iterations, then value
// and unit pairs; configLine is benchstat's "key: value".
var (
	benchLine  = regexp.MustCompile(`^(Benchmark\S*?)(?:-\d+)?\s+\d+\s+(\S+)\s+(\S+)`)
	configLine = regexp.MustCompile(`^[a-z][^\s:]*:(\s|$)`)
)

// errStatInput is the cause of a file stat cannot read.
var errStatInput = errors.New("not a number or a benchmark line")

// readStatFile reads one side's values: a number per line, or Go
// benchmark lines of one benchmark and unit.
func readStatFile(path string) (statSample, error) {
	var s statSample
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") || configLine.MatchString(text) || text == "PASS" ||
			strings.HasPrefix(text, "ok ") || strings.HasPrefix(text, "ok\t") {
			continue
		}
		where := fmt.Sprintf("%s:%d", cli.OneLine(path), line)
		field, name, unit := text, "", ""
		if m := benchLine.FindStringSubmatch(text); m != nil {
			field, name, unit = m[2], m[1], m[3]
			if len(s.values) > 0 && (name != s.name || unit != s.unit) {
				return s, fmt.Errorf("%s: %s %s after %s %s: one benchmark and unit per file", where, cli.OneLine(name), cli.OneLine(unit),
					cli.OneLine(s.name), unitWords(s.unit))
			}
		} else if len(s.values) > 0 && s.unit != "" {
			return s, fmt.Errorf("%s: a plain number among benchmark lines", where)
		}
		v, err := strconv.ParseFloat(field, 64)
		if err != nil {
			return s, fmt.Errorf("%s: %q: %w", where, cli.OneLine(text), errStatInput)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return s, fmt.Errorf("%s: %v: values must be finite and not negative", where, v)
		}
		s.values, s.name, s.unit = append(s.values, v), name, unit
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read %s: %w", cli.OneLine(path), err)
	}
	return s, nil
}
