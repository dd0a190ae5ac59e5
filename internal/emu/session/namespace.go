// SPDX-License-Identifier: Apache-2.0

package session

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/emu/closedloop"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
	"github.com/hwpprobe/hwpprobe/internal/kernel/procstat"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// NamespaceConfig is what `hwpemu run` tells the server (NamespaceCmd)
// about itself, with the machine and CMD.
type NamespaceConfig struct {
	Machine    Machine
	Parent     string   // mount namespace of hwpemu run (--parent-mntns)
	RunPID     int      // PID of hwpemu run, in the mount's name (--run-pid)
	Cgroup     string   // the closed loop's group (cgroup.Group.String); "": open loop
	Observer   string   // the observers' group: hwpemu run's own (--observer-cgroup)
	OpenReason string   // why CMD runs open loop (--open-reason)
	Command    []string // CMD and its arguments
}

// checkInside refuses to run outside the namespaces `hwpemu run` makes,
// where the mounts would cover the real system's files: the mount
// namespace must differ from parent, and the server must be PID 1 of its
// PID namespace.
func checkInside(parent string, pid1 bool) error {
	cur, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("read own mount namespace: %w", err)
	}
	if parent == "" || cur == parent || (pid1 && os.Getpid() != 1) {
		return cli.Usagef("internal to `hwpemu run`: it runs only in the private namespaces run makes")
	}
	return nil
}

// ServeNamespace is the server: PID 1 of the namespaces `hwpemu run`
// made, with hwpemu run's ready pipe as descriptor 3. It serves the
// machine, starts the grafter, which becomes CMD, and returns CMD's
// status as Run does, passing signals on. It never reads the tree it
// serves.
func ServeNamespace(c NamespaceConfig) error {
	if err := checkInside(c.Parent, true); err != nil {
		return err
	}
	// PID 1 gets no signal it has no handler for: catch them at once.
	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, termSignals...)()
	if err := tieToRun(c.RunPID); err != nil {
		return err
	}
	s, err := startServer(c)
	if err != nil {
		return err
	}
	if s.hostStat != nil {
		defer s.hostStat.Close() // read through /proc/self/fd until the end
	}
	gflags := []string{"--parent-mntns=" + c.Parent, "--machine=" + s.machine, "--model=" + s.summary, "--variant=" + s.variant, "--loop=" + s.loopBanner}
	if s.loop != nil {
		gflags = append(gflags, "--cgroup="+c.Cgroup)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			if err := s.loop.Run(stop); err != nil {
				cli.Linef(os.Stderr, "hwpemu", "%v; CMD keeps its last quota", err)
			}
		}()
	}
	return runGrafter(s.srv.MountFD(), gflags, c.Command, sigs)
}

// tieToRun makes the server die with `hwpemu run` (SIGKILL; a PID 1
// that dies takes its whole PID namespace with it), then tells run, on
// descriptor 3, that it may pass signals on.
//
// Run may have died before the death signal was set, and a death signal
// set after the parent's exit never comes. Two checks catch that, after
// the signal is set: the parent as the host's /proc reports it (this
// process is PID 1 of its own namespace, where getppid says 0) must still
// be run (runPID): once run's last thread has begun to exit this process
// belongs to init, even while run's descriptors are still open; and the
// write to run's pipe must succeed (no reader once run is gone). Either
// failing ends the server at once.
func tieToRun(runPID int) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("set the death signal: %w", err)
	}
	ready := os.NewFile(3, "ready")
	defer ready.Close()
	ppid, err := hostParent()
	if err != nil {
		return err
	}
	if ppid != runPID {
		return cli.ExitCodeError{Code: cli.ExitError} // hwpemu run is gone: nobody to tell
	}
	if _, err := ready.Write([]byte{1}); err != nil {
		return cli.ExitCodeError{Code: cli.ExitError}
	}
	return nil
}

// hostParent is this process's parent as the /proc it sees reports it:
// the host's /proc until startServer mounts the namespace's own, so the
// PID is in the same namespace as run's --run-pid.
func hostParent() (int, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, fmt.Errorf("read own parent: %w", err)
	}
	st, err := procstat.Parse(string(b))
	if err != nil {
		return 0, fmt.Errorf("read own parent: %w", err)
	}
	return st.Parent()
}

// served is a running server.
type served struct {
	srv        *fusefs.Server
	machine    string
	summary    string           // the model's one-line summary (emu.Machine.Summary)
	hostStat   *os.File         // the host's /proc/stat the open loop follows; nil in the closed loop
	loop       *closedloop.Loop // nil: open loop
	loopBanner string
	variant    string // the model variant's one-line summary (emu.Machine.VariantSummary)
}

// startServer makes every mount private, mounts a /proc for the new PID
// namespace, and serves the machine: in the closed loop its load is what
// CMD's group uses (closedloop), otherwise the host's.
func startServer(c NamespaceConfig) (s *served, err error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("make mounts private: %w", err)
	}
	if err := privateRun("/run", "hwpprobe"); err != nil {
		return nil, err
	}
	s = &served{}
	defer func() {
		if err != nil && s.hostStat != nil {
			s.hostStat.Close()
		}
	}()
	var opts []emu.Option
	var g, obs *cgroup.Group
	load := &emu.VarLoad{}
	if c.Cgroup != "" {
		if g, err = cgroup.ParseGroup(c.Cgroup); err != nil {
			return nil, err
		}
		if obs, err = cgroup.ParseGroup(c.Observer); err != nil {
			return nil, err
		}
		opts = append(opts, emu.WithLoad(load), emu.WithLoopInfo(func() string { return s.loop.Info() }))
	} else {
		// The emulated CPUs follow the host's load, read from the host's
		// /proc/stat. Once grafted, that path shows the emulated file
		// served by this very process, which must never read it: keep the
		// real one open and read it through its descriptor
		// (/proc/self/fd/N leads to the open file itself, not to what is
		// mounted over its path).
		if s.hostStat, err = os.Open("/proc/stat"); err != nil {
			return nil, err
		}
		s.loopBanner = closedloop.OpenBanner(c.OpenReason)
		info := closedloop.OpenInfo(c.OpenReason)
		opts = append(opts, emu.WithLoad(&emu.HostLoad{Path: fmt.Sprintf("/proc/self/fd/%d", s.hostStat.Fd())}),
			emu.WithLoopInfo(func() string { return info }))
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return nil, fmt.Errorf("mount /proc for the new PID namespace: %w", err)
	}
	m, err := c.Machine.Load(opts...)
	if err != nil {
		return nil, err
	}
	if g != nil {
		// The group's thread ids are this PID namespace's: the /proc just
		// mounted names them.
		if s.loop, err = closedloop.New(g, obs, m, load, runtime.NumCPU(), "/proc"); err != nil {
			return nil, err
		}
		s.loopBanner = s.loop.Banner()
	}
	if s.srv, err = fusefs.New(m.Tree(), fusefs.Options{Name: mountName(m.Name(), c.RunPID), Debug: c.Machine.Debug}); err != nil {
		return nil, err
	}
	s.machine, s.summary, s.variant = m.Name(), m.Summary(), m.VariantSummary()
	return s, nil
}

// runGrafter starts the grafter, with gflags, with the tree's mount (descriptor 3) and
// a pipe (descriptor 4) that closes when it executes CMD, reaps every
// process orphaned in the namespace, and returns CMD's status. A signal
// before CMD runs kills the grafter and hwpemu exits 128+N.
func runGrafter(mnt *os.File, gflags, argv []string, sigs <-chan os.Signal) error {
	execR, execW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer execR.Close()
	g := exec.Command("/proc/self/exe", slices.Concat([]string{GraftCmd}, gflags, []string{"--"}, argv)...)
	g.Stdin, g.Stdout, g.Stderr = os.Stdin, os.Stdout, os.Stderr
	g.ExtraFiles = []*os.File{mnt, execW}
	select {
	case s := <-sigs:
		return cli.ExitCodeError{Code: 128 + int(s.(syscall.Signal))}
	default:
	}
	err = g.Start()
	execW.Close()
	mnt.Close()
	if err != nil {
		return fmt.Errorf("start the grafter: %w", err)
	}
	execed := make(chan struct{})
	go func() { io.Copy(io.Discard, execR); close(execed) }()
	exited := make(chan struct{})
	var ws unix.WaitStatus
	go func() { ws = reapUntil(g.Process.Pid); close(exited) }()
	code := 128 + int(forward(g.Process.Pid, sigs, execed, exited))
	if code == 128 {
		code = workload.ShellStatus(syscall.WaitStatus(ws))
	}
	if code == 0 {
		return nil
	}
	return cli.ExitCodeError{Code: code}
}

// reapUntil waits for any child, as PID 1 must (orphans of the namespace
// become its children), until pid ends, and returns how pid ended.
func reapUntil(pid int) unix.WaitStatus {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return unix.WaitStatus(cli.ExitError << 8) // no child left: cannot happen while pid lives
		case got == pid:
			return ws
		}
	}
}

// privateRun gives the session its own dir/private (/run/hwpprobe, where
// hwpprobe keeps the journal of settings to restore and its lock): a
// journal left on the host or in another session neither blocks apply and
// diff here nor meets restore here, and none made here reaches the host.
// dir becomes a mirror of the host's (fusefs.Mirror: every other entry
// bound to the host's own) holding an empty private directory. It runs in
// the server's mount namespace, after every mount was made private.
func privateRun(dir, private string) error {
	if err := fusefs.Mirror(dir, private); err != nil {
		return fmt.Errorf("private %s/%s: %w", dir, private, err)
	}
	if err := os.Mkdir(filepath.Join(dir, private), 0o700); err != nil {
		return fmt.Errorf("private %s/%s: %w", dir, private, err)
	}
	return nil
}
