// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A description that is not a bounded regular file, or is malformed, is
// one line and exit 2, at once, for run and serve alike (it used to read
// /dev/zero without end).
func TestDescriptionFileErrors(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 64<<20+1); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nvendor: GenuineIntel\nfamily: six\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.yaml")
	if err := os.WriteFile(cut, []byte("name: x\nvendor: GenuineIntel\ntsc_mhz: 1000\npackages: 1\ncores:\n  - {type: c, co"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"/dev/zero", "hwpemu: /dev/zero: not a regular file"},
		{fifo, "hwpemu: " + fifo + ": not a regular file"},
		{dir, "hwpemu: " + dir + ": not a regular file"},
		{big, "hwpemu: " + big + ": larger than 64 MiB"},
		{bad, "hwpemu: " + bad + ":3: family: cannot unmarshal !!str `six` into int"},
		{cut, "hwpemu: " + cut + ":6: yaml: "},
	} {
		for _, args := range [][]string{{"run", tc.file, "--", "true"}, {"serve", tc.file, dir}} {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			cmd := exec.CommandContext(ctx, filepath.Join(binDir, "hwpemu"), args...)
			out, err := cmd.CombinedOutput()
			timedOut := ctx.Err() != nil
			cancel()
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if timedOut {
				t.Errorf("hwpemu %v did not return within 20 s", args)
				continue
			}
			if code != 2 || strings.Count(string(out), "\n") != 1 || !strings.HasPrefix(string(out), tc.want) {
				t.Errorf("hwpemu %v: exit %d, output %q; want exit 2 and one line starting %q", args, code, out, tc.want)
			}
		}
	}
}
