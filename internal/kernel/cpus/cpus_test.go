// SPDX-License-Identifier: Apache-2.0

package cpus

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want List
		str  string
	}{
		{"0", List{0}, "0"},
		{"0-3,8", List{0, 1, 2, 3, 8}, "0-3,8"},
		{"8,0-3\n", List{0, 1, 2, 3, 8}, "0-3,8"},
		{"1,1,2", List{1, 2}, "1-2"},
		{"", List{}, ""},
		{"0-1,3-4,6", List{0, 1, 3, 4, 6}, "0-1,3-4,6"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
		}
		if s := got.String(); s != tt.str {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, s, tt.str)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"a", "1-", "-1", "3-1", "1,,2", "0x1", "99999", "1-2-3"} {
		if _, err := Parse(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) error = %v, want ErrSyntax", in, err)
		}
	}
}

func TestSelect(t *testing.T) {
	online := List{0, 1, 3}
	present := List{0, 1, 2, 3}
	got, err := Select("", online, present)
	if err != nil || !cmp.Equal(got, online) {
		t.Fatalf("Select(\"\") = %v, %v", got, err)
	}
	if _, err := Select("2", online, present); err == nil || err.Error() != "CPU 2 is offline (online: 0-1,3)" {
		t.Errorf("offline CPU: err = %v", err)
	}
	if _, err := Select("7", online, present); err == nil || err.Error() != "CPU 7 does not exist (present: 0-3)" {
		t.Errorf("missing CPU: err = %v", err)
	}
	got, err = Select("0,3", online, present)
	if err != nil || !cmp.Equal(got, List{0, 3}) {
		t.Errorf("Select(0,3) = %v, %v", got, err)
	}
}
