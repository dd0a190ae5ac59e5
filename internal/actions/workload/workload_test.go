// SPDX-License-Identifier: Apache-2.0

package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
)

func TestExitStatusLikeAShell(t *testing.T) {
	// Expected statuses are what dash/bash give for `CMD; echo $?`.
	tests := []struct {
		argv []string
		code int
		sig  syscall.Signal
	}{
		{[]string{"true"}, 0, 0},
		{[]string{"false"}, 1, 0},
		{[]string{"sh", "-c", "exit 7"}, 7, 0},
		{[]string{"sh", "-c", "kill -TERM $$"}, 128 + 15, syscall.SIGTERM},
		{[]string{"sh", "-c", "kill -KILL $$"}, 128 + 9, syscall.SIGKILL},
	}
	for _, tt := range tests {
		p, err := Start(Spec{Argv: tt.argv}, nil)
		if err != nil {
			t.Fatalf("%v: %v", tt.argv, err)
		}
		res := p.Wait(nil)
		if res.ExitCode != tt.code || res.Signal != tt.sig || res.Interrupted || res.Err != nil {
			t.Errorf("%v: %+v, want exit %d signal %v", tt.argv, res, tt.code, tt.sig)
		}
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	tests := []struct {
		argv   []string
		env    []string
		want   error
		status int
	}{
		{[]string{"hwpprobe-no-such-command"}, nil, ErrNotFound, 127},
		{[]string{filepath.Join(dir, "missing")}, nil, ErrNotFound, 127},
		{[]string{"sh"}, []string{"PATH=" + dir}, ErrNotFound, 127}, // PATH from the given environment
		{[]string{noexec}, nil, ErrNotExecutable, 126},
		{[]string{dir}, nil, ErrNotExecutable, 126},
		{[]string{}, nil, ErrNoCommand, 126},
	}
	for _, tt := range tests {
		ran := false
		_, err := Start(Spec{Argv: tt.argv, Env: tt.env}, func(int) error { ran = true; return nil })
		if !errors.Is(err, tt.want) || ExitStatus(err) != tt.status || ran {
			t.Errorf("%v: err %v (status %d, attached %v), want %v (%d)", tt.argv, err, ExitStatus(err), ran, tt.want, tt.status)
		}
	}
}

// TestAttachSeesCommandStoppedAfterExec: attach runs when the command is
// already the new program (its comm is the command's) and has not run:
// the kernel shows it in tracing stop ("t" in /proc/PID/stat).
func TestAttachSeesCommandStoppedAfterExec(t *testing.T) {
	var comm, state string
	p, err := Start(Spec{Argv: []string{"true"}}, func(pid int) error {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return err
		}
		// pid (comm) state ...
		s := string(b)
		comm = s[strings.IndexByte(s, '(')+1 : strings.LastIndexByte(s, ')')]
		state = strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res := p.Wait(nil); res.ExitCode != 0 {
		t.Errorf("exit %d", res.ExitCode)
	}
	if comm != "true" || state != "t" {
		t.Errorf("at attach: comm %q state %q, want \"true\" in tracing stop \"t\"", comm, state)
	}
}

func TestAttachErrorKillsCommand(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	boom := errors.New("boom")
	_, err := Start(Spec{Argv: []string{"touch", mark}}, func(int) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the command ran although attach failed")
	}
}

func TestRunsAsCredential(t *testing.T) {
	var out bytes.Buffer
	cred := &Credential{UID: 65534, GID: 65534, Groups: []uint32{65534}}
	p, err := Start(Spec{Argv: []string{"sh", "-c", "id -u; id -g; id -G"}, Cred: cred, Stdout: &out, Dir: "/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := p.Wait(nil); res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	if got, want := out.String(), "65534\n65534\n65534\n"; got != want {
		t.Errorf("id printed %q, want %q", got, want)
	}
}

func TestSudoCredential(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    *Credential
		wantErr bool
	}{
		{map[string]string{}, nil, false},
		// nobody (65534) is in no supplementary group in Debian's
		// /etc/group, so its groups are its primary group.
		{map[string]string{"SUDO_UID": "65534", "SUDO_GID": "65534"}, &Credential{65534, 65534, []uint32{65534}}, false},
		// A uid the user database does not know: the primary group only.
		{map[string]string{"SUDO_UID": "4000123", "SUDO_GID": "4000124"}, &Credential{4000123, 4000124, []uint32{4000124}}, false},
		{map[string]string{"SUDO_UID": "x", "SUDO_GID": "1"}, nil, true},
		{map[string]string{"SUDO_UID": "1"}, nil, true},
		{map[string]string{"SUDO_UID": "0", "SUDO_GID": "0"}, &Credential{0, 0, []uint32{0}}, false},
		{map[string]string{"SUDO_UID": "4294967294", "SUDO_GID": "4294967294"}, &Credential{4294967294, 4294967294, []uint32{4294967294}}, false},
		// (uid_t)-1 is "no id" to setuid(2) and chown(2); non-canonical
		// spellings are not what sudo writes.
		{map[string]string{"SUDO_UID": "4294967295", "SUDO_GID": "1"}, nil, true},
		{map[string]string{"SUDO_UID": "1", "SUDO_GID": "4294967295"}, nil, true},
		{map[string]string{"SUDO_UID": "4294967296", "SUDO_GID": "1"}, nil, true},
		{map[string]string{"SUDO_UID": "0065534", "SUDO_GID": "1"}, nil, true},
		{map[string]string{"SUDO_UID": "+1", "SUDO_GID": "1"}, nil, true},
		{map[string]string{"SUDO_UID": " 1", "SUDO_GID": "1"}, nil, true},
		{map[string]string{"SUDO_UID": "1", "SUDO_GID": "-1"}, nil, true},
		{map[string]string{"SUDO_UID": "1", "SUDO_GID": "1\n"}, nil, true},
	}
	for _, tt := range tests {
		got, err := SudoCredential(func(k string) string { return tt.env[k] })
		if (err != nil) != tt.wantErr {
			t.Errorf("%v: err %v", tt.env, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.env, diff)
		}
	}
}

// startReady starts sh with script, which must print "ready" once its
// traps are set, and waits for that line.
func startReady(t *testing.T, script string) (*Process, string) {
	t.Helper()
	pr, pw := io.Pipe()
	p, err := Start(Spec{Argv: []string{"sh", "-c", script}, Stdout: pw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("read ready: %q %v", line, err)
	}
	go io.Copy(io.Discard, br)
	t.Cleanup(func() { pw.Close() })
	return p, strings.TrimSpace(strings.TrimPrefix(line, "ready"))
}

func TestForwardsSignalToGroup(t *testing.T) {
	// The shell and its background sleep both get SIGTERM.
	p, sleepPid := startReady(t, "sleep 1000 & echo ready $!; wait")
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGTERM
	res := p.Wait(sigs)
	if !res.Interrupted || res.Forwarded != syscall.SIGTERM || res.Signal != syscall.SIGTERM || res.ExitCode != 143 {
		t.Errorf("%+v, want interrupted by SIGTERM, exit 143", res)
	}
	// The background sleep got it too: it dies (it may end a moment after
	// the shell, and init reaps it later; 10 s is a bound, not a
	// measurement).
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + sleepPid + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep %s of process group %d still runs after SIGTERM", sleepPid, p.Pid())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSecondInterruptKills(t *testing.T) {
	p, _ := startReady(t, `trap "" INT; echo ready; exec sleep 1000`)
	sigs := make(chan os.Signal, 2)
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGINT
	res := p.Wait(sigs)
	if !res.Interrupted || res.Forwarded != syscall.SIGINT || res.Signal != syscall.SIGKILL || res.ExitCode != 137 {
		t.Errorf("%+v, want interrupted, then killed (137)", res)
	}
}

// TestSetGroup: with a group set, the command runs in it from its first
// instruction (its /proc/self/cgroup, read by the command itself, names
// the group) while this process stays where it was; a group that cannot
// take it is an error and the command never runs. Needs root and the
// host's cpu controller (internal/kernel/cgroup).
func TestSetGroup(t *testing.T) {
	h, err := cgroup.DetectHost()
	if err != nil {
		t.Fatalf("no cpu controller (the CI VMs mount it on cgroup v1): %v", err)
	}
	g, err := h.Create(fmt.Sprintf("hwpprobe-workload-test-%d", os.Getpid()))
	if err != nil {
		t.Fatalf("cannot make a group (the tests run as root): %v", err)
	}
	defer g.Remove()
	defer SetGroup(nil)
	self, _ := os.ReadFile("/proc/self/cgroup")
	dir := t.TempDir()
	out := filepath.Join(dir, "cgroup")
	SetGroup(g)
	p, err := Start(Spec{Argv: []string{"sh", "-c", "cat /proc/self/cgroup > " + out}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := p.Wait(nil); res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	b, _ := os.ReadFile(out)
	if name := "/" + filepath.Base(g.Dirs[0]) + "\n"; !strings.Contains(string(b), name) {
		t.Errorf("the command's /proc/self/cgroup:\n%s\nwant the group %s", b, name)
	}
	if now, _ := os.ReadFile("/proc/self/cgroup"); string(now) != string(self) {
		t.Errorf("this process moved:\n%s\nwas:\n%s", now, self)
	}
	mark := filepath.Join(dir, "ran")
	SetGroup(&cgroup.Group{V2: true, Dirs: []string{filepath.Join(dir, "no-such-group")}})
	if _, err := Start(Spec{Argv: []string{"touch", mark}}, nil); err == nil || !strings.Contains(err.Error(), "move touch into the closed loop's group") {
		t.Errorf("a group that cannot take the command: %v", err)
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran: %v", err)
	}
}
