// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/buildinfo"
)

func TestAddVersion(t *testing.T) {
	in := buildinfo.Info{Version: "v0.4.0", Module: "github.com/hwpprobe/hwpprobe", ModuleVer: "(devel)", GoVersion: "go1.26.8", Platform: "linux/amd64"}
	want := in.String("tool")
	for _, args := range [][]string{{"version"}, {"--version"}} {
		root := &cobra.Command{Use: "tool", RunE: func(*cobra.Command, []string) error { return nil }}
		AddVersion(root, in)
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Errorf("tool %v (-want +got):\n%s", args, diff)
		}
	}
}
