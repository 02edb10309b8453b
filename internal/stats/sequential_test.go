package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Over many simulated studies in which A and B do not differ, each looking
// after every pair of runs up to its maximum, the sequential design calls a
// difference at most about alpha of the time, whatever the figure's
// distribution; the fixed-size U test checked at every look calls one far
// more often. The studies are drawn from a seed other than the design's.
func TestSequentialFalseDifferenceRate(t *testing.T) {
	const studies = 4000
	for _, tc := range []struct {
		name string
		max  int
		draw func(r *rand.Rand) float64
	}{
		{"normal throughput, 10 a side", 10, func(r *rand.Rand) float64 { return 1000 + 50*r.NormFloat64() }},
		{"skewed latency, 20 a side", 20, func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }},
		{"bimodal, 15 a side", 15, func(r *rand.Rand) float64 {
			if r.IntN(3) == 0 {
				return 500 + r.Float64()
			}
			return 1000 + r.Float64()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewSequential(0.05, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(77, uint64(tc.max)))
			sequential, naive := 0, 0
			for range studies {
				var a, b []float64
				naiveCalled := false
				for n := 1; n <= tc.max; n++ {
					a, b = append(a, tc.draw(r)), append(b, tc.draw(r))
					if !naiveCalled && n >= RepeatsNeeded(0.05) {
						if u, err := MannWhitney(a, b); err == nil && u.P < 0.05 {
							naiveCalled = true
						}
					}
					l, err := d.Look(a, b, 0)
					if err != nil {
						t.Fatal(err)
					}
					if l.Decided {
						if l.Verdict == Different {
							sequential++
						}
						break
					}
				}
				if naiveCalled {
					naive++
				}
			}
			rate, naiveRate := float64(sequential)/studies, float64(naive)/studies
			t.Logf("%d looks: sequential %.4f, a 5 %% U test at every look %.4f; bounds %.2f", tc.max, rate, naiveRate, d.Bounds)
			// 4000 studies measure a rate of 0.05 within ±0.007 (two
			// standard errors); the design's own simulation adds ±0.003.
			if rate > 0.05+0.012 {
				t.Errorf("false-difference rate %.4f, want at most 0.05", rate)
			}
			if rate < 0.05-0.02 {
				t.Errorf("false-difference rate %.4f: the design spends far less than its alpha, wasting power", rate)
			}
			if naiveRate < 0.08 {
				t.Errorf("the naive rate %.4f does not show the problem the design solves", naiveRate)
			}
		})
	}
}

// A large difference stops a study at its first looks; identical sides stop
// with no difference once the ratio's interval is within the margin; sides
// that differ by less than the noise run to the maximum undecided.
func TestSequentialLooks(t *testing.T) {
	d, err := NewSequential(0.05, 10)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	run := func(a, b func() float64, margin float64) SequentialLook {
		var xa, xb []float64
		for {
			xa, xb = append(xa, a()), append(xb, b())
			l, err := d.Look(xa, xb, margin)
			if err != nil {
				t.Fatal(err)
			}
			if l.Decided || l.N == d.MaxPerSide {
				return l
			}
		}
	}
	fast := run(func() float64 { return 100 + r.Float64() }, func() float64 { return 300 + r.Float64() }, 0.05)
	if !fast.Decided || fast.Verdict != Different || fast.N > 6 || fast.Z <= 0 {
		t.Errorf("B three times A: %+v, want different within 6 runs a side", fast)
	}
	same := run(func() float64 { return 100 }, func() float64 { return 100 }, 0.05)
	if !same.Decided || same.Verdict != NoDifference || same.N > 4 {
		t.Errorf("identical sides: %+v, want no difference within 4 runs a side", same)
	}
	noisy := run(func() float64 { return 100 * (1 + 0.2*r.NormFloat64()) }, func() float64 { return 101 * (1 + 0.2*r.NormFloat64()) }, 0.02)
	if noisy.Decided || noisy.N != 10 || noisy.Verdict != NoDifference {
		t.Errorf("1 %% apart in 20 %% noise: %+v, want the maximum reached undecided", noisy)
	}
	for _, bad := range []int{1, 101} {
		if _, err := NewSequential(0.05, bad); err == nil {
			t.Errorf("max %d: no error", bad)
		}
	}
	if _, err := d.Look(nil, []float64{1}, 0); err == nil {
		t.Error("no runs of A: no error")
	}
}
