// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"math/big"
	"math/bits"
	"slices"
	"strconv"
)

// The exact p-value of the U test. benchstat (go-moremath's
// MannWhitneyUTest) computes the two-sided p-value from the exact null
// distribution of U, conditional on the ties, when both sides have at most
// 50 values and no value is tied, or at most 25 when some are: p = 2·P(U <=
// min(U1, U2)), or 1 when U1 = U2. Every arrangement of the pooled values'
// side labels is equally likely under the null hypothesis, so that p is a
// ratio of counts, 2·#{arrangements with U <= u} / C(n+m, n). It reaches
// benchstat as a float64 (3+3 completely separated runs: 2/20 becomes
// 0.10000000000000002), and comparing that float with alpha decides a
// p equal to alpha by its rounding. exactP counts the arrangements in
// integers instead, so that p <= alpha is decided on the exact value.

// Sizes up to which benchstat's U test uses the exact distribution
// (go-moremath's MannWhitneyExactLimit and MannWhitneyTiesExactLimit).
const (
	uExactLimit     = 50
	uTiesExactLimit = 25
)

// u128 is an unsigned 128-bit count: C(100, 50) < 2^97 arrangements.
type u128 struct{ hi, lo uint64 }

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// mul multiplies by k; the product must fit (every count here is at most
// the number of arrangements).
func (a u128) mul(k uint64) u128 {
	hi, lo := bits.Mul64(a.lo, k)
	return u128{a.hi*k + hi, lo}
}

func (a u128) big() *big.Int {
	v := new(big.Int).SetUint64(a.hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(a.lo))
}

// uCountBelow counts the arrangements of n1 values of side 1 among tie
// groups of the given sizes (in ascending value order) whose doubled U1
// statistic (pairs with the side-2 value below, ties counting one half) is
// at most twoU.
func uCountBelow(groups []int, n1, twoU int) u128 {
	n2 := -n1
	for _, t := range groups {
		n2 += t
	}
	// cnt[k][u]: arrangements of the groups so far with k side-1 values
	// and doubled partial U1 = u.
	cnt := make([][]u128, n1+1)
	for k := range cnt {
		cnt[k] = make([]u128, twoU+1)
	}
	cnt[0][0] = u128{0, 1}
	before := 0
	for _, t := range groups {
		next := make([][]u128, n1+1)
		for k := range next {
			next[k] = make([]u128, twoU+1)
		}
		for k := 0; k <= min(n1, before); k++ {
			j2 := before - k // side-2 values below this group
			if j2 > n2 {
				continue
			}
			for g := 0; g <= t && k+g <= n1; g++ {
				if t-g > n2-j2 {
					continue
				}
				// Each of the g side-1 values is above j2 side-2 values
				// and tied with t-g.
				inc := g * (2*j2 + t - g)
				ways := binom64(t, g)
				for u := 0; u+inc <= twoU; u++ {
					if c := cnt[k][u]; c != (u128{}) {
						next[k+g][u+inc] = next[k+g][u+inc].add(c.mul(ways))
					}
				}
			}
		}
		cnt, before = next, before+t
	}
	var total u128
	for _, c := range cnt[n1] {
		total = total.add(c)
	}
	return total
}

// uCountNoTies counts the arrangements of n and m distinct values whose U
// statistic is at most u: the coefficients of q^0 .. q^u of the Gaussian
// binomial [n+m, n]_q = prod over i = 1..n of (1 - q^(m+i)) / (1 - q^i),
// U's generating function. The series is truncated at degree u; the
// arithmetic is modulo 2^128, exact because the counts fit.
func uCountNoTies(n, m, u int) u128 {
	c := make([]u128, u+1)
	c[0] = u128{0, 1}
	for i := 1; i <= n; i++ {
		for d := i; d <= u; d++ { // divide by 1 - q^i
			c[d] = c[d].add(c[d-i])
		}
		for d := u; d >= m+i; d-- { // multiply by 1 - q^(m+i)
			c[d] = c[d].sub(c[d-m-i])
		}
	}
	var total u128
	for _, x := range c {
		total = total.add(x)
	}
	return total
}

// binom64 is C(n, k) for the sizes of tie groups (n <= 50).
func binom64(n, k int) uint64 {
	c := uint64(1)
	for i := 1; i <= k; i++ {
		c = c * uint64(n-k+i) / uint64(i)
	}
	return c
}

// twoU1 is twice a's U statistic against b: the pairs (x in a, y in b) with
// y < x, ties counting one half.
func twoU1(a, b []float64) int {
	u := 0
	for _, x := range a {
		for _, y := range b {
			switch {
			case y < x:
				u += 2
			case y == x:
				u++
			}
		}
	}
	return u
}

// tieGroups returns the sizes of the groups of equal values of a and b
// pooled, in ascending order.
func tieGroups(a, b []float64) []int {
	all := append(slices.Clone(a), b...)
	slices.Sort(all)
	var groups []int
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		groups = append(groups, j-i)
		i = j
	}
	return groups
}

// ExactP is the U test's two-sided p-value as the ratio of counts it is:
// Count of the Total equally likely arrangements of the runs' side labels
// (Total = C(n+m, n)) are at least as extreme as the one observed, both
// tails counted.
type ExactP struct {
	Count, Total *big.Int
}

// Rat is the p-value as a fraction.
func (p ExactP) Rat() *big.Rat { return new(big.Rat).SetFrac(p.Count, p.Total) }

// Equal reports whether p and q are the same count of the same total (both
// nil counts as equal); go-cmp uses it.
func (p *ExactP) Equal(q *ExactP) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.Count.Cmp(q.Count) == 0 && p.Total.Cmp(q.Total) == 0
}

// String is "2/20 = 0.1".
func (p ExactP) String() string {
	if p.Count == nil || p.Total == nil {
		return "none"
	}
	f, _ := p.Rat().Float64()
	return p.Count.String() + "/" + p.Total.String() + " = " + strconv.FormatFloat(f, 'g', 6, 64)
}

// exactP returns the U test's two-sided p-value as benchstat computes it,
// exactly, or nil where benchstat uses the normal approximation (larger
// samples) or no test (every value equal).
func exactP(a, b []float64) *ExactP {
	n1, n2 := len(a), len(b)
	groups := tieGroups(a, b)
	ties := len(groups) < n1+n2
	if n1 == 0 || n2 == 0 || len(groups) == 1 ||
		!ties && (n1 > uExactLimit || n2 > uExactLimit) || ties && (n1 > uTiesExactLimit || n2 > uTiesExactLimit) {
		return nil
	}
	total := new(big.Int).Binomial(int64(n1+n2), int64(n1))
	u1 := twoU1(a, b)
	u2 := 2*n1*n2 - u1
	if u1 == u2 {
		return &ExactP{Count: new(big.Int).Set(total), Total: total}
	}
	var count *big.Int
	if ties {
		count = uCountBelow(groups, n1, min(u1, u2)).big()
	} else {
		count = uCountNoTies(n1, n2, min(u1, u2)/2).big()
	}
	return &ExactP{Count: count.Lsh(count, 1), Total: total}
}

// LevelRat is a significance level as the decimal number it was stated as:
// the shortest decimal that the float64 rounds from (0.1 is 1/10, not
// the binary fraction just above it).
func LevelRat(level float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(level, 'g', -1, 64))
	if !ok { // not finite: no decimal; Options.Check refuses such levels
		return new(big.Rat)
	}
	return r
}

// pRat is p exactly where known, else the float's exact binary value.
func pRat(exact *ExactP, p float64) *big.Rat {
	if exact != nil {
		return exact.Rat()
	}
	return new(big.Rat).SetFloat64(p)
}

// RunsNeeded is the answer of RunsToReach.
type RunsNeeded struct {
	// Pairs is the share of the n·m pairs of values (one of each side)
	// in the minority order, ties counting one half: 0 when the sides are
	// completely separated.
	Pairs float64
	// N is the fewest values per side (N+N, no ties) with which the same
	// share gives an exact two-sided p <= the level; 0 when no N up to
	// benchstat's exact limit (50) does.
	N int
	P ExactP // the p-value at N
}

// RunsToReach says how many values per side, separated as a and b are,
// the U test needs for p <= level: for N = 2, 3, ... it takes the largest
// U statistic of N+N values whose share of the N² pairs is at most a and
// b's, and computes its exact two-sided p from the null distribution of
// U. For completely separated samples that p is 2/C(2N, N): 0.1 at 3+3,
// 2/70 = 0.029 at 4+4. ok is false when the sides' U statistics are equal
// (no separation to repeat).
func RunsToReach(a, b []float64, level float64) (r RunsNeeded, ok bool) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return r, false
	}
	u1 := twoU1(a, b)
	small := min(u1, 2*n1*n2-u1)
	if u1 == 2*n1*n2-u1 {
		return r, false
	}
	r.Pairs = float64(small) / float64(2*n1*n2)
	lvl := LevelRat(level)
	for n := 2; n <= uExactLimit; n++ {
		twoU := small * n * n / (n1 * n2)
		count := uCountNoTies(n, n, twoU/2).big()
		p := ExactP{Count: count.Lsh(count, 1), Total: new(big.Int).Binomial(int64(2*n), int64(n))}
		if p.Rat().Cmp(lvl) <= 0 {
			r.N, r.P = n, p
			return r, true
		}
	}
	return r, true
}
