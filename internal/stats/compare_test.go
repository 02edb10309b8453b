package stats

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestCompareVerdicts(t *testing.T) {
	tests := []struct {
		name        string
		a, b        []float64
		opt         Options
		verdict     Verdict
		withinNoise bool
		p           float64
		needPerSide int
		ratio       float64
		direction   Direction
	}{
		{name: "3 vs 3 can never reach 0.05", a: seq(1, 3), b: seq(100, 102),
			verdict: TooFewRepeats, p: 0.1, needPerSide: 4, ratio: 101.0 / 2, direction: Higher},
		{name: "4 vs 4 apart", a: []float64{100, 101, 102, 103}, b: []float64{200, 201, 202, 203},
			verdict: Different, p: 2.0 / 70, needPerSide: 4, ratio: 201.5 / 101.5, direction: Higher},
		{name: "5 vs 5 apart, B lower", a: []float64{1000, 1010, 1020, 1030, 1040}, b: []float64{500, 505, 510, 515, 520},
			verdict: Different, p: 2.0 / 252, needPerSide: 4, ratio: 0.5, direction: Lower},
		{name: "5 vs 5 interleaved", a: []float64{1, 3, 5, 7, 9}, b: []float64{2, 4, 6, 8, 10},
			verdict: NoDifference, p: bruteP([]float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}), needPerSide: 4, ratio: 6.0 / 5, direction: Higher},
		// Every B beats every A (p = 0.0079) but the medians differ by 7
		// while A's own repeats spread over 8: within the noise.
		{name: "apart but within A's spread", a: []float64{100, 102, 104, 106, 108}, b: []float64{109, 110, 111, 112, 113},
			verdict: NoDifference, withinNoise: true, p: 2.0 / 252, needPerSide: 4, ratio: 111.0 / 104, direction: Higher},
		// A throttled disk against tmpfs as measured: B's own repeats
		// wander 5x, but every B is over 60x every A.
		{name: "far apart, one side noisy", a: []float64{51.06, 47.12, 52.13, 49.31, 49.57}, b: []float64{5790.4, 3348.7, 16574.5, 9444.8, 5148.4},
			verdict: Different, p: 2.0 / 252, needPerSide: 4, ratio: 5790.4 / 49.57, direction: Higher},
		// With a value at or below zero the rule reads differences.
		{name: "around zero, apart but within B's range", a: []float64{-1, 0, 1, 2, 3}, b: []float64{4, 5, 6, 20, 30},
			verdict: NoDifference, withinNoise: true, p: 2.0 / 252, needPerSide: 4, ratio: 6, direction: Higher},
		{name: "the same without the noise rule", a: []float64{100, 102, 104, 106, 108}, b: []float64{109, 110, 111, 112, 113},
			opt: Options{Noise: TestOnly}, verdict: Different, p: 2.0 / 252, needPerSide: 4, ratio: 111.0 / 104, direction: Higher},
		{name: "interval rule needs 6 per side", a: []float64{100, 102, 104, 106, 108}, b: []float64{200, 201, 202, 203, 204},
			opt: Options{Noise: IntervalRule}, verdict: TooFewRepeats, p: 2.0 / 252, needPerSide: 6, ratio: 202.0 / 104, direction: Higher},
		// With 6 per side the 95 % intervals are the extremes, so apart means disjoint.
		{name: "interval rule, 6 vs 6 apart", a: seq(1, 6), b: seq(7, 12),
			opt: Options{Noise: IntervalRule}, verdict: Different, p: 2.0 / 924, needPerSide: 6, ratio: 9.5 / 3.5, direction: Higher},
		{name: "identical repeats", a: []float64{5, 5, 5, 5, 5}, b: []float64{5, 5, 5, 5, 5},
			verdict: NoDifference, p: 1, needPerSide: 4, ratio: 1, direction: Same},
		{name: "stricter alpha", a: []float64{100, 101, 102, 103}, b: []float64{200, 201, 202, 203},
			opt: Options{Alpha: 0.01}, verdict: TooFewRepeats, p: 2.0 / 70, needPerSide: 5, ratio: 201.5 / 101.5, direction: Higher},
		{name: "uneven sizes", a: []float64{10, 11, 12}, b: []float64{20, 21, 22, 23, 24, 25},
			verdict: Different, p: 2.0 / 84, needPerSide: 4, ratio: 22.5 / 11, direction: Higher},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := slices.Clone(tt.a), slices.Clone(tt.b)
			c, err := Compare(a, b, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a, tt.a) || !slices.Equal(b, tt.b) {
				t.Error("Compare modified its input")
			}
			if c.Verdict != tt.verdict || c.WithinNoise != tt.withinNoise {
				t.Errorf("verdict %v (within noise %v), want %v (%v)", c.Verdict, c.WithinNoise, tt.verdict, tt.withinNoise)
			}
			if math.Abs(c.Test.P-tt.p) > 1e-12 {
				t.Errorf("p = %v, want %v", c.Test.P, tt.p)
			}
			if c.NeedPerSide != tt.needPerSide {
				t.Errorf("NeedPerSide = %d, want %d", c.NeedPerSide, tt.needPerSide)
			}
			if math.Abs(c.Ratio-tt.ratio) > 1e-12 || c.Direction != tt.direction {
				t.Errorf("ratio %v %v, want %v %v", c.Ratio, c.Direction, tt.ratio, tt.direction)
			}
			if want := MinP(len(tt.a), len(tt.b)); c.MinP != want {
				t.Errorf("MinP = %v, want %v", c.MinP, want)
			}
		})
	}
}

func TestComparePairIsAlwaysTooFew(t *testing.T) {
	// The "2.9x" of two single runs an hour apart.
	for _, pair := range [][2]float64{{31627, 103569}, {100, 100}, {5, 1}} {
		c, err := ComparePair(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if c.Verdict != TooFewRepeats || c.NeedPerSide != 4 || c.MinP != 1 {
			t.Errorf("%v: verdict %v need %d minP %v, want too few, 4 per side", pair, c.Verdict, c.NeedPerSide, c.MinP)
		}
		if c.Ratio != pair[1]/pair[0] {
			t.Errorf("%v: ratio %v", pair, c.Ratio)
		}
	}
}

// bruteShiftOrder finds the Hodges-Lehmann order k by enumerating the U
// distribution of n1 against n2 distinct values.
func bruteShiftOrder(n1, n2 int, confidence float64) (int, float64) {
	a, b := seq(1, float64(n1)), seq(float64(n1+1), float64(n1+n2))
	pooled := append(a, b...)
	counts := make([]int, n1*n2+1)
	total := 0
	for mask := 0; mask < 1<<(n1+n2); mask++ {
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
		counts[bruteDoubledU(x, y)/2]++
		total++
	}
	k, coverage, below := 0, 0.0, 0
	for cand := 1; 2*cand <= n1*n2+1; cand++ {
		below += counts[cand-1]
		if float64(below)/float64(total) > (1-confidence)/2+1e-12 { // a coverage of exactly the level counts
			break
		}
		k, coverage = cand, 1-2*float64(below)/float64(total)
	}
	return k, coverage
}

func TestRatioInterval(t *testing.T) {
	tests := []struct {
		name      string
		a, b      []float64
		available bool
		lo, hi    float64
		coverage  float64
	}{
		{name: "3 vs 3 too few", a: seq(1, 3), b: seq(4, 6)},
		// k = 1: the smallest and largest of the 16 ratios, 10/4 and 40/1.
		{name: "4 vs 4", a: seq(1, 4), b: []float64{10, 20, 30, 40}, available: true, lo: 2.5, hi: 40, coverage: 1 - 2.0/70},
		// k = 3 (R: qwilcox(0.025, 5, 5) = 3): ratios sorted 6/5, 7/5, 6/4, ...
		// and ..., 8/1, 9/1, 10/1.
		{name: "5 vs 5", a: seq(1, 5), b: seq(6, 10), available: true, lo: 1.5, hi: 8, coverage: 1 - 2*4.0/252},
		{name: "all ratios equal", a: []float64{100, 100, 100, 100}, b: []float64{150, 150, 150, 150}, available: true, lo: 1.5, hi: 1.5, coverage: 1 - 2.0/70},
		{name: "non-positive A", a: []float64{0, 1, 2, 3}, b: seq(4, 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compare(tt.a, tt.b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ri := c.RatioInterval
			if ri.Available != tt.available {
				t.Fatalf("available %v, want %v", ri.Available, tt.available)
			}
			if ri.Lo != tt.lo || ri.Hi != tt.hi || math.Abs(ri.Confidence-tt.coverage) > 1e-12 {
				t.Errorf("got [%v, %v] at %v, want [%v, %v] at %v", ri.Lo, ri.Hi, ri.Confidence, tt.lo, tt.hi, tt.coverage)
			}
		})
	}
}

func TestShiftOrderAgainstEnumeration(t *testing.T) {
	for n1 := 1; n1 <= 8; n1++ {
		for n2 := 1; n2 <= 8; n2++ {
			for _, conf := range []float64{0.9, 0.95} {
				k, cov := shiftOrder(n1, n2, conf)
				wk, wcov := bruteShiftOrder(n1, n2, conf)
				if k != wk || math.Abs(cov-wcov) > 1e-12 {
					t.Errorf("%d vs %d at %v: k=%d (%v), enumeration k=%d (%v)", n1, n2, conf, k, cov, wk, wcov)
				}
			}
		}
	}
	// Beyond ExactLimit the normal order is within one of the exact order
	// (checked here at sizes where both can be computed).
	for _, n := range []int{20, 25, 30} {
		exact, _ := shiftOrder(n, n, 0.95)
		approx, _ := shiftOrderNormal(n, n, 0.95)
		if d := exact - approx; d < -1 || d > 1 {
			t.Errorf("%d vs %d: exact order %d, normal %d", n, n, exact, approx)
		}
	}
}

func TestCompareRejects(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		opt  Options
		want error
	}{
		{"empty A", nil, []float64{1}, Options{}, ErrEmpty},
		{"NaN in B", []float64{1}, []float64{math.NaN()}, Options{}, ErrNotFinite},
		{"alpha above 1", []float64{1}, []float64{2}, Options{Alpha: 5}, ErrConfidence},
		{"negative alpha", []float64{1}, []float64{2}, Options{Alpha: -0.05}, ErrConfidence},
	}
	for _, tt := range tests {
		if _, err := Compare(tt.a, tt.b, tt.opt); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := Compare([]float64{1}, []float64{2}, Options{Noise: NoiseRule(9)}); err == nil {
		t.Error("an unknown noise rule was accepted")
	}
}

func BenchmarkCompare30(b *testing.B) {
	x, y := modSeq(30, 7, 31, 1000), modSeq(30, 11, 31, 1010.5)
	for b.Loop() {
		if _, err := Compare(x, y, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
