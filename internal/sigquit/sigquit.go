// SPDX-License-Identifier: Apache-2.0

// Package sigquit makes SIGQUIT end the process with status 131
// (128+SIGQUIT, what a shell reports for a program the signal killed)
// instead of the Go runtime's default for it: every goroutine's stack on
// stderr and status 2 (the runtime treats SIGQUIT as a fatal error unless
// os/signal is asked for it).
//
// Importing the package is enough: its init asks os/signal for SIGQUIT,
// before the packages that take long to initialize and long before any
// command parses its flags. Only the Go runtime's own start, before any
// package initializes, still gets the default. Code that catches SIGQUIT
// itself (to restore settings, to end a recording cleanly) asks for its
// signals through Notify or NotifyContext, never os/signal directly
// (TestNoDirectNotify): from the moment its handler is in place, and as
// long as it is, a SIGQUIT is its alone; before (nothing changed yet) and
// after, SIGQUIT ends the process with Status.
package sigquit

import (
	"context"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
)

// Status is the exit status for SIGQUIT: 128+3.
const Status = 128 + int(syscall.SIGQUIT)

// holds counts the handlers in place that catch SIGQUIT themselves
// (Notify, NotifyContext).
var holds atomic.Int32

func init() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGQUIT)
	go func() {
		for range sigs {
			if holds.Load() == 0 {
				os.Exit(Status)
			}
		}
	}()
}

// hold hands SIGQUIT to a handler of the caller's, where sigs (the
// signals it catches) include it, until release is called; release may be
// called more than once.
func hold(sigs []os.Signal) (release func()) {
	if !slices.Contains(sigs, os.Signal(syscall.SIGQUIT)) {
		return func() {}
	}
	holds.Add(1)
	var once sync.Once
	return func() { once.Do(func() { holds.Add(-1) }) }
}

// Notify is signal.Notify(c, sigs...) that, where sigs include SIGQUIT,
// holds it at once (a SIGQUIT is then the caller's alone); stop stops the
// delivery and releases the hold.
func Notify(c chan<- os.Signal, sigs ...os.Signal) (stop func()) {
	signal.Notify(c, sigs...)
	release := hold(sigs)
	return func() {
		signal.Stop(c)
		release()
	}
}

// NotifyContext is signal.NotifyContext(parent, sigs...) that, where sigs
// include SIGQUIT, holds it until stop is called.
func NotifyContext(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := signal.NotifyContext(parent, sigs...)
	release := hold(sigs)
	return ctx, func() {
		cancel()
		release()
	}
}
