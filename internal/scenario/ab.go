package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"dbio/internal/results"
)

// AB is the A/B study of METHODOLOGY §2: the same workload run on side A and
// side B (each possibly several times, interleaved A B A B to cancel drift)
// with one thing changed, compared per step.
type AB struct {
	A, B []*results.Loaded
	// Labels name the sides ("buffer-pool 64MB"), for the table.
	LabelA, LabelB string
}

// ABMetric is one compared figure of one step: each side's mean over its
// runs, the spread (min to max) and the change from A to B.
type ABMetric struct {
	Name string `json:"name"`
	// HigherIsBetter decides the sign of an improvement.
	HigherIsBetter bool    `json:"higher_is_better"`
	A              Side    `json:"a"`
	B              Side    `json:"b"`
	Differential   float64 `json:"differential"`
	// ImprovementPct is the change from A to B in %, positive when B is better.
	ImprovementPct float64 `json:"improvement_pct"`
	// BeyondSpread says the ranges of A's and B's runs do not overlap, so
	// the difference is larger than the run-to-run noise measured here.
	BeyondSpread bool `json:"beyond_spread"`
}

// Side is one side's figure over its runs.
type Side struct {
	Mean float64   `json:"mean"`
	Min  float64   `json:"min"`
	Max  float64   `json:"max"`
	Runs []float64 `json:"runs"`
}

// ABStep is one user count compared.
type ABStep struct {
	Users   int        `json:"users"`
	Metrics []ABMetric `json:"metrics"`
}

// ABResult is the whole comparison.
type ABResult struct {
	LabelA  string     `json:"label_a"`
	LabelB  string     `json:"label_b"`
	RunsA   int        `json:"runs_a"`
	RunsB   int        `json:"runs_b"`
	Steps   []ABStep   `json:"steps"`
	Average []ABMetric `json:"average"`
	// MaxUsers are the largest loads each side kept (under its ceiling, when
	// the runs stepped to one), per run.
	MaxUsersA []float64 `json:"max_users_a"`
	MaxUsersB []float64 `json:"max_users_b"`
	// OpenA and OpenB mark runs that never reached their ceiling: their
	// largest load is at least the figure.
	OpenA []bool `json:"open_a,omitempty"`
	OpenB []bool `json:"open_b,omitempty"`
	// Cache accounting per side: the share of reads the engine's cache
	// served, and the device reads per second, over all measured steps.
	CacheA *CacheAccount `json:"cache_a,omitempty"`
	CacheB *CacheAccount `json:"cache_b,omitempty"`
}

// CacheAccount says where a side's reads were served.
type CacheAccount struct {
	// CacheServedPct is the share of the engine's page reads its cache served.
	CacheServedPct float64 `json:"cache_served_pct"`
	// OSReadsPerS are the page reads the engine asked of the OS, per second.
	OSReadsPerS float64 `json:"os_reads_per_s"`
	// DeviceReadsPerS are the reads that reached the block devices, per second.
	DeviceReadsPerS float64 `json:"device_reads_per_s"`
	// DeviceReadAwaitMS is the mean device read latency.
	DeviceReadAwaitMS float64 `json:"device_read_await_ms"`
}

type stepFigure struct {
	name           string
	higherIsBetter bool
	value          func(results.Step) (float64, bool)
}

// abFigures are the figures the study compares: throughput and response
// time of the interactive work when the workload separates it from
// background batch jobs (AS3AP), else of all transactions.
var abFigures = []stepFigure{
	{name: "TPS", higherIsBetter: true, value: func(s results.Step) (float64, bool) {
		if v, ok := s.Figure("interactive_tps"); ok {
			return v, true
		}
		return s.Figure("tps")
	}},
	{name: "mean response time (ms)", value: func(s results.Step) (float64, bool) {
		if v, ok := s.Figure("interactive_latency_mean"); ok {
			return v, true
		}
		if s.Total == nil || s.Total.Latency.Count == 0 {
			return 0, false
		}
		return s.Total.Latency.MeanUS / 1000, true
	}},
	{name: "p95 response time (ms)", value: func(s results.Step) (float64, bool) {
		if v, ok := s.Figure("interactive_latency_p95"); ok {
			return v, true
		}
		if s.Total == nil || s.Total.Latency.Count == 0 {
			return 0, false
		}
		return float64(s.Total.Latency.P95US) / 1000, true
	}},
}

// Compare computes the A/B table from the runs of both sides. Steps are
// matched by user count; a count only one side reached is left out of the
// per-step table (the max-load figures show it).
func (ab AB) Compare() (ABResult, error) {
	if len(ab.A) == 0 || len(ab.B) == 0 {
		return ABResult{}, fmt.Errorf("an A/B comparison needs at least one run on each side (got %d and %d)", len(ab.A), len(ab.B))
	}
	res := ABResult{LabelA: ab.LabelA, LabelB: ab.LabelB, RunsA: len(ab.A), RunsB: len(ab.B)}
	usersA, usersB := stepsByUsers(ab.A), stepsByUsers(ab.B)
	var users []int
	for u := range usersA {
		if _, ok := usersB[u]; ok {
			users = append(users, u)
		}
	}
	sort.Ints(users)
	sums := make([][2][]float64, len(abFigures))
	for _, u := range users {
		step := ABStep{Users: u}
		for fi, f := range abFigures {
			a, b := collect(usersA[u], f), collect(usersB[u], f)
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			m := metric(f, a, b)
			step.Metrics = append(step.Metrics, m)
			sums[fi][0] = append(sums[fi][0], m.A.Mean)
			sums[fi][1] = append(sums[fi][1], m.B.Mean)
		}
		res.Steps = append(res.Steps, step)
	}
	for fi, f := range abFigures {
		if len(sums[fi][0]) == 0 {
			continue
		}
		m := metric(f, []float64{mean(sums[fi][0])}, []float64{mean(sums[fi][1])})
		m.BeyondSpread = false // an average over steps has no run spread of its own
		res.Average = append(res.Average, m)
	}
	res.MaxUsersA, res.OpenA = maxUsers(ab.A)
	res.MaxUsersB, res.OpenB = maxUsers(ab.B)
	res.CacheA, res.CacheB = cacheAccount(ab.A), cacheAccount(ab.B)
	return res, nil
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

func collect(steps []results.Step, f stepFigure) []float64 {
	var out []float64
	for _, s := range steps {
		if v, ok := f.value(s); ok {
			out = append(out, v)
		}
	}
	return out
}

func side(vs []float64) Side {
	s := Side{Runs: vs, Min: math.Inf(1), Max: math.Inf(-1)}
	for _, v := range vs {
		s.Min = math.Min(s.Min, v)
		s.Max = math.Max(s.Max, v)
	}
	s.Mean = mean(vs)
	return s
}

func mean(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	var t float64
	for _, v := range vs {
		t += v
	}
	return t / float64(len(vs))
}

func metric(f stepFigure, a, b []float64) ABMetric {
	m := ABMetric{Name: f.name, HigherIsBetter: f.higherIsBetter, A: side(a), B: side(b)}
	m.Differential = m.B.Mean - m.A.Mean
	if m.A.Mean != 0 {
		m.ImprovementPct = m.Differential / m.A.Mean * 100
		if !f.higherIsBetter {
			m.ImprovementPct = -m.ImprovementPct
		}
	}
	m.BeyondSpread = len(a) > 1 && len(b) > 1 && (m.A.Max < m.B.Min || m.B.Max < m.A.Min)
	return m
}

// Run-level figures of a stepping run (runner.Ceiling's names; the runner
// imports this package, so the names are repeated here).
const (
	figureMaxUsers       = "max_users_under_ceiling"
	figureCeilingReached = "ceiling_reached"
)

// maxUsers reads each run's largest load: the largest user count kept under
// its ceiling when the run stepped to one, else the largest user count that
// completed. open says the run never reached its ceiling, so its load is a
// lower bound.
func maxUsers(runs []*results.Loaded) (users []float64, open []bool) {
	for _, l := range runs {
		best, found, reached := 0.0, false, true
		for _, f := range l.Run.Figures {
			switch f.Name {
			case figureMaxUsers:
				best, found = f.Value, true
			case figureCeilingReached:
				reached = f.Value != 0
			}
		}
		if !found {
			for _, s := range l.Steps {
				if s.Status == results.StatusCompleted && float64(s.Users) > best {
					best = float64(s.Users)
				}
			}
		}
		users = append(users, best)
		open = append(open, found && !reached)
	}
	return users, open
}

// telemetryMeans is the slice of a step's telemetry summary cache accounting reads.
type telemetryMeans struct {
	Metrics map[string]struct {
		Mean float64 `json:"mean"`
	} `json:"metrics"`
}

// cacheAccount averages, over every measured step of every run, the engine's
// cache hits and misses (the engine counters cache_hit_reads and
// cache_miss_reads) and the devices' reads.
func cacheAccount(runs []*results.Loaded) *CacheAccount {
	var hits, misses, dev, await []float64
	for _, l := range runs {
		for _, s := range l.Steps {
			var t telemetryMeans
			if len(s.Telemetry) == 0 || json.Unmarshal(s.Telemetry, &t) != nil {
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
	c := &CacheAccount{DeviceReadsPerS: mean(dev)}
	if len(await) > 0 {
		c.DeviceReadAwaitMS = mean(await)
	}
	if len(hits) > 0 {
		h, m := mean(hits), mean(misses)
		c.OSReadsPerS = m
		if h+m > 0 {
			c.CacheServedPct = h / (h + m) * 100
		}
	}
	return c
}

// Markdown writes the comparison in the form of METHODOLOGY §2's table.
func (r ABResult) Markdown(w io.Writer) error {
	fmt.Fprintf(w, "# A/B: %s vs %s\n\n", r.LabelA, r.LabelB)
	fmt.Fprintf(w, "A: %s (%d runs). B: %s (%d runs). Improvement is B against A, positive when B is better.", r.LabelA, r.RunsA, r.LabelB, r.RunsB)
	if r.RunsA > 1 && r.RunsB > 1 {
		fmt.Fprintf(w, " A difference marks **beyond spread** when A's and B's runs do not overlap.")
	}
	fmt.Fprintf(w, "\n\n")
	for i, f := range abFigures {
		fmt.Fprintf(w, "## %s\n\n| users | A | B | differential | improvement |", f.name)
		multi := r.RunsA > 1 && r.RunsB > 1
		if multi {
			fmt.Fprintf(w, " A range | B range | beyond spread |")
		}
		fmt.Fprintf(w, "\n|---:|---:|---:|---:|---:|")
		if multi {
			fmt.Fprintf(w, "---:|---:|:---:|")
		}
		fmt.Fprintln(w)
		for _, s := range r.Steps {
			for _, m := range s.Metrics {
				if m.Name != f.name {
					continue
				}
				fmt.Fprintf(w, "| %d | %s | %s | %s | %+.0f %% |", s.Users, num(m.A.Mean), num(m.B.Mean), signed(m.Differential), m.ImprovementPct)
				if multi {
					beyond := "no"
					if m.BeyondSpread {
						beyond = "**yes**"
					}
					fmt.Fprintf(w, " %s–%s | %s–%s | %s |", num(m.A.Min), num(m.A.Max), num(m.B.Min), num(m.B.Max), beyond)
				}
				fmt.Fprintln(w)
			}
		}
		if i < len(r.Average) {
			for _, m := range r.Average {
				if m.Name == f.name {
					fmt.Fprintf(w, "| **average** | %s | %s | %s | **%+.0f %%** |", num(m.A.Mean), num(m.B.Mean), signed(m.Differential), m.ImprovementPct)
					if multi {
						fmt.Fprintf(w, " | | |")
					}
					fmt.Fprintln(w)
				}
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Largest load\n\n| side | per run | mean |\n|---|---|---:|\n")
	fmt.Fprintf(w, "| A %s | %s | %s |\n| B %s | %s | %s |\n\n", r.LabelA, loads(r.MaxUsersA, r.OpenA), num(mean(r.MaxUsersA)), r.LabelB, loads(r.MaxUsersB, r.OpenB), num(mean(r.MaxUsersB)))
	if anyTrue(r.OpenA) || anyTrue(r.OpenB) {
		fmt.Fprintf(w, "≥ marks a run that never reached its ceiling: it kept at least that load.\n\n")
	}
	if r.CacheA != nil || r.CacheB != nil {
		fmt.Fprintf(w, "## Where reads were served\n\n| side | engine cache served | reads asked of the OS /s | reads reaching the device /s | device read latency (ms) |\n|---|---:|---:|---:|---:|\n")
		for _, c := range []struct {
			label string
			c     *CacheAccount
		}{{"A " + r.LabelA, r.CacheA}, {"B " + r.LabelB, r.CacheB}} {
			if c.c == nil {
				fmt.Fprintf(w, "| %s | - | - | - | - |\n", c.label)
				continue
			}
			served := "-"
			if c.c.OSReadsPerS > 0 || c.c.CacheServedPct > 0 {
				served = fmt.Sprintf("%.0f %%", c.c.CacheServedPct)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f |\n", c.label, served, num(c.c.OSReadsPerS), num(c.c.DeviceReadsPerS), c.c.DeviceReadAwaitMS)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// Text writes the per-step throughput and response-time table for a terminal.
func (r ABResult) Text(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "users\tA TPS\tB TPS\tdiff\timprovement\tA ms\tB ms\tdiff\timprovement\t\n")
	row := func(label string, ms []ABMetric) {
		var tps, rt *ABMetric
		for i := range ms {
			switch ms[i].Name {
			case abFigures[0].name:
				tps = &ms[i]
			case abFigures[1].name:
				rt = &ms[i]
			}
		}
		if tps == nil || rt == nil {
			return
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.0f %%\t%s\t%s\t%s\t%+.0f %%\t\n", label, num(tps.A.Mean), num(tps.B.Mean), signed(tps.Differential), tps.ImprovementPct,
			num(rt.A.Mean), num(rt.B.Mean), signed(rt.Differential), rt.ImprovementPct)
	}
	for _, s := range r.Steps {
		row(fmt.Sprint(s.Users), s.Metrics)
	}
	row("average", r.Average)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "largest load: A %s, B %s\n", num(mean(r.MaxUsersA)), num(mean(r.MaxUsersB)))
	return nil
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func signed(v float64) string {
	if v >= 0 {
		return "+" + num(v)
	}
	return num(v)
}

func loads(vs []float64, open []bool) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%.0f", v)
		if i < len(open) && open[i] {
			parts[i] = "≥ " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// WriteAB compares the runs in dirsA and dirsB and writes the result as
// stem.json (with the directories compared) and the table as stem.md.
func WriteAB(stem string, dirsA, dirsB []string, labelA, labelB string) (ABResult, error) {
	a, err := results.LoadAll(dirsA)
	if err != nil {
		return ABResult{}, err
	}
	b, err := results.LoadAll(dirsB)
	if err != nil {
		return ABResult{}, err
	}
	res, err := AB{A: a, B: b, LabelA: labelA, LabelB: labelB}.Compare()
	if err != nil {
		return res, err
	}
	if err := results.WriteJSON(stem+".json", map[string]any{"result": res, "runs_a": dirsA, "runs_b": dirsB}); err != nil {
		return res, err
	}
	var md strings.Builder
	res.Markdown(&md)
	return res, results.WriteFileAtomic(stem+".md", []byte(md.String()))
}
