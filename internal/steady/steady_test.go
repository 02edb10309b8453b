package steady

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Criterion
		out  string
	}{
		{"iops:10%", Criterion{Metric: "iops", Test: Deviation, Limit: 10, Percent: true}, "iops:10%"},
		{"iops_slope:0.2%", Criterion{Metric: "iops", Test: Slope, Limit: 0.2, Percent: true}, "iops_slope:0.2%"},
		{"iops:2", Criterion{Metric: "iops", Test: Deviation, Limit: 2}, "iops:2"},
		{"bw_slope:1048576", Criterion{Metric: "bw", Test: Slope, Limit: 1048576}, "bw_slope:1.048576e+06"},
		{"tps:10%", Criterion{Metric: "tps", Test: Deviation, Limit: 10, Percent: true}, "tps:10%"},
		{"nopm_slope:0.5%", Criterion{Metric: "nopm", Test: Slope, Limit: 0.5, Percent: true}, "nopm_slope:0.5%"},
		{" TPM_Slope : 1.5 % ", Criterion{Metric: "tpm", Test: Slope, Limit: 1.5, Percent: true}, "tpm_slope:1.5%"},
		{"qps:250", Criterion{Metric: "qps", Test: Deviation, Limit: 250}, "qps:250"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if got.String() != tt.out {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got.String(), tt.out)
		}
		if again, err := Parse(got.String()); err != nil || again != got {
			t.Errorf("round trip of %q: %+v, %v", tt.in, again, err)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ in, says string }{
		{"", "METRIC:LIMIT"},
		{"tps", "METRIC:LIMIT"},
		{"tps:", "METRIC:LIMIT"},
		{":10%", "METRIC:LIMIT"},
		{"lat:5ms", `unknown metric "lat", use one of tpm, nopm, tps, qps, iops, bw`},
		{"tps_slope_slope:1%", `unknown metric "tps_slope"`},
		{"tps:abc", `limit "abc" is not a number`},
		{"tps:10%%", "is not a number"},
		{"tps:NaN", "is not a number"},
		{"tps:inf%", "is not a number"},
		{"tps:0", "must be above zero"},
		{"tps:-1%", "must be above zero"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Parse(%q) error %v, want ErrSyntax saying %q", tt.in, err, tt.says)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestEvaluateKnownAnswers(t *testing.T) {
	dev10 := Criterion{Metric: "tps", Test: Deviation, Limit: 10, Percent: true}
	slope2 := Criterion{Metric: "tps", Test: Slope, Limit: 2, Percent: true}
	tests := []struct {
		name                   string
		c                      Criterion
		window                 []float64
		mean, dev, slope, figs float64
		steady                 bool
	}{
		// Mean 980; deviations -80, 20, 20, 20, 20; slope Σ(x-2)(y-980)/10 = 200/10.
		{"end of a ramp, deviation", dev10, []float64{900, 1000, 1000, 1000, 1000}, 980, 80, 20, 100 * 80.0 / 980, true},
		{"end of a ramp, slope", slope2, []float64{900, 1000, 1000, 1000, 1000}, 980, 80, 20, 100 * 20.0 / 980, false},
		// Slope Σ(x-1.5)(±50)/5 = (-75+25+25-75)/5 = -20: 2 % of 1000, not below 2 %.
		{"alternating, slope at the limit", slope2, []float64{1050, 950, 1050, 950}, 1000, 50, -20, 2, false},
		{"alternating, deviation", dev10, []float64{1050, 950, 1050, 950}, 1000, 50, -20, 5, true},
		{"steady climb", Criterion{Test: Slope, Limit: 5.5}, []float64{1000, 1005, 1010, 1015, 1020}, 1010, 10, 5, 5, true},
		{"steady climb, at the limit", Criterion{Test: Slope, Limit: 5}, []float64{1000, 1005, 1010, 1015, 1020}, 1010, 10, 5, 5, false},
		{"zero mean with a percentage", dev10, []float64{0, 0, 0}, 0, 0, 0, math.Inf(1), false},
		{"zeros with an absolute limit", Criterion{Test: Deviation, Limit: 1}, []float64{0, 0, 0}, 0, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := tt.c.Evaluate(tt.window)
			if !near(ch.Mean, tt.mean) || !near(ch.Deviation, tt.dev) || !near(ch.Slope, tt.slope) {
				t.Errorf("mean %v dev %v slope %v, want %v %v %v", ch.Mean, ch.Deviation, ch.Slope, tt.mean, tt.dev, tt.slope)
			}
			if !(math.IsInf(tt.figs, 1) && math.IsInf(ch.Figure, 1)) && !near(ch.Figure, tt.figs) {
				t.Errorf("figure %v, want %v", ch.Figure, tt.figs)
			}
			if ch.Steady != tt.steady {
				t.Errorf("steady %v, want %v", ch.Steady, tt.steady)
			}
		})
	}
	for _, w := range [][]float64{nil, {5}, {1000, math.NaN(), 1000}} {
		for _, c := range []Criterion{dev10, slope2, {Test: Deviation, Limit: 1e9}} {
			if ch := c.Evaluate(w); ch.Steady || !math.IsNaN(ch.Figure) {
				t.Errorf("%s on %v: %+v, want not steady with a NaN figure", c, w, ch)
			}
		}
	}
}

// rampThenFlat climbs by 100 a second to 1000 at second 10, then holds.
func rampThenFlat(seconds int) []float64 {
	s := make([]float64, seconds)
	for i := range s {
		s[i] = math.Min(100*float64(i+1), 1000)
	}
	return s
}

func alternating(seconds int, mean, swing float64) []float64 {
	s := make([]float64, seconds)
	for i := range s {
		s[i] = mean + swing
		if i%2 == 1 {
			s[i] = mean - swing
		}
	}
	return s
}

func TestDetectorKnownAnswers(t *testing.T) {
	withGap := rampThenFlat(20)
	withGap[11] = math.NaN() // second 12 has no sample
	tests := []struct {
		name      string
		criterion string
		window    int
		ramp      int
		series    []float64
		reached   bool
		second    int
	}{
		// Window 5 ending at second 13 is 900,1000,1000,1000,1000: 8.2 %.
		// Second 12 (800,900,1000,1000,1000) deviates by 14.9 %.
		{"ramp, deviation 10%", "tps:10%", 5, 0, rampThenFlat(30), true, 13},
		// The same window has a slope of 2.04 % a second; the next one is flat.
		{"ramp, slope 2%", "tps_slope:2%", 5, 0, rampThenFlat(30), true, 14},
		{"ramp, slope 2.1%", "tps_slope:2.1%", 5, 0, rampThenFlat(30), true, 13},
		{"ramp skipped by the ramp setting", "tps:10%", 5, 12, rampThenFlat(30), true, 17},
		{"noise within tolerance", "nopm:10%", 4, 0, alternating(20, 1000, 50), true, 4},
		{"noise exactly at tolerance", "nopm:5%", 4, 0, alternating(20, 1000, 50), false, 0},
		{"noise beyond tolerance", "nopm:10%", 4, 0, alternating(60, 1000, 150), false, 0},
		{"noise beyond tolerance passes the slope test", "nopm_slope:10%", 4, 0, alternating(60, 1000, 150), true, 4},
		// Windows holding second 12 are skipped: 13..16 is the first without it.
		{"a missing second", "tps:1%", 4, 0, withGap, true, 16},
		{"too short to fill the window", "tps:10%", 5, 0, []float64{1000, 1000, 1000, 1000}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.criterion)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Criterion: c, Window: tt.window, Ramp: tt.ramp}
			r, ok, err := Find(cfg, tt.series)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.reached || r.Second != tt.second {
				t.Fatalf("reached %v at %d, want %v at %d", ok, r.Second, tt.reached, tt.second)
			}
			if ok && (r.WindowStart != tt.second-tt.window+1 || !r.Check.Steady) {
				t.Errorf("window starts at %d (%+v), want %d", r.WindowStart, r.Check, tt.second-tt.window+1)
			}
		})
	}
}

func TestDetectorStatusPerSecond(t *testing.T) {
	c, _ := Parse("tps:10%")
	d, err := NewDetector(Config{Criterion: c, Window: 3, Ramp: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		full, steady bool
	}{{false, false}, {false, false}, {false, false}, {true, true}, {true, false}, {true, false}, {true, false}, {true, true}}
	series := []float64{5, 100, 100, 100, 200, 100, 100, 100}
	for i, v := range series {
		st := d.Add(v)
		if st.Second != i+1 || st.Full != want[i].full || st.Steady != want[i].steady {
			t.Errorf("second %d: %+v, want full=%v steady=%v", i+1, st, want[i].full, want[i].steady)
		}
	}
	if r, ok := d.Reached(); !ok || r.Second != 4 || r.WindowStart != 2 {
		t.Errorf("Reached = %+v %v, want second 4 from second 2 (the first steady window)", r, ok)
	}
}

func TestNewDetectorRejects(t *testing.T) {
	good, _ := Parse("tps:10%")
	tests := []struct {
		name string
		cfg  Config
		says string
	}{
		{"window too short", Config{Criterion: good, Window: 2}, "at least 3 s"},
		{"negative ramp", Config{Criterion: good, Window: 10, Ramp: -1}, "negative"},
		{"no criterion", Config{Window: 10}, "above zero"},
	}
	for _, tt := range tests {
		if _, err := NewDetector(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.says)
		}
	}
}

func BenchmarkDetectorAdd(b *testing.B) {
	c, _ := Parse("nopm_slope:0.5%")
	d, err := NewDetector(Config{Criterion: c, Window: 300})
	if err != nil {
		b.Fatal(err)
	}
	series := alternating(1000, 1000, 3)
	i := 0
	for b.Loop() {
		d.Add(series[i%len(series)])
		i++
	}
}

func TestCriterionSeries(t *testing.T) {
	tests := []struct {
		criterion       string
		seconds, rounds string // "" when the criterion can judge them
	}{
		{"tps:10%", "", "the rounds are judged on fio's iops or bw"},
		{"nopm_slope:0.5%", "", "the rounds are judged on fio's iops or bw"},
		{"qps:5%", "", "the rounds are judged on fio's iops or bw"},
		{"iops_slope:2.5%", "iops and bw are fio's series; a database run's are tpm, nopm, tps and qps", ""},
		{"bw:10%", "iops and bw are fio's series; a database run's are tpm, nopm, tps and qps", ""},
	}
	for _, tt := range tests {
		c, err := Parse(tt.criterion)
		if err != nil {
			t.Fatal(err)
		}
		for _, check := range []struct {
			err  error
			want string
		}{{c.OnSeconds(), tt.seconds}, {c.OnRounds(), tt.rounds}} {
			if (check.err == nil) != (check.want == "") || (check.err != nil && check.err.Error() != check.want) {
				t.Errorf("%s: %v, want %q", tt.criterion, check.err, check.want)
			}
		}
	}
}
