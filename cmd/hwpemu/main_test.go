// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/kernel/procstat"
	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// binDir holds the real binaries the end-to-end tests run: hwpemu and
// hwpprobe, built once by TestMain; it is put first in PATH so commands
// run under `hwpemu run` find hwpprobe.
var binDir string

// victimEnv makes the test binary act as a stand-in for a test process
// that gets killed (TestKillTestProcess); its value is the hwpemu binary.
const victimEnv = "HWPEMU_TEST_VICTIM"

func TestMain(m *testing.M) {
	if bin := os.Getenv(victimEnv); bin != "" {
		binDir = filepath.Dir(bin)
		victim()
		return
	}
	dir, err := os.MkdirTemp("", "hwpemu-bin")
	if err != nil {
		panic(err)
	}
	binDir = dir
	if err := os.Chmod(dir, 0o755); err != nil { // TestNotRoot runs them as nobody
		panic(err)
	}
	for _, b := range []struct{ out, pkg string }{{"hwpemu", "."}, {"hwpprobe", "../hwpprobe"}} {
		if _, err := testbin.Build(dir, b.pkg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// emuCmd returns an exec.Cmd for hwpemu that is killed if the test
// process dies (so a killed test leaves no hwpemu behind).
func emuCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, "hwpemu"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// runEmu runs hwpemu to completion and returns stdout, stderr and exit
// status.
func runEmu(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := emuCmd(args...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("hwpemu %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// inMachine runs a shell script under `hwpemu run machine` and returns its
// stdout; a non-zero status fails the test.
func inMachine(t *testing.T, machine, script string, flags ...string) string {
	t.Helper()
	args := append(append([]string{"run"}, flags...), machine, "--", "sh", "-ec", script)
	stdout, stderr, code := runEmu(t, args...)
	if code != 0 {
		t.Fatalf("hwpemu run %s: exit %d\nscript:\n%s\nstderr:\n%s", machine, code, script, stderr)
	}
	if want := fmt.Sprintf("hwpemu: emulated %s (not real hardware)\n", machine); !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr does not start with the banner %q: %q", want, stderr)
	}
	return stdout
}

// keyValues parses "key=value" lines.
func keyValues(s string) map[string]string {
	kv := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// started is a `hwpemu run ... -- sh -c 'echo $$; exec sleep 600'` whose
// command has printed its PID.
type started struct {
	cmd       *exec.Cmd
	serverPID int // hwpemu's server, PID 1 of the namespace
	cmdPID    int // the sleep inside the namespace, as the test sees it
	done      chan error
}

// startSleeper starts hwpemu run with a long sleep as CMD and waits until
// the sleep runs.
func startSleeper(t *testing.T, machine string) *started {
	t.Helper()
	cmd := emuCmd("run", machine, "--", "sh", "-c", "echo $$; exec sleep 600")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() {
		syscall.Kill(s.cmdPID, syscall.SIGKILL)
		cmd.Process.Kill()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading CMD's pid: %q %v", line, err)
	}
	go func() { s.done <- cmd.Wait() }()
	s.serverPID, s.cmdPID = namespacePIDs(cmd.Process.Pid)
	if s.cmdPID == 0 {
		t.Fatalf("no server and command below hwpemu %d", cmd.Process.Pid)
	}
	return s
}

// namespacePIDs returns, as this process sees them, the PIDs of the
// server `hwpemu run` (pid) started and of the server's child, CMD; 0
// when there is none. (CMD's own $$ is its PID in the namespace.)
func namespacePIDs(pid int) (server, cmd int) {
	if c := childrenOf(pid); len(c) == 1 {
		server = c[0]
		if c := childrenOf(server); len(c) == 1 {
			cmd = c[0]
		}
	}
	return server, cmd
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var kids []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The parent is the second field after the command name.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			k, _ := strconv.Atoi(strings.Split(p, "/")[2])
			kids = append(kids, k)
		}
	}
	return kids
}

// processesMatching lists the live processes (not zombies) one of whose
// arguments is s, or whose executable is s, as "/proc/PID: ARGS".
func processesMatching(s string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, _ := os.ReadFile(d + "/cmdline")
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if exe, _ := os.Readlink(d + "/exe"); (exe == s || slices.Contains(args, s)) && !dead(d) {
			found = append(found, d+": "+strings.Join(args, " "))
		}
	}
	return found
}

// killAll kills (SIGKILL) the processes processesMatching listed.
func killAll(procs []string) {
	for _, p := range procs {
		if pid, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(p, ":", 2)[0], "/proc/")); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// waitNoProcess waits, within a generous bound, until no process matches
// s (processesMatching), and returns those still there.
func waitNoProcess(s string) []string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := processesMatching(s)
		if len(p) == 0 || time.Now().After(deadline) {
			return p
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gone waits until pid has exited (or is a zombie), giving up after a
// generous bound: the kernel delivers death signals asynchronously.
func gone(pid int) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if dead(fmt.Sprintf("/proc/%d", pid)) {
			return true
		}
	}
	return false
}

// dead tells whether the process of the /proc directory dir has ended
// (its directory is gone or it is a zombie).
func dead(dir string) bool {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return true
	}
	st, err := procstat.Parse(string(b))
	return err == nil && st.State() == "Z"
}

// leftovers lists every process whose mount namespace still holds a
// mount served by the hwpemu process pid (mount source hwpemu-*-pid).
func leftovers(t *testing.T, pid int) []string {
	t.Helper()
	suffix := fmt.Sprintf("-%d ", pid)
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*/mountinfo")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if _, after, ok := strings.Cut(l, " - fuse.hwpemu hwpemu-"); ok && strings.Contains(after, suffix) {
				found = append(found, p+": "+l)
			}
		}
	}
	return found
}
