// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBadNumbers runs bad values of every numeric option of hwpemu and
// hwpprobe through the built binaries: NaN, infinities, 1e300, negative
// and out-of-range values must each give one line naming the option and
// exit 2, before anything runs.
func TestBadNumbers(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "x.rec")
	type option struct {
		bin, flag string
		args      func(v string) []string
		bad       []string
	}
	anyFloat := []string{"NaN", "nan", "+Inf", "-Inf", "Inf", "1e300", "1e400", "-1", "", "x", "0.5.5"}
	options := []option{
		{"hwpemu", "--busy", func(v string) []string { return []string{"run", "--busy=" + v, lifeMachine, "--", "true"} },
			append(anyFloat, "1.5", "-0.5", "1.0000001")},
		{"hwpemu", "--busy", func(v string) []string { return []string{"serve", "--busy=" + v, lifeMachine, dir} },
			[]string{"NaN", "+Inf", "2"}},
		{"hwpemu", "--energy-start", func(v string) []string { return []string{"run", "--energy-start=" + v, lifeMachine, "--", "true"} },
			append(anyFloat, "-1e-9", "1e10")},
		{"hwpemu", "--energy-start", func(v string) []string { return []string{"serve", "--energy-start=" + v, lifeMachine, dir} },
			[]string{"NaN", "-Inf", "1e300"}},
		{"hwpemu", "--busy-cpus", func(v string) []string { return []string{"predict", "--busy-cpus=" + v, lifeMachine, "performance"} },
			[]string{"NaN", "-1", "1.5", "1e300", "", "x", "99999999999999999999", "+Inf"}},
		{"hwpprobe", "--interval", func(v string) []string { return []string{"watch", "-i", v} },
			[]string{"NaN", "0", "-1s", "1ms", "9ms", "1e300s", "25h", "", "10", "+Inf"}},
		{"hwpprobe", "--num-iterations", func(v string) []string { return []string{"watch", "-n", v} },
			[]string{"-1", "1.5", "NaN", "1e300", "99999999999999999999", "2147483648"}},
		{"hwpprobe", "--interval", func(v string) []string { return []string{"record", "-o", rec, "-i", v, "--", "true"} },
			[]string{"NaN", "0", "-1s", "1ms", "25h", "1e300s"}},
		{"hwpprobe", "--duration", func(v string) []string { return []string{"trace", "--msr", "0x6e0", "--duration", v} },
			[]string{"NaN", "0", "-1s", "1e300s", "500us", "9000h", "+Inf"}},
		{"hwpprobe", "--run", func(v string) []string { return []string{"show", "--run", v, rec} },
			[]string{"0", "-1", "NaN", "1e300", "1.5", "2147483648"}},
		{"hwpprobe", "--cpu", func(v string) []string { return []string{"decode", "--cpu", v, "HWP_REQUEST=0x1"} },
			[]string{"6:NaN", "1e300:1", "-1:5", "6:-1", "6:99999999999999999999", "+Inf:1"}},
		{"hwpprobe", "--min-interval", func(v string) []string { return []string{"exporter", "--min-interval", v} },
			[]string{"NaN", "0", "-1s", "9ms", "2h", "1e300s"}},
		{"hwpprobe", "--textfile-interval", func(v string) []string { return []string{"exporter", "--textfile-interval", v} },
			[]string{"NaN", "0", "-1s", "99ms", "25h"}},
		{"hwpprobe", "--alpha", diffArgs("--alpha"), []string{"NaN", "+Inf", "-0.5", "1e300"}},
		{"hwpprobe", "--confidence", diffArgs("--confidence"), []string{"NaN", "-Inf", "2"}},
		{"hwpprobe", "--precision", diffArgs("--precision", "--runs", "auto"), []string{"NaN", "0", "-0.1", "1"}},
		{"hwpprobe", "--max-runs", diffArgs("--max-runs", "--runs", "auto"), []string{"-1", "1", "1e300", "99999999999999999999"}},
		{"hwpprobe", "--warmup", diffArgs("--warmup"), []string{"-1", "NaN", "10001"}},
		{"hwpprobe", "--interval", diffArgs("-i"), []string{"NaN", "1ms", "-1s"}},
		{"hwpprobe", "--size", diffArgs("--size"), []string{"-1", "1e300", "100000001"}},
		{"hwpprobe", "--size", func(v string) []string { return []string{"workload", "buildlike", "--size", v} }, []string{"-1", "NaN"}},
		{"hwpprobe", "--jobs", func(v string) []string { return []string{"workload", "buildlike", "--jobs", v} }, []string{"0", "-4", "1e300"}},
	}
	n := 0
	for _, o := range options {
		for _, v := range o.bad {
			n++
			args := o.args(v)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			cmd := exec.CommandContext(ctx, filepath.Join(binDir, o.bin), args...)
			// A value taken by mistake starts the command: end it as a
			// user would, so that serve unmounts.
			cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
			cmd.WaitDelay = 5 * time.Second
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			cancel()
			msg := strings.TrimSuffix(stderr.String(), "\n")
			if code := exitCode(err); code != exitUsage || strings.Contains(msg, "\n") || !strings.Contains(msg, o.flag) || stdout.Len() > 0 {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s",
					o.bin, args, code, stdout.String(), stderr.String(), o.flag)
			}
		}
	}
	t.Logf("%d bad values refused", n)
}

// diffArgs returns the arguments of a diff dry run with flag set to v,
// and more flags.
func diffArgs(flag string, more ...string) func(v string) []string {
	return func(v string) []string {
		return append(append([]string{"diff", "--dry-run", flag, v}, more...), "performance", "powersave", "--", "true")
	}
}
