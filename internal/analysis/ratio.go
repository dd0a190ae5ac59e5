// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"math"
	"slices"
	"sync"
)

// RatioCI estimates the ratio of b's location to a's and bounds it, free of
// any assumption on the distributions' shape beyond B being A scaled
// (a shift of log values): the Hodges-Lehmann estimate is the median of
// the n·m ratios b_j/a_i, and Moses' interval at level conf is
// [D(k), D(nm+1-k)] over those ratios sorted, where k is the largest count
// with P(U < k) <= (1-conf)/2 under the exact null distribution of the
// Mann-Whitney U statistic (Hollander & Wolfe, Nonparametric Statistical
// Methods, section 4.3). The returned level is the interval's actual one,
// 1 - 2·P(U < k), which is at least conf. With too few runs for the level
// (k = 0) the interval is (0, +Inf). Values must be positive.
func RatioCI(a, b []float64, conf float64) (ratio, lo, hi, level float64) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return math.NaN(), math.NaN(), math.NaN(), 0
	}
	d := make([]float64, 0, n*m)
	for _, x := range a {
		for _, y := range b {
			d = append(d, y/x)
		}
	}
	slices.Sort(d)
	ratio = median(d)
	k, level := mosesK(n, m, conf)
	if k == 0 {
		return ratio, 0, math.Inf(1), 1
	}
	return ratio, d[k-1], d[len(d)-k], level
}

func median(sorted []float64) float64 {
	l := len(sorted)
	if l%2 == 1 {
		return sorted[l/2]
	}
	return (sorted[l/2-1] + sorted[l/2]) / 2
}

// mosesK returns the number of pairwise differences to drop from each end
// for a two-sided interval at level conf, and its actual level.
func mosesK(n, m int, conf float64) (int, float64) {
	tail := (1 - conf) / 2
	cdf := uCDF(n, m)
	k := 0
	for k < len(cdf) && cdf[k] <= tail+1e-12 {
		k++
	}
	if k == 0 {
		return 0, 1
	}
	// cdf[k-1] = P(U <= k-1) = P(U < k).
	return k, 1 - 2*cdf[k-1]
}

// uExactMax bounds the sizes for which the exact U distribution is built
// (its cost grows as n·m·(n·m)); larger samples use the normal
// approximation with continuity correction.
const uExactMax = 2500

var uCache sync.Map // [2]int -> []float64

// uCDF returns P(U <= u) for u = 0 .. n·m/2 under the null hypothesis of
// no ties.
func uCDF(n, m int) []float64 {
	if n > m {
		n, m = m, n
	}
	key := [2]int{n, m}
	if v, ok := uCache.Load(key); ok {
		return v.([]float64)
	}
	half := n * m / 2
	cdf := make([]float64, half+1)
	if n*m <= uExactMax {
		pmf := uPMF(n, m)
		acc := 0.0
		for u := 0; u <= half; u++ {
			acc += pmf[u]
			cdf[u] = acc
		}
	} else {
		mu := float64(n*m) / 2
		sd := math.Sqrt(float64(n*m*(n+m+1)) / 12)
		for u := range cdf {
			cdf[u] = 0.5 * math.Erfc(-(float64(u)+0.5-mu)/sd/math.Sqrt2)
		}
	}
	uCache.Store(key, cdf)
	return cdf
}

// uPMF is the exact null distribution of U for sizes n and m, through the
// recurrence p(n,m,u) = n/(n+m)·p(n-1,m,u-m) + m/(n+m)·p(n,m-1,u).
func uPMF(n, m int) []float64 {
	// prev[j] is the distribution for sizes (i-1, j); cur for (i, j).
	prev := make([][]float64, m+1)
	for j := range prev {
		prev[j] = []float64{1} // sizes (0, j): U = 0
	}
	for i := 1; i <= n; i++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1} // sizes (i, 0)
		for j := 1; j <= m; j++ {
			p := make([]float64, i*j+1)
			wa := float64(i) / float64(i+j)
			wb := float64(j) / float64(i+j)
			for u, q := range prev[j] { // the largest value is from a: every b below it
				p[u+j] += wa * q
			}
			for u, q := range cur[j-1] {
				p[u] += wb * q
			}
			cur[j] = p
		}
		prev = cur
	}
	return prev[m]
}
