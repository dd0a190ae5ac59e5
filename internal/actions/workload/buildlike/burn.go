// SPDX-License-Identifier: Apache-2.0

package buildlike

// unitIterations is the number of mixing steps in one work unit: about
// half a millisecond of one current core (0.4 ms measured on an Emerald
// Rapids server core; half the steps mispredict a branch).
const unitIterations = 1 << 15

// bufWords is the size of the working set a unit walks (256 KiB: in L2 on
// current cores, so the work is compute-bound like a compiler's, not
// memory-bound).
const bufWords = 32 << 10

// Burn does units of compute work and returns a checksum of it, so that
// the work cannot be optimised away. The same units always do the same
// instructions: the work is fixed, its time depends on the core's
// frequency.
func Burn(units int) uint64 {
	buf := make([]uint64, bufWords)
	x := uint64(0x9E3779B97F4A7C15)
	for i := range buf {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		buf[i] = x
	}
	var sum uint64
	for u := 0; u < units; u++ {
		for i := 0; i < unitIterations; i++ {
			// xorshift64 with a data-dependent load and store: branches
			// and loads like a compiler's, no floating point.
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			j := x & (bufWords - 1)
			buf[j] += x
			if buf[j]&1 == 0 {
				sum += buf[j] >> 3
			} else {
				sum ^= buf[j]
			}
		}
	}
	return sum
}
