// SPDX-License-Identifier: Apache-2.0

package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
)

// GraftConfig is what the server tells the grafter (GraftCmd).
type GraftConfig struct {
	Parent  string // mount namespace of hwpemu run (--parent-mntns)
	Machine string // name of the emulated machine
	Model   string // the model's one-line summary, printed after the banner
	Variant string // the model variant's one-line summary, printed after the model's
	Loop    string // the line about the closed or open loop, printed after the model's
	Cgroup  string // the closed loop's cgroup, which CMD runs in; "": none
	Command []string
	Stderr  io.Writer
}

// Graft is the grafter: in the server's namespaces, it binds the tree
// (descriptor 3) over the real paths, prints the banner (the model's and
// the variant's summaries, the loop's line), joins the closed loop's
// cgroup if there is one, and executes CMD in its own place, with only
// the standard streams. It returns only when that fails: ExitNotFound or
// ExitNotExec as a shell gives them, or the error on the way.
func Graft(c GraftConfig) error {
	if err := checkInside(c.Parent, false); err != nil {
		return err
	}
	tree := os.NewFile(3, "emulated tree")
	_, err := fusefs.Graft(tree, "/")
	tree.Close()
	if err != nil {
		return err
	}
	banner(c.Stderr, c.Machine, c.Model, c.Variant)
	if c.Loop != "" {
		cli.Linef(c.Stderr, "hwpemu", "%s", c.Loop)
	}
	if c.Cgroup != "" {
		g, err := cgroup.ParseGroup(c.Cgroup)
		if err != nil {
			return err
		}
		if err := g.Join(); err != nil {
			return fmt.Errorf("closed loop: %w", err)
		}
	}
	if err := closeOnExec(); err != nil {
		return err
	}
	argv := c.Command
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return cli.ExitCodeError{Code: ExitNotFound, Err: err}
	}
	err = unix.Exec(path, argv, os.Environ())
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.ENOEXEC) {
		return cli.ExitCodeError{Code: ExitNotExec, Err: fmt.Errorf("%s: %w", argv[0], err)}
	}
	return cli.ExitCodeError{Code: ExitNotFound, Err: fmt.Errorf("%s: %w", argv[0], err)}
}

// closeOnExec marks every descriptor above stderr close-on-exec, so CMD
// inherits only its standard streams, as sudo's closefrom does: nothing
// of hwpemu's (the pipe that tells the server CMD runs) nor what its own
// caller leaked to it.
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
