// SPDX-License-Identifier: Apache-2.0

package termscreen

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"abc\r\x1b[Kx\n", []string{"x", ""}},
		{"abcdef\rxy", []string{"xycdef"}},
		{"abcdef\r\x1b[0K", []string{""}},
		{"abcdef\rab\x1b[K\r\nnext", []string{"ab", "next"}},
		{"a\x1b[31mb\x1b[2Kc", []string{"abc"}}, // colour and other erases dropped
		{"ab\bc", []string{"ac"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, Lines(tt.in)); d != "" {
			t.Errorf("Lines(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}
