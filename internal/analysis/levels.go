// SPDX-License-Identifier: Apache-2.0

package analysis

// perfUnitsKHz are the frequencies one HWP performance level stands for
// under intel_pstate, in kHz: 100 MHz, or on a hybrid part's P-cores the
// driver's scaling factor, 80000 on Meteor Lake (as mtl-165u's perf_khz),
// 78741 on Alder and Raptor Lake, 86957 on Lunar Lake
// (docs/kernel-facts.md section 2, the driver's HYBRID_SCALING_FACTOR_*).
var perfUnitsKHz = []int64{100000, 80000, 78741, 86957}

// LevelKHz returns the kHz one HWP performance level stands for on a CPU
// whose HWP Highest is highest and whose cpuinfo_max_freq is maxKHz: the
// unit u (perfUnitsKHz) for which highest x u, rounded down to 100 MHz as
// intel_pstate rounds it on hybrid parts (docs/emulator.md), is
// cpuinfo_max_freq. 0 when no unit fits (turbo off caps cpuinfo_max_freq
// at Guaranteed; another driver's levels): the levels are then shown
// without MHz.
func LevelKHz(highest uint8, maxKHz int64) int64 {
	if highest == 0 || maxKHz <= 0 {
		return 0
	}
	for _, u := range perfUnitsKHz {
		if int64(highest)*u/100000*100000 == maxKHz {
			return u
		}
	}
	return 0
}
