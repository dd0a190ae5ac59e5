// SPDX-License-Identifier: Apache-2.0

// Package procstat splits a /proc/PID/stat line (proc(5)) into its
// fields. The command, field 2, is in parentheses and may itself hold
// spaces and parentheses, so the fields are read after its last ')'.
package procstat

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformed is wrapped by every error for a line that is not a stat
// line.
var ErrMalformed = errors.New("malformed /proc stat line")

// Stat is a stat line's fields after the command: Fields[0] is field 3
// (the state), Fields[1] field 4 (the parent PID), and so on.
type Stat struct {
	Fields []string
}

// Parse splits a stat line. It needs at least the state and the parent
// PID after the command.
func Parse(line string) (Stat, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("%w: no command in parentheses", ErrMalformed)
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 2 {
		return Stat{}, fmt.Errorf("%w: %d fields after the command, want at least 2", ErrMalformed, len(f))
	}
	return Stat{Fields: f}, nil
}

// State is field 3: R, S, D, Z, X, ...
func (s Stat) State() string { return s.Fields[0] }

// Parent is field 4, the parent's PID in the PID namespace of the /proc
// the line was read from.
func (s Stat) Parent() (int, error) {
	p, err := strconv.Atoi(s.Fields[1])
	if err != nil {
		return 0, fmt.Errorf("%w: parent %q", ErrMalformed, s.Fields[1])
	}
	return p, nil
}

// Int64 is field n (numbered as in proc(5), from 1) as an integer.
func (s Stat) Int64(n int) (int64, error) {
	if n < 3 || n-3 >= len(s.Fields) {
		return 0, fmt.Errorf("%w: no field %d", ErrMalformed, n)
	}
	v, err := strconv.ParseInt(s.Fields[n-3], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: field %d %q", ErrMalformed, n, s.Fields[n-3])
	}
	return v, nil
}
