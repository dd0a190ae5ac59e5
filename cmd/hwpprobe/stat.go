// SPDX-License-Identifier: Apache-2.0

package main

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

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/report"
)

func init() { subcommands = append(subcommands, newStatCmd) }

// Limits of hwpprobe stat's input.
const (
	statMinFiles  = 2
	statMaxFiles  = 8
	statMinValues = 2 // per side: the U test needs two values a side to be anything
)

// statFlags are the options of `hwpprobe stat`.
type statFlags struct {
	json              bool
	reference         string
	alpha, confidence float64
}

func newStatCmd() *cobra.Command {
	var f statFlags
	cmd := &cobra.Command{
		Use:   "stat [--json] [--alpha A] [--confidence C] [--reference FILE] A.txt B.txt [C.txt ...]",
		Short: "Compare per-run numbers from files with diff's statistics (benchstat's U test, ratio with interval)",
		Long: `stat reads per-run numbers, one file per side (2 to 8 files), and compares
each side with the reference (the first file, or --reference FILE) as diff
compares its sides: medians with their intervals, the Mann-Whitney U test,
the ratio with Moses' interval, the warnings and the verdict. With more
than two files the p-values are adjusted by Holm's method and the ratio
intervals are simultaneous (Bonferroni). A line of a file is a number
(seconds of one run), or a Go benchmark line (BenchmarkX 1 330 sec/op), the
first value of which counts; blank lines, # comments, benchstat's
"key: value" configuration lines, PASS and ok lines are skipped.`,
		Example: `  hwpprobe stat performance.txt powersave-epp.txt
  hwpprobe stat --alpha 0.1 a.txt b.txt
  hwpprobe stat --reference base.txt base.txt new1.txt new2.txt --json`,
		Args: cli.ArgsUsage(func(_ *cobra.Command, args []string) error {
			if len(args) < statMinFiles || len(args) > statMaxFiles {
				return fmt.Errorf("stat compares %d to %d files, got %d", statMinFiles, statMaxFiles, len(args))
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := readStatInput(args, f)
			if err != nil {
				return err
			}
			st, err := report.AnalyzeStat(in)
			if err != nil {
				return cli.UsageError{Err: fmt.Errorf("stat: %w", err)}
			}
			if f.json {
				return report.WriteStatJSON(cmd.OutOrStdout(), st, report.Info{Version: version})
			}
			return report.WriteStatText(cmd.OutOrStdout(), st)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.json, "json", false, "print the report as JSON (schema hwpprobe-stat/1, docs/stat.md)")
	fs.StringVar(&f.reference, "reference", "", "the `FILE` the others are compared with (one of the files; default the first)")
	cli.FloatVar(fs, &f.alpha, "alpha", analysis.DefaultAlpha, 0, 1, "significance level of the U test (family-wise with more than two files), in (0, 1)")
	cli.FloatVar(fs, &f.confidence, "confidence", analysis.DefaultConfidence, 0, 1, "level of the intervals (simultaneous for the ratios), in (0, 1)")
	return cmd
}

// readStatInput checks the files (distinct, existing) and reads each
// side's values; every problem is a usage error naming the file.
func readStatInput(paths []string, f statFlags) (report.StatInput, error) {
	if f.alpha <= 0 || f.alpha >= 1 || f.confidence <= 0 || f.confidence >= 1 {
		return report.StatInput{}, cli.Usagef("stat: --alpha and --confidence must be in (0, 1)")
	}
	in := report.StatInput{Files: paths, Reference: -1, Name: "value", Stats: analysis.Options{Alpha: f.alpha, Confidence: f.confidence}}
	var ref os.FileInfo // the --reference file, nil when none or unreadable
	if f.reference != "" {
		ref, _ = os.Stat(f.reference)
	}
	var ids []os.FileInfo
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return in, cli.UsageError{Err: fmt.Errorf("stat: %w", err)}
		}
		for j, prev := range ids {
			if os.SameFile(fi, prev) {
				return in, cli.Usagef("stat: %s and %s are the same file", cli.OneLine(paths[j]), cli.OneLine(p))
			}
		}
		ids = append(ids, fi)
		if ref != nil && os.SameFile(fi, ref) {
			in.Reference = i
		}
	}
	switch {
	case f.reference == "":
		in.Reference = 0
	case in.Reference < 0:
		return in, cli.Usagef("stat: --reference %s is not one of the files", cli.OneLine(f.reference))
	}
	units := map[string]string{} // unit -> the first file with it
	for i, p := range paths {
		s, err := readStatFile(p)
		if err != nil {
			return in, cli.UsageError{Err: fmt.Errorf("stat: %w", err)}
		}
		if len(s.values) < statMinValues {
			return in, cli.Usagef("stat: %s: %d values, need at least %d per side", cli.OneLine(p), len(s.values), statMinValues)
		}
		units[s.unit] = p
		if len(units) > 1 {
			return in, cli.Usagef("stat: %s holds %s, another file %s: compare one figure", cli.OneLine(p), unitWords(s.unit), unitWords(in.Unit))
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
