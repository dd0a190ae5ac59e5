// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// TestVerdicts: --ktap and --junit need the checks they report, the
// report moves to stderr under KTAP, and the KTAP and the JUnit file
// carry the cases.
func TestVerdicts(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "v.xml")
	tests := []struct {
		name    string
		args    []string
		checks  bool
		err     string // "" for accepted
		report  string // "stdout" or "stderr"
		ktap    bool   // KTAP on stdout
		junitOK bool   // the JUnit file written
	}{
		{"none", nil, false, "", "stdout", false, false},
		{"ktap", []string{"--ktap"}, true, "", "stderr", true, false},
		{"junit", []string{"--junit", junit}, true, "", "stdout", false, true},
		{"format ktap", []string{"--format", "ktap"}, true, "", "stderr", true, false},
		{"ktap without checks", []string{"--ktap"}, false, "matrix: --ktap and --junit write the verdicts of --expect; give it", "", false, false},
		{"junit without checks", []string{"-o", "junit=" + junit}, false, "matrix: --ktap and --junit write the verdicts of --expect; give it", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(junit)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			v := Verdicts{Out: AddOutputs(fs, OutputSpec{Command: "matrix", Stdout: []Format{Text, KTAP}, Files: []Format{JUnit}}, "")}
			v.Aliases(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := v.Out.Resolve(); err != nil {
				t.Fatal(err)
			}
			files, err := v.Open("matrix", "--expect", tt.checks, nil)
			if tt.err != "" {
				var u UsageError
				if err == nil || err.Error() != tt.err || !errors.As(err, &u) {
					t.Fatalf("Open: %v, want usage error %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer files.Abort()
			var stdout, stderr bytes.Buffer
			report := map[io.Writer]string{&stdout: "stdout", &stderr: "stderr"}[v.Report(&stdout, &stderr)]
			if report != tt.report {
				t.Errorf("report to %s, want %s", report, tt.report)
			}
			if err := v.Write(&stdout, files, []*verdict.Case{verdict.Passf("expect")}); err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(junit)
			got := []bool{strings.HasPrefix(stdout.String(), "KTAP version 1\n"), statErr == nil}
			if d := cmp.Diff([]bool{tt.ktap, tt.junitOK}, got); d != "" {
				t.Errorf("KTAP on stdout, JUnit file (-want +got):\n%s\nstdout:\n%s", d, stdout.String())
			}
		})
	}
}
