// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadValue is wrapped by ParseValue's and ParseAssignment's errors for a
// malformed register value.
var ErrBadValue = errors.New("bad register value")

// ParseValue parses a raw register value as people paste it:
//
//   - "0x774", "0X774": hexadecimal (turbostat, bug reports);
//   - "774", "e295290fe295290f": hexadecimal without prefix, as rdmsr prints;
//   - "dec:1908": decimal, only with the dec: prefix (rdmsr -d prints
//     decimal). A prefix made of hex digits such as 0d would make
//     "0d690000" ambiguous.
//
// Underscores between digits are not accepted. Values wider than 64 bits
// are errors wrapping ErrBadValue.
func ParseValue(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	base, digits := 16, t
	switch {
	case strings.HasPrefix(t, "0x"), strings.HasPrefix(t, "0X"):
		digits = t[2:]
	case strings.HasPrefix(strings.ToLower(t), "dec:"):
		base, digits = 10, t[4:]
	}
	if digits == "" {
		return 0, fmt.Errorf("%w %q: no digits", ErrBadValue, s)
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return 0, fmt.Errorf("%w %q: wider than 64 bits", ErrBadValue, s)
		}
		kind := "hexadecimal"
		if base == 10 {
			kind = "decimal"
		}
		return 0, fmt.Errorf("%w %q: not a %s number (hex: 0x1f or 1f, decimal: dec:31)", ErrBadValue, s, kind)
	}
	return v, nil
}

// ParseAssignment parses "REG=VALUE" (REG as for Lookup, VALUE as for
// ParseValue). Errors wrap ErrUnknown or ErrBadValue.
func ParseAssignment(arg string) (*Register, uint64, error) {
	name, val, ok := strings.Cut(arg, "=")
	if !ok {
		return nil, 0, fmt.Errorf("%w %q: want REG=VALUE", ErrBadValue, arg)
	}
	r, err := Lookup(name)
	if err != nil {
		return nil, 0, err
	}
	v, err := ParseValue(val)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", r.Name, err)
	}
	return r, v, nil
}
