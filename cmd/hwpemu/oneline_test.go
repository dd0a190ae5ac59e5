// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/clitest"
)

// TestErrorsOneLine sends a newline, a terminal escape sequence, a
// right-to-left override and a carriage return through every flag and
// argument of every hwpemu command (the built binary): stderr stays
// printable, and a failure is one line.
func TestErrorsOneLine(t *testing.T) {
	dir := t.TempDir()
	bases := map[string]clitest.Base{
		"run":   {Args: []string{"mtl-165u", "--", "true"}},
		"serve": {Args: []string{"mtl-165u", dir}},
	}
	cases := clitest.Cases(newRootCmd(io.Discard, io.Discard), bases)
	if len(cases) < 10 {
		t.Fatalf("only %d cases: the command tree was not walked", len(cases))
	}
	for _, c := range cases {
		if err := clitest.Check(t.Context(), filepath.Join(binDir, "hwpemu"), dir, c, time.Minute); err != nil {
			t.Errorf("hwpemu %s: %v", strings.ReplaceAll(strings.Join(c.Args, " "), clitest.Evil, "EVIL"), err)
		}
	}
}
