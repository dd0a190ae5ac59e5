// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{`plain C:\dir "quoted" ü 漢字 🙂`, `plain C:\dir "quoted" ü 漢字 🙂`},
		{"x\ny\x1b[2J\u202e\r", `x\ny\x1b[2J\u202e\r`},
		{"tab\there\x7f", `tab\there\x7f`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"sep\u2028para\u2029", `sep\u2028para\u2029`},
		{"bidi\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `bidi\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"c1\u0085\u009b", `c1\u0085\u009b`},
		{"nbsp\u00a0zwsp\u200b", `nbsp\u00a0zwsp\u200b`},
		{"tag\U000E0041", `tag\U000e0041`},
	} {
		if got := OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzOneLine: whatever the input, OneLine gives valid UTF-8 with only
// printable runes (no newline, no escape, no separators or bidi
// controls), is idempotent, and leaves printable input unchanged.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "x\ny\x1b[2J\u202e\r", "\xff\xfe", "ok", "\u2028", `a\b`, "\U0010ffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := OneLine(s)
		if !utf8.ValidString(got) {
			t.Fatalf("OneLine(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if !printable(r) {
				t.Fatalf("OneLine(%q) = %q keeps %U", s, got, r)
			}
		}
		if strings.ContainsAny(got, "\n\r\x1b\u2028\u2029\u202e") {
			t.Fatalf("OneLine(%q) = %q", s, got)
		}
		if again := OneLine(got); again != got {
			t.Fatalf("OneLine not idempotent: %q -> %q -> %q", s, got, again)
		}
		if clean(s) && got != s {
			t.Fatalf("OneLine changed printable %q to %q", s, got)
		}
		if len(got) < len(s) {
			t.Fatalf("OneLine(%q) = %q dropped bytes", s, got)
		}
	})
}
