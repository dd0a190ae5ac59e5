// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestPredict runs the built `hwpemu predict` on mtl-165u, every CPU busy,
// with the profiles of issue 23 under each model variant and reads the
// last column, each profile's work over performance's. The values are
// emu's TestPredictVariants', worked by hand there: under none
// performance and powersave:epp=0 are equal; min-pins makes
// powersave:epp=0 2.336x faster (performance's pinned CPUs gate cycles at
// the pinned cost); epp-voltage leaves those two equal and makes EPP 16
// 1.125x faster than EPP 0; platform-pl1 holds every profile at 10 W,
// alike. Each run says its variant on stderr's banner.
func TestPredict(t *testing.T) {
	for _, tc := range []struct {
		variant string
		want    []float64
	}{
		{"none", []float64{1, 1, 1.006}},
		{"min-pins", []float64{1, 2.336, 2.351}},
		{"epp-voltage", []float64{1, 1, 1.125}},
		{"platform-pl1", []float64{1, 1, 1.007}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			stdout, stderr, code := runEmu(t, "predict", "--variant", tc.variant, "mtl-165u",
				"performance", "powersave:epp=0", "powersave:epp=performance")
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if want := "hwpemu: model variant: " + tc.variant + ": "; !strings.Contains(stderr, want) {
				t.Errorf("stderr %q does not name the variant (%q)", stderr, want)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != 5 || !strings.HasPrefix(lines[0], "mtl-165u, model variant "+tc.variant+": 14 busy CPUs (0-13), steady state after 600 s") {
				t.Fatalf("stdout:\n%s\nwant a header line, the column names and 3 rows", stdout)
			}
			var got []float64
			for _, l := range lines[2:] {
				f := strings.Fields(l)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil {
					t.Fatalf("row %q: %v", l, err)
				}
				got = append(got, v)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 0.0015)); d != "" {
				t.Errorf("work over performance's (-want +got):\n%s", d)
			}
		})
	}
}

// TestPredictRows checks one whole row: mtl-165u, the four P-core threads
// busy under performance, base model: 0.8 + 2.0 x 4/14 W fixed, the
// P-cores keep sqrt((15 - 1.371) / (4 x (4960/1760)^2)) of 4960 MHz =
// 3249 MHz, 15 W, PL1 15 W, 72.5 C, work 4 x 3249.
func TestPredictRows(t *testing.T) {
	stdout, stderr, code := runEmu(t, "predict", "--busy-cpus", "4", "mtl-165u", "performance")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	s := math.Sqrt((15 - 0.8 - 2.0*4/14) / (4 * math.Pow(4960.0/1760, 2)))
	want := strings.Join([]string{
		"mtl-165u, model variant none: 4 busy CPUs (0-3), steady state after 600 s, mean over 60 s; work = sum of the busy CPUs' delivered MHz",
		"profile        P MHz   pkg W   PL1 W  temp C  work MHz  vs performance",
		"performance     " + strconv.FormatFloat(4960*s, 'f', 0, 64) + "   15.00   15.00    72.5     " + strconv.FormatFloat(4*4960*s, 'f', 0, 64) + "  1.000",
	}, "\n") + "\n"
	if d := cmp.Diff(want, stdout); d != "" {
		t.Errorf("stdout (-want +got):\n%s", d)
	}
}

// TestPredictBadInput runs bad arguments through `hwpemu predict`, and a
// bad --variant through run and serve: each is one line on stderr saying
// what is wrong, exit 2, nothing on stdout, before anything runs.
func TestPredictBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--variant", "fast", "mtl-165u", "performance"}, `hwpemu: unknown model variant "fast" (variants: none, min-pins, epp-voltage, platform-pl1, broken-max)`},
		{[]string{"predict", "--variant", "min-pins", "zen4-amd-pstate", "performance"}, "hwpemu: model variant min-pins does not apply to zen4-amd-pstate: it has no package power limit"},
		{[]string{"predict", "--variant", "platform-pl1", "zen4-amd-pstate", "performance"}, "hwpemu: model variant platform-pl1 does not apply to zen4-amd-pstate"},
		{[]string{"predict", "--busy-cpus", "15", "mtl-165u", "performance"}, "hwpemu: predict: 15 busy CPUs: mtl-165u has 14 online (1 to 14, or 0 for all)"},
		{[]string{"predict", "--busy-cpus", "x", "mtl-165u", "performance"}, `hwpemu: invalid argument "x" for "--busy-cpus" flag`},
		{[]string{"predict", "mtl-165u", "powersave:epp=fast"}, `hwpemu: bad profile "powersave:epp=fast": epp=fast: unknown EPP`},
		{[]string{"predict", "mtl-165u", "tuned:latency-performance"}, "hwpemu: predict: tuned:latency-performance: a TuneD or power-profiles-daemon profile is the daemon's"},
		{[]string{"predict", "mtl-165u", "performance:epp=power"}, "hwpemu: predict: profile performance:epp=power: write sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference: device or resource busy"},
		{[]string{"predict", "mtl-165u"}, "hwpemu: requires at least 2 arg(s)"},
		{[]string{"predict", "nosuch", "performance"}, `hwpemu: unknown machine "nosuch"`},
		{[]string{"run", "--variant", "fast", "mtl-165u", "--", "true"}, `hwpemu: unknown model variant "fast" (variants: none, min-pins, epp-voltage, platform-pl1, broken-max)`},
		{[]string{"run", "--variant", "epp-voltage", "zen4-amd-pstate", "--", "true"}, "hwpemu: model variant epp-voltage does not apply to zen4-amd-pstate: it has no package power limit"},
		{[]string{"serve", "--variant", "min-pins", "zen4-amd-pstate", dir}, "hwpemu: model variant min-pins does not apply to zen4-amd-pstate"},
	} {
		stdout, stderr, code := runEmu(t, tc.args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("hwpemu %q: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestRunVariant runs a shell under `hwpemu run --variant min-pins`: the
// banner names the variant and the tree says it in hwpemu_variant (for
// recordings to store); without --variant the file says none.
func TestRunVariant(t *testing.T) {
	stdout, stderr, code := runEmu(t, "run", "--variant", "min-pins", "mtl-165u", "--", "cat", "/sys/devices/system/cpu/hwpemu_variant")
	if code != 0 || stdout != "min-pins\n" || !strings.Contains(stderr, "\nhwpemu: model variant: min-pins: a CPU whose request has min = max") {
		t.Errorf("exit %d, stdout %q, stderr %q; want min-pins and the banner line", code, stdout, stderr)
	}
	if got := inMachine(t, "mtl-165u", "cat /sys/devices/system/cpu/hwpemu_variant"); got != "none\n" {
		t.Errorf("without --variant: hwpemu_variant %q, want none", got)
	}
}
