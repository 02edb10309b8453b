package stats

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"
)

// exactMedianCoverage is 1 - 2·P(B ≤ k-1), B ~ Binomial(n, 1/2), in exact
// rational arithmetic: an independent check of the log-gamma sums.
func exactMedianCoverage(n, k int) float64 {
	tail := new(big.Int)
	for i := 0; i < k; i++ {
		tail.Add(tail, new(big.Int).Binomial(int64(n), int64(i)))
	}
	r := new(big.Rat).SetFrac(new(big.Int).Mul(tail, big.NewInt(2)), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	f, _ := new(big.Rat).Sub(big.NewRat(1, 1), r).Float64()
	return f
}

func seq(from, to float64) []float64 {
	var s []float64
	for v := from; v <= to; v++ {
		s = append(s, v)
	}
	return s
}

// reversed returns s backwards, so that the code under test has to sort.
func reversed(s []float64) []float64 {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

func TestSummarizeKnownAnswers(t *testing.T) {
	// The orders are those of the published tables of distribution-free
	// median intervals at 95 % (e.g. Conover, Practical Nonparametric
	// Statistics): n=6 (1,6), n=10 (2,9), n=20 (6,15), n=30 (10,21).
	tests := []struct {
		name                 string
		values               []float64
		median, min, max     float64
		relSpread            float64
		available            bool
		loOrder, hiOrder     int
		lo, hi, wantCoverage float64
	}{
		{name: "one run", values: []float64{42}, median: 42, min: 42, max: 42},
		{name: "five runs are too few at 95%", values: []float64{5, 3, 1, 4, 2}, median: 3, min: 1, max: 5, relSpread: 4.0 / 3},
		{name: "even count averages the middle pair", values: []float64{40, 10, 30, 20}, median: 25, min: 10, max: 40, relSpread: 30.0 / 25},
		{name: "six runs: the extremes", values: reversed(seq(1, 6)), median: 3.5, min: 1, max: 6, relSpread: 5 / 3.5,
			available: true, loOrder: 1, hiOrder: 6, lo: 1, hi: 6, wantCoverage: 62.0 / 64},
		{name: "ten runs", values: reversed(seq(101, 110)), median: 105.5, min: 101, max: 110, relSpread: 9 / 105.5,
			available: true, loOrder: 2, hiOrder: 9, lo: 102, hi: 109, wantCoverage: 1002.0 / 1024},
		{name: "twenty runs", values: reversed(seq(1, 20)), median: 10.5, min: 1, max: 20, relSpread: 19 / 10.5,
			available: true, loOrder: 6, hiOrder: 15, lo: 6, hi: 15, wantCoverage: exactMedianCoverage(20, 6)},
		{name: "thirty runs", values: reversed(seq(1, 30)), median: 15.5, min: 1, max: 30, relSpread: 29 / 15.5,
			available: true, loOrder: 10, hiOrder: 21, lo: 10, hi: 21, wantCoverage: exactMedianCoverage(30, 10)},
		{name: "ties keep the order statistics", values: []float64{7, 7, 7, 7, 7, 7}, median: 7, min: 7, max: 7,
			available: true, loOrder: 1, hiOrder: 6, lo: 7, hi: 7, wantCoverage: 62.0 / 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.values)
			s, err := Summarize(tt.values)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(before, tt.values) {
				t.Errorf("Summarize reordered its input: %v", tt.values)
			}
			if s.N != len(tt.values) || s.Median != tt.median || s.Min != tt.min || s.Max != tt.max {
				t.Errorf("got n=%d median=%v min=%v max=%v, want %d %v %v %v", s.N, s.Median, s.Min, s.Max, len(tt.values), tt.median, tt.min, tt.max)
			}
			if math.Abs(s.RelSpread()-tt.relSpread) > 1e-12 {
				t.Errorf("RelSpread = %v, want %v", s.RelSpread(), tt.relSpread)
			}
			iv := s.Interval
			if iv.Available != tt.available || iv.NeedN != 6 || iv.Requested != 0.95 {
				t.Fatalf("interval %+v: want available=%v, NeedN 6", iv, tt.available)
			}
			if !tt.available {
				return
			}
			if iv.LoOrder != tt.loOrder || iv.HiOrder != tt.hiOrder || iv.Lo != tt.lo || iv.Hi != tt.hi {
				t.Errorf("interval x(%d)..x(%d) = [%v, %v], want x(%d)..x(%d) = [%v, %v]",
					iv.LoOrder, iv.HiOrder, iv.Lo, iv.Hi, tt.loOrder, tt.hiOrder, tt.lo, tt.hi)
			}
			if math.Abs(iv.Confidence-tt.wantCoverage) > 1e-9 {
				t.Errorf("coverage %v, want %v", iv.Confidence, tt.wantCoverage)
			}
		})
	}
}

// TestMedianOrderIsLargestThatCovers checks, for every n up to 200 and three
// levels, that the chosen order reaches the level in exact arithmetic and the
// next one inward does not.
func TestMedianOrderIsLargestThatCovers(t *testing.T) {
	for _, conf := range []float64{0.9, 0.95, 0.99} {
		for n := 1; n <= 200; n++ {
			k, coverage := medianOrder(n, conf)
			if k > 0 {
				if exact := exactMedianCoverage(n, k); exact < conf || math.Abs(exact-coverage) > 1e-9 {
					t.Fatalf("n=%d conf=%v: order %d covers %v (computed %v)", n, conf, k, exact, coverage)
				}
			}
			if next := k + 1; 2*next <= n+1 && exactMedianCoverage(n, next) >= conf {
				t.Fatalf("n=%d conf=%v: order %d chosen but %d also covers", n, conf, k, next)
			}
			if (k > 0) != (n >= MedianRepeatsNeeded(conf)) {
				t.Fatalf("n=%d conf=%v: order %d disagrees with MedianRepeatsNeeded=%d", n, conf, k, MedianRepeatsNeeded(conf))
			}
		}
	}
}

func TestMedianRepeatsNeeded(t *testing.T) {
	// 1 - 2^(1-n) ≥ level: 2/32 = 0.0625 ≤ 0.10, 2/64 ≤ 0.05, 2/256 ≤ 0.01.
	for level, want := range map[float64]int{0.90: 5, 0.95: 6, 0.99: 8} {
		if got := MedianRepeatsNeeded(level); got != want {
			t.Errorf("MedianRepeatsNeeded(%v) = %d, want %d", level, got, want)
		}
	}
}

func TestSummarizeRejects(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		conf   float64
		want   error
	}{
		{"no values", nil, 0.95, ErrEmpty},
		{"NaN", []float64{1, math.NaN()}, 0.95, ErrNotFinite},
		{"infinity", []float64{math.Inf(1)}, 0.95, ErrNotFinite},
		{"confidence 1", []float64{1}, 1, ErrConfidence},
		{"confidence 0", []float64{1}, 0, ErrConfidence},
		{"confidence as a percentage", []float64{1}, 95, ErrConfidence},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := SummarizeAt(tt.values, tt.conf); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRelSpreadAroundZero(t *testing.T) {
	s, err := Summarize([]float64{-1, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(s.RelSpread(), 1) {
		t.Errorf("RelSpread = %v, want +Inf for a spread around a zero median", s.RelSpread())
	}
}
