package analysis

import (
	"encoding/json"
	"math"
	"testing"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// abRun builds a loaded run with one step per (users, tps, mean ms), the
// engine's cache hits and misses per second, and the largest load under a
// ceiling when maxUsers > 0.
func abRun(steps [][3]float64, hitPerS, missPerS float64, maxUsers float64) *results.Loaded {
	l := &results.Loaded{}
	if maxUsers > 0 {
		l.Run.Figures = []results.Figure{{Name: results.FigureMaxUsersUnderCeiling, Value: maxUsers}}
	}
	for i, s := range steps {
		tel := &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
			"engine_cache_hit_reads_per_s":  {Mean: hitPerS, Samples: 1},
			"engine_cache_miss_reads_per_s": {Mean: missPerS, Samples: 1},
			"disk_vda_rps":                  {Mean: missPerS * 0.8, Samples: 1},
			"disk_vda_r_await_ms":           {Mean: 1.5, Samples: 1},
		}}
		l.Steps = append(l.Steps, results.Step{
			Index: i, Users: int(s[0]), Status: results.StatusCompleted,
			Figures:   []results.Figure{{Name: results.FigureTPS, Value: s[1]}},
			Total:     &metrics.TxSummary{Latency: metrics.Latency{Count: 100, MeanUS: s[2] * 1000, P95US: int64(s[2] * 2000)}},
			Telemetry: tel,
		})
	}
	return l
}

// studyRuns are the two sides of an A/B study shaped like an accelerator's:
// the study's first rows are 38 vs 18 TPS at 1 daemon and 26 vs 55 ms, B
// being the optimizer, two runs a side; the second B run never reached its
// ceiling.
func studyRuns() (a, b []*results.Loaded) {
	a = []*results.Loaded{
		abRun([][3]float64{{1, 18, 55}, {6, 30, 80}, {11, 33, 120}}, 580, 420, 6),
		abRun([][3]float64{{1, 19, 53}, {6, 29, 82}, {11, 31, 125}}, 570, 430, 6),
	}
	b = []*results.Loaded{
		abRun([][3]float64{{1, 38, 26}, {6, 47, 40}, {11, 50, 60}, {16, 52, 90}}, 800, 200, 16),
		abRun([][3]float64{{1, 37, 27}, {6, 48, 41}, {11, 49, 62}, {16, 51, 95}}, 810, 190, 16),
	}
	b[1].Run.Figures = append(b[1].Run.Figures, results.Figure{Name: results.FigureCeilingReached, Value: 0})
	return a, b
}

func TestABComparesLikeTheStudy(t *testing.T) {
	a, b := studyRuns()
	res, err := AB(a, b, "without", "with optimizer")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 {
		t.Fatalf("%d steps compared, want the 3 both sides ran", len(res.Steps))
	}
	tps := res.Steps[0].Metrics[0]
	if tps.Name != "TPS" || tps.A.Mean != 18.5 || tps.B.Mean != 37.5 || math.Abs(tps.ImprovementPct-102.7) > 0.1 || !tps.BeyondSpread {
		t.Errorf("TPS at 1 user: %+v", tps)
	}
	rt := res.Steps[0].Metrics[1]
	if rt.Name != "mean response time (ms)" || rt.ImprovementPct <= 0 {
		t.Errorf("a lower response time must be an improvement: %+v", rt)
	}
	if res.CacheA == nil || math.Abs(res.CacheA.CacheServedPct-57.5) > 0.1 || math.Abs(res.CacheB.CacheServedPct-80.5) > 0.1 {
		t.Errorf("cache accounting A %+v B %+v", res.CacheA, res.CacheB)
	}
	if res.MaxUsersB[0] != 16 || res.MaxUsersA[1] != 6 || res.OpenB[0] || !res.OpenB[1] {
		t.Errorf("max users %v %v", res.MaxUsersA, res.MaxUsersB)
	}
}

func TestABNeedsBothSides(t *testing.T) {
	if _, err := AB([]*results.Loaded{abRun(nil, 0, 0, 0)}, nil, "", ""); err == nil {
		t.Fatal("no B runs accepted")
	}
}

func TestSpreadOverlapIsNotADifference(t *testing.T) {
	a := []*results.Loaded{abRun([][3]float64{{1, 10, 5}}, 0, 0, 0), abRun([][3]float64{{1, 14, 5}}, 0, 0, 0)}
	b := []*results.Loaded{abRun([][3]float64{{1, 12, 5}}, 0, 0, 0), abRun([][3]float64{{1, 15, 5}}, 0, 0, 0)}
	res, _ := AB(a, b, "", "")
	if res.Steps[0].Metrics[0].BeyondSpread {
		t.Error("overlapping runs reported as beyond spread")
	}
}

// An A/B study and a comparison of the same runs read the same figures:
// TPC-C's TPM and NOPM, AS3AP's interactive work, TPS otherwise.
func TestABAndComparisonReadTheSameFigures(t *testing.T) {
	step := func(figs ...results.Figure) results.Step {
		return results.Step{Users: 1, Status: results.StatusCompleted, Figures: figs,
			Total: &metrics.TxSummary{Latency: metrics.Latency{Count: 1, MeanUS: 9000, P95US: 9000, P99US: 9000}}}
	}
	for _, tc := range []struct {
		name    string
		step    results.Step
		tput    []string
		meanRTs float64
	}{
		{"tpcc", step(results.Figure{Name: results.FigureTPM, Value: 600}, results.Figure{Name: results.FigureNOPM, Value: 270}, results.Figure{Name: results.FigureTPS, Value: 10}), []string{"tpm", "nopm"}, 9},
		{"as3ap", step(results.Figure{Name: results.FigureInteractiveTPS, Value: 40}, results.Figure{Name: results.FigureInteractiveLatencyMean, Value: 2},
			results.Figure{Name: results.FigureTPS, Value: 45}), []string{"interactive_tps"}, 2},
		{"sysbench", step(results.Figure{Name: results.FigureTPS, Value: 45}), []string{"tps"}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := []results.Step{tc.step}
			ab, cmp := ABMetrics(steps), WorkloadMetrics(steps)
			for i, want := range tc.tput {
				if ab[i].ID != want || cmp[i].ID != want {
					t.Errorf("throughput %d: A/B %s, comparison %s, want %s", i, ab[i].ID, cmp[i].ID, want)
				}
			}
			n := len(tc.tput)
			if ab[n].ID != "latency-mean" || cmp[n].ID != "latency-mean" || ab[n].Value(tc.step) != tc.meanRTs || cmp[n].Value(tc.step) != tc.meanRTs {
				t.Errorf("mean response time: A/B %s %v, comparison %s %v, want %v", ab[n].ID, ab[n].Value(tc.step), cmp[n].ID, cmp[n].Value(tc.step), tc.meanRTs)
			}
		})
	}
}

// The significance of an A/B difference, on cases whose answer is known:
// repeats of one configuration do not differ; clearly separated repeats do,
// with the ratio inside its interval; a shift the U test would call but
// that lies within one side's own spread is not a difference; one run a
// side cannot tell.
func TestABSignificanceOnKnownCases(t *testing.T) {
	side := func(tps ...float64) []*results.Loaded {
		var out []*results.Loaded
		for _, v := range tps {
			out = append(out, abRun([][3]float64{{4, v, 1000 / v}}, 0, 0, 0))
		}
		return out
	}
	cases := []struct {
		name     string
		a, b     []*results.Loaded
		verdict  string
		interval bool
	}{
		{"same configuration", side(100, 104, 98, 102, 101), side(99, 103, 100, 105, 97), "no significant difference", true},
		{"twice as fast", side(100, 104, 98, 102, 101), side(201, 196, 205, 199, 203), "significant difference", true},
		{"consistent shift inside the spread", side(100, 110, 120, 130, 140), side(141, 142, 143, 144, 145), "no significant difference", true},
		{"one run a side", side(100), side(200), "too few repeats to tell", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := AB(c.a, c.b, "A", "B")
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range append(res.Steps[0].Metrics, res.Average...) {
				sig := m.Significance
				if sig.Verdict != c.verdict {
					t.Errorf("%s: %s (p %.3f), want %s", m.Name, sig.Verdict, sig.P, c.verdict)
				}
				if sig.RatioInterval != c.interval {
					t.Errorf("%s: ratio interval %v, want %v", m.Name, sig.RatioInterval, c.interval)
				}
				if sig.RatioInterval && (sig.Ratio < sig.RatioLo || sig.Ratio > sig.RatioHi) {
					t.Errorf("%s: ratio %.3f outside its interval [%.3f, %.3f]", m.Name, sig.Ratio, sig.RatioLo, sig.RatioHi)
				}
			}
			tps := res.Steps[0].Metrics[0]
			if c.name == "twice as fast" && (tps.A.Median != 101 || tps.B.Median != 201 || tps.Significance.P >= 0.05) {
				t.Errorf("medians %v and %v, p %v", tps.A.Median, tps.B.Median, tps.Significance.P)
			}
			if c.name == "consistent shift inside the spread" && !tps.Significance.WithinNoise {
				t.Error("the U test's call inside A's spread is not marked as within the noise")
			}
		})
	}
}

// TestABNoChangePct pins when ab.json says no change in % is computed
// (no_change_pct): A's median is 0, or a side is under the metric's floor;
// then improvement_pct is 0 and only the differential stands. Elsewhere
// the change is in %, its sign by which way is better.
func TestABNoChangePct(t *testing.T) {
	higher := Metric{ID: "tps", Better: results.HigherBetter}
	lower := Metric{ID: "latency", Better: results.LowerBetter, Floor: 0.01}
	for _, tc := range []struct {
		name         string
		m            Metric
		a, b         []float64
		noChange     bool
		improvement  float64
		differential float64
	}{
		{"higher is better, B higher", higher, []float64{100, 100, 100}, []float64{110, 110, 110}, false, 10, 10},
		{"higher is better, B lower", higher, []float64{100, 100, 100}, []float64{80, 80, 80}, false, -20, -20},
		{"lower is better, B lower", lower, []float64{2, 2, 2}, []float64{1.5, 1.5, 1.5}, false, 25, -0.5},
		{"same on both sides", higher, []float64{5, 5, 5}, []float64{5, 5, 5}, false, 0, 0},
		{"A is zero", higher, []float64{0, 0, 0}, []float64{4, 4, 4}, true, 0, 4},
		{"A under the floor", lower, []float64{0.005, 0.005, 0.005}, []float64{1, 1, 1}, true, 0, 0.995},
		{"B under the floor", lower, []float64{1, 1, 1}, []float64{0.001, 0.001, 0.001}, true, 0, -0.999},
		{"both at the floor", lower, []float64{0.01, 0.01, 0.01}, []float64{0.02, 0.02, 0.02}, false, -100, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := abMetric(tc.m, tc.a, tc.b)
			if got.NoChangePct != tc.noChange {
				t.Errorf("no_change_pct %v, want %v", got.NoChangePct, tc.noChange)
			}
			if math.Abs(got.ImprovementPct-tc.improvement) > 1e-9 {
				t.Errorf("improvement %g %%, want %g %%", got.ImprovementPct, tc.improvement)
			}
			if math.Abs(got.Differential-tc.differential) > 1e-9 {
				t.Errorf("differential %g, want %g", got.Differential, tc.differential)
			}
		})
	}
}

// An A/B study reads the database's account of its time: each class's
// share and sessions on each side, with the repeats' statistics, and never
// better or worse for either (a faster storage moves time from syncs to
// CPU; that is where the time went, not how well).
func TestABReadsTheDatabaseTime(t *testing.T) {
	side := func(syncShares ...float64) []*results.Loaded {
		var out []*results.Loaded
		for _, sync := range syncShares {
			l := abRun([][3]float64{{4, 100, 10}}, 0, 0, 0)
			m := l.Steps[0].Telemetry.Metrics
			m[results.MetricDBActiveSessions] = results.TelemetryStat{Mean: 4, Samples: 10}
			m[results.DBTimeIOSync.Sessions()] = results.TelemetryStat{Mean: 4 * sync / 100, Samples: 10}
			m[results.DBTimeCPU.Sessions()] = results.TelemetryStat{Mean: 4 * (100 - sync) / 100, Samples: 10}
			out = append(out, l)
		}
		return out
	}
	res, err := AB(side(5, 6, 4, 5), side(61, 64, 60, 63), "tmpfs", "capped")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]results.ABMetric{}
	for _, m := range res.Steps[0].Metrics {
		got[m.Name] = m
	}
	sync, ok := got["database time on syncs (% of database time)"]
	if !ok {
		t.Fatalf("no share of syncs among %v", res.Steps[0].Metrics)
	}
	if !sync.NeitherBetter || sync.HigherIsBetter || sync.A.Median != 5 || sync.B.Median != 62 || !sync.Significance.Significant() {
		t.Errorf("share of syncs: %+v", sync)
	}
	if s, ok := got["sessions on syncs (sessions)"]; !ok || !s.NeitherBetter || s.B.Median != 2.48 {
		t.Errorf("sessions on syncs: %+v (present %v)", s, ok)
	}
	if _, ok := got["active sessions in the database (sessions)"]; !ok {
		t.Errorf("no active sessions among %v", res.Steps[0].Metrics)
	}
}

// iowait is shown in comparisons and findings, never called better or worse.
func TestIOWaitIsNeitherBetterNorWorse(t *testing.T) {
	for _, m := range append(WorkloadMetrics(nil), expectMetrics()...) {
		if m.ID == "cpu-iowait" && m.Better != results.NeitherBetter {
			t.Errorf("cpu-iowait is better %v, want neither", m.Better)
		}
	}
}

// A figure at zero on A's side (no lock waits) has no B / A: its
// significance says so, and the study's record still encodes.
func TestABSignificanceWithoutRatio(t *testing.T) {
	s := ABSignificanceOf(RepeatedDifference{Ratio: math.Inf(1), RatioCI: true, RatioLo: 0, RatioHi: math.Inf(1)})
	if !s.NoRatio || s.Ratio != 0 || s.RatioInterval || !math.IsNaN(s.RatioValue()) {
		t.Errorf("significance of an infinite ratio: %+v", s)
	}
	if _, err := json.Marshal(results.ABMetric{Significance: s}); err != nil {
		t.Errorf("a metric without a ratio does not encode: %v", err)
	}
	if s := ABSignificanceOf(RepeatedDifference{Ratio: 2}); s.NoRatio || s.RatioValue() != 2 {
		t.Errorf("significance of a ratio of 2: %+v", s)
	}
}
