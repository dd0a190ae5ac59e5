// SPDX-License-Identifier: Apache-2.0

package tracerun

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
)

func TestLossWarning(t *testing.T) {
	tests := []struct {
		lost, missed uint64
		want         string
	}{
		{0, 0, ""},
		{3, 0, "3 events lost (ring buffer full)"},
		{0, 1, "1 events missed (another BPF program was running on that CPU)"},
		{2, 5, "2 events lost (ring buffer full), 5 events missed (another BPF program was running on that CPU)"},
	}
	for _, tt := range tests {
		if got := LossWarning(tt.lost, tt.missed); got != tt.want {
			t.Errorf("LossWarning(%d, %d) = %q, want %q", tt.lost, tt.missed, got, tt.want)
		}
	}
}

// TestExit: record's exit rules.
func TestExit(t *testing.T) {
	notFound := fmt.Errorf("x: %w", workload.ErrNotFound)
	traceErr := errors.New("ring buffer: boom")
	for _, tt := range []struct {
		name string
		r    Result
		code int
		msg  string
	}{
		{"no command", Result{}, 0, ""},
		{"exit 0", Result{Command: &workload.Result{}}, 0, ""},
		{"exit 3", Result{Command: &workload.Result{ExitCode: 3}}, 3, ""},
		{"killed by SIGKILL", Result{Command: &workload.Result{ExitCode: 137, Signal: syscall.SIGKILL}}, 137, ""},
		{"not found", Result{StartErr: notFound}, 127, "command not found"},
		{"trace failed", Result{Err: traceErr, Command: &workload.Result{}}, 1, "boom"},
		{"ended at the duration", Result{Ended: true, Command: &workload.Result{ExitCode: 143, Signal: syscall.SIGTERM}}, 0, ""},
		{"interrupted", Result{Command: &workload.Result{ExitCode: 130, Signal: syscall.SIGINT, Interrupted: true, Forwarded: syscall.SIGINT}},
			130, "interrupted: SIGINT forwarded to the command's process group; the command was killed by signal SIGINT"},
		{"interrupted, then ended", Result{Ended: true, Command: &workload.Result{ExitCode: 0, Interrupted: true, Forwarded: syscall.SIGHUP}},
			129, "SIGHUP forwarded to the command's process group; the command exited with status 0"},
	} {
		code, err := tt.r.Exit()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if code != tt.code || !strings.Contains(msg, tt.msg) || (tt.msg == "") != (err == nil) {
			t.Errorf("%s: Exit() = %d, %v; want %d, %q", tt.name, code, err, tt.code, tt.msg)
		}
	}
}

// TestSupervise: a command that exits on its own is not ended; one still
// running at the duration gets SIGTERM, and one that ignores SIGTERM gets
// SIGKILL after the grace time; signals hwpprobe receives are forwarded.
//
// The signal is really sent to the test process, caught as hwpprobe
// catches it (signal.Notify, before the command starts): the command
// then starts with that signal's default action, whatever the test's
// launcher left (under nohup SIGHUP is ignored, and an ignored signal
// stays ignored across fork and exec). A script that ignores SIGTERM says
// so on stdout before the duration starts, so a loaded machine cannot
// send SIGTERM before the trap is set; the grace time of a command that
// SIGTERM ends is long, since under load sh may run late (dash blocks
// every signal while it vforks its command).
func TestSupervise(t *testing.T) {
	for _, tt := range []struct {
		name     string
		script   string
		duration time.Duration
		grace    time.Duration
		signal   syscall.Signal
		ended    bool
		code     int
	}{
		{"exits first", "exit 4", time.Minute, time.Second, 0, false, 4},
		{"ended by SIGTERM", "sleep 60", 50 * time.Millisecond, 20 * time.Second, 0, true, 128 + 15},
		{"ignores SIGTERM", "trap '' TERM; echo ready; sleep 60 & wait; sleep 60", 50 * time.Millisecond, 100 * time.Millisecond, 0, true, 128 + 9},
		{"forwarded SIGHUP", "sleep 60", 0, time.Second, syscall.SIGHUP, false, 128 + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 1)
			if tt.signal != 0 {
				signal.Notify(sigs, tt.signal)
				defer signal.Stop(sigs)
			}
			rd, wr, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			proc, err := workload.Start(workload.Spec{Argv: []string{"sh", "-c", tt.script}, Stdout: wr}, nil)
			wr.Close()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { proc.Signal(syscall.SIGKILL) }) // the script's children
			if strings.Contains(tt.script, "echo ready") {
				waitReady(t, rd)
			}
			if tt.signal != 0 {
				if err := syscall.Kill(os.Getpid(), tt.signal); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan struct{})
			var r workload.Result
			var ended bool
			go func() {
				r, ended = supervise(proc, Config{Duration: tt.duration, Grace: tt.grace, Signals: sigs})
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				proc.Signal(syscall.SIGKILL)
				t.Fatal("supervise did not return")
			}
			if ended != tt.ended || r.ExitCode != tt.code {
				t.Errorf("ended %v, exit %d; want %v, %d", ended, r.ExitCode, tt.ended, tt.code)
			}
		})
	}
}

// waitReady waits (at most 30 s) for the script's "ready" line.
func waitReady(t *testing.T, rd *os.File) {
	t.Helper()
	if err := rd.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(rd).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("script's first line %q, %v; want ready", line, err)
	}
}
