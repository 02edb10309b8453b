package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ar1 is a series of n values x[t] = mu + phi·(x[t-1] - mu) + e[t], e
// normal with standard deviation sigma, started from its stationary
// distribution so that no warm-up biases the mean: a per-second throughput
// with a memory whose length phi sets (phi 0.9: about ten seconds).
func ar1(r *rand.Rand, n int, mu, phi, sigma float64) []float64 {
	out := make([]float64, n)
	x := r.NormFloat64() * sigma / math.Sqrt(1-phi*phi)
	for i := range out {
		x = phi*x + r.NormFloat64()*sigma
		out[i] = mu + x
	}
	return out
}

// naiveHalfWidth is the interval treating every value as independent: the
// t interval of the mean, the error batch means exist to avoid.
func naiveHalfWidth(series []float64, confidence float64) float64 {
	n := len(series)
	m := mean(series)
	var ss float64
	for _, v := range series {
		ss += (v - m) * (v - m)
	}
	return studentT(1-(1-confidence)/2, n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
}

func TestSeriesMeanIntervalCoverage(t *testing.T) {
	const reps = 2000
	for _, tc := range []struct {
		name string
		n    int
		phi  float64
		// the batch-means interval's coverage must lie in [lo, hi]; the naive
		// interval's must stay below naiveBelow (it is honest only at phi 0).
		lo, hi, naiveBelow float64
	}{
		{"independent seconds", 300, 0, 0.935, 0.975, 1},
		{"short memory", 300, 0.5, 0.92, 0.97, 0.80},
		{"ten-second memory", 600, 0.9, 0.91, 0.97, 0.40},
		{"ten-second memory, short step", 300, 0.9, 0.90, 0.97, 0.40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.phi*1000)+uint64(tc.n)))
			const mu = 1000
			var covered, naiveCovered, available int
			for range reps {
				s := ar1(r, tc.n, mu, tc.phi, 50)
				iv, err := SeriesMeanInterval(s, 0.95)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(mean(s)-mu) <= naiveHalfWidth(s, 0.95) {
					naiveCovered++
				}
				if !iv.Available {
					continue
				}
				available++
				if iv.Lo <= mu && mu <= iv.Hi {
					covered++
				}
			}
			cov, naive := float64(covered)/float64(available), float64(naiveCovered)/reps
			t.Logf("phi %.1f n %d: batch means cover %.3f (%d of %d with an interval), naive %.3f", tc.phi, tc.n, cov, available, reps, naive)
			if available < reps*9/10 {
				t.Errorf("only %d of %d series had an interval", available, reps)
			}
			if cov < tc.lo || cov > tc.hi {
				t.Errorf("batch-means coverage %.3f, want within [%.2f, %.2f]", cov, tc.lo, tc.hi)
			}
			if tc.phi > 0 && naive >= tc.naiveBelow {
				t.Errorf("naive coverage %.3f, want below %.2f: the test's series have too little memory to show the difference", naive, tc.naiveBelow)
			}
		})
	}
}

func TestSeriesMeanIntervalCases(t *testing.T) {
	constant := make([]float64, 40)
	for i := range constant {
		constant[i] = 7
	}
	alternating := make([]float64, 40)
	for i := range alternating {
		alternating[i] = float64(10 + 2*(i%2))
	}
	for _, tc := range []struct {
		name      string
		series    []float64
		available bool
		mean      float64
		half      float64
		batch     int
	}{
		{"too short for ten batches", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, false, 5, 0, 0},
		{"constant: no width", constant, true, 7, 0, 1},
		// Negatively correlated seconds are batches of one; the interval is
		// the t interval of 40 values with standard deviation sqrt(40/39).
		{"alternating", alternating, true, 11, 2.0244 * math.Sqrt(40.0/39/40), 1},
		// A level shift halfway is memory no batch size can hide while ten
		// batches remain: 20 values of 0, then 20 of 7.
		{"level shift", append(make([]float64, 20), constant[:20:20]...), false, 3.5, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv, err := SeriesMeanInterval(tc.series, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if iv.Available != tc.available || math.Abs(iv.Mean-tc.mean) > 1e-9 || math.Abs(iv.HalfWidth-tc.half) > 1e-3 || iv.BatchSize != tc.batch {
				t.Errorf("got available %v mean %v half %v batch %d, want %v %v %v %d", iv.Available, iv.Mean, iv.HalfWidth, iv.BatchSize, tc.available, tc.mean, tc.half, tc.batch)
			}
		})
	}
	for _, bad := range [][]float64{nil, {1, math.NaN()}, {math.Inf(1)}} {
		if _, err := SeriesMeanInterval(bad, 0.95); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := SeriesMeanInterval(constant, 1); err == nil {
		t.Error("confidence 1: no error")
	}
}

func TestStudentT(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 12.7062}, {0.975, 4, 2.7764}, {0.975, 5, 2.5706}, {0.975, 9, 2.2622},
		{0.975, 30, 2.0423}, {0.95, 9, 1.8331}, {0.995, 10, 3.1693}, {0.975, 1000, 1.9623},
	} {
		if got := studentT(tc.p, tc.df); math.Abs(got-tc.want) > 2e-3 {
			t.Errorf("t(%v, %d) = %.4f, want %.4f", tc.p, tc.df, got, tc.want)
		}
	}
}
