package steady

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParsePrecision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []PrecisionTarget
		back string
	}{
		{"2%", []PrecisionTarget{{Percent: 2}}, "2%"},
		{"NOPM:2%", []PrecisionTarget{{Series: "nopm", Percent: 2}}, "nopm:2%"},
		{"new_order:p99:10%", []PrecisionTarget{{TxType: "new_order", Quantile: 99, Percent: 10}}, "new_order:p99:10%"},
		{" nopm:2% , new_order:p99.9:10 % ", []PrecisionTarget{{Series: "nopm", Percent: 2}, {TxType: "new_order", Quantile: 99.9, Percent: 10}}, "nopm:2%,new_order:p99.9:10%"},
		{"0.5%,tps:1%", []PrecisionTarget{{Percent: 0.5}, {Series: "tps", Percent: 1}}, "0.5%,tps:1%"},
	} {
		p, err := ParsePrecision(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if len(p.Targets) != len(tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.in, p.Targets, tc.want)
			continue
		}
		for i := range tc.want {
			if p.Targets[i] != tc.want[i] {
				t.Errorf("%q: target %d %+v, want %+v", tc.in, i, p.Targets[i], tc.want[i])
			}
		}
		if p.String() != tc.back {
			t.Errorf("%q: written back as %q, want %q", tc.in, p.String(), tc.back)
		}
	}
	for _, tc := range []struct{ in, says string }{
		{"2", "not a percentage"},
		{"", "empty item"},
		{"nopm:2%,", "empty item"},
		{"0%", "outside"},
		{"100%", "outside"},
		{"-1%", "outside"},
		{"x%", "not a percentage"},
		{":2%", "name is empty"},
		{"new_order:99:10%", "not a percentile"},
		{"new_order:p100:10%", "not a percentile"},
		{"a:b:c:1%", "too many colons"},
		{"nopm:1%,nopm:2%", "given twice"},
		{"1%,2%", "the headline is given twice"},
	} {
		_, err := ParsePrecision(tc.in)
		if !errors.Is(err, ErrPrecision) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.says)
		}
	}
}

// noisy is n seconds around level with independent noise of sd·level.
func noisy(r *rand.Rand, n int, level, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + sd*r.NormFloat64())
	}
	return out
}

func TestPrecisionTracker(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	steadySlope := Config{Criterion: Criterion{Metric: "tps", Test: Slope, Limit: 0.5, Percent: true}, Window: 20}
	flat := noisy(r, 300, 1000, 0.05)
	// A throttle that halves the rate for 15 seconds in every 30.
	throttled := noisy(r, 300, 1000, 0.05)
	for i := range throttled {
		if (i/15)%2 == 1 {
			throttled[i] /= 2
		}
	}
	for _, tc := range []struct {
		name      string
		series    []float64
		percent   float64
		preciseBy int // the second it must be precise and steady by; 0: never
	}{
		// ±5 % seconds: the interval of the mean shrinks as 10/sqrt(n) %,
		// within ±2 % after some 30 seconds.
		{"flat", flat, 2, 60},
		{"flat, too fine a bound", flat, 0.1, 0},
		{"throttled", throttled, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := NewPrecisionTracker(PrecisionConfig{Precision: Precision{Targets: []PrecisionTarget{{Series: "tps", Percent: tc.percent}}},
				Steady: steadySlope, Confidence: 0.95})
			if err != nil {
				t.Fatal(err)
			}
			at := 0
			for _, v := range tc.series {
				st := tr.Add([]float64{v}, v)
				if st.Precise && st.Steady.Steady {
					at = st.Second
					break
				}
			}
			last := tr.Last()
			t.Logf("ended at second %d: %+v", at, last.Intervals[0])
			switch {
			case tc.preciseBy == 0 && at != 0:
				t.Errorf("precise and steady at second %d, want never", at)
			case tc.preciseBy != 0 && (at == 0 || at > tc.preciseBy):
				t.Errorf("precise and steady at second %d, want by %d", at, tc.preciseBy)
			}
			if at != 0 && math.Abs(last.Intervals[0].Mean-1000) > 1000*tc.percent/100*2 {
				t.Errorf("mean %v far from 1000", last.Intervals[0].Mean)
			}
		})
	}
}

func TestPrecisionTrackerSkipsSecondsWithoutValue(t *testing.T) {
	tr, err := NewPrecisionTracker(PrecisionConfig{Precision: Precision{Targets: []PrecisionTarget{{TxType: "delivery", Quantile: 99, Percent: 50}}},
		Steady: Config{Criterion: Criterion{Metric: "tps", Limit: 10, Percent: true}, Window: 3}, Confidence: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	var st PrecisionStatus
	for i := range 30 {
		v := math.NaN()
		if i%2 == 0 {
			v = 10
		}
		st = tr.Add([]float64{v}, 100)
	}
	if iv := st.Intervals[0]; iv.N != 15 || !st.Precise || !st.Steady.Steady {
		t.Errorf("after 30 seconds, 15 with a value: %+v, precise %v, steady %v", iv, st.Precise, st.Steady.Steady)
	}
}
