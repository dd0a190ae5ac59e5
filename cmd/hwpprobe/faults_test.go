// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// TestStopSignals: every signal a user ends a program with (Ctrl-C, kill,
// a closed terminal, Ctrl-\) ends watch and trace as Ctrl-C does: what
// they printed so far, exit 0, one clean ending; SIGQUIT dumps no
// goroutine stacks.
func TestStopSignals(t *testing.T) {
	for _, argv := range [][]string{
		{"watch", "-i", "50ms"},
		{"trace", "--msr", "0x6e0", "--events", "none", "--count-only"},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
			t.Run(argv[0]+"/"+sig.String(), func(t *testing.T) {
				stderr, err := runUntilSignal(t, argv, sig)
				if err != nil {
					t.Errorf("after %v: %v, want exit status 0\nstderr:\n%s", sig, err, stderr)
				}
				if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "SIGQUIT") {
					t.Errorf("after %v: stack dump on stderr:\n%.2000s", sig, stderr)
				}
			})
		}
	}
}

// runUntilSignal starts hwpprobe with argv, waits until it has started
// its work (watch: the first row on stdout; trace: "tracing" on stderr),
// sends sig, and returns its stderr and how it ended; the whole run is
// bounded.
func runUntilSignal(t *testing.T, argv []string, sig syscall.Signal) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hwpprobeBin, argv...)
	var stderr bytes.Buffer
	var stdout bytes.Buffer
	pr, pw := io.Pipe()
	ready := "\n"
	if argv[0] == "trace" {
		cmd.Stdout, cmd.Stderr, ready = &stdout, io.MultiWriter(&stderr, pw), "tracing"
	} else {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&stdout, pw), &stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan bool, 1)
	go func() {
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			got = append(got, buf[:n]...)
			if bytes.Contains(got, []byte(ready)) {
				seen <- true
				io.Copy(io.Discard, pr)
				return
			}
			if err != nil {
				seen <- false
				return
			}
		}
	}()
	select {
	case ok := <-seen:
		if !ok {
			t.Fatalf("%v ended before it started", argv)
		}
	case <-ctx.Done():
		t.Fatalf("%v did not start within the bound", argv)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	pw.Close()
	return stderr.String(), err
}

// TestEmptyCPUList: -C with an empty or blank list is a one-line usage
// error in every command that takes -C (it used to mean every CPU).
func TestEmptyCPUList(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.rec")
	for _, argv := range [][]string{
		{"snapshot", "-C", ""},
		{"snapshot", "--cpus="},
		{"watch", "-n", "1", "-C", " "},
		{"trace", "--duration", "10ms", "-C", ""},
		{"record", "-o", out, "-C", "", "--", "true"},
	} {
		stdout, stderr, code := runBin(t, argv...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "empty CPU list") || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line saying the list is empty", argv, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("record -C '' created its output")
	}
}

// TestBadSudoID: a SUDO_UID or SUDO_GID that is not a canonical id in
// 0..4294967294 is a one-line usage error before anything runs, in record
// and trace (every command that runs CMD as the invoking user).
func TestBadSudoID(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	for _, env := range [][3]string{
		{"record", "4294967295", "1000"}, {"record", "1000", "4294967295"}, {"record", "01000", "1000"},
		{"record", "1000", "+1000"}, {"record", "", "1000"},
		{"trace", "4294967295", "1000"}, {"trace", "1000", " 1000"},
	} {
		argv := []string{"record", "-o", filepath.Join(dir, "x.rec"), "--", "touch", mark}
		if env[0] == "trace" {
			argv = []string{"trace", "--msr", "0x6e0", "--", "touch", mark}
		}
		env := [2]string{env[1], env[2]}
		cmd := exec.Command(hwpprobeBin, argv...)
		cmd.Env = append(os.Environ(), "SUDO_UID="+env[0], "SUDO_GID="+env[1])
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("SUDO_UID=%q SUDO_GID=%q: exit %d (%v), stderr %q; want exit 2 and one line", env[0], env[1], code, err, stderr.String())
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("CMD ran with a bad SUDO_UID/SUDO_GID")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", fmt.Sprint(entries))
	}
}

// TestExportOverInput: export never writes over the recording it reads,
// by its own name, a hard link, a symbolic link or another spelling of
// the path (usage error, the recording unchanged).
func TestExportOverInput(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "run.rec")
	if _, stderr, code := runBin(t, "record", "--no-trace", "-o", rec, "--", "true"); code != 0 {
		t.Fatalf("record: %d %s", code, stderr)
	}
	before, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	hard, sym := filepath.Join(dir, "hard.rec"), filepath.Join(dir, "sym.rec")
	if err := os.Link(rec, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.rec", sym); err != nil {
		t.Fatal(err)
	}
	for _, tt := range [][2]string{{rec, rec}, {hard, rec}, {rec, hard}, {sym, rec}, {rec, sym}, {dir + "/./run.rec", rec}} {
		stdout, stderr, code := runBin(t, "export", "--csv", "-o", tt[0], tt[1])
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "also an input") {
			t.Errorf("export -o %s %s: exit %d, stderr %q; want 2 and one line", tt[0], tt[1], code, stderr)
		}
	}
	if after, _ := os.ReadFile(rec); !bytes.Equal(before, after) {
		t.Error("export wrote over its input")
	}
	if st, err := os.Lstat(sym); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symbolic link was replaced: %v", err)
	}
}

// TestRecordFullDisk: when the file system is full before the recording's
// header is written, record fails before CMD runs and leaves no file (a
// 0-byte one would need --force to retry). The full file system is a
// small tmpfs in a private mount namespace (unshare), so it vanishes with
// the test whatever happens.
func TestRecordFullDisk(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "ran")
	script := `set -e
D="$3"
mount -t tmpfs -o size=64k tmpfs "$D"
dd if=/dev/zero of="$D/filler" bs=4k 2>/dev/null || true
set +e
"$1" record --no-trace -o "$D/x.rec" -- touch "$2"
echo "status=$?"
ls -A "$D"`
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", hwpprobeBin, mark, t.TempDir())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("unshare (tests run as root): %v\n%s", err, stderr.String())
	}
	if got := stdout.String(); got != "status=1\nfiller\n" {
		t.Errorf("status and files left %q, want status 1 and only the filler", got)
	}
	if e := stderr.String(); strings.Count(e, "\n") != 1 || !strings.Contains(e, "no space left on device") {
		t.Errorf("stderr %q: want one line saying the disk is full", e)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("CMD ran although the recording could not be started")
	}
}

// TestTraceExitRules: trace -- CMD exits by record's rules: CMD's status
// (128+N when signal N killed it) with no error line of hwpprobe's, and 0
// when --duration ended CMD, saying so.
func TestTraceExitRules(t *testing.T) {
	base := []string{"trace", "--msr", "0x6e0", "--count-only", "--events", "none"}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string // stderr lines after "tracing ...", as regexps' literal starts
	}{
		{"killed by SIGKILL", []string{"--", "sh", "-c", "kill -9 $$"}, 137, nil},
		{"killed by SIGTERM", []string{"--", "sh", "-c", "kill -TERM $$"}, 143, nil},
		{"exit 3", []string{"--", "sh", "-c", "exit 3"}, 3, nil},
		{"ended at the duration", []string{"--duration", "300ms", "--", "sleep", "10"}, 0,
			[]string{"hwpprobe: --duration 300ms is up: ended sleep (SIGTERM to its process group); the command was killed by signal SIGTERM"}},
		{"exits before the duration", []string{"--duration", "1m", "--", "true"}, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runBin(t, append(append([]string{}, base...), tt.args...)...)
			lines := withoutMissedEvents(strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"))
			if code != tt.code || len(lines) != 1+len(tt.want) || !strings.HasPrefix(lines[0], "hwpprobe: tracing ") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d, the tracing line and %d more", code, stderr, tt.code, len(tt.want))
			}
			for i, w := range tt.want {
				if lines[1+i] != w {
					t.Errorf("stderr line %d %q, want %q", 2+i, lines[1+i], w)
				}
			}
		})
	}
}

// withoutMissedEvents drops trace's warning about events the kernel could
// not deliver: it is printed when another BPF program (another test's
// tracer, running at the same time) held the CPU, and says nothing about
// the exit rules.
func withoutMissedEvents(lines []string) []string {
	var kept []string
	for _, l := range lines {
		if strings.HasPrefix(l, "hwpprobe: warning: ") && strings.Contains(l, "events missed") {
			continue
		}
		kept = append(kept, l)
	}
	return kept
}

// TestTraceInterruptCommand: Ctrl-C while trace runs CMD is forwarded to
// CMD's process group; hwpprobe exits 128+2 with one line saying so, as
// record does.
func TestTraceInterruptCommand(t *testing.T) {
	stderr, err := runUntilSignal(t, []string{"trace", "--msr", "0x6e0", "--count-only", "--events", "none", "--", "sleep", "60"}, syscall.SIGINT)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("after SIGINT: %v, want exit 130\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "hwpprobe: interrupted: SIGINT forwarded to the command's process group; the command was killed by signal SIGINT\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestDiffReportOverInput: diff's --json and --markdown reports never
// replace the recordings it reads.
func TestDiffReportOverInput(t *testing.T) {
	dir := t.TempDir()
	exp := writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
	before, _ := os.ReadFile(exp)
	link := filepath.Join(dir, "link.hwpr")
	if err := os.Link(exp, link); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--json", "--markdown"} {
		for _, out := range []string{exp, link} {
			_, stderr, code := runBin(t, "diff", flag, out, exp)
			if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "also an input") {
				t.Errorf("diff %s %s %s: exit %d, stderr %q; want 2 and one line", flag, out, exp, code, stderr)
			}
		}
	}
	if after, _ := os.ReadFile(exp); !bytes.Equal(before, after) {
		t.Error("diff wrote a report over its input")
	}
}
