// SPDX-License-Identifier: Apache-2.0

package conform

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

func khz(v int64) *int64 { return &v }

func mustParse(t *testing.T, s string) *profile.Profile {
	t.Helper()
	p, err := profile.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDeliveryTolerance: Bzy_MHz passes within [scaling_min_freq,
// scaling_max_freq] widened by the noise plus 2% of itself (docs/conform.md):
// with noise 20 MHz and the range [400, 2000] MHz, from 373 (372.5 = (400-20)/1.02)
// to 2061 (2061.2 = (2000+20)/0.98); outside, it fails, unless a limit reason
// was active, which passes and is named.
func TestDeliveryTolerance(t *testing.T) {
	cs := []snapshot.CPU{
		{CPU: 0, Sysfs: snapshot.CPUSysfs{ScalingMinKHz: khz(400000), ScalingMaxKHz: khz(1800000)}},
		{CPU: 1, Sysfs: snapshot.CPUSysfs{ScalingMinKHz: khz(500000), ScalingMaxKHz: khz(2000000)}},
	}
	p := mustParse(t, "powersave")
	for _, tc := range []struct {
		bzy    float64
		limits []string
		want   verdict.Result
	}{
		{1000, nil, verdict.Pass},
		{2061, nil, verdict.Pass},
		{2062, nil, verdict.Fail},
		{373, nil, verdict.Pass},
		{372, nil, verdict.Fail},
		{2500, []string{"PkgPwrL1"}, verdict.Pass},
	} {
		g := measured{ok: true, bzy: tc.bzy, halves: [2]float64{tc.bzy - 10, tc.bzy + 10}, noise: 20, limits: tc.limits}
		cases := delivery(p, cs, g)
		if len(cases) != 1 || cases[0].Name != "delivery" {
			t.Fatalf("Bzy_MHz %.0f: cases %+v, want one delivery case", tc.bzy, cases)
		}
		c := cases[0]
		if c.Result != tc.want {
			t.Errorf("Bzy_MHz %.0f limits %v: %v (%s), want %v", tc.bzy, tc.limits, c.Result, c.Reason, tc.want)
		}
		if tc.limits != nil && !strings.Contains(strings.Join(c.Diag, "\n"), "outside [400, 2000] MHz, limited by PkgPwrL1") {
			t.Errorf("Bzy_MHz %.0f under a limit: the diagnostics do not name it: %q", tc.bzy, c.Diag)
		}
	}
}

// TestEPPOrder: of two powersave profiles whose requests differ only in
// EPP, the higher EPP may not deliver more than the lower beyond both
// noises plus 2% of the lower's Bzy_MHz (10 + 10 + 60 = 80 MHz at 3000),
// whichever order they ran in; profiles that differ otherwise, or run
// under performance, are not compared.
func TestEPPOrder(t *testing.T) {
	res := func(name, gov string, min, max, epp int, bzy float64) *result {
		return &result{c: &verdict.Case{Name: name}, gov: gov,
			reqs: map[string]request{"P-core": {min: min, max: max, epp: epp, ok: true}},
			got:  map[string]measured{"P-core": {ok: true, bzy: bzy, noise: 10}}}
	}
	low := res("epp=128", "powersave", 8, 62, 128, 3000)
	for _, tc := range []struct {
		name string
		rs   []*result
		want []string // leaves as "core type/name result"
	}{
		{"within", []*result{low, res("epp=255", "powersave", 8, 62, 255, 3080)}, []string{"P-core/EPP 128 vs 255 pass"}},
		{"beyond", []*result{low, res("epp=255", "powersave", 8, 62, 255, 3081)}, []string{"P-core/EPP 128 vs 255 fail"}},
		{"beyond, run first", []*result{res("epp=255", "powersave", 8, 62, 255, 3081), low}, []string{"P-core/EPP 128 vs 255 fail"}},
		{"slower", []*result{low, res("epp=255", "powersave", 8, 62, 255, 1200)}, []string{"P-core/EPP 128 vs 255 pass"}},
		{"other max", []*result{low, res("max", "powersave", 8, 40, 255, 3500)}, nil},
		{"performance", []*result{low, res("perf", "performance", 62, 62, 0, 3500)}, nil},
		{"same EPP", []*result{low, res("again", "powersave", 8, 62, 128, 3500)}, nil},
	} {
		c := eppOrder(tc.rs)
		var got []string
		if c != nil {
			for _, ct := range c.Cases {
				for _, l := range ct.Cases {
					got = append(got, ct.Name+"/"+l.Name+" "+l.Outcome().String())
				}
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}

// fakeTrace is a trace source that delivers one register write before
// collect starts, one while it runs (during the load) and one after it
// stops.
type fakeTrace struct {
	ebpf.Source // the methods collect does not call
	ev          ebpf.Event
}

func (f *fakeTrace) Run(ctx context.Context, fn func(*ebpf.Event) error) error {
	for _, at := range []uint64{monotonic() - uint64(time.Second), monotonic()} {
		e := f.ev
		e.TimeNs = at
		fn(&e)
	}
	<-ctx.Done()
	e := f.ev
	e.TimeNs, e.Value = monotonic(), 0xdead
	return fn(&e)
}

// TestStabilityWrite: a write traced during the load fails the stability
// case, naming the writer, the register, the value and the CPU; writes
// before and after the load are not counted; without a trace the case is
// skipped with the reason.
func TestStabilityWrite(t *testing.T) {
	tr := &trace{src: &fakeTrace{ev: ebpf.Event{CPU: 3, PID: 42, Comm: "thermald", MSR: hwp.MSR_IA32_HWP_REQUEST, Value: 0x8000ff01}}}
	stop := make(chan struct{})
	var end uint64
	writes, _ := tr.collect(stop, &end)
	time.Sleep(20 * time.Millisecond) // the load
	end = monotonic()
	close(stop)
	c := stability(tr, <-writes)
	want := "1 register writes during the load: thermald[42] wrote MSR 0x774 = 0x8000ff01 on cpu3"
	if c.Result != verdict.Fail || c.Reason != want {
		t.Errorf("stability: %v %q, want fail %q", c.Result, c.Reason, want)
	}
	if c := stability(&trace{why: "no trace: no BPF"}, nil); c.Result != verdict.Skip || c.Reason != "no trace: no BPF" {
		t.Errorf("without a trace: %v %q, want skip", c.Result, c.Reason)
	}
	if c := stability(tr, nil); c.Result != verdict.Pass {
		t.Errorf("no write: %v %q, want pass", c.Result, c.Reason)
	}
}

// TestRegistersPerformance: under the performance governor intel_pstate
// writes HWP min = max (intel_pstate_hwp_set), so a request with min below
// max there fails, whichever vendor's view the snapshot holds; the values
// are published dumps (internal/machine/regs/testdata/registers.tsv:
// Granite Rapids' 0x00002727 under performance, Whiskey Lake's 0x80002e17
// under powersave).
func TestRegistersPerformance(t *testing.T) {
	perf := "performance"
	for _, tc := range []struct {
		name string
		raw  uint64
		want verdict.Result
		why  string
	}{
		{"min = max", 0x00002727, verdict.Pass, ""},
		{"min < max", 0x00002e17, verdict.Fail, "cpu0 HWP min 23 != max 46 under performance (intel_pstate_hwp_set)"},
	} {
		cs := []snapshot.CPU{{CPU: 0, Sysfs: snapshot.CPUSysfs{ScalingGovernor: &perf},
			Registers: snapshot.CPURegs{HWPRequest: &snapshot.HWPRequest{Raw: snapshot.Hex(tc.raw)}}}}
		_, c := registers(&profile.Machine{}, mustParse(t, "performance"), cs)
		if c.Result != tc.want || c.Reason != tc.why {
			t.Errorf("%s: %v %q, want %v %q", tc.name, c.Result, c.Reason, tc.want, tc.why)
		}
	}
}
