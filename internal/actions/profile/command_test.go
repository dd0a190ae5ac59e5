// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// TestFiles: the files @FILE profiles name, the others none.
func TestFiles(t *testing.T) {
	tests := []struct {
		profiles, want []string
	}{
		{nil, nil},
		{[]string{"performance", "powersave:epp=power"}, nil},
		{[]string{"@a.profile", "performance", "@/tmp/b"}, []string{"a.profile", "/tmp/b"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, Files(tt.profiles)); d != "" {
			t.Errorf("Files(%q) (-want +got):\n%s", tt.profiles, d)
		}
	}
}

// TestExitError: the errors that are bad input exit 2, the others keep
// their status.
func TestExitError(t *testing.T) {
	for _, tt := range []struct {
		err   error
		usage bool
	}{
		{fmt.Errorf("profile %q: %w", "x", ErrSyntax), true},
		{fmt.Errorf("apply: %w", ErrDaemon), true},
		{fmt.Errorf("apply: %w", ErrJournalExists), true},
		{fmt.Errorf("restore: %w", ErrMismatch), false},
		{nil, false},
	} {
		_, usage := ExitError(tt.err).(cli.UsageError)
		if usage != tt.usage {
			t.Errorf("ExitError(%v) a usage error: %v, want %v", tt.err, usage, tt.usage)
		}
	}
}
