// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBusyValue(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want busyValue
		ok   bool
	}{
		{"0.5", busyValue{0.5}, true},
		{"1,0, 0.25", busyValue{1, 0, 0.25}, true},
		{"0", busyValue{0}, true},
		{"", nil, false},
		{"1,", nil, false},
		{"NaN", nil, false},
		{"+Inf", nil, false},
		{"1e300", nil, false},
		{"-0.1", nil, false},
		{"1.5", nil, false},
		{"0.5,x", nil, false},
	} {
		var b busyValue
		err := b.Set(tt.in)
		if (err == nil) != tt.ok || !cmp.Equal(tt.want, b) {
			t.Errorf("Set(%q) = %v, %v; want %v, ok %v", tt.in, b, err, tt.want, tt.ok)
		}
		if tt.ok {
			var again busyValue
			if err := again.Set(b.String()); err != nil || !cmp.Equal(b, again) {
				t.Errorf("String %q does not parse back: %v %v", b.String(), again, err)
			}
		}
	}
}
