// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/clitest"
)

// TestErrorsOneLine sends a newline, a terminal escape sequence, a
// right-to-left override and a carriage return through every flag and
// argument of every command of the built binary: what it prints on stderr
// stays printable (cli.OneLine escapes user input), and a failure is one
// line.
func TestErrorsOneLine(t *testing.T) {
	dir := t.TempDir()
	rec, exp := recordedInputs(t, dir)
	_, stat := writeStatFiles(t, map[string]string{"a.txt": seedA, "b.txt": seedB})
	statA, statB := stat["a.txt"], stat["b.txt"]
	bases := map[string]clitest.Base{
		"decode": {Args: []string{"HWP_REQUEST=0x1"}},
		"watch":  {Flags: []string{"-n", "1", "-i", "10ms"}},
		"trace":  {Flags: []string{"--duration", "10ms", "--events", "none", "--msr", "0x6e0"}},
		// record prints the summary of what it recorded, then CMD's
		// failure: more than one line by design.
		"record": {Flags: []string{"-o", "out.rec", "--force", "-i", "10ms"}, Args: []string{"true"}, Dash: true, Lines: true},
		"show":   {Args: []string{rec}},
		"export": {Flags: []string{"--csv"}, Args: []string{rec}},
		"apply":  {Flags: []string{"--dry-run"}, Args: []string{"performance"}},
		"matrix": {Args: []string{"performance"}},
		"diff":   {Args: []string{exp}},
		"stat":   {Args: []string{statA, statB}},
	}
	cases := clitest.Cases(newRootCmd(), bases)
	if len(cases) < 40 {
		t.Fatalf("only %d cases: the command tree was not walked", len(cases))
	}
	t.Logf("%d cases", len(cases))
	for _, c := range cases {
		if err := clitest.Check(t.Context(), hwpprobeBin, dir, c, time.Minute); err != nil {
			t.Errorf("hwpprobe %s: %v", strings.Join(quote(c.Args), " "), err)
		}
	}
}

func quote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, clitest.Evil, "EVIL")
	}
	return out
}
