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
	"syscall"
)

// Status is the exit status for SIGQUIT: 128+3.
const Status = 128 + int(syscall.SIGQUIT)

var (
	mu     sync.Mutex
	holds  int      // commands that handle SIGQUIT themselves
	onQuit []func() // what the holders want done on SIGQUIT besides their own handling
)

func init() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGQUIT)
	go func() {
		for range sigs {
			quit()
		}
	}()
}

// quit ends the process with Status unless a command holds SIGQUIT; then
// it calls the holders' functions.
func quit() {
	mu.Lock()
	n, fns := holds, slices.Clone(onQuit)
	mu.Unlock()
	if n == 0 {
		os.Exit(Status)
	}
	for _, f := range fns {
		if f != nil {
			f()
		}
	}
}

// Hold hands SIGQUIT to the caller until release is called: the caller
// handles it itself (it has its own signal.Notify for it), and a SIGQUIT
// only calls onQuit (when not nil) here. release may be called more than
// once.
func Hold(onQuitFn func()) (release func()) {
	mu.Lock()
	defer mu.Unlock()
	holds++
	onQuit = append(onQuit, onQuitFn)
	i := len(onQuit) - 1
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			holds--
			onQuit[i] = nil
		})
	}
}

// Notify is signal.Notify(c, sigs...) that, where sigs include SIGQUIT,
// holds it (Hold) at once; stop stops the delivery and releases the hold.
func Notify(c chan<- os.Signal, sigs ...os.Signal) (stop func()) {
	signal.Notify(c, sigs...)
	release := func() {}
	if slices.Contains(sigs, os.Signal(syscall.SIGQUIT)) {
		release = Hold(nil)
	}
	return func() {
		signal.Stop(c)
		release()
	}
}

// NotifyContext is signal.NotifyContext(parent, sigs...) that, where sigs
// include SIGQUIT, holds it until stop is called.
func NotifyContext(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := signal.NotifyContext(parent, sigs...)
	release := func() {}
	if slices.Contains(sigs, os.Signal(syscall.SIGQUIT)) {
		release = Hold(nil)
	}
	return ctx, func() {
		cancel()
		release()
	}
}
