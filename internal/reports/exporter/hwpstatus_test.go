// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"

	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// TestExcursions: the seconds count the intervals whose sample read
// IA32_HWP_STATUS with bit 2 set (0x4; 0x1 is Guaranteed_Performance_Change
// only); a CPU whose register is not read has neither series.
func TestExcursions(t *testing.T) {
	reg := func(v uint64) sampler.Reg { return sampler.Reg{Raw: v, Src: sampler.SrcMSR} }
	s := &sampler.Sample{Interval: 2 * time.Second, CPUs: []sampler.CPU{
		{CPU: 0, HWPStatus: reg(0x4)}, {CPU: 1, HWPStatus: reg(0x1)}, {CPU: 2},
	}}
	var e excursions
	e.add(s)
	s.CPUs[1].HWPStatus = reg(0x5)
	e.add(s)
	b := &builder{}
	b.excursions(&e, s)
	got := map[string]float64{}
	for _, m := range b.ms {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		name := "bit"
		v := pb.GetGauge().GetValue()
		if pb.Counter != nil {
			name, v = "secs", pb.GetCounter().GetValue()
		}
		for _, l := range pb.GetLabel() {
			if l.GetName() == "cpu" {
				name += " cpu" + l.GetValue()
			}
		}
		got[name] = v
	}
	want := map[string]float64{"bit cpu0": 1, "secs cpu0": 4, "bit cpu1": 1, "secs cpu1": 2}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
}
