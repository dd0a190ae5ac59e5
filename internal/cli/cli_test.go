// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	never := func(error) bool { return false }
	for _, tt := range []struct {
		err     error
		isUsage func(error) bool
		code    int
		stderr  string
	}{
		{nil, never, ExitOK, ""},
		{errors.New("boom"), never, ExitError, "prog: boom\n"},
		{fmt.Errorf("flag: %w", Usagef("bad %d", 3)), never, ExitUsage, "prog: flag: bad 3\n"},
		{errors.New("unknown flag --x"), func(error) bool { return true }, ExitUsage, "prog: unknown flag --x\n"},
		{ExitCodeError{Code: 7}, never, 7, ""},
		{Usagef("decode %s: bad", "R=1\n\x1b[2J\u202e"), never, ExitUsage, "prog: decode R=1\\n\\x1b[2J\\u202e: bad\n"},
		{ExitCodeError{Code: 3, Err: errors.New("a\rb")}, never, 3, "prog: a\\rb\n"},
		{ExitCodeError{Code: 126, Err: errors.New("cmd: not executable")}, never, 126, "prog: cmd: not executable\n"},
	} {
		var b strings.Builder
		if code := Status(tt.err, "prog", &b, tt.isUsage); code != tt.code || b.String() != tt.stderr {
			t.Errorf("Status(%v) = %d, %q; want %d, %q", tt.err, code, b.String(), tt.code, tt.stderr)
		}
	}
}
