// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

func newServeCmd() *cobra.Command {
	var mf machineFlags
	cmd := &cobra.Command{
		Use:   "serve [flags] MACHINE DIR",
		Short: "Mount the emulated machine's files at DIR until SIGINT or SIGTERM",
		Long: `serve mounts the emulated tree (dev/, sys/, proc/) at the existing directory
DIR, prints one line saying where, and serves it until SIGINT, SIGTERM,
SIGHUP or SIGQUIT, then unmounts (exit 0; 131 after SIGQUIT). Programs read it through a root option, for example
hwpprobe --root DIR. Needs root (CAP_SYS_ADMIN). If serve is killed with
SIGKILL the mount stays, disconnected: remove it with umount DIR.`,
		Example: `  sudo hwpemu serve mtl-165u /tmp/mtl &
  sudo hwpprobe --root /tmp/mtl snapshot`,
		Args:              cli.ArgsUsage(cobra.ExactArgs(2)),
		ValidArgsFunction: complete.FirstThen(completeMachines, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := mf.load(args[0])
			if err != nil {
				return err
			}
			dir := args[1]
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return cli.Usagef("serve: %s is not an existing directory", dir)
			}
			sigs := make(chan os.Signal, 1)
			defer sigquit.Notify(sigs, termSignals...)()
			srv, err := fusefs.Mount(dir, m.Tree(), fusefs.Options{Name: mountName(m.Name(), os.Getpid()), Debug: mf.debug})
			if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
				return fmt.Errorf("mounting needs root (CAP_SYS_ADMIN): %w", err)
			}
			if err != nil {
				return err
			}
			banner(cmd.ErrOrStderr(), m.Name(), m.Summary(), m.VariantSummary())
			cli.Linef(cmd.OutOrStdout(), "hwpemu", "serving emulated %s at %s until SIGINT or SIGTERM", m.Name(), dir)
			stopped := make(chan struct{})
			go func() { srv.Wait(); close(stopped) }()
			var sig os.Signal
			select {
			case sig = <-sigs:
			case <-stopped: // unmounted from outside
				return nil
			}
			if err := srv.Unmount(); err != nil {
				return err
			}
			if sig == syscall.SIGQUIT {
				return cli.ExitCodeError{Code: sigquit.Status}
			}
			return nil
		},
	}
	mf.register(cmd)
	return cmd
}
