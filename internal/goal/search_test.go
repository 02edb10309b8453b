package goal

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

var p99at50 = Objective{Percentile: 99, Limit: 50 * time.Millisecond}

// capacity fakes a system whose p99 grows with the offered rate and crosses
// 50 ms at exactly limit tx/s; it achieves whatever is offered.
func capacity(limit float64) Probe {
	return func(rate float64) (Outcome, error) {
		return outcome(rate, time.Duration(float64(50*time.Millisecond)*rate/limit)), nil
	}
}

func outcome(achieved float64, p99 time.Duration) Outcome {
	return Outcome{Achieved: achieved, Latencies: Table{AllTypes: {Count: 1, Percentiles: map[float64]time.Duration{99: p99}}}}
}

func offered(steps []Step) []float64 {
	var r []float64
	for _, s := range steps {
		r = append(r, s.Offered)
	}
	return r
}

func TestSearchKnownAnswers(t *testing.T) {
	tests := []struct {
		name     string
		search   Search
		probe    Probe
		answer   Answer
		rate     float64
		failRate float64
		rates    []float64
		trunc    bool
	}{
		{
			// 50..400 pass, 800 fails; then 600 F, 500 F, 450 F, 425 P,
			// 437.5 F, 431.25 P: 6.25 apart, within 10 tx/s.
			name:   "bracket then bisect to 10 tx/s",
			search: Search{Objective: p99at50, Start: 50, Max: 10000, Resolution: Resolution{Abs: 10}},
			probe:  capacity(437), answer: Found, rate: 431.25, failRate: 437.5,
			rates: []float64{50, 100, 200, 400, 800, 600, 500, 450, 425, 437.5, 431.25},
		},
		{
			// After 425 P the gap of 25 is above 5 % of 425 (21.25); after 437.5 F it is 12.5.
			name:   "relative resolution",
			search: Search{Objective: p99at50, Start: 50, Max: 10000, Resolution: Resolution{Rel: 0.05}},
			probe:  capacity(437), answer: Found, rate: 425, failRate: 437.5,
			rates: []float64{50, 100, 200, 400, 800, 600, 500, 450, 425, 437.5},
		},
		{
			name:   "factor 3",
			search: Search{Objective: p99at50, Start: 10, Max: 1000, Factor: 3, Resolution: Resolution{Abs: 5}},
			// 10, 30, 90 pass, 270 fails; 180, 135, 112.5, 101.25 fail; 95.625
			// and 98.4375 pass, 2.8125 below 101.25.
			probe: capacity(100), answer: Found, rate: 98.4375, failRate: 101.25,
			rates: []float64{10, 30, 90, 270, 180, 135, 112.5, 101.25, 95.625, 98.4375},
		},
		{
			name:   "the first probe already fails",
			search: Search{Objective: p99at50, Start: 50, Max: 10000, Resolution: Resolution{Abs: 10}},
			probe:  capacity(30), answer: BelowStart, rate: 0, failRate: 50,
			rates: []float64{50},
		},
		{
			name:   "no failure up to the maximum",
			search: Search{Objective: p99at50, Start: 100, Max: 1000, Resolution: Resolution{Abs: 10}},
			probe:  capacity(1e9), answer: AtLeast, rate: 1000, failRate: 0,
			rates: []float64{100, 200, 400, 800, 1000},
		},
		{
			name:   "probe budget spent while bisecting",
			search: Search{Objective: p99at50, Start: 50, Max: 10000, Resolution: Resolution{Abs: 10}, MaxProbes: 6},
			probe:  capacity(437), answer: Found, rate: 400, failRate: 600, trunc: true,
			rates: []float64{50, 100, 200, 400, 800, 600},
		},
		{
			name:   "probe budget spent while bracketing",
			search: Search{Objective: p99at50, Start: 50, Max: 10000, Resolution: Resolution{Abs: 10}, MaxProbes: 3},
			probe:  capacity(437), answer: AtLeast, rate: 200, failRate: 0, trunc: true,
			rates: []float64{50, 100, 200},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.search.Run(tt.probe)
			if err != nil {
				t.Fatal(err)
			}
			if res.Answer != tt.answer || res.Rate != tt.rate || res.FailRate != tt.failRate || res.Truncated != tt.trunc {
				t.Errorf("got %v rate %v fail %v truncated %v, want %v %v %v %v",
					res.Answer, res.Rate, res.FailRate, res.Truncated, tt.answer, tt.rate, tt.failRate, tt.trunc)
			}
			if got := offered(res.Steps); !slices.Equal(got, tt.rates) {
				t.Errorf("probed %v, want %v", got, tt.rates)
			}
			if res.Inconsistent {
				t.Error("a monotone system was reported inconsistent")
			}
			for _, s := range res.Steps {
				wantPass := s.Offered == res.Rate || s.Offered < res.Rate
				if s.Pass != wantPass || !s.HasMeasured || (s.Reason == Met) != s.Pass {
					t.Errorf("step %+v: pass should be %v", s, wantPass)
				}
			}
		})
	}
}

func TestSearchRecordsTheCurve(t *testing.T) {
	res, err := Search{Objective: p99at50, Start: 100, Max: 400, Resolution: Resolution{Abs: 10}}.Run(capacity(250))
	if err != nil {
		t.Fatal(err)
	}
	// p99 = 50 ms · rate / 250: 20 ms at 100, 40 at 200, 80 at 400 (fail),
	// 60 at 300 (fail), 50 at 250 (at the limit meets it), then 275, 262.5
	// and 256.25 fail, 6.25 above 250.
	want := []struct {
		rate  float64
		p99   time.Duration
		phase Phase
	}{
		{100, 20 * time.Millisecond, Bracket}, {200, 40 * time.Millisecond, Bracket}, {400, 80 * time.Millisecond, Bracket},
		{300, 60 * time.Millisecond, Bisect}, {250, 50 * time.Millisecond, Bisect}, {275, 55 * time.Millisecond, Bisect},
		{262.5, 52500 * time.Microsecond, Bisect}, {256.25, 51250 * time.Microsecond, Bisect},
	}
	if len(res.Steps) != len(want) {
		t.Fatalf("steps %v, want %d", offered(res.Steps), len(want))
	}
	for i, w := range want {
		s := res.Steps[i]
		if s.Offered != w.rate || s.Measured != w.p99 || s.Phase != w.phase {
			t.Errorf("step %d: %v tx/s p99 %v (%v), want %v %v (%v)", i, s.Offered, s.Measured, s.Phase, w.rate, w.p99, w.phase)
		}
	}
	if res.Rate != 250 || res.FailRate != 256.25 {
		t.Errorf("answer %v..%v, want 250..256.25", res.Rate, res.FailRate)
	}
}

// TestRateNotAchievedFails fakes a system that saturates at 300 tx/s while
// its latency stays low (what a closed loop would show): the search must not
// call 400 tx/s a pass.
func TestRateNotAchievedFails(t *testing.T) {
	saturating := func(rate float64) (Outcome, error) {
		if rate >= 1000 { // so far out of reach that nothing completes
			return Outcome{Achieved: 0, Latencies: Table{}}, nil
		}
		return outcome(math.Min(rate, 300), 5*time.Millisecond), nil
	}
	res, err := Search{Objective: p99at50, Start: 100, Max: 2000, Factor: 4, Resolution: Resolution{Abs: 10}}.Run(saturating)
	if err != nil {
		t.Fatal(err)
	}
	// 100 P, 400 F (300 < 380), then 250 P, 325 F (300 < 308.75), 287.5 P,
	// 306.25 P (300 ≥ 290.94), 315.625 P (300 ≥ 299.84): 9.375 below 325.
	if want := []float64{100, 400, 250, 325, 287.5, 306.25, 315.625}; !slices.Equal(offered(res.Steps), want) {
		t.Fatalf("probed %v, want %v", offered(res.Steps), want)
	}
	if res.Answer != Found || res.Rate != 315.625 || res.FailRate != 325 {
		t.Errorf("answer %v %v..%v", res.Answer, res.Rate, res.FailRate)
	}
	for _, s := range res.Steps {
		if !s.Pass && s.Reason != RateNotAchieved {
			t.Errorf("%v tx/s failed for %v, want %v", s.Offered, s.Reason, RateNotAchieved)
		}
	}

	// Nothing completes at all: a fail with nothing measured, not an error.
	res, err = Search{Objective: p99at50, Start: 1000, Max: 2000, Resolution: Resolution{Abs: 10}}.Run(saturating)
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != BelowStart || len(res.Steps) != 1 || res.Steps[0].HasMeasured || res.Steps[0].Reason != RateNotAchieved {
		t.Errorf("got %+v", res)
	}
}

// noisy answers from a script: rate -> outcomes in call order, falling back
// to a capacity of 437 tx/s.
func noisy(script map[float64][]bool) Probe {
	calls := map[float64]int{}
	base := capacity(437)
	return func(rate float64) (Outcome, error) {
		if outs, ok := script[rate]; ok && calls[rate] < len(outs) {
			pass := outs[calls[rate]]
			calls[rate]++
			if pass {
				return outcome(rate, 10*time.Millisecond), nil
			}
			return outcome(rate, 90*time.Millisecond), nil
		}
		return base(rate)
	}
}

func TestNoisyOutcomes(t *testing.T) {
	base := Search{Objective: p99at50, Start: 50, Max: 10000, Resolution: Resolution{Abs: 10}}
	tests := []struct {
		name         string
		confirm      bool
		script       map[float64][]bool
		rate, fail   float64
		inconsistent bool
		last         []float64
	}{
		{
			// A spurious fail at 200 is trusted: the answer is the boundary the
			// probes agree on, below the true capacity, and nothing contradicts it.
			name: "a spurious fail lowers the answer", script: map[float64][]bool{200: {false}},
			rate: 193.75, fail: 200,
		},
		{
			// Confirmation repeats 193.75 (passes) and 200, which now passes: noise.
			name: "confirmation exposes the spurious fail", confirm: true, script: map[float64][]bool{200: {false}},
			rate: 193.75, fail: 200, inconsistent: true, last: []float64{193.75, 200},
		},
		{
			// A spurious pass at 437.5 lifts the answer to 443.75 (fail 450);
			// repeated, 443.75 fails.
			name: "confirmation exposes a spurious pass", confirm: true, script: map[float64][]bool{437.5: {true}, 443.75: {true, false}},
			rate: 443.75, fail: 450, inconsistent: true, last: []float64{443.75, 450},
		},
		{
			name: "confirmation of a steady boundary", confirm: true,
			rate: 431.25, fail: 437.5, last: []float64{431.25, 437.5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Confirm = tt.confirm
			res, err := s.Run(noisy(tt.script))
			if err != nil {
				t.Fatal(err)
			}
			if res.Answer != Found || res.Rate != tt.rate || res.FailRate != tt.fail || res.Inconsistent != tt.inconsistent {
				t.Errorf("got %v %v..%v inconsistent %v, want %v..%v %v (probed %v)",
					res.Answer, res.Rate, res.FailRate, res.Inconsistent, tt.rate, tt.fail, tt.inconsistent, offered(res.Steps))
			}
			if tt.last != nil {
				n := len(res.Steps)
				got := res.Steps[n-2:]
				if got[0].Offered != tt.last[0] || got[1].Offered != tt.last[1] || got[0].Phase != Confirm || got[1].Phase != Confirm {
					t.Errorf("last steps %+v, want confirmations of %v", got, tt.last)
				}
			}
		})
	}
}

func TestSearchProbeError(t *testing.T) {
	boom := errors.New("server went away")
	calls := 0
	probe := func(rate float64) (Outcome, error) {
		calls++
		if calls == 3 {
			return Outcome{}, boom
		}
		return capacity(437)(rate)
	}
	res, err := Search{Objective: p99at50, Start: 50, Max: 10000, Resolution: Resolution{Abs: 10}}.Run(probe)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "probe at 200 tx/s") {
		t.Fatalf("error %v", err)
	}
	if len(res.Steps) != 2 || res.Rate != 100 || res.Answer != AtLeast {
		t.Errorf("partial result %+v, want the two steps probed and at least 100", res)
	}

	// An objective on a type the step never ran is a setup error, not a fail.
	_, err = Search{Objective: Objective{Tx: "delivery", Percentile: 99, Limit: time.Second}, Start: 50, Max: 100, Resolution: Resolution{Abs: 10}}.Run(capacity(437))
	if !errors.Is(err, ErrNoSamples) {
		t.Errorf("error %v, want ErrNoSamples", err)
	}
}

func TestSearchRejects(t *testing.T) {
	good := Search{Objective: p99at50, Start: 10, Max: 100, Resolution: Resolution{Abs: 1}}
	tests := []struct {
		name   string
		change func(*Search)
		says   string
	}{
		{"no objective", func(s *Search) { s.Objective = Objective{} }, "no latency objective"},
		{"zero start", func(s *Search) { s.Start = 0 }, "start rate 0"},
		{"max below start", func(s *Search) { s.Max = 5 }, "at least the start rate"},
		{"factor 1", func(s *Search) { s.Factor = 1 }, "factor 1 must be above 1"},
		{"no resolution", func(s *Search) { s.Resolution = Resolution{} }, "exactly one resolution"},
		{"two resolutions", func(s *Search) { s.Resolution = Resolution{Abs: 1, Rel: 0.1} }, "exactly one resolution"},
		{"tolerance 1", func(s *Search) { s.Tolerance = 1 }, "tolerance 1"},
		{"negative budget", func(s *Search) { s.MaxProbes = -1 }, "negative"},
	}
	for _, tt := range tests {
		s := good
		tt.change(&s)
		called := false
		_, err := s.Run(func(float64) (Outcome, error) { called = true; return Outcome{}, nil })
		if err == nil || !strings.Contains(err.Error(), tt.says) || called {
			t.Errorf("%s: error %v (probe called %v), want one saying %q before any probe", tt.name, err, called, tt.says)
		}
	}
}

func TestParseResolution(t *testing.T) {
	for in, want := range map[string]Resolution{"10": {Abs: 10}, "2.5": {Abs: 2.5}, "5%": {Rel: 0.05}, " 1 % ": {Rel: 0.01}} {
		got, err := ParseResolution(in)
		if err != nil || got != want {
			t.Errorf("ParseResolution(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "5%%", "fast", "inf"} {
		if _, err := ParseResolution(in); err == nil || !strings.Contains(err.Error(), "tx/s") {
			t.Errorf("ParseResolution(%q) error %v", in, err)
		}
	}
	if s := (Resolution{Rel: 0.05}).String(); s != "5%" {
		t.Errorf("String = %q", s)
	}
}
