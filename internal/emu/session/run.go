// SPDX-License-Identifier: Apache-2.0

package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// RunConfig is `hwpemu run`: Command runs where Machine's files are at
// the real paths.
type RunConfig struct {
	Machine  Machine
	OpenLoop bool     // run Command at the host's speed (no closed loop)
	Command  []string // CMD and its arguments; at least CMD
	Stderr   io.Writer
}

// Run runs c.Command in a private mount and PID namespace where the
// emulated machine's files are at the real paths, and returns nil when it
// exits 0, otherwise a cli.ExitCodeError with its status as a shell gives
// it (128+N for signal N, ExitNotFound when CMD is not found), or a usage
// error (a bad machine, no usable cgroup controller for the closed loop).
// It checks the machine and CMD before anything is mounted, makes the
// closed loop's group (removed at the end), and passes SIGINT, SIGTERM,
// SIGHUP and SIGQUIT on to CMD.
func Run(c RunConfig) error {
	m, err := c.Machine.Load()
	if err != nil {
		return err
	}
	m.Close()
	if _, err := exec.LookPath(c.Command[0]); err != nil {
		return cli.ExitCodeError{Code: ExitNotFound, Err: err}
	}
	reason := openReason(c.OpenLoop, c.Machine.Busy != nil, m)
	if !sysAdmin() {
		// Before the closed loop's group, which would fail first
		// for the same reason.
		return fmt.Errorf("a private mount and PID namespace needs root (CAP_SYS_ADMIN): %w", syscall.EPERM)
	}
	var g, observer *cgroup.Group
	if reason == "" {
		if g, observer, err = makeGroup(); err != nil {
			return err
		}
		defer func() {
			if err := g.Remove(); err != nil {
				cli.Linef(c.Stderr, "hwpemu", "%v", err)
			}
		}()
	}
	return superviseRun(c.Machine, g, observer, reason, c.Command)
}

// openReason says why CMD runs open loop, or "" for the closed loop: a
// load fixed by --busy, a machine whose frequency the model does not follow
// requests (no cpufreq driver), or --open-loop.
func openReason(open, busy bool, m *emu.Machine) string {
	switch {
	case busy:
		return "--busy fixes the emulated load"
	case !m.ModelsFrequency():
		return m.Name() + " models no delivered frequency"
	case open:
		return "--open-loop"
	}
	return ""
}

// groupPrefix names the cgroup of a closed loop: hwpemu-PID, PID that of
// hwpemu run.
const groupPrefix = "hwpemu-"

// makeGroup makes the closed loop's cgroup on the host's cpu controller,
// first removing the empty groups of hwpemu runs that were killed before
// they could remove theirs, and returns it with the observers' group:
// the one hwpemu run itself is in, where a program observing CMD, such as
// hwpprobe, moves itself (internal/emu/emuloop) to run as it would without
// hwpemu. No usable controller, or no permission to make a group, is bad
// input for the closed loop: one line suggesting --open-loop.
func makeGroup() (g, observer *cgroup.Group, err error) {
	h, err := cgroup.DetectHost()
	if err == nil {
		h.RemoveStale(groupPrefix, func(pid int) bool { return unix.Kill(pid, 0) != unix.ESRCH })
		g, err = h.Create(groupPrefix + strconv.Itoa(os.Getpid()))
	}
	if errors.Is(err, cgroup.ErrNoController) || errors.Is(err, cgroup.ErrPermission) {
		return nil, nil, cli.Usagef("closed loop: %v; run with --open-loop", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("closed loop: %w", err)
	}
	return g, h.Own(), nil
}

// termSignals are the signals hwpemu passes on to CMD, and the ones serve
// stops on.
var termSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// superviseRun starts the server in new mount and PID namespaces and
// waits for it, passing signals on. The server tells it, on a pipe, when
// it is ready for them: a signal before that ends the server (SIGKILL)
// and hwpemu with 128+N. The same pipe tells the server whether hwpemu is
// still alive when it sets its death signal (see ServeNamespace).
//
// With a group g, the server runs the closed loop on it and names
// observer as the observers' group; otherwise CMD runs open loop for
// reason.
func superviseRun(mc Machine, g, observer *cgroup.Group, reason string, cmd []string) error {
	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, termSignals...)() // SIGQUIT is passed on too
	parent, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("read own mount namespace: %w", err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer readyR.Close() // only now: the server's liveness check needs it open
	argv := append([]string{NamespaceCmd, "--parent-mntns=" + parent, "--run-pid=" + strconv.Itoa(os.Getpid())}, mc.Args()...)
	if g != nil {
		argv = append(argv, "--cgroup="+g.String(), "--observer-cgroup="+observer.String())
	} else {
		argv = append(argv, "--open-reason="+reason)
	}
	srv := exec.Command("/proc/self/exe", append(append(argv, "--", mc.Name), cmd...)...)
	srv.Stdin, srv.Stdout, srv.Stderr = os.Stdin, os.Stdout, os.Stderr
	srv.ExtraFiles = []*os.File{readyW}
	srv.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID}
	// The server's death signal follows the thread that forks it: keep
	// that thread for this goroutine, which lives as long as the process.
	runtime.LockOSThread()
	err = srv.Start()
	readyW.Close()
	if errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("a private mount and PID namespace needs root (CAP_SYS_ADMIN): %w", err)
	}
	if err != nil {
		return fmt.Errorf("start the server: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		if n, _ := readyR.Read(make([]byte, 1)); n == 1 {
			close(ready)
		}
	}()
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	return exitStatus(forward(srv.Process.Pid, sigs, ready, done), srv.ProcessState)
}

// forward passes the signals arriving on sigs to pid once ready is
// closed, until done is closed (pid has ended). A signal before ready
// kills pid with SIGKILL and is returned once pid has ended: the caller
// exits 128+N.
func forward(pid int, sigs <-chan os.Signal, ready, done <-chan struct{}) syscall.Signal {
	for {
		select {
		case <-done:
			return 0
		case <-ready:
			ready = nil
			continue
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			if ready != nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				<-done
				return sig
			}
			_ = syscall.Kill(pid, sig)
		}
	}
}

// exitStatus is hwpemu's exit for a child that ended with st, or for a
// signal early that ended it: the shell's $? in an ExitCodeError, nil for
// 0.
func exitStatus(early syscall.Signal, st *os.ProcessState) error {
	code := cli.ExitError
	switch ws, ok := st.Sys().(syscall.WaitStatus); {
	case early != 0:
		code = 128 + int(early)
	case ok:
		code = workload.ShellStatus(ws)
	}
	if code == 0 {
		return nil
	}
	return cli.ExitCodeError{Code: code}
}

// sysAdmin is whether this process has CAP_SYS_ADMIN in its effective set
// (bit 21 of /proc/self/status's CapEff), which the namespaces need.
func sysAdmin() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return os.Geteuid() == 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	return os.Geteuid() == 0
}
