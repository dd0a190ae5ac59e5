// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCaptureNameEscaped: a --name with an escape sequence is refused
// (hwpemu would refuse the description) in one escaped line, nothing
// written; the success line escapes what it prints (issue 21, fault 12).
func TestCaptureNameEscaped(t *testing.T) {
	dir := t.TempDir()
	cpus := regexp.MustCompile(`\(\d+ CPUs\)`) // the machine's count
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string // "" and a success: not compared (what could not be read)
	}{
		{"escape in --name", []string{"capture", "-o", filepath.Join(dir, "m.yaml"), "--name", "\x1b]2;pwned\a"}, 2, "",
			`hwpprobe: capture: --name "\x1b]2;pwned\a": want printable text (no control characters or escape sequences)` + "\n"},
		{"escape in -o", []string{"capture", "-o", filepath.Join(dir, "m\x1b[2J.yaml"), "--name", "ok", "-C", "0"}, 0,
			`hwpprobe: captured ok (N CPUs) into ` + dir + `/m\x1b[2J.yaml` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runBin(t, tc.args...)
			stdout = cpus.ReplaceAllString(stdout, "(N CPUs)")
			if tc.code == 0 && tc.stderr == "" {
				stderr = ""
			}
			if diff := cmp.Diff([]any{tc.code, tc.stdout, tc.stderr}, []any{code, stdout, stderr}); diff != "" {
				t.Errorf("hwpprobe %q (-want +got: status, stdout, stderr):\n%s", tc.args, diff)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "m.yaml")); err == nil {
		t.Error("capture with a refused --name wrote its file")
	}
}
