// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestRangeFlags(t *testing.T) {
	var (
		f float64
		d time.Duration
		n int
	)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	FloatVar(fs, &f, "busy", -1, 0, 1, "")
	DurationVarP(fs, &d, "interval", "i", time.Second, 10*time.Millisecond, 24*time.Hour, "")
	IntVarP(fs, &n, "count", "n", 0, 0, 1000, "")
	tests := []struct {
		arg  string
		want string // error substring; "" for accepted
	}{
		{"--busy=0.5", ""},
		{"--busy=0", ""},
		{"--busy=1", ""},
		{"--busy=0x1p-2", ""},
		{"--busy=NaN", "not a finite number (0 to 1)"},
		{"--busy=nan", "not a finite number"},
		{"--busy=+Inf", "not a finite number"},
		{"--busy=-Inf", "not a finite number"},
		{"--busy=1e400", "not a finite number"},
		{"--busy=1e300", "too large (0 to 1)"},
		{"--busy=1.0000001", "too large"},
		{"--busy=-0.1", "cannot be negative (0 to 1)"},
		{"--busy=", "not a finite number"},
		{"--busy= 1", "not a finite number"},
		{"--busy=1,5", "not a finite number"},
		{"-i=10ms", ""},
		{"-i=24h", ""},
		{"-i=9ms", "too short (10ms to 24h0m0s)"},
		{"-i=0", "too short"},
		{"-i=-1s", "cannot be negative"},
		{"-i=25h", "too long"},
		{"-i=1e300s", "not a duration"},
		{"-i=10", "not a duration"},
		{"-i=NaN", "not a duration"},
		{"-i=9999999999h", "not a duration"},
		{"-n=1000", ""},
		{"-n=0x10", ""},
		{"-n=-1", "cannot be negative (0 to 1000)"},
		{"-n=1001", "too large"},
		{"-n=99999999999999999999", "too large"},
		{"-n=-99999999999999999999", "cannot be negative"},
		{"-n=1.5", "not a whole number"},
		{"-n=1e3", "not a whole number"},
	}
	for _, tt := range tests {
		err := fs.Parse([]string{tt.arg})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tt.arg, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error containing %q", tt.arg, err, tt.want)
		}
	}
	if f != 0.25 || d != 24*time.Hour || n != 16 {
		t.Errorf("accepted values not kept: busy %v, interval %v, count %v", f, d, n)
	}
}

// TestRangeFlagsRefuseKeepsValue: a refused value leaves the flag's value
// as it was, and defaults outside the range are allowed (sentinels).
func TestRangeFlagsRefuseKeepsValue(t *testing.T) {
	var f float64
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	FloatVar(fs, &f, "busy", -1, 0, 1, "")
	if err := fs.Parse([]string{"--busy=NaN"}); err == nil || f != -1 {
		t.Errorf("--busy=NaN: %v, value %v; want an error and -1 kept", err, f)
	}
	if got := fs.Lookup("busy").DefValue; got != "-1" {
		t.Errorf("default shown as %q, want -1", got)
	}
}
