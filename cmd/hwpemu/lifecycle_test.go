// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lifeMachine is the machine the lifecycle tests run; any would do.
const lifeMachine = "mtl-165u"

func TestExitStatus(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string // a substring
	}{
		{[]string{"run", lifeMachine, "--", "true"}, 0, "hwpemu: emulated mtl-165u (not real hardware)"},
		{[]string{"run", lifeMachine, "--", "false"}, 1, ""},
		{[]string{"run", lifeMachine, "sh", "-c", "exit 7"}, 7, ""},
		{[]string{"run", lifeMachine, "--", "sh", "-c", "kill -TERM $$"}, 128 + 15, ""},
		{[]string{"run", "--energy-start", "5", lifeMachine, "--", "true"}, 0, ""},
		{[]string{"run", "no-such-machine", "--", "true"}, exitUsage, "unknown machine"},
		{[]string{"run", lifeMachine, "--", "/no/such/command"}, exitNotFound, "/no/such/command"},
		{[]string{"run", lifeMachine}, exitUsage, "requires at least 2 arg(s)"},
		{[]string{"run", "--energy-start=-1", lifeMachine, "--", "true"}, exitUsage, "cannot be negative"},
		{[]string{"run", "--busy=1.5", lifeMachine, "--", "true"}, exitUsage, "must be between 0 and 1"},
		{[]string{"run", "--busy=0.5", lifeMachine, "--", "true"}, 0, ""},
		{[]string{"serve", lifeMachine, "/no/such/dir"}, exitUsage, "not an existing directory"},
		{[]string{"serve", lifeMachine}, exitUsage, "accepts 2 arg(s)"},
		{[]string{nsCmdName, "--parent-mntns=x", lifeMachine, "true"}, exitUsage, "internal to `hwpemu run`"},
		{[]string{graftCmdName, "true"}, exitUsage, "internal to `hwpemu run`"},
		{[]string{"no-such-command"}, exitUsage, "unknown command"},
	}
	for _, tt := range tests {
		_, stderr, code := runEmu(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("hwpemu %q: exit %d, stderr %q; want exit %d, stderr containing %q",
				tt.args, code, stderr, tt.code, tt.stderr)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); tt.code == exitUsage && n > 0 {
			t.Errorf("hwpemu %q: usage error takes %d lines, want one: %q", tt.args, n+1, stderr)
		}
	}
}

// ownView is what this test process sees of the paths hwpemu grafts.
func ownView(t *testing.T) []string {
	t.Helper()
	var v []string
	for _, p := range []string{"/dev/cpu", "/sys/devices/system/cpu", "/sys/devices", "/sys/class"} {
		ents, err := os.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			v = append(v, p+"/"+e.Name())
		}
	}
	_, err := os.Stat("/sys/devices/system/cpu/hwpemu_machine")
	v = append(v, fmt.Sprintf("marker exists: %v", err == nil))
	return v
}

func TestNothingChangesOutside(t *testing.T) {
	before := ownView(t)
	s := startSleeper(t, lifeMachine)
	if d := cmp.Diff(before, ownView(t)); d != "" {
		t.Errorf("while hwpemu runs, the test's view changed (-before +during):\n%s", d)
	}
	// The command, in the namespace, does see the emulated machine.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/root/sys/devices/system/cpu/hwpemu_machine", s.cmdPID))
	if err != nil || strings.TrimSpace(string(b)) != lifeMachine {
		t.Errorf("CMD's marker file: %q, %v", b, err)
	}
	if l := leftovers(t, s.cmd.Process.Pid); len(l) == 0 {
		t.Error("no hwpemu mount found in CMD's namespace while it runs")
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if l := leftovers(t, s.cmd.Process.Pid); len(l) > 0 {
		t.Errorf("mounts left after hwpemu ended:\n%s", strings.Join(l, "\n"))
	}
	if d := cmp.Diff(before, ownView(t)); d != "" {
		t.Errorf("after hwpemu ended, the test's view changed (-before +after):\n%s", d)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestSignalsReachCommand(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		s := startSleeper(t, lifeMachine)
		if err := s.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if got, want := exitCode(<-s.done), 128+int(sig); got != want {
			t.Errorf("%v to hwpemu: exit %d, want %d (CMD killed by it)", sig, got, want)
		}
		if !gone(s.cmdPID) {
			t.Errorf("%v: CMD %d still runs", sig, s.cmdPID)
		}
	}
}

func TestKillCommand(t *testing.T) {
	s := startSleeper(t, lifeMachine)
	if err := syscall.Kill(s.cmdPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := exitCode(<-s.done); got != 128+9 {
		t.Errorf("CMD killed: hwpemu exit %d, want 137", got)
	}
	if l := leftovers(t, s.cmd.Process.Pid); len(l) > 0 {
		t.Errorf("mounts left:\n%s", strings.Join(l, "\n"))
	}
}

// TestKillHwpemu kills the server with SIGKILL: CMD must die with it (no
// process left reading files nobody serves) and its namespace, the only
// place the mounts were, with them.
func TestKillHwpemu(t *testing.T) {
	s := startSleeper(t, lifeMachine)
	pid := s.cmd.Process.Pid
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if !gone(s.cmdPID) {
		t.Fatalf("CMD %d survives hwpemu's SIGKILL", s.cmdPID)
	}
	if l := leftovers(t, pid); len(l) > 0 {
		t.Errorf("mounts left:\n%s", strings.Join(l, "\n"))
	}
}

// victim is the test binary acting as a test process that starts hwpemu
// and then gets killed: it prints both PIDs and waits.
func victim() {
	cmd := emuCmd("run", lifeMachine, "--", "sh", "-c", "echo $$; exec sleep 600")
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	bufio.NewReader(out).ReadString('\n')
	_, cmdPID := namespacePIDs(cmd.Process.Pid)
	fmt.Printf("%d %d\n", cmd.Process.Pid, cmdPID)
	time.Sleep(time.Hour)
}

// TestKillTestProcess kills (SIGKILL) a process that, like a test, runs
// hwpemu through this package's helpers: hwpemu, CMD and the mounts must
// all go.
func TestKillTestProcess(t *testing.T) {
	v := exec.Command(os.Args[0], "-test.run=^$")
	v.Env = append(os.Environ(), victimEnv+"="+filepath.Join(binDir, "hwpemu"))
	out, err := v.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	var emuPID, cmdPID int
	if _, err := fmt.Fscan(bufio.NewReader(out), &emuPID, &cmdPID); err != nil {
		v.Process.Kill()
		t.Fatalf("victim's pids: %v", err)
	}
	v.Process.Kill()
	v.Wait()
	for _, pid := range []int{emuPID, cmdPID} {
		if !gone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d survives the killed test process", pid)
		}
	}
	if l := leftovers(t, emuPID); len(l) > 0 {
		t.Errorf("mounts left:\n%s", strings.Join(l, "\n"))
	}
}

func TestServe(t *testing.T) {
	dir := t.TempDir()
	cmd := emuCmd("serve", lifeMachine, dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if want := fmt.Sprintf("hwpemu: serving emulated %s at %s until SIGINT or SIGTERM\n", lifeMachine, dir); line != want || err != nil {
		t.Fatalf("first line %q (%v), want %q", line, err, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sys/devices/system/cpu/hwpemu_machine"))
	if err != nil || strings.TrimSpace(string(b)) != lifeMachine {
		t.Errorf("marker under %s: %q, %v", dir, b, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v (stderr %q)", err, stderr.String())
	}
	if !strings.HasPrefix(stderr.String(), "hwpemu: emulated "+lifeMachine+" (not real hardware)\n") {
		t.Errorf("serve stderr %q lacks the banner", stderr.String())
	}
	if l := leftovers(t, cmd.Process.Pid); len(l) > 0 {
		t.Errorf("mounts left:\n%s", strings.Join(l, "\n"))
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("%s after serve ended: %v, %v; want an empty directory", dir, ents, err)
	}
}

// TestNotRoot runs hwpemu as nobody: mounting is refused with one clear
// line and status 1.
func TestNotRoot(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"run", lifeMachine, "--", "true"}, {"serve", lifeMachine, dir}} {
		cmd := emuCmd(args...)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != exitError || !strings.Contains(string(out), "needs root (CAP_SYS_ADMIN)") ||
			strings.Count(string(out), "\n") != 1 {
			t.Errorf("hwpemu %q as nobody: exit %d, output %q; want exit 1 and one line saying it needs root", args, code, out)
		}
	}
}

// TestCommandInheritsOnlyStdio: CMD must not hold hwpemu's descriptors,
// /dev/fuse above all (a CMD holding it keeps a dead server's connection,
// and its readers wait for ever). The test's own descriptors above 2 are
// close-on-exec, so CMD should see exactly 0, 1, 2 and the one ls opens.
func TestCommandInheritsOnlyStdio(t *testing.T) {
	out := inMachine(t, "vm-bare", "ls -l /proc/self/fd")
	if strings.Contains(out, "/dev/fuse") {
		t.Errorf("CMD inherited /dev/fuse:\n%s", out)
	}
	var fds []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) >= 9 {
			fds = append(fds, f[8])
		}
	}
	if len(fds) != 4 {
		t.Errorf("CMD has descriptors %v, want 0, 1, 2 and ls's own:\n%s", fds, out)
	}
}

// TestSignalDuringStart sends SIGINT, SIGTERM and SIGKILL to `hwpemu run`
// at every offset from 0 to 30 ms after it starts, every 0.5 ms, so that
// some land in each step of the start-up (before the server exists, while
// it mounts, while the grafter binds, as CMD starts, once CMD runs). Each
// run must end within a bound, with 128+N as a shell reports it (or killed
// by N), leaving no process, no mount and nothing in TMPDIR.
func TestSignalDuringStart(t *testing.T) {
	tmp := t.TempDir()
	exe := filepath.Join(binDir, "hwpemu")
	for i := 0; i <= 60; i++ {
		offset := time.Duration(i) * 500 * time.Microsecond
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
			// A unique sleep, so that a survivor is found by its arguments.
			marker := fmt.Sprintf("600.%d%02d", i+100, int(sig))
			cmd := emuCmd("run", lifeMachine, "--", "sleep", marker)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(offset)
			cmd.Process.Signal(sig)
			what := fmt.Sprintf("%v %v after start", sig, offset)
			if !endsAs(t, cmd, sig, what) {
				return // one hang is enough: the rest would wait as long
			}
			for _, s := range []string{marker, exe} {
				if p := waitNoProcess(s); len(p) > 0 {
					t.Errorf("%s: processes survive:\n%s", what, strings.Join(p, "\n"))
					killAll(p)
				}
			}
			if l := leftovers(t, cmd.Process.Pid); len(l) > 0 {
				t.Errorf("%s: mounts left:\n%s", what, strings.Join(l, "\n"))
			}
			if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
				t.Errorf("%s: left in TMPDIR: %v", what, ents)
				for _, e := range ents {
					os.Remove(filepath.Join(tmp, e.Name()))
				}
			}
		}
	}
}

// TestServerOutlivesRun starts the server as `hwpemu run` would, but
// as the child of a process that is not the --run-pid it is given, while
// the ready pipe's reader stays open: what the server sees when run was
// killed before the server set its death signal and run's last thread
// has not yet closed its descriptors. The server must end at once with
// status 1, neither saying it is ready nor starting CMD; otherwise it
// would outlive run for ever (TestSignalDuringStart once found one).
func TestServerOutlivesRun(t *testing.T) {
	mntns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer readyR.Close()
	marker := fmt.Sprintf("600.%d77", os.Getpid())
	// PID 1 is init, never this test: the parent the server finds differs.
	cmd := emuCmd(nsCmdName, "--parent-mntns="+mntns, "--run-pid=1", "--time-scale=1", "--energy-start=0",
		"--open-reason=a test", "--", lifeMachine, "sleep", marker)
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	cmd.ExtraFiles = []*os.File{readyW}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readyW.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the server still runs 20 s after it found its parent is not run; stderr %q", stderr.String())
	}
	if code := exitCode(err); code != exitError {
		t.Errorf("server ended with %v (stderr %q), want exit %d", err, stderr.String(), exitError)
	}
	readyR.SetReadDeadline(time.Now().Add(time.Second))
	if n, _ := readyR.Read(make([]byte, 1)); n != 0 {
		t.Errorf("the server said it was ready to a run that is gone")
	}
	if p := waitNoProcess(marker); len(p) > 0 {
		t.Errorf("CMD started: %s", strings.Join(p, "\n"))
		killAll(p)
	}
}

// endsAs waits, within a bound, for cmd to end, and checks that it ended
// as a shell reports signal sig: exit status 128+N, or killed by it. It
// returns false when cmd did not end.
func endsAs(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, what string) bool {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		t.Errorf("%s: hwpemu has not ended after 20 s: %s", what, b)
		cmd.Process.Kill()
		return false
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !(ws.Signaled() && ws.Signal() == sig) && !(ws.Exited() && ws.ExitStatus() == 128+int(sig)) {
		t.Errorf("%s: hwpemu ended with %v, want exit %d or killed by %v", what, cmd.ProcessState, 128+int(sig), sig)
	}
	return true
}

// orphanScript starts a process of CMD's own (a unique sleep in a new
// session, as a daemon would be), waits until it runs, then says "ready"
// and goes on with rest.
func orphanScript(marker, rest string) string {
	// The pattern is written so that grep's own command line does not match.
	pattern := strings.Replace(marker, ".", "[.]", 1)
	return fmt.Sprintf("setsid sleep %s </dev/null >/dev/null 2>&1 & "+
		"until grep -qsxz %s /proc/[0-9]*/cmdline; do :; done; echo ready; %s", marker, pattern, rest)
}

// TestOrphansEndWithHwpemu: every process CMD starts ends with hwpemu,
// whether CMD exits, hwpemu is killed or its server is (each SIGKILL).
func TestOrphansEndWithHwpemu(t *testing.T) {
	tests := []struct {
		name string
		rest string // what CMD does once its orphan runs
		kill func(s *started) int
		code int
	}{
		{"CMD exits", "read x; exit 3", nil, 3}, // once the test has seen the orphan
		{"hwpemu killed", "sleep 600", func(s *started) int { return s.cmd.Process.Pid }, -1},
		{"server killed", "sleep 600", func(s *started) int { return s.serverPID }, 128 + 9},
	}
	for i, tt := range tests {
		marker := fmt.Sprintf("600.%d%d", os.Getpid(), i)
		cmd := emuCmd("run", lifeMachine, "--", "sh", "-c", orphanScript(marker, tt.rest))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s := &started{cmd: cmd}
		line, _ := bufio.NewReader(out).ReadString('\n')
		s.serverPID, s.cmdPID = namespacePIDs(cmd.Process.Pid)
		if line != "ready\n" || len(processesMatching(marker)) != 1 {
			cmd.Process.Kill()
			t.Fatalf("%s: CMD said %q; its orphan: %q", tt.name, line, processesMatching(marker))
		}
		if tt.kill != nil {
			if err := syscall.Kill(tt.kill(s), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if got := exitCode(err); got != tt.code {
				t.Errorf("%s: hwpemu exit %d, want %d", tt.name, got, tt.code)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("%s: hwpemu has not ended", tt.name)
		}
		if p := waitNoProcess(marker); len(p) > 0 {
			t.Errorf("%s: CMD's orphan survives:\n%s", tt.name, strings.Join(p, "\n"))
			killAll(p)
		}
		if l := leftovers(t, cmd.Process.Pid); len(l) > 0 {
			t.Errorf("%s: mounts left:\n%s", tt.name, strings.Join(l, "\n"))
		}
	}
}
