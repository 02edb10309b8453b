package steady

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"dbio/internal/stats"
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

// ar1 is n seconds around level whose deviations remember phi of the
// second before, each second's fresh noise sd·level.
func ar1(r *rand.Rand, n int, level, phi, sd float64) []float64 {
	out := make([]float64, n)
	x := r.NormFloat64() * sd / math.Sqrt(1-phi*phi)
	for i := range out {
		x = phi*x + r.NormFloat64()*sd
		out[i] = level * (1 + x)
	}
	return out
}

// The tracker ends a measurement that is precise and steady, judging
// steadiness by the drift across the whole measurement: synthetic series
// that are steady (noisy, with memory or without) end soon after the
// minimum; one that steps down or climbs in the middle does not, unless its
// drift is within the precision asked.
func TestPrecisionTracker(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	flat := noisy(r, 300, 1000, 0.05)
	// A throttle that halves the rate for 15 seconds in every 30.
	throttled := noisy(r, 300, 1000, 0.05)
	for i := range throttled {
		if (i/15)%2 == 1 {
			throttled[i] /= 2
		}
	}
	// Halved after 30 seconds of 60.
	stepDown := noisy(r, 60, 1000, 0.05)
	for i := 30; i < len(stepDown); i++ {
		stepDown[i] /= 2
	}
	// Climbing by 50 % of the start, and by 5 %, across the series.
	climb := func(s []float64, by float64) []float64 {
		for i := range s {
			s[i] *= 1 + by*float64(i)/float64(len(s)-1)
		}
		return s
	}
	climbing, creeping := climb(noisy(r, 60, 1000, 0.05), 0.5), climb(noisy(r, 120, 1000, 0.05), 0.05)
	// Cut to a quarter after 30 seconds of 90, each second ±60 % as on a
	// machine whose other programs take the CPUs by turns: the drift's
	// interval is too wide to call the drift significant, which must keep
	// the step running rather than end it.
	loadedCut := noisy(r, 90, 1000, 0.6)
	for i := 30; i < len(loadedCut); i++ {
		loadedCut[i] /= 4
	}
	for _, tc := range []struct {
		name    string
		series  []float64
		percent float64
		// from is the first second judged (the measurement's minimum).
		from int
		// preciseBy is the second it must be precise and steady by; 0:
		// never within the series.
		preciseBy int
		// steady is the steadiness verdict after the whole series.
		steady bool
	}{
		// ±5 % seconds: the interval of the mean shrinks as 10/sqrt(n) %,
		// within ±2 % after some 30 seconds.
		{"steady noisy", flat, 2, 10, 60, true},
		// The mean is within ±20 % at once, the drift within ±10 % only
		// once its interval has narrowed.
		{"steady noisy, a loose bound", flat, 20, 10, 40, true},
		{"steady noisy, too fine a bound", flat, 0.1, 10, 0, true},
		// ±10 % a second with a memory of about five seconds: the mean
		// varies as if each second were ±50 %, within ±10 % after some
		// 100 seconds.
		{"AR(1) noisy", ar1(r, 300, 1000, 0.8, 0.1), 10, 10, 200, true},
		{"AR(1) noisy, a loose bound", ar1(r, 300, 1000, 0.8, 0.1), 20, 10, 60, true},
		// Its line's interval (±33 % at the end) is too wide for the
		// ±10 % a 2 % bound allows: not steady.
		{"throttled again and again", throttled, 2, 10, 0, false},
		// Judged only at the end, so that the first half cannot end it.
		{"step change", stepDown, 20, 60, 0, false},
		{"linear drift", climbing, 20, 60, 0, false},
		// Judged from the first second after the cut.
		{"step change on a loaded machine", loadedCut, 20, 31, 0, false},
		// A drift of 5 %, significant over 120 seconds of ±5 % noise, is
		// within the 10 % allowed: steady.
		{"linear drift within the bound", creeping, 20, 120, 120, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := NewPrecisionTracker(PrecisionConfig{Precision: Precision{Targets: []PrecisionTarget{{Series: "tps", Percent: tc.percent}}}, Confidence: 0.95})
			if err != nil {
				t.Fatal(err)
			}
			at := 0
			for _, v := range tc.series {
				st := tr.Add([]float64{v}, v)
				if at == 0 && st.Second >= tc.from && st.Precise && st.Steady.Steady {
					at = st.Second
				}
			}
			last := tr.Last()
			tn := last.Steady.Trend
			t.Logf("ended at second %d; at the end %+v, drift %.1f %% ± %.1f %% (significant %v), steady %v", at, last.Intervals[0],
				100*tn.RelDrift(), 100*tn.RelHalfWidth(), tn.Significant(), last.Steady.Steady)
			switch {
			case tc.preciseBy == 0 && at != 0:
				t.Errorf("precise and steady at second %d, want never", at)
			case tc.preciseBy != 0 && (at == 0 || at > tc.preciseBy):
				t.Errorf("precise and steady at second %d, want by %d", at, tc.preciseBy)
			}
			if last.Steady.Steady != tc.steady {
				t.Errorf("steady %v after the series, want %v", last.Steady.Steady, tc.steady)
			}
			if want := max(DriftLimitPct, 2*tc.percent); last.Steady.LimitPct != want {
				t.Errorf("drift allowed %v %%, want %v %%", last.Steady.LimitPct, want)
			}
		})
	}
}

func TestPrecisionTrackerSkipsSecondsWithoutValue(t *testing.T) {
	tr, err := NewPrecisionTracker(PrecisionConfig{Precision: Precision{Targets: []PrecisionTarget{{TxType: "delivery", Quantile: 99, Percent: 50}}}, Confidence: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	var st PrecisionStatus
	for i := range 30 {
		v := math.NaN()
		if i%2 == 0 {
			v = 10
		}
		tps := 100.0
		if i%3 == 0 {
			tps = math.NaN()
		}
		st = tr.Add([]float64{v}, tps)
	}
	if iv, tn := st.Intervals[0], st.Steady.Trend; iv.N != 15 || tn.N != 20 || !st.Precise || !st.Steady.Steady || st.Second != 30 {
		t.Errorf("after 30 seconds, 15 with a value and 20 with throughput: %+v, %+v, precise %v, steady %v", iv, tn, st.Precise, st.Steady.Steady)
	}
}

func TestSteadyText(t *testing.T) {
	for _, tc := range []struct{ bound, want string }{
		{"nopm:20%,new_order:p99:10%", "nopm's drift across the measurement known within ±20 % at 95 % confidence, and not significant or within it"},
		{"2%", "nopm's drift across the measurement known within ±10 % at 95 % confidence, and not significant or within it"},
	} {
		p, err := ParsePrecision(tc.bound)
		if err != nil {
			t.Fatal(err)
		}
		if got := SteadyText("nopm", p, 0.95); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.bound, got, tc.want)
		}
	}
}

// Over many simulated measurements with a ±20 % bound (a drift of 40 %
// allowed): a throughput cut to a quarter after 30 seconds, each second
// ±60 % as on a machine whose other programs take the CPUs by turns, never
// counts as steady in the 60 seconds after the cut, though at some second
// of it the drift of many is not significant; steady throughputs of ±25 %
// seconds still end, on average within about twice the ten seconds'
// minimum.
func TestPrecisionTrackerUnderLoad(t *testing.T) {
	const n = 2000
	bound := Precision{Targets: []PrecisionTarget{{Series: "tps", Percent: 20}}}
	// ended is the second at which the series first counts as precise
	// and steady from second from on, 0 for never.
	ended := func(series []float64, from int) int {
		tr, err := NewPrecisionTracker(PrecisionConfig{Precision: bound, Confidence: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range series {
			if st := tr.Add([]float64{v}, v); i+1 >= from && st.Precise && st.Steady.Steady {
				return i + 1
			}
		}
		return 0
	}
	cutEnded, notSignificant, flatEnded, flatSeconds := 0, 0, 0, 0
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 9))
		cut := noisy(r, 90, 1000, 0.6)
		for i := 30; i < len(cut); i++ {
			cut[i] /= 4
		}
		if ended(cut, 31) != 0 {
			cutEnded++
		}
		// How often "no significant drift" alone would have passed it at
		// some second after the cut.
		for i := 31; i <= len(cut); i++ {
			if tn, err := stats.SeriesDrift(cut[:i], 0.95); err == nil && tn.Available && !tn.Significant() {
				notSignificant++
				break
			}
		}
		if at := ended(noisy(r, 60, 1000, 0.25), 10); at != 0 {
			flatEnded++
			flatSeconds += at
		}
	}
	mean := float64(flatSeconds) / float64(max(flatEnded, 1))
	t.Logf("cut: %d of %d counted steady (%d with no significant drift at some second after the cut); steady: %d ended, after %.1f s on average", cutEnded, n, notSignificant, flatEnded, mean)
	if cutEnded != 0 {
		t.Errorf("a throughput cut to a quarter counted as steady in %d of %d measurements", cutEnded, n)
	}
	if flatEnded < n*99/100 || mean > 25 {
		t.Errorf("steady throughputs: %d of %d ended, after %.1f s on average; want nearly all, within 25 s", flatEnded, n, mean)
	}
}
