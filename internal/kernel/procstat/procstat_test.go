// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"errors"
	"os"
	"strconv"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		state  string
		parent int
		utime  int64 // field 14
	}{
		// Read on the Debian 12 VM this project is built on (cat /proc/self/stat).
		{"cat", "2758 (cat) R 2754 2754 1987 0 -1 4194304 123 0 0 0 0 0 0 0 20 0 1 0 983367 3133440 389 18446744073709551615 94845797556224 94845797576105 140730516072384 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94845797592112 94845797593728 94846827061248 140730516077028 140730516077048 140730516077048 140730516078571 0", "R", 2754, 0},
		// A command a process may give itself (prctl PR_SET_NAME) with ") " inside.
		{"parenthesis in comm", "31 (a) S 1 (b) S 7 31 31 0 -1 4194560 90 0 0 0 12 3 0 0 20 0 1 0 64 1 1 1", "S", 7, 12},
		{"zombie", "40 (sh) Z 39 40 40 0 -1 4227076 0 0 0 0 0 0 0 0 20 0 1 0 80 0 0 0", "Z", 39, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Parent()
			if err != nil {
				t.Fatal(err)
			}
			u, err := s.Int64(14)
			if err != nil {
				t.Fatal(err)
			}
			if s.State() != tt.state || p != tt.parent || u != tt.utime {
				t.Errorf("state %q parent %d utime %d, want %q %d %d", s.State(), p, u, tt.state, tt.parent, tt.utime)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	for _, line := range []string{"", "12 cat R 1", "12 (cat)", "12 (cat) R", "12 (cat) R x"} {
		s, err := Parse(line)
		if err == nil {
			_, err = s.Parent()
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q): %v, want ErrMalformed", line, err)
		}
	}
	if s, err := Parse("12 (cat) R 1 2"); err != nil {
		t.Fatal(err)
	} else if _, err := s.Int64(14); !errors.Is(err, ErrMalformed) {
		t.Errorf("field 14 of a short line: %v, want ErrMalformed", err)
	}
}

// TestSelf reads this test's own stat: its parent is os.Getppid.
func TestSelf(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Parent(); err != nil || p != os.Getppid() {
		t.Errorf("parent %d, %v; want %d", p, err, os.Getppid())
	}
	if s.Fields[0] != "R" {
		t.Errorf("own state %q, want R", s.Fields[0])
	}
	if _, err := strconv.Atoi(s.Fields[2]); err != nil {
		t.Errorf("process group %q: %v", s.Fields[2], err)
	}
}
