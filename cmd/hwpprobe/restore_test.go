// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
)

// TestRestoreBrokenJournal: restore with a journal it cannot read prints
// that error, one line, exit 1, and not "no journal, nothing to restore";
// the journal stays.
func TestRestoreBrokenJournal(t *testing.T) {
	tests := []struct {
		name  string
		make  func(path string) error
		error string
	}{
		{"truncated", func(p string) error { return os.WriteFile(p, []byte(`{"version":1,"pid":`), 0o600) }, "unexpected end of JSON input"},
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o600) }, "unexpected end of JSON input"},
		{"random", func(p string) error { return os.WriteFile(p, []byte("\x93\x01garbage\xff"), 0o600) }, "invalid character"},
		{"version 99", func(p string) error { return os.WriteFile(p, []byte(`{"version":99}`), 0o600) }, "version 99, this hwpprobe reads 1"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory"},
		{"symbolic link", func(p string) error {
			target := filepath.Join(filepath.Dir(p), "target")
			if err := os.WriteFile(target, []byte(`{"version":2}`), 0o600); err != nil {
				return err
			}
			return os.Symlink(target, p)
		}, "journal JOURNAL: version 2, this hwpprobe reads 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jdir := t.TempDir()
			path := filepath.Join(jdir, "journal.json")
			if err := tt.make(path); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(hwpprobeBin, "restore")
			cmd.Env = append(os.Environ(), profile.JournalDirEnv+"="+jdir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			want := strings.ReplaceAll(tt.error, "JOURNAL", path)
			if code := cmd.ProcessState.ExitCode(); code != exitError || stdout.Len() != 0 ||
				strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), "hwpprobe: ") || !strings.Contains(stderr.String(), want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing on stdout and one line with %q", code, stdout.String(), stderr.String(), want)
			}
			if _, err := os.Lstat(path); err != nil {
				t.Errorf("the journal is gone: %v", err)
			}
		})
	}
}
