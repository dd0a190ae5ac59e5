// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	for _, tt := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, ExitOK, ""},
		{errors.New("boom"), ExitError, "prog: boom\n"},
		{fmt.Errorf("flag: %w", Usagef("bad %d", 3)), ExitUsage, "prog: flag: bad 3\n"},
		{ExitCodeError{Code: 7}, 7, ""},
		{Usagef("decode %s: bad", "R=1\n\x1b[2J\u202e"), ExitUsage, "prog: decode R=1\\n\\x1b[2J\\u202e: bad\n"},
		{ExitCodeError{Code: 3, Err: errors.New("a\rb")}, 3, "prog: a\\rb\n"},
		{ExitCodeError{Code: 126, Err: errors.New("cmd: not executable")}, 126, "prog: cmd: not executable\n"},
		// cobra's own untyped errors, as pflag and cobra word them.
		{errors.New(`unknown command "x" for "prog"`), ExitUsage, "prog: unknown command \"x\" for \"prog\"\n"},
		{errors.New("unknown flag: --x"), ExitUsage, "prog: unknown flag: --x\n"},
		{errors.New("unknown shorthand flag: 'q' in -q"), ExitUsage, "prog: unknown shorthand flag: 'q' in -q\n"},
		{errors.New("flag needs an argument: --runs"), ExitUsage, "prog: flag needs an argument: --runs\n"},
		{errors.New(`invalid argument "x" for "--runs" flag: strconv.ParseInt: parsing "x": invalid syntax`), ExitUsage, "prog: invalid argument \"x\" for \"--runs\" flag: strconv.ParseInt: parsing \"x\": invalid syntax\n"},
		{errors.New("accepts 1 arg(s), received 2"), ExitUsage, "prog: accepts 1 arg(s), received 2\n"},
		{errors.New("requires at least 2 arg(s), only received 1"), ExitUsage, "prog: requires at least 2 arg(s), only received 1\n"},
	} {
		var b strings.Builder
		if code := Status(tt.err, "prog", &b); code != tt.code || b.String() != tt.stderr {
			t.Errorf("Status(%v) = %d, %q; want %d, %q", tt.err, code, b.String(), tt.code, tt.stderr)
		}
	}
}
