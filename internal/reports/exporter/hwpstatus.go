// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// IA32_HWP_STATUS's Excursion_To_Minimum (bit 2) is sticky: the processor
// sets it when it delivers a CPU less than HWP_REQUEST's minimum and only
// software clears it by writing 0 (hwpprobe never does). The exporter
// therefore serves the bit as read and the time it has been seen set,
// not a count of excursions it cannot see one by one.
var (
	descExcursion = prometheus.NewDesc(ns+"hwp_excursion_to_minimum",
		"IA32_HWP_STATUS bit 2 (Excursion_To_Minimum) as read at the last refresh: 1 once the CPU was delivered less than its HWP_REQUEST minimum, until software clears the sticky bit.",
		cpuLabels, nil)
	descExcursionSecs = prometheus.NewDesc(ns+"hwp_excursions_seconds_total",
		"Seconds of the sampled intervals at whose end IA32_HWP_STATUS bit 2 (Excursion_To_Minimum, sticky) was set, counted for the interval before each refresh.",
		cpuLabels, nil)
)

// excursions accumulates, per sampled CPU, the seconds whose sample had
// the excursion bit set; read is false for a CPU whose register was never
// read, whose series are then absent.
type excursions struct {
	secs []float64
	read []bool
}

// add counts one sample's interval for each CPU whose bit was set.
func (e *excursions) add(s *sampler.Sample) {
	if len(e.secs) != len(s.CPUs) {
		e.secs, e.read = make([]float64, len(s.CPUs)), make([]bool, len(s.CPUs))
	}
	dt := s.Interval.Seconds()
	for i := range s.CPUs {
		r := s.CPUs[i].HWPStatus
		if !r.OK() {
			continue
		}
		e.read[i] = true
		if hwp.DecodeStatus(r.Raw).ExcursionMin {
			e.secs[i] += dt
		}
	}
}

// metrics adds the bit of the last sample and the accumulated seconds.
func (b *builder) excursions(e *excursions, s *sampler.Sample) {
	for i := range s.CPUs {
		c := &s.CPUs[i]
		l := cpuLabelValues(c.CPU, c.Package, c.Type)
		if c.HWPStatus.OK() {
			bit := 0.0
			if hwp.DecodeStatus(c.HWPStatus.Raw).ExcursionMin {
				bit = 1
			}
			b.add(descExcursion, prometheus.GaugeValue, bit, l...)
		}
		if i < len(e.read) && e.read[i] {
			b.add(descExcursionSecs, prometheus.CounterValue, e.secs[i], l...)
		}
	}
}
