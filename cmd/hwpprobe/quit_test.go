// SPDX-License-Identifier: Apache-2.0

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/sigquit/quittest"
)

// TestQuitEarly: SIGQUIT at any moment from hwpprobe's first package
// initializations on (0 to 15 ms after package sigquit's init: the other
// packages initialize, flags are parsed, the command sets up) ends it
// with 131, or 0 for a command that ends on it as on Ctrl-C (watch),
// never with the Go runtime's goroutine dump and status 2 (issue 21,
// fault 7).
func TestQuitEarly(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want []int // statuses a SIGQUIT may give
	}{
		{[]string{"workload", "burn", "100000000"}, []int{131}},
		{[]string{"--root", t.TempDir(), "decode", "IA32_HWP_REQUEST=0x80002e2e"}, []int{0, 131}},
		{[]string{"watch", "-i", "50ms"}, []int{0, 131}},
	} {
		t.Run(tc.argv[0], func(t *testing.T) {
			for _, r := range quittest.Loop(t, hwpprobeBin, tc.argv, 16, 2) {
				if !slices.Contains(tc.want, r.Status) || strings.Contains(r.Stderr, "goroutine ") {
					t.Errorf("SIGQUIT %v after sigquit's init: status %d, want one of %v; stderr:\n%.1000s", r.After, r.Status, tc.want, r.Stderr)
				}
			}
		})
	}
}
