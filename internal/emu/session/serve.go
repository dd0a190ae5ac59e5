// SPDX-License-Identifier: Apache-2.0

package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// ServeConfig is `hwpemu serve`: Machine's tree mounted at Dir.
type ServeConfig struct {
	Machine        Machine
	Dir            string // an existing directory
	Stdout, Stderr io.Writer
}

// Serve mounts the emulated tree at c.Dir, says so on c.Stdout, and
// serves it until SIGINT, SIGTERM, SIGHUP or SIGQUIT, then unmounts: nil,
// or after SIGQUIT a cli.ExitCodeError with sigquit.Status. It returns nil
// at once when the tree is unmounted from outside.
func Serve(c ServeConfig) error {
	m, err := c.Machine.Load()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
		return cli.Usagef("serve: %s is not an existing directory", c.Dir)
	}
	sigs := make(chan os.Signal, 1)
	defer sigquit.Notify(sigs, termSignals...)()
	srv, err := fusefs.Mount(c.Dir, m.Tree(), fusefs.Options{Name: mountName(m.Name(), os.Getpid()), Debug: c.Machine.Debug})
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("mounting needs root (CAP_SYS_ADMIN): %w", err)
	}
	if err != nil {
		return err
	}
	banner(c.Stderr, m.Name(), m.Summary(), m.VariantSummary())
	cli.Linef(c.Stdout, "hwpemu", "serving emulated %s at %s until SIGINT or SIGTERM", m.Name(), c.Dir)
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
}
