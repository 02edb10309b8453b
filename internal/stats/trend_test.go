package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SeriesDrift calls a trend significant about as often as its confidence
// allows on series without one, memory or not, and nearly always on
// series with one: a line that climbs, a level that steps up halfway.
func TestSeriesDriftRates(t *testing.T) {
	const reps = 2000
	const mu, sigma = 1000, 50
	shift := func(s []float64, by float64) []float64 {
		for i := len(s) / 2; i < len(s); i++ {
			s[i] += by
		}
		return s
	}
	climb := func(s []float64, by float64) []float64 {
		for i := range s {
			s[i] += by * float64(i) / float64(len(s)-1)
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		series func(r *rand.Rand) []float64
		// the share of series called significant must lie in [lo, hi], and
		// at least availableAtLeast of them must have a verdict (a few
		// independent ones lack one: their residuals look correlated by
		// chance at every batch size that leaves ten batches).
		lo, hi, availableAtLeast float64
	}{
		{"independent seconds, no trend", func(r *rand.Rand) []float64 { return ar1(r, 300, mu, 0, sigma) }, 0.03, 0.08, 1},
		{"independent seconds, ten of them", func(r *rand.Rand) []float64 { return ar1(r, 10, mu, 0, sigma) }, 0.02, 0.09, 0.98},
		{"short memory, no trend", func(r *rand.Rand) []float64 { return ar1(r, 300, mu, 0.5, sigma) }, 0.02, 0.10, 0.95},
		{"ten-second memory, no trend", func(r *rand.Rand) []float64 { return ar1(r, 600, mu, 0.9, sigma) }, 0.02, 0.12, 0.9},
		// The line climbs by 10 % of the mean across 60 noisy seconds
		// (±5 % each): about six standard errors of the drift.
		{"linear drift", func(r *rand.Rand) []float64 { return climb(ar1(r, 60, mu, 0, sigma), 0.1*mu) }, 0.97, 1, 0.98},
		{"linear drift under memory", func(r *rand.Rand) []float64 { return climb(ar1(r, 300, mu, 0.5, sigma), 0.1*mu) }, 0.95, 1, 0.95},
		// The level steps up by 10 % halfway: no line fits it, but the one
		// that fits best climbs.
		{"step change", func(r *rand.Rand) []float64 { return shift(ar1(r, 60, mu, 0, sigma), 0.1*mu) }, 0.95, 1, 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(tc.name))))
			var significant, available int
			for range reps {
				tr, err := SeriesDrift(tc.series(r), 0.95)
				if err != nil {
					t.Fatal(err)
				}
				if !tr.Available {
					continue
				}
				available++
				if tr.Significant() {
					significant++
				}
			}
			rate := float64(significant) / float64(available)
			t.Logf("significant %.3f of %d series with a verdict (of %d)", rate, available, reps)
			if float64(available) < tc.availableAtLeast*reps {
				t.Errorf("only %d of %d series had a verdict", available, reps)
			}
			if rate < tc.lo || rate > tc.hi {
				t.Errorf("called significant %.3f of the time, want within [%.2f, %.2f]", rate, tc.lo, tc.hi)
			}
		})
	}
}

func TestSeriesDriftCases(t *testing.T) {
	line := make([]float64, 20)
	for i := range line {
		line[i] = 100 + float64(i)
	}
	constant := make([]float64, 20)
	for i := range constant {
		constant[i] = 7
	}
	for _, tc := range []struct {
		name        string
		series      []float64
		available   bool
		drift, half float64
		significant bool
	}{
		// A line without an interval: drift 9 across nine values.
		{"too short for ten batches", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, false, 9, 0, false},
		{"constant: no drift, no width", constant, true, 0, 0, false},
		// A perfect line: one a second for 20 seconds, drift 20 (from the
		// first second's start to the last one's end), no noise about it.
		{"exact line", line, true, 20, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := SeriesDrift(tc.series, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Available != tc.available || math.Abs(tr.Drift-tc.drift) > 1e-9 || math.Abs(tr.HalfWidth-tc.half) > 1e-9 || tr.Significant() != tc.significant {
				t.Errorf("got available %v drift %v half %v significant %v, want %v %v %v %v", tr.Available, tr.Drift, tr.HalfWidth, tr.Significant(), tc.available, tc.drift, tc.half, tc.significant)
			}
		})
	}
	// A level that steps halfway leaves residuals about any line that
	// are alike from one value to the next: no interval, but the line's
	// drift, 1.5 times the step, is still said.
	step := make([]float64, 40)
	for i := 20; i < 40; i++ {
		step[i] = 10
	}
	if tr, _ := SeriesDrift(step, 0.95); tr.Available || math.Abs(tr.Drift-15) > 0.1 {
		t.Errorf("step: available %v, drift %v, want none and about 15", tr.Available, tr.Drift)
	}
	if tr, _ := SeriesDrift(line, 0.95); math.Abs(tr.RelDrift()-20/109.5) > 1e-9 {
		t.Errorf("relative drift %v, want 20/109.5", tr.RelDrift())
	}
	for _, bad := range [][]float64{nil, {1, math.NaN()}, {math.Inf(1)}} {
		if _, err := SeriesDrift(bad, 0.95); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := SeriesDrift(constant, 0); err == nil {
		t.Error("confidence 0: no error")
	}
}
