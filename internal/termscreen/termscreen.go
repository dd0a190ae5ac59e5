// SPDX-License-Identifier: Apache-2.0

// Package termscreen replays what a program wrote to a terminal into the
// lines a person would see afterwards, for tests of output redrawn in
// place: carriage return, line feed (with the tty's usual onlcr, so it
// also returns the carriage), backspace, and the ECMA-48 erase-in-line
// sequence ESC [ K (and ESC [ 0 K); other escape sequences are dropped.
package termscreen

import "strings"

// Lines returns the screen's lines after out, without trailing spaces;
// the last line is kept even when empty.
func Lines(out string) []string {
	lines := [][]rune{nil}
	col := 0
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		cur := &lines[len(lines)-1]
		switch r := rs[i]; {
		case r == '\r':
			col = 0
		case r == '\n':
			lines = append(lines, nil)
			col = 0
		case r == '\b':
			col = max(col-1, 0)
		case r == 0x1b:
			j := i + 1
			if j < len(rs) && rs[j] == '[' {
				j++
				for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
					j++
				}
				if j < len(rs) && rs[j] == 'K' && (string(rs[i+2:j]) == "" || string(rs[i+2:j]) == "0") && col < len(*cur) {
					*cur = (*cur)[:col]
				}
			}
			i = j
		default:
			for len(*cur) <= col {
				*cur = append(*cur, ' ')
			}
			(*cur)[col] = r
			col++
		}
	}
	out2 := make([]string, len(lines))
	for i, l := range lines {
		out2[i] = strings.TrimRight(string(l), " ")
	}
	return out2
}
