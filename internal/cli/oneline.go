// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine returns s fit for one line of a message on a terminal: every
// byte that is not valid UTF-8 becomes \xNN, and every rune that is not
// printable (control characters such as newline and escape, the line and
// paragraph separators U+2028/U+2029, the bidirectional overrides and
// isolates, other format characters) becomes \n, \r, \t, \xNN or \uNNNN, as
// Go's %q writes them. Printable text, the space and backslashes are kept
// as they are, so OneLine changes nothing in a clean message and applying
// it twice gives what applying it once does.
func OneLine(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case printable(r):
			b.WriteString(s[i : i+size])
		default:
			b.WriteString(escape(r))
		}
		i += size
	}
	return b.String()
}

// clean reports whether OneLine has nothing to escape in s.
func clean(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !printable(r) {
			return false
		}
		i += size
	}
	return true
}

// printable reports whether OneLine keeps r: a printable rune (letters,
// marks, numbers, punctuation, symbols) or the ASCII space.
func printable(r rune) bool { return r == ' ' || unicode.IsPrint(r) }

func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	if r <= 0xFFFF {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// Linef prints one line on w: "prog: " and the formatted message through
// OneLine, for notes and warnings that carry user input (paths, command
// names, error texts).
func Linef(w io.Writer, prog, format string, a ...any) {
	fmt.Fprintln(w, prog+":", OneLine(fmt.Sprintf(format, a...)))
}
