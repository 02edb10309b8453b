package stats

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
)

// bruteDoubledU counts 2·U pair by pair, without ranks.
func bruteDoubledU(a, b []float64) int {
	u2 := 0
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				u2 += 2
			case x == y:
				u2++
			}
		}
	}
	return u2
}

// bruteP enumerates every way of choosing which len(a) of the pooled values
// form A, and returns the share of splits whose U lies at least as far from
// its centre as the observed one: the exact two-sided p-value by definition.
func bruteP(a, b []float64) float64 {
	pooled := append(append([]float64(nil), a...), b...)
	n, n1 := len(pooled), len(a)
	centre := len(a) * len(b)
	observed := abs(bruteDoubledU(a, b) - centre)
	var hits, total int
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		var x, y []float64
		for i, v := range pooled {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		total++
		if abs(bruteDoubledU(x, y)-centre) >= observed {
			hits++
		}
	}
	return float64(hits) / float64(total)
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func TestMannWhitneyExactAgainstEnumeration(t *testing.T) {
	tests := []struct{ a, b []float64 }{
		{[]float64{1, 2, 3}, []float64{4, 5, 6}},
		{[]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}},
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}},
		{[]float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}},
		{[]float64{2}, []float64{1, 1}},          // uneven ties: benchmath gives p = 1.33 here
		{[]float64{1, 1, 2}, []float64{2, 3, 3}}, // ties across the samples
		{[]float64{3, 3, 3, 4}, []float64{1, 2, 3, 3}},
		{[]float64{5, 5, 5, 6, 7}, []float64{1, 5, 5, 5, 2}},
		{[]float64{100, 100, 100, 101, 102, 102}, []float64{99, 100, 100, 103}},
		{[]float64{1, 2, 2, 2, 2, 2, 2}, []float64{2, 2, 2, 3, 4, 5, 6}},
		{[]float64{7, 7, 7}, []float64{7, 7, 7}}, // all equal: p = 1
		{[]float64{1, 1, 2, 5}, []float64{2}},    // the larger sample first, with ties
		{[]float64{1}, []float64{2}},
		{[]float64{10, 20, 30, 40, 50, 60, 70, 80}, []float64{15, 25, 35, 45, 55, 65, 75, 85}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.a, tt.b), func(t *testing.T) {
			got, err := MannWhitney(tt.a, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Exact {
				t.Fatal("small samples must use the exact distribution")
			}
			if want := float64(bruteDoubledU(tt.a, tt.b)) / 2; got.U != want {
				t.Errorf("U = %v, want %v", got.U, want)
			}
			if want := bruteP(tt.a, tt.b); math.Abs(got.P-want) > 1e-12 {
				t.Errorf("p = %v, enumeration gives %v", got.P, want)
			}
			if got.P > 1 || got.P <= 0 {
				t.Errorf("p = %v outside (0, 1]", got.P)
			}
		})
	}
}

func TestMannWhitneyKnownValues(t *testing.T) {
	tests := []struct {
		name  string
		a, b  []float64
		u     float64
		p     float64
		exact bool
	}{
		// Complete separation: 2/C(6,3), 2/C(8,4), 2/C(10,5).
		{"3 vs 3 apart", seq(1, 3), seq(4, 6), 0, 0.1, true},
		{"4 vs 4 apart", seq(5, 8), seq(1, 4), 16, 2.0 / 70, true},
		{"5 vs 5 apart", seq(1, 5), seq(6, 10), 0, 2.0 / 252, true},
		// The example of R's ?wilcox.test: W = 35, p-value = 0.2544
		// (scipy 1.10.1 mannwhitneyu(method="exact"): 0.2544122544122544).
		{"R documentation example",
			[]float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			[]float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 0.2544122544122544, true},
		// One value against 100 distinct ones: U is uniform on 0..100, so
		// the extreme U = 0 has p = 2/101, whichever side is given first.
		{"1 vs 100", []float64{0}, seq(1, 100), 0, 2.0 / 101, true},
		{"100 vs 1", seq(1, 100), []float64{0}, 100, 2.0 / 101, true},
		// Beyond ExactLimit: the normal approximation with tie and continuity
		// corrections; references from scipy 1.10.1
		// mannwhitneyu(method="asymptotic"), which R's wilcox.test(exact=FALSE) matches.
		{"70 values no ties", seq(1, 35), addEach(seq(1, 35), 10.5), 300, 0.00024755055110698223, false},
		{"75 values heavy ties", modSeq(40, 1, 7, 0), modSeq(35, 3, 11, 0), 461, 0.010811423646982867, false},
		{"80 values some ties", modSeq(40, 37, 23, 100), modSeq(40, 29, 19, 104), 662.5, 0.18695877695049723, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MannWhitney(tt.a, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if got.U != tt.u || got.Exact != tt.exact || got.N1 != len(tt.a) || got.N2 != len(tt.b) {
				t.Errorf("got %+v, want U=%v exact=%v", got, tt.u, tt.exact)
			}
			if math.Abs(got.P-tt.p) > 1e-12 {
				t.Errorf("p = %.17g, want %.17g", got.P, tt.p)
			}
		})
	}
}

func addEach(s []float64, d float64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = v + d
	}
	return out
}

// modSeq is base + (i·step mod m) for i in 0..n-1: a deterministic sample with ties.
func modSeq(n, step, m int, base float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = base + float64(i*step%m)
	}
	return out
}

// TestNormalApproximationNearExactLimit backs the claim in ExactLimit's
// comment: just beyond it, at 30 against 31, the approximation is within
// 0.001 of the exact p-value wherever that is below 0.1, for every U.
func TestNormalApproximationNearExactLimit(t *testing.T) {
	const n1, n2 = 30, 31
	ties := make([]int, n1+n2)
	for i := range ties {
		ties[i] = 1
	}
	for u2 := 0; u2 <= 2*n1*n2; u2 += 2 {
		exact, normal := exactP(ties, n1, n2, u2), normalP(ties, n1, n2, u2)
		if exact < 0.1 && math.Abs(exact-normal) > 0.001 {
			t.Errorf("U=%d: exact p %v, normal %v", u2/2, exact, normal)
		}
	}
	// With ties, at the limit itself.
	a, b := modSeq(30, 7, 31, 0), modSeq(30, 11, 29, 0)
	for shift := 0.0; shift <= 20; shift += 2.5 {
		u2, ties := doubledU(sorted(a), sorted(addEach(b, shift)))
		exact, normal := exactP(ties, 30, 30, u2), normalP(ties, 30, 30, u2)
		if exact < 0.1 && math.Abs(exact-normal) > 0.001 {
			t.Errorf("shift %v: exact p %v, normal %v", shift, exact, normal)
		}
	}
}

func sorted(s []float64) []float64 {
	out, err := sortedCopy(s)
	if err != nil {
		panic(err)
	}
	return out
}

// TestUntiedCountsMatchTiedRecurrence checks the Gaussian-binomial counts
// against the general recurrence with every tie group of size one, and that
// they add up to C(n1+n2, n1) exactly for every pair of sizes within ExactLimit.
func TestUntiedCountsMatchTiedRecurrence(t *testing.T) {
	for n1 := 1; n1*n1 <= ExactLimit; n1++ {
		for n2 := n1; n1*n2 <= ExactLimit; n2++ {
			n := n1 + n2
			counts := untiedUCounts(n1, n2)
			sum := new(big.Int)
			for _, c := range counts {
				if c < 0 {
					t.Fatalf("%d vs %d: negative count", n1, n2)
				}
				sum.Add(sum, big.NewInt(c))
			}
			if want := new(big.Int).Binomial(int64(n), int64(n1)); sum.Cmp(want) != 0 {
				t.Fatalf("%d vs %d: counts sum to %v, want C(%d,%d) = %v", n1, n2, sum, n, n1, want)
			}
			if n > 24 {
				continue // the recurrence is slow; small sizes make the point
			}
			ones := make([]int, n)
			for i := range ones {
				ones[i] = 1
			}
			tied := tiedUDistribution(ones, n1, n2)
			for u2, c := range tied {
				want := 0.0 // odd 2·U (a half U) needs a tie
				if u2%2 == 0 {
					want = float64(counts[u2/2])
				}
				if c != want {
					t.Fatalf("%d vs %d: 2U=%d recurrence %v, Gaussian binomial %v", n1, n2, u2, c, want)
				}
			}
		}
	}
}

func TestMinP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{
		{1, 1, 1}, {2, 2, 1.0 / 3}, {3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252},
		{3, 4, 2.0 / 35}, {2, 5, 2.0 / 21}, {1, 39, 0.05}, {0, 3, 1},
	}
	for _, tt := range tests {
		if got := MinP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("MinP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
		if tt.n1 > 0 && tt.n1+tt.n2 <= 12 {
			// Complete separation reaches it, by enumeration.
			if p := bruteP(seq(1, float64(tt.n1)), seq(100, float64(99+tt.n2))); math.Abs(p-tt.want) > 1e-12 {
				t.Errorf("separated %d vs %d: enumeration p %v, MinP %v", tt.n1, tt.n2, p, tt.want)
			}
		}
	}
	for alpha, want := range map[float64]int{0.2: 3, 0.1: 4, 0.05: 4, 0.01: 5, 0.001: 7} {
		if got := RepeatsNeeded(alpha); got != want {
			t.Errorf("RepeatsNeeded(%v) = %d, want %d", alpha, got, want)
		}
	}
}

func TestMannWhitneyRejects(t *testing.T) {
	if _, err := MannWhitney(nil, []float64{1}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty A: %v", err)
	}
	if _, err := MannWhitney([]float64{1}, []float64{math.NaN()}); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN in B: %v", err)
	}
}

func BenchmarkMannWhitney30(b *testing.B) {
	for _, tc := range []struct {
		name string
		x, y []float64
	}{
		{"distinct", modSeq(30, 7, 31, 0), modSeq(30, 11, 31, 0.5)},
		{"ties", modSeq(30, 7, 10, 0), modSeq(30, 11, 9, 1)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := MannWhitney(tc.x, tc.y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
