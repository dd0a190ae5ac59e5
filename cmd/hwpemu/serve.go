// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/emu/session"
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
			return session.Serve(session.ServeConfig{Machine: mf.machine(args[0]), Dir: args[1], Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
		},
	}
	mf.register(cmd)
	return cmd
}
