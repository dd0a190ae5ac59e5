// SPDX-License-Identifier: Apache-2.0

//go:build cgo

package main

import (
	"fmt"
	"os"
)

// A cgo build of hwpemu must not serve a machine in a mount namespace.
// hwpemu's FUSE server lives inside the namespace whose
// /sys/devices/system/cpu it serves. A cgo build links glibc, whose malloc
// reads /sys/devices/system/cpu/online (get_nprocs, glibc 2.36) when a new
// thread creates its arena; that read is a FUSE request to the server
// itself, made while the Go runtime waits for the new thread, and the server
// deadlocks (seen here: threads of the server blocked in
// request_wait_answer on that path, the FUSE reader idle). Build with
// CGO_ENABLED=0, as the Makefile and the tests do.
func init() {
	if len(os.Args) > 1 && (os.Args[1] == "run" || os.Args[1] == "__run-in-namespace") {
		fmt.Fprintln(os.Stderr, "hwpemu: this binary was built with cgo, which deadlocks the emulator (glibc reads the emulated /sys/devices/system/cpu/online); rebuild with CGO_ENABLED=0 (make does)")
		os.Exit(2)
	}
}
