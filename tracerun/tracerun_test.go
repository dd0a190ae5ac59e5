package tracerun

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/workload"
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
func TestSupervise(t *testing.T) {
	for _, tt := range []struct {
		name     string
		script   string
		duration time.Duration
		signal   os.Signal
		ended    bool
		code     int
	}{
		{"exits first", "exit 4", time.Minute, nil, false, 4},
		{"ended by SIGTERM", "sleep 60", 50 * time.Millisecond, nil, true, 128 + 15},
		{"ignores SIGTERM", "trap '' TERM; sleep 60 & wait; sleep 60", 50 * time.Millisecond, nil, true, 128 + 9},
		{"forwarded SIGHUP", "sleep 60", 0, syscall.SIGHUP, false, 128 + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proc, err := workload.Start(workload.Spec{Argv: []string{"sh", "-c", tt.script}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			sigs := make(chan os.Signal, 1)
			if tt.signal != nil {
				sigs <- tt.signal
			}
			done := make(chan struct{})
			var r workload.Result
			var ended bool
			go func() {
				r, ended = supervise(proc, Config{Duration: tt.duration, Grace: 100 * time.Millisecond, Signals: sigs})
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
