// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestOptionsBeforeRun: options that contradict each other or say
// nothing to do are one usage line, exit 2, before anything runs (CMD
// leaves a mark; the exporter would serve for ever).
func TestOptionsBeforeRun(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	out := filepath.Join(dir, "x.hwpr")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"record", "--no-trace", "--trace-msrs", "0x774", "-o", out, "--", "touch", mark}, "hwpprobe: record: --no-trace and --trace-msrs contradict each other\n"},
		{[]string{"diff", "--no-trace", "--trace-msrs", "0x774", "performance", "powersave", "--", "touch", mark}, "hwpprobe: diff: --no-trace and --trace-msrs contradict each other\n"},
		{[]string{"diff", "-C", "", "performance", "powersave", "--", "touch", mark}, "hwpprobe: invalid argument \"\" for \"-C, --cpus\" flag: empty CPU list (leave out -C for every CPU)\n"},
		{[]string{"diff", "--cpus= ", "performance", "powersave", "--", "touch", mark}, "hwpprobe: invalid argument \" \" for \"-C, --cpus\" flag: empty CPU list (leave out -C for every CPU)\n"},
		{[]string{"exporter", "--listen", ""}, "hwpprobe: exporter: nothing to do: --listen is empty and no --textfile DIR is given\n"},
		{[]string{"exporter", "--listen=", "--textfile="}, "hwpprobe: exporter: nothing to do: --listen is empty and no --textfile DIR is given\n"},
		{[]string{"exporter", "--listen", "9977"}, "hwpprobe: exporter: --listen \"9977\": address 9977: missing port in address (want HOST:PORT, e.g. 127.0.0.1:9977)\n"},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		cmd := exec.CommandContext(ctx, hwpprobeBin, tt.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		if ctx.Err() != nil {
			t.Errorf("%q: still running after 20s", tt.args)
		} else if code := cmd.ProcessState.ExitCode(); code != exitUsage || stdout.Len() != 0 || stderr.String() != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, stdout.String(), stderr.String(), tt.want)
		}
		cancel()
	}
	for _, p := range []string{mark, out} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: something ran", p)
		}
	}
}
