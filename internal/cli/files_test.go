// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
)

// TestCheckFiles: an output over an input is a usage error naming the
// command, an output that cannot be written a plain error (exit 1).
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		set    iocheck.Set
		status int // Status's exit status
		prefix string
	}{
		{"fine", iocheck.Set{Inputs: []string{in}, Outputs: []iocheck.Output{{Name: "-o", Path: filepath.Join(dir, "out")}}}, ExitOK, ""},
		{"over input", iocheck.Set{Inputs: []string{in}, Outputs: []iocheck.Output{{Name: "-o", Path: in}}}, ExitUsage, "hwpprobe: stat: "},
		{"unwritable", iocheck.Set{Outputs: []iocheck.Output{{Name: "-o", Path: filepath.Join(dir, "no", "such", "out")}}}, ExitError, "hwpprobe: stat: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := Status(CheckFiles("stat", tt.set), "hwpprobe", &stderr); got != tt.status || !strings.HasPrefix(stderr.String(), tt.prefix) {
				t.Errorf("status %d, stderr %q; want %d and %q...", got, stderr.String(), tt.status, tt.prefix)
			}
		})
	}
}
