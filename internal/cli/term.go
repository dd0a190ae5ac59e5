// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// The terminal rules, one set for every command of both binaries.

// IsTerminal reports whether w is a terminal (a *os.File on a tty): where
// binary output (Parquet) is refused.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// CanRedraw reports whether output to w may be redrawn in place (cursor
// movement, erase-in-line): a terminal whose TERM is not "dumb". Elsewhere
// (a file, a pipe, a dumb terminal) output is appended line by line.
func CanRedraw(w io.Writer) bool {
	return IsTerminal(w) && os.Getenv("TERM") != "dumb"
}

// TermWidth is the width of w's terminal in columns, 80 when w is no
// terminal or the width is unknown.
func TermWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}
