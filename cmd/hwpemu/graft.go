// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
)

func newGraftCmd() *cobra.Command {
	var parent, machine, model, variant, loop, group string
	cmd := &cobra.Command{
		Use:    graftCmdName + " CMD [ARG...]",
		Hidden: true,
		Args:   cli.ArgsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return graftAndExec(cmd.ErrOrStderr(), parent, machine, model, variant, loop, group, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&parent, "parent-mntns", "", "mount namespace of `hwpemu run`")
	cmd.Flags().StringVar(&machine, "machine", "", "name of the emulated machine")
	cmd.Flags().StringVar(&model, "model", "", "the model's one-line summary, printed after the banner")
	cmd.Flags().StringVar(&loop, "loop", "", "the line about the closed or open loop, printed after the model's")
	cmd.Flags().StringVar(&group, "cgroup", "", "the closed loop's cgroup, which CMD runs in")
	cmd.Flags().StringVar(&variant, "variant", "", "the model variant's one-line summary, printed after the model's")
	return cmd
}

// graftAndExec is the grafter: in the server's namespaces, it binds the
// tree (descriptor 3) over the real paths, prints the banner (the
// model's and the variant's summaries, the loop's line), joins the closed
// loop's cgroup group if there is one, and executes CMD in its own place,
// with only the standard streams.
func graftAndExec(stderr io.Writer, parent, machine, model, variant, loop, group string, argv []string) error {
	if err := checkInside(parent, false); err != nil {
		return err
	}
	tree := os.NewFile(3, "emulated tree")
	_, err := fusefs.Graft(tree, "/")
	tree.Close()
	if err != nil {
		return err
	}
	banner(stderr, machine, model, variant)
	if loop != "" {
		cli.Linef(stderr, "hwpemu", "%s", loop)
	}
	if group != "" {
		g, err := cgroup.ParseGroup(group)
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
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return cli.ExitCodeError{Code: exitNotFound, Err: err}
	}
	err = unix.Exec(path, argv, os.Environ())
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.ENOEXEC) {
		return cli.ExitCodeError{Code: exitNotExec, Err: fmt.Errorf("%s: %w", argv[0], err)}
	}
	return cli.ExitCodeError{Code: exitNotFound, Err: fmt.Errorf("%s: %w", argv[0], err)}
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
