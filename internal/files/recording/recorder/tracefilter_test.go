// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
)

// TestTraceFilter: --trace-msrs parsed, none under --no-trace, and the
// two together a usage error naming the command.
func TestTraceFilter(t *testing.T) {
	def := tracefmt.FormatMSRs(tracefmt.DefaultMSRs)
	tests := []struct {
		args []string
		want []uint32
		err  string
	}{
		{nil, tracefmt.DefaultMSRs, ""},
		{[]string{"--trace-msrs", "0x774,0x1b0"}, []uint32{0x774, 0x1b0}, ""},
		{[]string{"--no-trace"}, nil, ""},
		{[]string{"--no-trace", "--trace-msrs", "0x774"}, nil, "diff: --no-trace and --trace-msrs contradict each other"},
		{[]string{"--trace-msrs", "nosuch"}, nil, "diff: --trace-msrs: "},
	}
	for _, tt := range tests {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		spec := fs.String("trace-msrs", def, "")
		noTrace := fs.Bool("no-trace", false, "")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := TraceFilter("diff", fs, *noTrace, *spec)
		switch {
		case tt.err != "" && (err == nil || len(err.Error()) < len(tt.err) || err.Error()[:len(tt.err)] != tt.err):
			t.Errorf("%q: error %v, want %q...", tt.args, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.args, err)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%q: MSRs (-want +got):\n%s", tt.args, d)
		}
	}
}
