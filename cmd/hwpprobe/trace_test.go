// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// These run the real binary against the running kernel (root, eBPF, as on
// the CI VM). MSR 0x6e0 (TSC deadline) is written hundreds of times a
// second per CPU there.

var traceLine = regexp.MustCompile(`^\d+\.\d{6} cpu\d+ \S.* MSR_0x6e0 0x[0-9a-f]+$`)

func TestTraceText(t *testing.T) {
	stdout, stderr, code := runBin(t, "trace", "--msr", "0x6e0", "--duration", "1s")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	body, summary, ok := strings.Cut(stdout, "\nsummary: ")
	if !ok {
		t.Fatalf("no summary in %q", stdout)
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) < 50 {
		t.Fatalf("%d events in 1 s, want hundreds", len(lines))
	}
	for _, l := range lines {
		if !traceLine.MatchString(l) {
			t.Fatalf("bad event line %q", l)
		}
	}
	// "missed" (hits while another BPF program ran on the CPU) can be
	// non-zero when other tracers run, e.g. tests of package ebpf.
	m := regexp.MustCompile(`events: (\d+) delivered, (\d+) lost \(ring buffer full\), \d+ missed`).FindStringSubmatch(summary)
	if m == nil || m[2] != "0" {
		t.Errorf("summary %q: want 0 lost", summary)
	}
	if m != nil && m[1] != itoa(len(lines)) {
		t.Errorf("summary says %s delivered, %d lines printed", m[1], len(lines))
	}
	if !strings.Contains(summary, "MSR_0x6e0") {
		t.Errorf("summary %q lacks the per-register rows", summary)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestTraceJSON(t *testing.T) {
	stdout, stderr, code := runBin(t, "trace", "--msr", "0x6e0", "--events", "none", "--duration", "500ms", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for _, l := range lines {
		checkSchema(t, "hwpprobe-trace/1", []byte(l))
	}
	var summary struct {
		Summary struct {
			Counters struct{ Delivered, Lost, Matched uint64 }
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	events := lines[:len(lines)-1]
	for _, l := range events {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, k := range []string{"time_ns", "cpu", "pid", "comm", "msr", "value", "failed"} {
			if _, ok := e[k]; !ok {
				t.Fatalf("line %q lacks %s", l, k)
			}
		}
		if e["msr"] != "0x6e0" {
			t.Fatalf("line %q: msr %v", l, e["msr"])
		}
	}
	c := summary.Summary.Counters
	if len(events) < 20 || c.Lost != 0 || c.Delivered != uint64(len(events)) || c.Matched != c.Delivered {
		t.Errorf("%d events, counters %+v: want Lost 0 and Matched = Delivered = events", len(events), c)
	}
}

func TestTraceCommand(t *testing.T) {
	stdout, stderr, code := runBin(t, "trace", "--msr", "0x6e0", "--count-only", "--", "sh", "-c", "sleep 0.2; exit 3")
	if code != 3 {
		t.Errorf("exit %d, want the command's 3 (stderr %q)", code, stderr)
	}
	if !regexp.MustCompile(`msr:write_msr: [1-9]\d* matched the filter; count only`).MatchString(stdout) {
		t.Errorf("count-only summary missing or no writes counted: %q", stdout)
	}
	if !regexp.MustCompile(`(?m)^MSR_0x6e0 +0x6e0 +\d+ +[1-9]\d* +- +-$`).MatchString(stdout) {
		t.Errorf("count-only summary lacks per-CPU rows for MSR 0x6e0: %q", stdout)
	}
}

func TestTraceErrors(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"trace", "--msr", "HWP_REQEST"}, 2, `unknown MSR "HWP_REQEST"`},
		{[]string{"trace", "--msr", "0x774,"}, 2, "empty item"},
		{[]string{"trace", "--events", "amd_cpu:no_such_event"}, 1, "tracepoint amd_cpu:no_such_event"},
		{[]string{"trace", "--events", "cpu_frequency"}, 2, "want group:name"},
		{[]string{"trace", "-C", "0-x"}, 2, "invalid CPU list"},
		{[]string{"trace", "-C", "0,4095"}, 2, "CPU 4095 not online"},
		{[]string{"trace", "--msr", "0x1,0x2,0x3,0x4,0x5,0x6,0x7,0x8,0x9,0xa,0xb,0xc,0xd,0xe,0xf,0x10,0x11"}, 2, "at most 16"},
		{[]string{"trace", "--duration", "-1s"}, 2, "cannot be negative"},
		{[]string{"trace", "stray"}, 2, "after --"},
		{[]string{"trace", "--msr", "0x6e0", "--", "/nonexistent/cmd"}, 127, "/nonexistent/cmd: command not found"},
		{[]string{"--root", empty, "trace"}, 1, "no tracefs under " + empty},
	}
	for _, tt := range tests {
		stdout, stderr, code := runBin(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("hwpprobe %v: exit %d, stdout %q, stderr %q; want exit %d and one line with %q",
				tt.args, code, stdout, stderr, tt.code, tt.msg)
		}
	}
}

// TestTraceNotRoot runs the real binary as user nobody: one clear line
// saying root is needed, exit status 1.
func TestTraceNotRoot(t *testing.T) {
	cmd, _ := nobodyCmd(t, "trace", "--msr", "0x6e0", "--duration", "100ms")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), "permission denied: run as root (or with CAP_BPF and CAP_PERFMON)") {
		t.Errorf("as nobody: %v, stdout %q, stderr %q: want exit 1 and one line saying root is needed", err, stdout.String(), stderr.String())
	}
}

// TestTraceInterrupt: without --duration, trace runs until SIGINT, then
// prints the summary and exits 0.
func TestTraceInterrupt(t *testing.T) {
	cmd := exec.Command(hwpprobeBin, "trace", "--msr", "0x6e0", "--events", "none")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first event line means the tracer is attached and streaming.
	first := make([]byte, 1)
	if _, err := stdout.Read(first); err != nil {
		t.Fatalf("no output: %v (stderr %q)", err, stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(stdout)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGINT: %v (stderr %q)", err, stderr.String())
	}
	if !regexp.MustCompile(`\nsummary: \d+\.\d{3} s\n(.|\n)*events: \d+ delivered, 0 lost`).Match(rest) {
		t.Errorf("no summary after SIGINT in %q", rest)
	}
}
