package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"dbio/internal/results"
)

// ABMetrics are what an A/B study compares: the workload's throughput, its
// mean and p95 response time, and, where both sides recorded them, the
// I/O waits the database timed itself, the pages its server's memory cap
// made it read again (refaults), and its time by class (active sessions
// and shares of database time, which are neither better higher nor lower):
// what a storage or a memory change does to the database, beside what the
// clients saw.
func ABMetrics(steps []results.Step) []Metric {
	var out []Metric
	for _, f := range Throughput(steps) {
		out = append(out, FigureMetric(f))
	}
	out = append(out, ResponseTime(results.StatMean), ResponseTime(results.StatP95))
	out = append(out, dbWaitMetrics()...)
	for _, m := range ServerMemoryMetrics() {
		if m.Better != results.NeitherBetter {
			out = append(out, m)
		}
	}
	return append(out, DBTimeMetrics()...)
}

// ABName is how an A/B study names a metric in ab.json and its tables: a
// throughput by its title ("TPS"), a response time as the studies speak of
// it, with its unit ("mean response time (ms)"), any other figure by its
// title and unit ("database-seen log sync latency (ms per operation)").
func ABName(m Metric) string {
	switch {
	case m.Better == results.HigherBetter:
		return m.Title
	case strings.HasPrefix(m.ID, "latency-"):
		return strings.Replace(m.Title, "latency", "response time", 1) + " (" + m.Unit + ")"
	}
	return m.Title + " (" + m.Unit + ")"
}

// AB compares the runs of side A with those of side B. Steps are matched
// by user count; a count only one side reached is left out of the per-step
// table (the largest loads show it).
func AB(a, b []*results.Loaded, labelA, labelB string) (results.ABResult, error) {
	if len(a) == 0 || len(b) == 0 {
		return results.ABResult{}, fmt.Errorf("an A/B comparison needs at least one run on each side (got %d and %d)", len(a), len(b))
	}
	res := results.ABResult{LabelA: labelA, LabelB: labelB, RunsA: len(a), RunsB: len(b)}
	usersA, usersB := stepsByUsers(a), stepsByUsers(b)
	var users []int
	var all []results.Step
	for u, steps := range usersA {
		if _, ok := usersB[u]; ok {
			users = append(users, u)
			all = append(all, steps...)
			all = append(all, usersB[u]...)
		}
	}
	sort.Ints(users)
	metrics := ABMetrics(all)
	for _, u := range users {
		step := results.ABStep{Users: u}
		for _, m := range metrics {
			va, vb := collect(usersA[u], m), collect(usersB[u], m)
			if len(va) == 0 || len(vb) == 0 {
				continue
			}
			step.Metrics = append(step.Metrics, abMetric(m, va, vb))
		}
		res.Steps = append(res.Steps, step)
	}
	perRunA, perRunB := stepsPerRun(a), stepsPerRun(b)
	for _, m := range metrics {
		// Each run's average over the user counts both sides ran is one
		// repeat of the average: the test reads those, run against run.
		va, vb := runAverages(perRunA, m, users), runAverages(perRunB, m, users)
		if len(va) == 0 || len(vb) == 0 {
			continue
		}
		res.Average = append(res.Average, abMetric(m, va, vb))
	}
	for _, l := range a {
		u, open := MaxUsers(l)
		res.MaxUsersA, res.OpenA = append(res.MaxUsersA, u), append(res.OpenA, open)
	}
	for _, l := range b {
		u, open := MaxUsers(l)
		res.MaxUsersB, res.OpenB = append(res.MaxUsersB, u), append(res.OpenB, open)
	}
	res.CacheA, res.CacheB = cacheAccount(a), cacheAccount(b)
	return res, nil
}

// abMetric compares one figure's runs on each side as ab.json holds it:
// each side's mean, median with its interval and spread, the change of the
// medians, and the significance test (CompareRepeated, as every comparison
// of repeats reads them).
func abMetric(m Metric, va, vb []float64) results.ABMetric {
	d, ok := CompareRepeated(va, vb, m)
	if !ok {
		// collect keeps only numbers, so only an infinite figure gets here.
		return results.ABMetric{Name: ABName(m), HigherIsBetter: m.Better == results.HigherBetter, NeitherBetter: m.Better == results.NeitherBetter,
			Significance: results.ABSignificance{Verdict: "not tested: a value is not a finite number"}}
	}
	out := results.ABMetric{Name: ABName(m), HigherIsBetter: m.Better == results.HigherBetter, NeitherBetter: m.Better == results.NeitherBetter, A: ABSideOf(d.A), B: ABSideOf(d.B),
		Differential: d.Differential, ImprovementPct: d.ImprovementPct, BeyondSpread: d.BeyondSpread,
		Significance: ABSignificanceOf(d)}
	if math.IsNaN(out.ImprovementPct) {
		// No change can be said against nothing, or between values under
		// the metric's floor.
		out.ImprovementPct, out.NoChangePct = 0, true
	}
	return out
}

// ABSideOf is a side's repeated figure as ab.json records it.
func ABSideOf(f RepeatedFigure) results.ABSide {
	out := results.ABSide{Mean: Mean(f.Values), Min: f.Min, Max: f.Max, Runs: f.Values, Median: f.Median}
	if f.CI {
		out.MedianCI, out.MedianLo, out.MedianHi, out.Confidence = true, f.CILo, f.CIHi, f.Confidence
	}
	return out
}

// ABSignificanceOf is a difference's significance as ab.json records it.
func ABSignificanceOf(d RepeatedDifference) results.ABSignificance {
	s := results.ABSignificance{Verdict: d.Verdict.String(), P: d.P, Alpha: d.Alpha, WithinNoise: d.WithinNoise,
		NeedPerSide: d.NeedPerSide, Ratio: d.Ratio}
	if math.IsNaN(d.Ratio) || math.IsInf(d.Ratio, 0) {
		s.Ratio, s.NoRatio = 0, true
	}
	if d.RatioCI && !math.IsInf(d.RatioLo, 0) && !math.IsInf(d.RatioHi, 0) && !math.IsNaN(d.RatioLo) && !math.IsNaN(d.RatioHi) {
		s.RatioInterval, s.RatioLo, s.RatioHi = true, d.RatioLo, d.RatioHi
	}
	return s
}

// stepsPerRun is each run's completed steps by user count.
func stepsPerRun(runs []*results.Loaded) []map[int][]results.Step {
	out := make([]map[int][]results.Step, len(runs))
	for i, l := range runs {
		out[i] = stepsByUsers([]*results.Loaded{l})
	}
	return out
}

// runAverages are each run's average of a figure over the given user
// counts, for the runs that have it at all of them.
func runAverages(runs []map[int][]results.Step, m Metric, users []int) []float64 {
	var out []float64
	for _, byUsers := range runs {
		var vs []float64
		for _, u := range users {
			if v := collect(byUsers[u], m); len(v) > 0 {
				vs = append(vs, Mean(v))
			}
		}
		if len(vs) == len(users) && len(vs) > 0 {
			out = append(out, Mean(vs))
		}
	}
	return out
}

func stepsByUsers(runs []*results.Loaded) map[int][]results.Step {
	out := map[int][]results.Step{}
	for _, l := range runs {
		for _, s := range l.Steps {
			if s.Users > 0 && s.Status == results.StatusCompleted && s.Total != nil {
				out[s.Users] = append(out[s.Users], s)
			}
		}
	}
	return out
}

func collect(steps []results.Step, m Metric) []float64 {
	var out []float64
	for _, s := range steps {
		if v := m.Value(s); !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// cacheAccount averages, over every measured step of every run, the engine's
// cache hits and misses (the engine counters cache_hit_reads and
// cache_miss_reads) and the devices' reads.
func cacheAccount(runs []*results.Loaded) *results.CacheAccount {
	var hits, misses, dev, await []float64
	for _, l := range runs {
		for _, s := range l.Steps {
			t := s.Telemetry
			if t == nil {
				continue
			}
			h, okH := t.Metrics["engine_cache_hit_reads_per_s"]
			m, okM := t.Metrics["engine_cache_miss_reads_per_s"]
			if okH && okM {
				hits = append(hits, h.Mean)
				misses = append(misses, m.Mean)
			}
			var d, a float64
			var devices int
			for name, v := range t.Metrics {
				if strings.HasPrefix(name, "disk_") && strings.HasSuffix(name, "_rps") {
					d += v.Mean
				}
				if strings.HasPrefix(name, "disk_") && strings.HasSuffix(name, "_r_await_ms") {
					a += v.Mean
					devices++
				}
			}
			dev = append(dev, d)
			if devices > 0 {
				await = append(await, a/float64(devices))
			}
		}
	}
	if len(dev) == 0 {
		return nil
	}
	c := &results.CacheAccount{DeviceReadsPerS: Mean(dev)}
	if len(await) > 0 {
		c.DeviceReadAwaitMS = Mean(await)
	}
	if len(hits) > 0 {
		h, m := Mean(hits), Mean(misses)
		c.OSReadsPerS = m
		if h+m > 0 {
			c.CacheServedPct = h / (h + m) * 100
		}
	}
	return c
}
