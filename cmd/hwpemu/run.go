// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// `hwpemu run` is three processes, so that no process both serves the
// FUSE tree and uses it (a FUSE server that waits on its own mount, as in
// a close(2) of one of its files while it is being killed, never wakes up):
//
//   - hwpemu run itself, outside every namespace: it starts the server and
//     passes signals on; it never mounts anything.
//   - the server (nsCmdName), PID 1 of a new PID and mount namespace: it
//     serves the tree and never looks at it. When it exits, the kernel
//     kills every process of its PID namespace, and the mount namespace,
//     the only place the mounts ever were, goes with them.
//   - the grafter (graftCmdName), the server's child: it binds the tree
//     over the real paths, then executes CMD in its place.
const (
	nsCmdName    = "__run-in-namespace"
	graftCmdName = "__graft"
)

func newRunCmd() *cobra.Command {
	var (
		mf                   machineFlags
		openLoop, closedLoop bool
	)
	cmd := &cobra.Command{
		Use:   "run [flags] MACHINE [--] CMD [ARG...]",
		Short: "Run CMD where the emulated machine's files are at the real paths",
		Long: `run starts CMD in a private mount and PID namespace in which /dev/cpu,
/sys/devices/system/cpu, /sys/devices/cpu_core, /sys/devices/cpu_atom,
/sys/class/powercap, /proc/cpuinfo and /proc/stat are the emulated machine's,
so unchanged programs read them. Nothing outside the namespaces changes. hwpemu
serves the files while CMD runs and exits with CMD's status (128+N when CMD
was killed by signal N); SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to
CMD. Every process CMD starts ends with it. CMD runs in a cgroup whose CPU
bandwidth follows the emulated CPUs' delivered frequencies every 100 ms, so
that work takes longer where the model delivers less (the closed loop; hwpprobe
under it observes from hwpemu run's own group and holds only its workloads to
the model); with --open-loop, with --busy, and on a machine without a cpufreq
driver CMD runs at the host's speed. Needs root (CAP_SYS_ADMIN).`,
		Example: `  sudo hwpemu run mtl-165u -- hwpprobe snapshot
  sudo hwpemu run zen4-amd-pstate -- sh -c 'echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor'`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(2)),
		ValidArgsFunction: complete.FirstThen(completeMachines, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = dropDash(args)
			if len(args) < 2 {
				return cli.Usagef("run needs a machine and a command")
			}
			m, err := mf.load(args[0])
			if err != nil {
				return err
			}
			m.Close()
			if _, err := exec.LookPath(args[1]); err != nil {
				return cli.ExitCodeError{Code: exitNotFound, Err: err}
			}
			reason := openReason(openLoop, mf.busy != nil, m)
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
						cli.Linef(cmd.ErrOrStderr(), "hwpemu", "%v", err)
					}
				}()
			}
			return superviseRun(mf, g, observer, reason, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	mf.register(cmd)
	cmd.Flags().BoolVar(&openLoop, "open-loop", false,
		"let CMD run at the host's speed, the emulated CPUs following the host's load, instead of holding its CPU time to the emulated CPUs' delivered frequencies (the closed loop, the default; docs/emulator.md)")
	cmd.Flags().BoolVar(&closedLoop, "closed-loop", false, "the closed loop, the default: accepted and ignored (--open-loop wins)")
	return cmd
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
// hwpprobe, moves itself (internal/emuloop) to run as it would without
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

// dropDash removes a "--" between MACHINE and CMD, which flag parsing
// leaves in place once it has stopped at MACHINE.
func dropDash(args []string) []string {
	if len(args) > 1 && args[1] == "--" {
		return append([]string{args[0]}, args[2:]...)
	}
	return args
}

// termSignals are the signals hwpemu passes on to CMD.
var termSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// superviseRun starts the server in new mount and PID namespaces and
// waits for it, passing signals on. The server tells it, on a pipe, when
// it is ready for them: a signal before that ends the server (SIGKILL)
// and hwpemu with 128+N. The same pipe tells the server whether hwpemu is
// still alive when it sets its death signal (see serveNamespace).
//
// With a group g, the server runs the closed loop on it and names
// observer as the observers' group; otherwise CMD runs open loop for
// reason.
func superviseRun(mf machineFlags, g, observer *cgroup.Group, reason string, args []string) error {
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
	argv := append([]string{nsCmdName, "--parent-mntns=" + parent, "--run-pid=" + strconv.Itoa(os.Getpid())}, mf.args()...)
	if g != nil {
		argv = append(argv, "--cgroup="+g.String(), "--observer-cgroup="+observer.String())
	} else {
		argv = append(argv, "--open-reason="+reason)
	}
	srv := exec.Command("/proc/self/exe", append(append(argv, "--"), args...)...)
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
	code := exitError
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

// args returns the flags as they are given again to the server.
func (f *machineFlags) args() []string {
	a := []string{"--energy-start=" + strconv.FormatFloat(f.energyStart, 'g', -1, 64),
		"--time-scale=" + strconv.FormatFloat(f.timeScale, 'g', -1, 64)}
	if f.busy != nil {
		a = append(a, "--busy="+f.busy.String())
	}
	if f.variant != "" {
		a = append(a, "--variant="+f.variant)
	}
	if f.debug {
		a = append(a, "--debug")
	}
	return a
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
