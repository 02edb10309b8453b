package analysis

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

func TestRepeatedSummarisesOneConfiguration(t *testing.T) {
	tests := []struct {
		name             string
		values           []float64
		ok               bool
		n                int
		median, min, max float64
		ci               bool
		lo, hi           float64
	}{
		{name: "five repeats: no 95 % interval yet", values: []float64{30, 10, 20, 50, 40}, ok: true, n: 5, median: 30, min: 10, max: 50},
		// With 6 repeats the 95 % interval of the median is [x(1), x(6)] (coverage 96.9 %).
		{name: "six repeats: the extremes bound the median", values: []float64{6, 1, 5, 2, 4, 3}, ok: true, n: 6, median: 3.5, min: 1, max: 6, ci: true, lo: 1, hi: 6},
		// With 10 repeats it is [x(2), x(9)] (coverage 97.9 %).
		{name: "ten repeats", values: []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, ok: true, n: 10, median: 5.5, min: 1, max: 10, ci: true, lo: 2, hi: 9},
		{name: "a repeat without the figure is left out", values: []float64{1, math.NaN(), 3}, ok: true, n: 2, median: 2, min: 1, max: 3},
		{name: "no value", values: []float64{math.NaN()}},
		{name: "an infinite value", values: []float64{1, math.Inf(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := Repeated(tt.values)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if f.N != tt.n || f.Median != tt.median || f.Min != tt.min || f.Max != tt.max || f.CI != tt.ci || f.CILo != tt.lo || f.CIHi != tt.hi {
				t.Errorf("got %+v", f)
			}
			if f.NeedForCI != 6 {
				t.Errorf("NeedForCI %d, want 6 at 95 %%", f.NeedForCI)
			}
			if f.CI && f.Confidence < 0.95 {
				t.Errorf("coverage %v under 95 %%", f.Confidence)
			}
			if f.Spread() != tt.max-tt.min {
				t.Errorf("spread %v", f.Spread())
			}
		})
	}
}

func TestCompareRepeatedStatesSignificance(t *testing.T) {
	tput := Metric{ID: "tps", Title: "TPS", Unit: "tx/s", Better: results.HigherBetter}
	latency := Metric{ID: "lat", Title: "mean latency", Unit: "ms", Better: results.LowerBetter}
	tests := []struct {
		name        string
		m           Metric
		a, b        []float64
		verdict     Significance
		withinNoise bool
		p           float64
		judgement   Judgement
		ratioCI     bool
	}{
		// 5 against 5 with every B above every A: p = 2/252, and the
		// medians 500 apart against spreads of 40.
		{name: "tmpfs against a throttled disk", m: tput, a: []float64{100, 110, 120, 130, 140}, b: []float64{600, 610, 620, 630, 640},
			verdict: Significant, p: 2.0 / 252, judgement: Improved, ratioCI: true},
		{name: "lower latency is better", m: latency, a: []float64{10, 11, 12, 13, 14}, b: []float64{2, 2.1, 2.2, 2.3, 2.4},
			verdict: Significant, p: 2.0 / 252, judgement: Improved, ratioCI: true},
		// Interleaved values: the U test finds nothing.
		{name: "identical configurations", m: tput, a: []float64{100, 103, 98, 101, 99}, b: []float64{102, 97, 100.5, 104, 99.5},
			verdict: NotSignificant, p: pOf(t, []float64{100, 103, 98, 101, 99}, []float64{102, 97, 100.5, 104, 99.5}), judgement: Unchanged, ratioCI: true},
		// Every B above every A, but the medians are 7 apart and A's own
		// repeats spread over 8: the noise measured between repeats.
		{name: "within the noise between repeats", m: tput, a: []float64{100, 102, 104, 106, 108}, b: []float64{109, 110, 111, 112, 113},
			verdict: NotSignificant, withinNoise: true, p: 2.0 / 252, judgement: Unchanged, ratioCI: true},
		// 3 a side can never reach 5 %, however far apart (min p = 0.1).
		{name: "too few repeats", m: tput, a: []float64{1, 2, 3}, b: []float64{100, 101, 102},
			verdict: TooFewRepeats, p: 0.1, judgement: Unchanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := CompareRepeated(tt.a, tt.b, tt.m)
			if !ok {
				t.Fatal("not compared")
			}
			if d.Verdict != tt.verdict || d.WithinNoise != tt.withinNoise {
				t.Errorf("verdict %v (within noise %v), want %v (%v)", d.Verdict, d.WithinNoise, tt.verdict, tt.withinNoise)
			}
			if math.Abs(d.P-tt.p) > 1e-9 {
				t.Errorf("p %v, want %v", d.P, tt.p)
			}
			if d.Judgement != tt.judgement {
				t.Errorf("judgement %v, want %v", d.Judgement.Word(), tt.judgement.Word())
			}
			if d.NeedPerSide != 4 || d.Alpha != 0.05 {
				t.Errorf("need %d alpha %v", d.NeedPerSide, d.Alpha)
			}
			if d.Ratio != d.B.Median/d.A.Median {
				t.Errorf("ratio %v, want the medians' %v", d.Ratio, d.B.Median/d.A.Median)
			}
			if d.RatioCI != tt.ratioCI || d.RatioCI && !(d.RatioLo <= d.Ratio && d.Ratio <= d.RatioHi) {
				t.Errorf("ratio interval %v [%v, %v] around %v", d.RatioCI, d.RatioLo, d.RatioHi, d.Ratio)
			}
		})
	}
}

func TestCompareRepeatedRatioIntervalKnownAnswer(t *testing.T) {
	// 5 against 5 at 95 %: k = 3 (P(U ≤ 2) = 4/252 ≤ 0.025 < P(U ≤ 3) =
	// 7/252), so the interval runs from the 3rd smallest to the 3rd largest
	// of the 25 ratios b/a. With a = 1..5 and b = 10·a, the ratios are
	// 10·j/i; the smallest are 10/5 = 2, 10/4 = 2.5 and 10/3, the largest
	// 50/1, 40/1 and 30/1: the interval is [10/3, 30] around 10.
	d, ok := CompareRepeated([]float64{1, 2, 3, 4, 5}, []float64{10, 20, 30, 40, 50}, Metric{Better: results.HigherBetter})
	if !ok || !d.RatioCI || math.Abs(d.RatioLo-10.0/3) > 1e-12 || d.RatioHi != 30 || d.Ratio != 10 {
		t.Fatalf("ratio %v [%v, %v] (available %v)", d.Ratio, d.RatioLo, d.RatioHi, d.RatioCI)
	}
}

func TestCompareRepeatedRefusesWhatItCannotRank(t *testing.T) {
	if _, ok := CompareRepeated([]float64{math.NaN()}, []float64{1}, Metric{}); ok {
		t.Error("a side without values was compared")
	}
	if _, ok := CompareRepeated([]float64{1, math.Inf(1)}, []float64{1}, Metric{}); ok {
		t.Error("an infinite value was compared")
	}
}

// pOf is the two-sided p-value of the exact U test computed by brute force
// over every split of the pooled values (no ties in the cases used).
func pOf(t *testing.T, a, b []float64) float64 {
	t.Helper()
	pooled := append(append([]float64{}, a...), b...)
	u := func(xs, ys []float64) float64 {
		var n float64
		for _, x := range xs {
			for _, y := range ys {
				if x < y {
					n++
				}
			}
		}
		return n
	}
	n1 := len(a)
	mean := float64(len(a)*len(b)) / 2
	observed := math.Abs(u(a, b) - mean)
	var extreme, total float64
	for mask := 0; mask < 1<<len(pooled); mask++ {
		var xs, ys []float64
		for i, v := range pooled {
			if mask&(1<<i) != 0 {
				xs = append(xs, v)
			} else {
				ys = append(ys, v)
			}
		}
		if len(xs) != n1 {
			continue
		}
		total++
		if math.Abs(u(xs, ys)-mean) >= observed-1e-9 {
			extreme++
		}
	}
	return extreme / total
}

func TestRepeatedTablesMatchStepsAcrossRepeats(t *testing.T) {
	var runs []*Recorded
	for i, tps := range []float64{100, 140, 120, 110, 130, 150} {
		l := abRun([][3]float64{{1, tps, 10 + float64(i)}, {4, 2 * tps, 20}}, 0, 0, 0)
		if i == 5 {
			// The last repeat's second step failed: it is left out of that row.
			l.Steps[1].Status = results.StatusFailed
		}
		runs = append(runs, NewRecorded(l))
	}
	tables := RepeatedTables(runs)
	if len(tables) != 1 || tables[0].Kind != "" || tables[0].Key != "users" || len(tables[0].Rows) != 2 {
		t.Fatalf("tables %+v", tables)
	}
	tb := tables[0]
	tps1, ok := tb.Figure(0, "tps")
	if !ok || tps1.N != 6 || tps1.Median != 125 || tps1.Min != 100 || tps1.Max != 150 || !tps1.CI || tps1.CILo != 100 || tps1.CIHi != 150 {
		t.Errorf("TPS at 1 user: %+v", tps1)
	}
	tps4, ok := tb.Figure(1, "tps")
	if !ok || tps4.N != 5 || tps4.Median != 240 || tps4.CI || tb.Rows[1].Users != 4 {
		t.Errorf("TPS at 4 users, one repeat failed: %+v", tps4)
	}
	mean, ok := tb.Figure(0, "latency-mean")
	if !ok || mean.Median != 12.5 {
		t.Errorf("mean latency at 1 user: %+v", mean)
	}
	if _, ok := tb.Figure(0, "no-such-metric"); ok {
		t.Error("an unknown metric has a figure")
	}
}

func TestCompareRepeatedSetsReadsEveryRowAndTheAverage(t *testing.T) {
	side := func(tps []float64, lat float64) []*Recorded {
		var out []*Recorded
		for i, v := range tps {
			out = append(out, NewRecorded(abRun([][3]float64{{1, v, lat + float64(i)}, {2, 2 * v, lat + float64(i)}}, 0, 0, 0)))
		}
		return out
	}
	// A throttled disk against tmpfs: every B repeat far above every A one.
	slow, fast := side([]float64{48, 50, 49, 51, 47}, 20), side([]float64{900, 950, 920, 980, 940}, 1)
	vs := CompareRepeatedSets(slow, fast)
	byID := map[string]RepeatedVersus{}
	for _, v := range vs {
		byID[v.Metric.ID] = v
	}
	tps, ok := byID["tps"]
	if !ok || len(tps.Rows) != 2 || !tps.HasAverage || tps.AverageRows != 2 {
		t.Fatalf("TPS compared as %+v", tps)
	}
	for _, d := range []RepeatedDifference{tps.Rows[0].RepeatedDifference, tps.Rows[1].RepeatedDifference, tps.Average} {
		if d.Verdict != Significant || d.Judgement != Improved || !d.RatioCI || d.RatioLo < 15 {
			t.Errorf("tmpfs against the throttled disk: %v, %v, ratio %v [%v, %v]", d.Verdict, d.Judgement.Word(), d.Ratio, d.RatioLo, d.RatioHi)
		}
	}
	// The average row's repeats are each run's mean over both steps: A's
	// median run averages 49 and 98.
	if tps.Average.A.Median != 73.5 {
		t.Errorf("A's average median %v, want 73.5", tps.Average.A.Median)
	}
	if lat := byID["latency-mean"]; lat.Average.Verdict != Significant || lat.Average.Judgement != Improved {
		t.Errorf("mean latency: %v %v", lat.Average.Verdict, lat.Average.Judgement.Word())
	}
	// Two sets of the same configuration: nothing to call.
	same := CompareRepeatedSets(slow, side([]float64{49, 47, 51, 50, 48}, 20))
	for _, v := range same {
		if v.Metric.ID == "tps" && (v.Average.Verdict != NotSignificant || v.Average.Judgement != Unchanged) {
			t.Errorf("identical configurations: %v %v", v.Average.Verdict, v.Average.Judgement.Word())
		}
	}
	if CompareRepeatedSets(nil, fast) != nil {
		t.Error("a side without runs compared")
	}
}

// scenarioRun is a run of steps a user count does not tell apart: two
// tenants' steps at one user count in each of two phases, each phase's
// totals, and backup cycles recording figures only.
func scenarioRun(tpm [2]float64, backupS []float64) *Recorded {
	l := &results.Loaded{}
	tenant := func(name string, v float64) results.Step {
		return results.Step{Name: name, Kind: "tpcc", Users: 2, Status: results.StatusCompleted, Total: &metrics.TxSummary{},
			Figures: []results.Figure{{Name: results.FigureTPM, Value: v, Unit: "tx/min"}}}
	}
	l.Steps = append(l.Steps, tenant("quiet-t1", tpm[0]), tenant("quiet-t2", tpm[0]+1),
		results.Step{Name: "quiet", Kind: "noisy-quiet", Status: results.StatusCompleted, Figures: []results.Figure{{Name: "tpm_total", Value: 2*tpm[0] + 1, Unit: "tx/min"}}},
		tenant("interference-t1", tpm[1]))
	for i, s := range backupS {
		st := results.Step{Name: fmt.Sprintf("backup-%d", i+1), Kind: "backup", Status: results.StatusCompleted, Figures: []results.Figure{
			{Name: "seconds", Value: s, Unit: "s"}, {Name: "mb", Value: 10, Unit: "MB"}, {Name: "mb_per_s", Value: 10 / s, Unit: "MB/s"}}}
		l.Steps = append(l.Steps, st)
	}
	return NewRecorded(l)
}

// Steps a user count does not tell apart (a noisy-neighbour study's
// tenants and phases) are matched across repeats by name, and so are steps
// that record figures only (backups); a rate is their headline.
func TestRepeatedTablesMatchStepsByName(t *testing.T) {
	var runs []*Recorded
	for i := range 4 {
		f := float64(i)
		runs = append(runs, scenarioRun([2]float64{100 + f, 50 + f}, []float64{1 + f/10, 2 + f/10}))
	}
	// The last repeat's second backup failed: it is left out of its row.
	runs[3].Other[2].Status = results.StatusFailed
	tables := RepeatedTables(runs)
	byKind := map[string]RepeatedTable{}
	var kinds []string
	for _, tb := range tables {
		byKind[tb.Kind] = tb
		kinds = append(kinds, tb.Kind+"/"+tb.Key)
	}
	if want := "tpcc/step noisy-quiet/step backup/step"; strings.Join(kinds, " ") != want {
		t.Fatalf("tables %v, want %s", kinds, want)
	}
	tenants := byKind["tpcc"]
	var labels []string
	for _, r := range tenants.Rows {
		labels = append(labels, r.Label)
	}
	if strings.Join(labels, ",") != "quiet-t1,quiet-t2,interference-t1" {
		t.Errorf("tenant rows %v", labels)
	}
	if f, ok := tenants.Figure(2, "tpm"); !ok || f.N != 4 || f.Median != 51.5 || f.Min != 50 || f.Max != 53 {
		t.Errorf("interference-t1's TPM: %+v", f)
	}
	backup := byKind["backup"]
	if len(backup.Metrics) != 3 || backup.Metrics[0].ID != "mb_per_s" || backup.Metrics[0].Better != results.HigherBetter ||
		backup.Metrics[1].ID != "seconds" || backup.Metrics[1].Better != results.LowerBetter || backup.Metrics[2].Better != results.NeitherBetter {
		t.Errorf("backup metrics %+v", backup.Metrics)
	}
	if f, ok := backup.Figure(0, "seconds"); !ok || f.N != 4 || f.Median != 1.15 {
		t.Errorf("backup-1 seconds: %+v", f)
	}
	if f, ok := backup.Figure(1, "seconds"); !ok || f.N != 3 || f.Max != 2.2 {
		t.Errorf("backup-2 seconds, one repeat failed: %+v", f)
	}
	// Compared set against set, each backup row is read on its own.
	var slower []*Recorded
	for i := range 4 {
		slower = append(slower, scenarioRun([2]float64{100, 50}, []float64{10 + float64(i), 20}))
	}
	for _, v := range CompareRepeatedSets(runs, slower) {
		if v.Kind == "backup" && v.Metric.ID == "seconds" {
			if len(v.Rows) != 2 || !v.Rows[0].Has || v.Rows[0].Verdict != Significant || v.Rows[0].Judgement != Worsened {
				t.Errorf("backup-1 ten times slower: %+v", v.Rows)
			}
			return
		}
	}
	t.Error("the backups' seconds are not compared")
}
