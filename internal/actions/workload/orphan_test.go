// SPDX-License-Identifier: Apache-2.0

package workload

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentEnv makes the test binary act as a stand-in for hwpprobe that
// gets killed: it starts a command with Start, prints its pid and waits.
const parentEnv = "WORKLOAD_TEST_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(parentEnv) != "" {
		p, err := Start(Spec{Argv: []string{"sleep", "600"}}, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(p.Pid())
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

// TestCommandDiesWithParent: when the process that started the command
// is killed with SIGKILL (nothing can forward that), the command is
// killed too instead of running on unmeasured.
func TestCommandDiesWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), parentEnv+"=1")
	parent.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(bufio.NewReader(out), &pid); err != nil {
		parent.Process.Kill()
		t.Fatalf("the command's pid: %v", err)
	}
	parent.Process.Kill()
	parent.Wait()
	if !ended(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the command %d survives its parent's SIGKILL", pid)
	}
}

// ended waits, within a generous bound (death signals are delivered
// asynchronously), until pid has exited or is a zombie.
func ended(pid int) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
	}
	return false
}
