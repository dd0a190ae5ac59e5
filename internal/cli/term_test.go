// SPDX-License-Identifier: Apache-2.0

package cli_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/clitest"
)

// TestTerminalRules: a pseudo-terminal is a terminal and may be redrawn
// unless TERM is dumb; a pipe, a file and a buffer are neither; the width
// is the terminal's, 80 elsewhere.
func TestTerminalRules(t *testing.T) {
	_, pts := clitest.OpenPTY(t)
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 132}); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	tests := []struct {
		name           string
		w              io.Writer
		term           string
		isTerm, redraw bool
		width          int
	}{
		{"pty", pts, "xterm", true, true, 132},
		{"pty, TERM=dumb", pts, "dumb", true, false, 132},
		{"pty, no TERM", pts, "", true, true, 132},
		{"pipe", w, "xterm", false, false, 80},
		{"file", file, "xterm", false, false, 80},
		{"buffer", &bytes.Buffer{}, "xterm", false, false, 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TERM", tt.term)
			if got := cli.IsTerminal(tt.w); got != tt.isTerm {
				t.Errorf("IsTerminal = %v, want %v", got, tt.isTerm)
			}
			if got := cli.CanRedraw(tt.w); got != tt.redraw {
				t.Errorf("CanRedraw = %v, want %v", got, tt.redraw)
			}
			if got := cli.TermWidth(tt.w); got != tt.width {
				t.Errorf("TermWidth = %d, want %d", got, tt.width)
			}
		})
	}
}
