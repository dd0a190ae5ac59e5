// SPDX-License-Identifier: Apache-2.0

// Package quittest starts a program again and again and sends it SIGQUIT
// at a range of moments after package sigquit has initialized in it: the
// test, for hwpprobe and hwpemu, that SIGQUIT never meets the Go
// runtime's default (a goroutine dump and status 2) from then on, however
// early (package sigquit; before it, the runtime's own start cannot be
// changed).
package quittest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Marker is the line GODEBUG=inittrace=1 makes the Go runtime print once
// package sigquit's init has run.
const Marker = "init github.com/hwpprobe/hwpprobe/internal/sigquit "

// Result is how one start ended.
type Result struct {
	After  time.Duration // when SIGQUIT was sent, after sigquit's init
	Status int           // the shell's $?: 128+N when killed by signal N
	Stderr string        // without the inittrace lines
}

// Delays are the moments Loop sends SIGQUIT at: every quarter
// millisecond of the first millisecond (the other packages initialize),
// then every millisecond up to maxMS (flags, the command's setup).
func Delays(maxMS int) []time.Duration {
	d := []time.Duration{0, 250 * time.Microsecond, 500 * time.Microsecond, 750 * time.Microsecond}
	for ms := 1; ms < maxMS; ms++ {
		d = append(d, time.Duration(ms)*time.Millisecond)
	}
	return d
}

// Loop starts bin with argv reps times for each of Delays(maxMS), sends
// SIGQUIT that long after Marker, and returns how each ended. A start
// that prints no Marker, or does not end within 20 s of the signal, fails
// the test.
func Loop(t *testing.T, bin string, argv []string, maxMS, reps int) []Result {
	t.Helper()
	var res []Result
	for _, after := range Delays(maxMS) {
		for range reps {
			res = append(res, once(t, bin, argv, after))
		}
	}
	return res
}

func once(t *testing.T, bin string, argv []string, after time.Duration) Result {
	t.Helper()
	cmd := exec.Command(bin, argv...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	marked := make(chan bool, 1)
	stderr := make(chan string, 1)
	go func() { stderr <- readStderr(pipe, marked) }()
	if !<-marked {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("%s %v: no %q on stderr:\n%.1000s", bin, argv, Marker, <-stderr)
	}
	time.Sleep(after)
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	var text string
	select {
	case text = <-stderr:
	case <-time.After(20 * time.Second):
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		_ = cmd.Process.Kill()
		t.Fatalf("%s %v: stderr still open 20 s after SIGQUIT at %v; /proc/PID/stat %q", bin, argv, after, stat)
	}
	_ = cmd.Wait()
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	st := ws.ExitStatus()
	if ws.Signaled() {
		st = 128 + int(ws.Signal())
	}
	return Result{After: after, Status: st, Stderr: text}
}

// readStderr reads r to its end, says on marked whether Marker came (as
// soon as it does), and returns the lines other than inittrace's.
func readStderr(r io.Reader, marked chan<- bool) string {
	var b strings.Builder
	seen := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, Marker) && !seen {
			seen = true
			marked <- true
		}
		if !strings.HasPrefix(line, "init ") {
			b.WriteString(line + "\n")
		}
	}
	if !seen {
		marked <- false
	}
	return b.String()
}
