// SPDX-License-Identifier: Apache-2.0

package complete

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// tool is a command tree using every completion: cobra's own __complete
// command runs them as a shell's completion script does.
func tool() *cobra.Command {
	root := &cobra.Command{Use: "tool"}
	noop := func(*cobra.Command, []string) error { return nil }
	words := func() []string { return []string{"IA32_HWP_REQUEST", "IA32_HWP_REQUEST_PKG", "EPB"} }
	machines := func() []string { return []string{"mtl-165u", "spr-2s"} }
	governors := func() []string { return []string{"performance", "powersave"} }
	decode := &cobra.Command{Use: "decode", RunE: noop, ValidArgsFunction: Words(words, "=", false)}
	trace := &cobra.Command{Use: "trace", RunE: noop}
	trace.Flags().String("msr", "", "")
	Flag(trace, "msr", List(words))
	predict := &cobra.Command{Use: "predict", RunE: noop, ValidArgsFunction: FirstThen(Words(machines, "", true), Profiles(governors, false))}
	run := &cobra.Command{Use: "run", RunE: noop, ValidArgsFunction: FirstThen(Words(machines, "", true), nil)}
	root.AddCommand(decode, trace, predict, run)
	return root
}

func TestCompletion(t *testing.T) {
	tests := []struct {
		args []string
		want string // candidates, then ":" and cobra's directive
	}{
		{[]string{"decode", "ia32_hwp_req"}, "IA32_HWP_REQUEST=\nIA32_HWP_REQUEST_PKG=\n:6"},
		{[]string{"decode", "IA32_HWP_REQUEST=0x1", "E"}, "EPB=\n:6"},
		{[]string{"trace", "--msr", "EPB,IA32_HWP_REQUEST_"}, "EPB,IA32_HWP_REQUEST_PKG\n:6"},
		{[]string{"predict", "m"}, "mtl-165u\n:0"},
		{[]string{"predict", "mtl-165u", "powersave:epp=balance_po"}, "powersave:epp=balance_power\n:4"},
		{[]string{"predict", "mtl-165u", "pow"}, "powersave\npowersave:\n:6"},
		{[]string{"run", "spr-2s", ""}, ":0"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := tool()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&bytes.Buffer{})
			root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, tt.args...))
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, strings.TrimSpace(out.String())); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
		})
	}
}
