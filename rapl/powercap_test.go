// SPDX-License-Identifier: Apache-2.0

package rapl

import (
	"math"
	"testing"
)

// TestPowercapConstraints: turbostat.8's MSR_PKG_POWER_LIMIT
// 0x42820800218208 with MSR_RAPL_POWER_UNIT 0xa0e03 reads "PKG Limit #1:
// ENabled (65.000 Watts, 64.000000 sec ...)" and "PKG Limit #2: ENabled
// (65.000 Watts, 0.002441* sec ...)". The kernel's integer units (125000
// µW, 976 µs instead of 976.5625) give the same watts and windows short
// by the truncation of the time unit, 0.06%.
func TestPowercapConstraints(t *testing.T) {
	c := PowercapConstraints(0x42820800218208, 0xa0e03)
	for i, want := range []struct {
		name    string
		watts   float64
		seconds float64
	}{{"long_term", 65, 64}, {"short_term", 65, 0.00244140625}} {
		if c[i].Name != want.name || float64(c[i].PowerLimitUW) != want.watts*1e6 {
			t.Errorf("constraint %d: %+v, want %s %v W", i, c[i], want.name, want.watts)
		}
		if got := float64(c[i].TimeWindowUS) / 1e6; math.Abs(got-want.seconds) > want.seconds*0.001 {
			t.Errorf("constraint %d window %v s, want %v s within 0.1%%", i, got, want.seconds)
		}
	}
}
