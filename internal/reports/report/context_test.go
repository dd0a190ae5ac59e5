// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/htmlreport"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// testContext is a recorded context: thermald running (allowed), the
// firmware's profile, a laptop on mains power, the DMI only in part, and a
// command line with characters each format must escape.
func testContext() *recording.Context {
	return &recording.Context{Hwpprobe: "v9.9",
		Daemons: recording.DaemonList{Found: []recording.DaemonState{{Name: "thermald", PID: 812, Unit: "thermald.service",
			UnitState: "active", Mode: &recording.DaemonMode{What: "options", Fact: recording.Fact{Value: "--adaptive"}}}}},
		PlatformProfile: recording.Fact{Value: "performance"}, PlatformProfileChoices: recording.Fact{Value: "low-power balanced performance"},
		PowerSupply: recording.PowerSupply{Supplies: []recording.Supply{{Name: "AC", Type: "Mains", Online: &recording.Fact{Value: "1"}}}},
		DMI: recording.DMI{Vendor: recording.Fact{Value: "LENOVO"}, Product: recording.Fact{Missing: "not present"},
			BIOSVersion: recording.Fact{Value: "N3XET43W"}, BIOSDate: recording.Fact{Value: "05/12/2023"}},
		KernelRelease: recording.Fact{Value: "6.8.0-45"}, KernelCmdline: recording.Fact{Value: "quiet a|b <x>"},
		Microcode: recording.Fact{Value: "0x1f"}}
}

// contextResult is the seed experiment recorded with ctx, read back and
// analysed.
func contextResult(t *testing.T, ctx *recording.Context) *analysis.Result {
	t.Helper()
	e := testexp.Seed()
	e.Context = ctx
	return analyzed(t, e)
}

// TestContextBlock: every format prints the recorded context, and says
// when a file has none.
func TestContextBlock(t *testing.T) {
	formats := []struct {
		name  string
		write func(io.Writer, *analysis.Result) error
		want  []string // with a context
		none  string   // without
	}{
		{"text", func(w io.Writer, res *analysis.Result) error { return WriteText(w, res, Info{Version: "test"}) }, []string{
			"context:\n  power daemons        thermald (pid 812, thermald.service active): options --adaptive\n",
			"  platform profile     performance (choices: low-power balanced performance)\n",
			"  power supply         AC (Mains) online\n",
			"  firmware (DMI)       vendor LENOVO, product missing (not present), BIOS N3XET43W of 05/12/2023\n",
			"  kernel               6.8.0-45\n  kernel command line  quiet a|b <x>\n  microcode            0x1f\n  hwpprobe             v9.9\n\nA: ",
		}, "context:\n  context              not recorded (the file was written by an hwpprobe that did not record it)\n"},
		{"markdown", func(w io.Writer, res *analysis.Result) error { return WriteMarkdown(w, res, Info{Version: "test"}) }, []string{
			"\n### Context\n\n| | |\n|---|---|\n| power daemons | thermald (pid 812, thermald.service active): options --adaptive |\n",
			"| kernel command line | quiet a\\|b &lt;x&gt; |\n",
			"| hwpprobe | v9.9 |\n\n### Evidence per side and core type",
		}, "| context | not recorded (the file was written by an hwpprobe that did not record it) |"},
		{"html", func(w io.Writer, res *analysis.Result) error {
			return htmlreport.WriteDiff(w, res, htmlreport.Options{Info: htmlreport.Info{Version: "test"}})
		}, []string{
			`<h2 id="context">Context</h2>`,
			`<tr><th>power daemons</th><td class="mono">thermald (pid 812, thermald.service active): options --adaptive</td></tr>`,
			`<tr><th>kernel command line</th><td class="mono">quiet a|b &lt;x&gt;</td></tr>`,
		}, `<tr><th>context</th><td class="mono">not recorded (the file was written by an hwpprobe that did not record it)</td></tr>`},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := f.write(&b, contextResult(t, testContext())); err != nil {
				t.Fatal(err)
			}
			for _, w := range f.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
			}
			b.Reset()
			if err := f.write(&b, contextResult(t, nil)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), f.none) {
				t.Errorf("report of a file without a context lacks %q:\n%s", f.none, b.String())
			}
		})
	}
}

// TestContextJSON: the JSON report carries each source's context as
// recorded, null for a file without one.
func TestContextJSON(t *testing.T) {
	for _, ctx := range []*recording.Context{testContext(), nil} {
		var b bytes.Buffer
		if err := WriteJSON(&b, contextResult(t, ctx), Info{Version: "test"}, nil); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Contexts []struct {
				Source  string             `json:"source"`
				Context *recording.Context `json:"context"`
			} `json:"contexts"`
		}
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Contexts) != 1 || got.Contexts[0].Source != "exp.hwpr" {
			t.Fatalf("contexts: %+v", got.Contexts)
		}
		if d := cmp.Diff(ctx, got.Contexts[0].Context); d != "" {
			t.Errorf("JSON context (-recorded +reported):\n%s", d)
		}
	}
}
