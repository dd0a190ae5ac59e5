package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"github.com/hwpprobe/hwpprobe/workload"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/emu"
	"github.com/hwpprobe/hwpprobe/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// nsCmdName is the hidden subcommand `run` re-executes itself as, once it
// has a private mount namespace.
const nsCmdName = "__run-in-namespace"

func newRunCmd() *cobra.Command {
	var mf machineFlags
	cmd := &cobra.Command{
		Use:   "run [flags] MACHINE [--] CMD [ARG...]",
		Short: "Run CMD where the emulated machine's files are at the real paths",
		Long: `run starts CMD in a private mount namespace in which /dev/cpu,
/sys/devices/system/cpu, /sys/devices/cpu_core, /sys/devices/cpu_atom,
/sys/class/powercap, /proc/cpuinfo and /proc/stat are the emulated machine's,
so unchanged programs read them. Nothing outside the namespace changes. hwpemu
serves the files while CMD runs and exits with CMD's status (128+N when CMD
was killed by signal N); SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to
CMD. Needs root (CAP_SYS_ADMIN).`,
		Example: `  sudo hwpemu run mtl-165u -- hwpprobe snapshot
  sudo hwpemu run zen4-amd-pstate -- sh -c 'echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor'`,
		Args: cli.ArgsUsage(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = dropDash(args)
			if len(args) < 2 {
				return cli.Usagef("run needs a machine and a command")
			}
			if _, err := mf.load(args[0]); err != nil {
				return err
			}
			if _, err := exec.LookPath(args[1]); err != nil {
				return cli.ExitCodeError{Code: exitNotFound, Err: err}
			}
			return enterNamespace(mf, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	mf.register(cmd)
	return cmd
}

// dropDash removes a "--" between MACHINE and CMD, which flag parsing
// leaves in place once it has stopped at MACHINE.
func dropDash(args []string) []string {
	if len(args) > 1 && args[1] == "--" {
		return append([]string{args[0]}, args[2:]...)
	}
	return args
}

// enterNamespace moves this thread into a new mount namespace, makes every
// mount in it private (nothing done there propagates back) and re-executes
// hwpemu there as nsCmdName. Go cannot move a whole multi-threaded process
// into a namespace, but execve keeps only the calling thread, and with it
// the namespace: the process that results is entirely inside, with the same
// PID, so signals sent to `hwpemu run` reach the server.
func enterNamespace(mf machineFlags, args []string) error {
	parent, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("read own mount namespace: %w", err)
	}
	runtime.LockOSThread() // never unlocked: this thread execs or the process exits
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("a private mount namespace needs root (CAP_SYS_ADMIN): %w", err)
		}
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	argv := []string{os.Args[0], nsCmdName, "--parent-mntns=" + parent,
		"--energy-start=" + strconv.FormatFloat(mf.energyStart, 'g', -1, 64),
	}
	if mf.busy != nil {
		argv = append(argv, "--busy="+mf.busy.String())
	}
	if mf.debug {
		argv = append(argv, "--debug")
	}
	argv = append(append(argv, "--"), args...)
	err = unix.Exec("/proc/self/exe", argv, os.Environ())
	return fmt.Errorf("re-execute in the mount namespace: %w", err)
}

func newNamespaceCmd() *cobra.Command {
	var (
		mf     machineFlags
		parent string
	)
	cmd := &cobra.Command{
		Use:    nsCmdName + " MACHINE CMD [ARG...]",
		Hidden: true,
		Args:   cli.ArgsUsage(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInNamespace(cmd.ErrOrStderr(), mf, parent, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&parent, "parent-mntns", "", "mount namespace of `hwpemu run`")
	mf.register(cmd)
	return cmd
}

// runInNamespace serves the machine, grafts it over the real paths and
// runs CMD; it refuses to run outside the namespace enterNamespace made,
// where its mounts would cover the real system's files.
func runInNamespace(stderr io.Writer, mf machineFlags, parent string, args []string) error {
	cur, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("read own mount namespace: %w", err)
	}
	if parent == "" || cur == parent {
		return cli.Usagef("%s is internal to `hwpemu run`: it runs only in the private namespace run makes", nsCmdName)
	}
	// The emulated CPUs follow the host's load, read from the host's
	// /proc/stat. Once grafted, that path shows the emulated file served
	// by this very process (a read would wait on itself), so keep the
	// real one open and read it through its descriptor: /proc/self/fd/N
	// leads to the open file itself, not to what is mounted over its path.
	hostStat, err := os.Open("/proc/stat")
	if err != nil {
		return err
	}
	defer hostStat.Close()
	m, err := mf.load(args[0], emu.WithLoad(&emu.HostLoad{Path: fmt.Sprintf("/proc/self/fd/%d", hostStat.Fd())}))
	if err != nil {
		return err
	}
	tree := m.Tree()
	stage, err := os.MkdirTemp("", "hwpemu-")
	if err != nil {
		return err
	}
	_, err = fusefs.Mount(stage, tree, fusefs.Options{Name: mountName(m.Name()), Debug: mf.debug})
	if err != nil {
		os.Remove(stage)
		return err
	}
	mounts, gerr := fusefs.Graft(stage, "/", tree)
	// The grafts hold the FUSE superblock; the staging mount is not needed.
	if err := unix.Unmount(stage, unix.MNT_DETACH); err != nil && gerr == nil {
		gerr = fmt.Errorf("unmount %s: %w", stage, err)
	}
	os.Remove(stage)
	if gerr != nil {
		unmountAll(mounts)
		return gerr
	}
	banner(stderr, m)
	code, err := runChild(args[1:])
	unmountAll(mounts)
	if err != nil {
		return cli.ExitCodeError{Code: code, Err: err}
	}
	if code != 0 {
		return cli.ExitCodeError{Code: code}
	}
	return nil
}

// mountName is the mount source mountinfo shows: the machine and the
// serving process, so a leftover mount can be traced to its server.
func mountName(machine string) string {
	return fmt.Sprintf("hwpemu-%s-%d", machine, os.Getpid())
}

// unmountAll detaches mounts, innermost first. The namespace disappears
// with its last process anyway; this ends the FUSE connection sooner.
func unmountAll(mounts []string) {
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = unix.Unmount(mounts[i], unix.MNT_DETACH)
	}
}

// runChild runs argv with the standard streams, passes on termination
// signals, and returns its exit status as a shell reports it. CMD gets
// SIGKILL if hwpemu dies first (PR_SET_PDEATHSIG), so no process is left
// reading files nobody serves.
func runChild(argv []string) (int, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	// Not stopped: the process ends soon after CMD, and until then a
	// signal for CMD must not kill hwpemu first. (The death signal follows
	// the thread that forked CMD; the Go runtime ends threads only when a
	// goroutine locked to one exits, which hwpemu never does.)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := closeOnExec(); err != nil {
		return exitError, err
	}
	if err := c.Start(); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return exitNotExec, err
		}
		return exitNotFound, err
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = c.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := c.Wait()
	close(done)
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok {
		return workload.ShellStatus(ws), nil
	}
	return exitError, err
}

// closeOnExec marks every descriptor above stderr close-on-exec, so CMD
// inherits only its standard streams, as sudo's closefrom does: nothing
// of hwpemu's (fusefs already keeps /dev/fuse from children) nor what its
// own caller leaked to it.
func closeOnExec() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list open descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The descriptor ReadDir used is closed by now: EBADF is expected.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("set close-on-exec on descriptor %d: %w", fd, err)
		}
	}
	return nil
}
