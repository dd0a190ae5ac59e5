// SPDX-License-Identifier: Apache-2.0

// Package workload runs the command hwpprobe measures: as the invoking user
// when hwpprobe was started with sudo, in its own process group, stopped
// before its first instruction so that counters can be attached to it, with
// the signals hwpprobe receives forwarded to its whole group, and with its
// outcome reported as a shell would (127 not found, 126 not executable,
// 128+N killed by signal N).
package workload

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
)

// Shell-compatible exit statuses for commands that did not run (POSIX
// "Command Search and Execution"; bash and dash agree).
const (
	ExitNotFound      = 127
	ExitNotExecutable = 126
)

// Errors returned by Start; the error wraps one of them.
var (
	ErrNotFound      = errors.New("command not found")
	ErrNotExecutable = errors.New("command cannot be executed")
	ErrNoCommand     = errors.New("no command given")
)

// Credential is the user and groups the command runs as.
type Credential struct {
	UID, GID uint32
	Groups   []uint32 // supplementary groups
}

// SudoCredential returns the invoking user's credential when hwpprobe runs
// under sudo (SUDO_UID and SUDO_GID set, as sudo(8) documents, and this
// process root), nil when they are unset or this process is not root: a
// process that sudo started as root, which then started another user's
// (a test's `nobody`), leaves the variables to it, and that user can
// neither run commands as, nor give files to, anyone else. Supplementary
// groups come from the user database when it knows the user, and are
// otherwise just the primary group.
func SudoCredential(getenv func(string) string) (*Credential, error) {
	su, sg := getenv("SUDO_UID"), getenv("SUDO_GID")
	if (su == "" && sg == "") || os.Geteuid() != 0 {
		return nil, nil
	}
	uid, err := parseID(su)
	if err != nil {
		return nil, fmt.Errorf("SUDO_UID=%q is not a user id: %w", su, err)
	}
	gid, err := parseID(sg)
	if err != nil {
		return nil, fmt.Errorf("SUDO_GID=%q is not a group id: %w", sg, err)
	}
	c := &Credential{UID: uint32(uid), GID: uint32(gid), Groups: []uint32{uint32(gid)}}
	if u, err := user.LookupId(su); err == nil {
		if ids, err := u.GroupIds(); err == nil {
			c.Groups = c.Groups[:0]
			for _, s := range ids {
				if g, err := strconv.ParseUint(s, 10, 32); err == nil {
					c.Groups = append(c.Groups, uint32(g))
				}
			}
		}
	}
	return c, nil
}

// maxID is the largest user or group id: (uid_t)-1, 4294967295, means
// "no id" to setuid(2), chown(2) and setgroups(2).
const maxID = 1<<32 - 2

// ErrBadID is wrapped by SudoCredential's error for a SUDO_UID or SUDO_GID
// that is not a canonical decimal id in 0..4294967294.
var ErrBadID = errors.New("want a decimal id from 0 to 4294967294 without sign or leading zeros")

// parseID parses a user or group id as sudo writes it: canonical decimal
// (no sign, no leading zeros, no spaces), at most maxID.
func parseID(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v > maxID || strconv.FormatUint(v, 10) != s {
		return 0, ErrBadID
	}
	return uint32(v), nil
}

// Spec describes the command.
type Spec struct {
	Argv   []string
	Env    []string // nil: hwpprobe's environment
	Dir    string   // "": hwpprobe's working directory
	Cred   *Credential
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Process is a started command.
type Process struct {
	cmd   *exec.Cmd
	start time.Time
}

// group is the control group SetGroup set; nil: commands stay in
// hwpprobe's.
var group atomic.Pointer[cgroup.Group]

// SetGroup makes every later Start move its command into g while it is
// stopped before its first instruction, so that the command, and all it
// starts, runs in g from its first instruction on while the caller stays
// where it is (hwpemu's closed loop: the workload is held to the
// emulated machine's speed, the observer is not; internal/emu/emuloop). nil
// undoes it.
func SetGroup(g *cgroup.Group) { group.Store(g) }

// Start starts the command stopped at its first instruction (ptrace stops
// a traced child right after execve), calls attach with its pid (to open
// counters that inherit to its children, as `perf stat` does with
// enable_on_exec), then lets it run. When attach fails the command is
// killed and its error returned. With a group set (SetGroup) the command
// joins it before attach.
//
// The command gets its own process group (its pid), so that a terminal's
// Ctrl-C reaches hwpprobe alone and Forward decides what the command gets,
// and the parent-death signal SIGKILL: it dies with hwpprobe. Its own
// children are not signalled when hwpprobe dies (they get the signals
// Forward sends to the group while hwpprobe lives).
func Start(s Spec, attach func(pid int) error) (*Process, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, ErrNoCommand
	}
	path, err := lookPath(s.Argv[0], s.Env)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: s.Argv, Env: s.Env, Dir: s.Dir,
		Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr}
	// Pdeathsig: if hwpprobe is killed (SIGKILL, nothing can forward
	// that), the kernel kills the command too rather than leave it
	// running unmeasured. The signal follows the thread that forks; Go
	// ends a thread only when a goroutine locked to it exits, which
	// nothing here does after unlocking.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Ptrace: true, Pdeathsig: syscall.SIGKILL}
	if s.Cred != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: s.Cred.UID, Gid: s.Cred.GID, Groups: s.Cred.Groups}
	}
	// ptrace requests must come from the thread that became the tracer.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return nil, startError(s.Argv[0], err)
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, fmt.Errorf("workload: wait for %s to stop at exec: %w", s.Argv[0], err)
		}
		break
	}
	if !ws.Stopped() {
		// It died before its first instruction (killed from outside);
		// Wait4 reaped it.
		cmd.Process.Release()
		return nil, fmt.Errorf("workload: %s ended before it started (status %#x)", s.Argv[0], uint32(ws))
	}
	if g := group.Load(); g != nil {
		if err := g.Add(pid); err != nil {
			kill(cmd)
			return nil, fmt.Errorf("workload: move %s into the closed loop's group: %w", s.Argv[0], err)
		}
	}
	start := time.Now()
	if attach != nil {
		if err := attach(pid); err != nil {
			kill(cmd)
			return nil, err
		}
	}
	// Detach without delivering the exec SIGTRAP: the command runs on.
	if err := unix.PtraceDetach(pid); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		cmd.Wait()
		return nil, fmt.Errorf("workload: release %s: %w", s.Argv[0], err)
	}
	return &Process{cmd: cmd, start: start}, nil
}

// kill ends a command stopped at its first instruction, and reaps it.
func kill(cmd *exec.Cmd) {
	unix.Kill(cmd.Process.Pid, unix.SIGKILL)
	unix.PtraceDetach(cmd.Process.Pid)
	cmd.Wait()
}

// lookPath finds the command like a shell: in PATH from env (or hwpprobe's
// own) unless it contains a slash.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		st, err := os.Stat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("%s: %w", name, ErrNotFound)
		case err != nil:
			return "", fmt.Errorf("%s: %w: %v", name, ErrNotExecutable, err)
		case st.IsDir() || st.Mode()&0o111 == 0:
			return "", fmt.Errorf("%s: %w: permission denied", name, ErrNotExecutable)
		}
		return name, nil
	}
	path := os.Getenv("PATH")
	if env != nil {
		path = ""
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				path = v
			}
		}
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, ErrNotFound)
}

func startError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", name, ErrNotFound)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("%s: %w: %v", name, ErrNotExecutable, err)
	}
	return fmt.Errorf("workload: start %s: %w", name, err)
}

// ExitStatus returns the shell exit status for an error from Start:
// 127 for ErrNotFound, 126 otherwise.
func ExitStatus(startErr error) int {
	if errors.Is(startErr, ErrNotFound) {
		return ExitNotFound
	}
	return ExitNotExecutable
}

// ShellStatus is the shell's $? for a process that ended with ws: its
// exit status, or 128+N when signal N killed it.
func ShellStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// Pid returns the command's process id, which is also its process group.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the command's whole process group.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := unix.Kill(-p.Pid(), sig); err != nil && err != unix.ESRCH {
		return fmt.Errorf("workload: signal %v to process group %d: %w", sig, p.Pid(), err)
	}
	return nil
}

// Result is how the command ended.
type Result struct {
	// ExitCode is the shell's $? for the command: its exit status, or
	// 128+N when signal N killed it.
	ExitCode int
	Signal   syscall.Signal // the signal that killed it, 0 if it exited
	// Interrupted is set when hwpprobe received a signal and forwarded it.
	Interrupted bool
	// Forwarded is the first signal forwarded, 0 when none was.
	Forwarded syscall.Signal
	Elapsed   time.Duration
	User, Sys time.Duration // CPU time of the command and its reaped children
	MaxRSSKiB int64
	Err       error // waiting failed (the command's fate is unknown)
}

// Wait waits for the command to end while forwarding the signals that
// arrive on sigs (from signal.Notify) to its process group. A second
// interrupt (SIGINT, SIGTERM) kills the group with SIGKILL, for commands
// that ignore the first. sigs may be nil.
func (p *Process) Wait(sigs <-chan os.Signal) Result {
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var res Result
	for {
		select {
		case err := <-done:
			res.Elapsed = time.Since(p.start)
			st := p.cmd.ProcessState
			if st == nil { // Wait failed before the command ended
				res.ExitCode, res.Err = 1, fmt.Errorf("workload: wait: %w", err)
				return res
			}
			ws := st.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				res.Signal = ws.Signal()
			}
			res.ExitCode = ShellStatus(ws)
			res.User, res.Sys = st.UserTime(), st.SystemTime()
			if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
				res.MaxRSSKiB = ru.Maxrss // kilobytes on Linux (getrusage(2))
			}
			return res
		case s := <-sigs:
			sig, ok := s.(syscall.Signal)
			if !ok {
				continue
			}
			if res.Interrupted && (sig == syscall.SIGINT || sig == syscall.SIGTERM) {
				p.Signal(syscall.SIGKILL)
				continue
			}
			if !res.Interrupted {
				res.Interrupted, res.Forwarded = true, sig
			}
			p.Signal(sig)
		}
	}
}
