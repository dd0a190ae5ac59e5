// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// FuzzParse: Parse never panics; an error is one line wrapping ErrSyntax;
// a profile's canonical form parses back to the same profile. A "@FILE"
// input reads the rest of the input after the first newline as the file.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"performance", "powersave:epp=performance", "governor=powersave,epp=128,epb=normal@0-3",
		"scaling_max_freq=2.4GHz@1,scaling_min_freq=800MHz", "tuned:balanced", "ppd:performance", "current",
		"@p.toml\ngovernor = \"powersave\"\n[cpus.\"1-2\"]\nepp = 3\n", "@p.yaml\nepb: 4\ncpus: {\"0\": {epp: power}}\n",
		"no_turbo=1,min_perf_pct=50,max_perf_pct=100,boost=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		spec, file, _ := strings.Cut(in, "\n")
		read := func(string) ([]byte, error) { return []byte(file), nil }
		p, err := ParseWith(spec, read)
		if err != nil {
			if !errors.Is(err, ErrSyntax) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseWith(%q): %q", spec, err)
			}
			return
		}
		q, err := ParseWith(p.String(), read)
		if err != nil {
			t.Fatalf("canonical %q of %q: %v", p.String(), spec, err)
		}
		if q.String() != p.String() || q.Kind != p.Kind {
			t.Fatalf("canonical %q of %q parses to %q", p.String(), spec, q.String())
		}
	})
}

// FuzzCompareMatrix: any --expect file against a real matrix table: no
// panic; each difference names a line that differs, in order, with the
// file's and the table's text of it; a table compared with itself has none;
// ExpectCases fails the same lines, and the writers take them.
func FuzzCompareMatrix(f *testing.F) {
	table := "profile                   type  min  max  des  epp  epb\nperformance               P      62   62    0    0    6\n"
	f.Add(table)
	f.Add("")
	f.Add(strings.Repeat("\n", 5))
	f.Add(table[:40] + "\x1b[2J\r\x00")
	f.Fuzz(func(t *testing.T, want string) {
		if d := CompareMatrix(want, want); len(d) != 0 {
			t.Fatalf("a text against itself: %v", d)
		}
		lines := strings.Split(strings.TrimRight(want, "\n"), "\n")
		prev := 0
		for _, d := range CompareMatrix(table, want) {
			if d.N <= prev || d.N > max(len(lines), 3) || d.Want == d.Got {
				t.Fatalf("difference %+v after line %d (%d lines)", d, prev, len(lines))
			}
			if d.N <= len(lines) && d.Want != lines[d.N-1] {
				t.Fatalf("difference %+v, the file's line is %q", d, lines[d.N-1])
			}
			prev = d.N
		}
		// --ktap, --junit: a case per line, failed exactly where a
		// difference is, that the writers take whatever the file holds.
		c := ExpectCases(table, want, "exp#ect.txt")
		var failed, diffs []int
		for i, l := range c.Cases {
			if l.Result == verdict.Fail {
				failed = append(failed, i+1)
			}
		}
		for _, d := range CompareMatrix(table, want) {
			diffs = append(diffs, d.N)
		}
		if len(c.Cases) != max(len(lines), 2) || !slices.Equal(failed, diffs) {
			t.Fatalf("%d cases, failed %v; differences %v", len(c.Cases), failed, diffs)
		}
		if err := verdict.WriteKTAP(io.Discard, []*verdict.Case{c}); err != nil {
			t.Fatal(err)
		}
		if err := verdict.WriteJUnit(io.Discard, "matrix", []*verdict.Case{c}); err != nil {
			t.Fatal(err)
		}
	})
}
