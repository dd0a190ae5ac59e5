// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/clitest"
)

// isParquet reports whether b is a whole Parquet file: PAR1 at both ends.
func isParquet(b []byte) bool {
	return len(b) > 8 && bytes.HasPrefix(b, []byte("PAR1")) && bytes.HasSuffix(b, []byte("PAR1"))
}

// TestExportFormat: --format chooses CSV (the default, also --csv) or
// Parquet, to a file or to standard output; a bad choice is a usage
// error that writes nothing.
func TestExportFormat(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(v1Fixtures, "emu-mtl.rec")
	wantCSV, err := os.ReadFile(filepath.Join(v1Fixtures, "emu-mtl.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"export", rec}, {"export", "--format", "csv", rec}, {"export", "--csv", "--format", "csv", rec}} {
		if stdout, stderr, code := runBin(t, args...); code != 0 || stdout != string(wantCSV) {
			t.Errorf("%v: exit %d, stderr %q, output the CSV: %v", args, code, stderr, stdout == string(wantCSV))
		}
	}
	stdout, stderr, code := runBin(t, "export", "--format", "parquet", rec)
	if code != 0 || stderr != "" || !isParquet([]byte(stdout)) {
		t.Errorf("Parquet to a pipe: exit %d, stderr %q, %d bytes, Parquet: %v", code, stderr, len(stdout), isParquet([]byte(stdout)))
	}
	out := filepath.Join(dir, "x.parquet")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runBin(t, "export", "--format", "parquet", "-o", out, rec); code != 0 {
		t.Errorf("-o: exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, []byte(stdout)) {
		t.Errorf("-o wrote %d bytes, not the %d written to standard output", len(b), len(stdout))
	}
	recBytes, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if piped, stderr, code := runBinStdin(t, bytes.NewReader(recBytes), "export", "--format", "parquet", "/dev/stdin"); code != 0 || piped != stdout {
		t.Errorf("Parquet of a recording from a pipe: exit %d, stderr %q, the same as from the file: %v", code, stderr, piped == stdout)
	}
	bad := filepath.Join(dir, "bad.parquet")
	for _, args := range [][]string{
		{"--format", "xlsx"}, {"--format", ""}, {"--format", "PARQUET"}, {"--csv", "--format", "parquet"},
	} {
		args = append(append([]string{"export"}, args...), "-o", bad, rec)
		stdout, stderr, code := runBin(t, args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want exit 2 and one line", args, code, len(stdout), stderr)
		}
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a usage error created the output file")
	}
}

// TestExportParquetBadInput: a file that is not a recording, a missing
// file, or the recording itself as output leave no Parquet file, and the
// input as it was; a damaged recording is exported up to the damage, as
// CSV is.
func TestExportParquetBadInput(t *testing.T) {
	dir := t.TempDir()
	notRec := filepath.Join(dir, "not.rec")
	if err := os.WriteFile(notRec, []byte("run,side\n1,A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(v1Fixtures, "emu-mtl.rec"))
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(dir, "in.rec")
	flipped := filepath.Join(dir, "flipped.rec")
	b2 := bytes.Clone(b)
	b2[len(b)*2/3] ^= 0x10
	for path, content := range map[string][]byte{rec: b, flipped: b2} {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		in, out string
		code    int
		written bool
	}{
		{notRec, "a.parquet", 1, false},
		{filepath.Join(dir, "missing.rec"), "b.parquet", 1, false},
		{rec, rec, exitUsage, false},
		{rec, filepath.Join(dir, "no", "dir.parquet"), 1, false},
		{flipped, "c.parquet", 1, true},
	} {
		out := tt.out
		if !filepath.IsAbs(out) {
			out = filepath.Join(dir, out)
		}
		stdout, stderr, code := runBin(t, "export", "--format", "parquet", "-o", out, tt.in)
		if code != tt.code || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s -o %s: exit %d, stderr %q; want exit %d and one line", tt.in, tt.out, code, stderr, tt.code)
		}
		got, err := os.ReadFile(out)
		switch {
		case out == rec:
			if !bytes.Equal(got, b) {
				t.Error("export wrote over its input")
			}
		case tt.written && !isParquet(got):
			t.Errorf("%s: no Parquet file of what was read (%v)", tt.in, err)
		case !tt.written && err == nil:
			t.Errorf("%s: left %s behind", tt.in, tt.out)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("left behind: %v", fmt.Sprint(entries))
	}
}

// TestExportParquetTerminal: Parquet is not written to a terminal.
func TestExportParquetTerminal(t *testing.T) {
	_, pts := clitest.OpenPTY(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hwpprobeBin, "export", "--format", "parquet", filepath.Join(v1Fixtures, "emu-mtl.rec"))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = pts, &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitUsage || !strings.Contains(stderr.String(), "terminal") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("export --format parquet to a terminal: %v, stderr %q; want exit 2 and one line", err, stderr.String())
	}
}
