package analysis

import (
	"fmt"
	"math"

	"dbio/internal/results"
	"dbio/internal/stats"
)

// What a figure measured over repeated runs says, written once for every
// reader of repeats: a repeated run's report and terminal summary, dbio
// compare given repeat sets, a suite's comparison, dbio ab, and a study's
// expectations. Repeated summarises one configuration's repeats;
// CompareRepeated says whether two configurations differ beyond chance and
// beyond the noise between repeats of the same configuration.

// RepeatedFigure is one figure over the repeats of one configuration: the
// median with its distribution-free 95 % confidence interval, and the spread.
type RepeatedFigure struct {
	// N is the number of repeats that have the figure.
	N int
	// Median is the middle repeat's value (the mean of the two middle ones
	// when N is even): one outlying repeat moves a mean, not a median.
	Median float64
	// CI says whether the repeats are enough for an interval of the
	// median at 95 % (NeedForCI of them); CILo and CIHi bound it, at the
	// actual coverage Confidence (order statistics step in whole ranks, so
	// it is at least 95 %).
	CI         bool
	CILo, CIHi float64
	Confidence float64
	// NeedForCI is how many repeats give an interval at 95 % (6).
	NeedForCI int
	// Min and Max are the spread between repeats.
	Min, Max float64
	// Values are the repeats' values, in run order.
	Values []float64
}

// Spread is Max − Min, the noise between repeats in the figure's unit.
func (f RepeatedFigure) Spread() float64 { return f.Max - f.Min }

// Repeated summarises one figure's values over repeats of one
// configuration. NaN values (a repeat without the figure) are left out; the
// figure is false when no value remains or a value is infinite.
func Repeated(values []float64) (RepeatedFigure, bool) {
	vs := finite(values)
	if len(vs) == 0 || len(vs) != countNumbers(values) {
		return RepeatedFigure{}, false
	}
	s, err := stats.Summarize(vs)
	if err != nil {
		return RepeatedFigure{}, false
	}
	return repeatedOf(vs, s), true
}

func repeatedOf(vs []float64, s stats.Summary) RepeatedFigure {
	f := RepeatedFigure{N: s.N, Median: s.Median, Min: s.Min, Max: s.Max, Values: vs, NeedForCI: s.Interval.NeedN}
	if s.Interval.Available {
		f.CI, f.CILo, f.CIHi, f.Confidence = true, s.Interval.Lo, s.Interval.Hi, s.Interval.Confidence
	}
	return f
}

// Significance is what two sets of repeats let one conclude about a difference.
type Significance int

// The three conclusions, in the words reports use (see String).
const (
	// TooFewRepeats: no outcome of these sizes could show a difference
	// (fewer than RepeatedDifference.NeedPerSide repeats a side).
	TooFewRepeats Significance = iota
	// NotSignificant: the test did not find a difference at 5 %, or found
	// one no larger than the spread of a side's own repeats (WithinNoise).
	NotSignificant
	// Significant: a difference beyond chance and beyond the noise.
	Significant
)

// String is the conclusion as reports and records state it.
func (s Significance) String() string {
	switch s {
	case TooFewRepeats:
		return "too few repeats to tell"
	case NotSignificant:
		return "no significant difference"
	case Significant:
		return "significant difference"
	}
	return fmt.Sprintf("Significance(%d)", int(s))
}

// RepeatedDifference is configuration B's repeats of a figure read against
// configuration A's.
type RepeatedDifference struct {
	Metric Metric
	A, B   RepeatedFigure
	// Verdict is the conclusion: a Mann-Whitney U test at Alpha (5 %), and
	// a difference of the medians larger than the spread of each side's own
	// repeats (stats.SpreadRule: read as ratios when every value is above
	// zero).
	Verdict Significance
	// P is the U test's two-sided p-value; Alpha the level it is read at.
	P, Alpha float64
	// WithinNoise says the test alone would call the difference but it is
	// no larger than a side's own spread; the verdict is then NotSignificant.
	WithinNoise bool
	// NeedPerSide is how many repeats a side can show a difference (4).
	NeedPerSide int
	// Ratio is median(B) / median(A). RatioCI says whether the sizes and
	// signs allow its confidence interval at 1 − Alpha (Hodges-Lehmann,
	// from the pairs' ratios), bounded by RatioLo and RatioHi.
	Ratio            float64
	RatioCI          bool
	RatioLo, RatioHi float64
	// Difference is the medians read against each other as a comparison
	// of two runs reads them (differential, change in %, better or worse),
	// except that its Judgement is Unchanged unless the verdict is
	// Significant: a difference the repeats cannot tell from noise is no
	// change.
	Difference
}

// CompareRepeated reads B's repeats of metric m against A's. NaN values are
// left out; false when a side has no value left or a value is infinite.
func CompareRepeated(a, b []float64, m Metric) (RepeatedDifference, bool) {
	va, vb := finite(a), finite(b)
	if len(va) == 0 || len(vb) == 0 || len(va) != countNumbers(a) || len(vb) != countNumbers(b) {
		return RepeatedDifference{}, false
	}
	cmp, err := stats.Compare(va, vb, stats.Options{})
	if err != nil {
		return RepeatedDifference{}, false
	}
	d := RepeatedDifference{
		Metric: m, A: repeatedOf(va, cmp.A), B: repeatedOf(vb, cmp.B),
		Verdict: significance(cmp.Verdict), P: cmp.Test.P, Alpha: cmp.Alpha, WithinNoise: cmp.WithinNoise,
		NeedPerSide: cmp.NeedPerSide, Ratio: cmp.Ratio,
	}
	if ri := cmp.RatioInterval; ri.Available {
		d.RatioCI, d.RatioLo, d.RatioHi = true, ri.Lo, ri.Hi
	}
	d.Difference = Compare(Side{Mean: cmp.A.Median, Runs: va, Min: cmp.A.Min, Max: cmp.A.Max},
		Side{Mean: cmp.B.Median, Runs: vb, Min: cmp.B.Min, Max: cmp.B.Max}, m)
	if d.Verdict != Significant && d.Judgement != NoValue {
		d.Judgement = Unchanged
	}
	return d, true
}

func significance(v stats.Verdict) Significance {
	switch v {
	case stats.Different:
		return Significant
	case stats.NoDifference:
		return NotSignificant
	}
	return TooFewRepeats
}

// finite are the values that are numbers, NaN left out.
func finite(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// countNumbers counts the values that are not NaN (infinities included).
func countNumbers(vs []float64) int {
	n := 0
	for _, v := range vs {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// RepeatedTable is one kind of step (a workload's, or fio's points) over
// the repeats of one configuration: per row (a user count, a fio point) each
// metric's RepeatedFigure.
type RepeatedTable struct {
	// Kind is the workload kind ("tpcc"), "fio", or the kind of steps
	// with figures only ("backup").
	Kind string
	// Key names what a row is: "users", "point" or "step" (a step's name).
	Key     string
	Metrics []Metric
	Rows    []RepeatedRow
}

// RepeatedRow is one row of a RepeatedTable.
type RepeatedRow struct {
	Label string
	// Users is the row's user count (0 for a fio point).
	Users int
	// Figures are the metrics' figures, in the table's order; a figure no
	// repeat has is zero (N = 0).
	Figures []RepeatedFigure
}

// Figure is the row's figure of the metric with the given ID; false when
// the table has no such metric or no repeat has it.
func (t RepeatedTable) Figure(row int, id string) (RepeatedFigure, bool) {
	for i, m := range t.Metrics {
		if m.ID == id && row < len(t.Rows) {
			f := t.Rows[row].Figures[i]
			return f, f.N > 0
		}
	}
	return RepeatedFigure{}, false
}

// RepeatedTables summarise the repeats of one configuration: each workload
// kind's steps matched by user count and read by WorkloadMetrics, then the
// fio points matched by what they measured and read by FioMetrics, then the
// steps with figures only (backups, restores, a noisy-neighbour phase's
// totals) matched by name and read by StepFigureMetrics (see stepGroups).
func RepeatedTables(runs []*Recorded) []RepeatedTable {
	if len(runs) == 0 {
		return nil
	}
	var out []RepeatedTable
	for _, g := range stepGroups(runs, runs) {
		out = append(out, repeatedTable(g.kind, g.key, g.metrics, g.rows))
	}
	return out
}

// stepGroup is one kind of step matched across runs row by row: by user
// count ("users"), by fio point ("point") or by step name ("step"), with
// the metrics it is read by.
type stepGroup struct {
	kind, key string
	metrics   []Metric
	rows      []Row
}

// stepGroups match the steps of runs kind by kind, in the order base's
// first run has them; the metrics are read from base's steps. A workload's
// steps are matched by user count, unless one run has two steps of the kind
// at one user count (a noisy-neighbour study's tenants and phases): they are
// then matched by name, as steps with figures only always are.
func stepGroups(runs, base []*Recorded) []stepGroup {
	var out []stepGroup
	for _, w := range base[0].Workloads {
		var steps []results.Step
		for _, r := range base {
			if ws, ok := r.Workload(w.Kind); ok {
				steps = append(steps, ws.Steps...)
			}
		}
		g := stepGroup{kind: w.Kind, key: "users", metrics: WorkloadMetrics(steps), rows: RowsByUsers(runs, w.Kind)}
		if usersRepeat(runs, w.Kind) {
			g.key, g.rows = "step", RowsByName(runs, func(r *Recorded) []results.Step { ws, _ := r.Workload(w.Kind); return ws.Steps })
		}
		out = append(out, g)
	}
	if len(base[0].Fio) > 0 {
		out = append(out, stepGroup{kind: "fio", key: "point", metrics: FioMetrics(), rows: RowsByPoint(runs)})
	}
	for _, kind := range otherKinds(base[0]) {
		of := func(r *Recorded) []results.Step {
			var steps []results.Step
			for _, s := range r.Other {
				if s.Kind == kind {
					steps = append(steps, s)
				}
			}
			return steps
		}
		var steps []results.Step
		for _, r := range base {
			steps = append(steps, of(r)...)
		}
		out = append(out, stepGroup{kind: kind, key: "step", metrics: StepFigureMetrics(steps), rows: RowsByName(runs, of)})
	}
	return out
}

// usersRepeat says whether some run has two steps of the kind at one user count.
func usersRepeat(runs []*Recorded, kind string) bool {
	for _, r := range runs {
		w, _ := r.Workload(kind)
		seen := map[int]bool{}
		for _, s := range w.Steps {
			if seen[s.Users] {
				return true
			}
			seen[s.Users] = true
		}
	}
	return false
}

// otherKinds are the kinds of a run's steps with figures only, in the
// order they ran.
func otherKinds(r *Recorded) []string {
	var kinds []string
	seen := map[string]bool{}
	for _, s := range r.Other {
		if !seen[s.Kind] {
			seen[s.Kind] = true
			kinds = append(kinds, s.Kind)
		}
	}
	return kinds
}

func repeatedTable(kind, key string, metrics []Metric, rows []Row) RepeatedTable {
	t := RepeatedTable{Kind: kind, Key: key, Metrics: metrics}
	for _, row := range rows {
		r := RepeatedRow{Label: row.Label, Figures: make([]RepeatedFigure, len(metrics))}
		for _, s := range row.Steps {
			if s != nil && key == "users" {
				r.Users = s.Users
			}
		}
		for i, m := range metrics {
			vs := make([]float64, 0, len(row.Steps))
			for _, s := range row.Steps {
				// A fio row holds completed points only (RowsByPoint).
				if s != nil && (key == "point" || s.Status == results.StatusCompleted) {
					vs = append(vs, m.Value(*s))
				}
			}
			if f, ok := Repeated(vs); ok {
				r.Figures[i] = f
			}
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// RepeatedVersus is one metric of one kind of step, configuration B's
// repeats against configuration A's, row by row and over the average.
type RepeatedVersus struct {
	// Kind is the workload kind ("tpcc") or "fio"; Key names a row:
	// "users" or "point".
	Kind, Key string
	Metric    Metric
	Rows      []RepeatedVersusRow
	// Average compares each repeat's average of the metric over the rows
	// every repeat of both sides has: one value per repeat, as a row's
	// figure is. AverageRows counts those rows; HasAverage is false without any.
	Average     RepeatedDifference
	AverageRows int
	HasAverage  bool
}

// RepeatedVersusRow is one row (a user count, a fio point) of a RepeatedVersus.
type RepeatedVersusRow struct {
	Label string
	// Has is false when a side has no repeat with the figure at this row.
	Has bool
	RepeatedDifference
}

// CompareRepeatedSets reads configuration B's repeats against
// configuration A's, the way a comparison of single runs reads B against A:
// each kind of step of A's first repeat matched as stepGroups matches it
// (workloads by user count, fio points, other steps by name), every figure
// by CompareRepeated.
// A metric no row of both sides has is left out.
func CompareRepeatedSets(a, b []*Recorded) []RepeatedVersus {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	all := append(append([]*Recorded{}, a...), b...)
	var out []RepeatedVersus
	for _, g := range stepGroups(all, a) {
		rows := g.rows
		if g.key != "point" {
			rows = completedRows(rows)
		}
		for _, m := range g.metrics {
			if v, ok := repeatedVersus(g.kind, g.key, m, rows, len(a)); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// completedRows drops the steps that did not complete from rows of steps.
func completedRows(rows []Row) []Row {
	for _, row := range rows {
		for i, s := range row.Steps {
			if s != nil && s.Status != results.StatusCompleted {
				row.Steps[i] = nil
			}
		}
	}
	return rows
}

// repeatedVersus compares one metric row by row; the first na runs of each
// row are A's, the rest B's.
func repeatedVersus(kind, key string, m Metric, rows []Row, na int) (RepeatedVersus, bool) {
	v := RepeatedVersus{Kind: kind, Key: key, Metric: m}
	values := make([][]float64, len(rows)) // [row][run]
	var shared []int
	for i, row := range rows {
		vals := make([]float64, len(row.Steps))
		complete := true
		for j, s := range row.Steps {
			vals[j] = math.NaN()
			if s != nil {
				vals[j] = m.Value(*s)
			}
			complete = complete && !math.IsNaN(vals[j])
		}
		values[i] = vals
		r := RepeatedVersusRow{Label: row.Label}
		if d, ok := CompareRepeated(vals[:na], vals[na:], m); ok {
			r.Has, r.RepeatedDifference = true, d
		}
		v.Rows = append(v.Rows, r)
		if complete {
			shared = append(shared, i)
		}
	}
	if len(shared) > 0 {
		n := len(rows[0].Steps)
		avg := make([]float64, n)
		for j := range n {
			var sum float64
			for _, i := range shared {
				sum += values[i][j]
			}
			avg[j] = sum / float64(len(shared))
		}
		v.Average, v.HasAverage = CompareRepeated(avg[:na], avg[na:], m)
		v.AverageRows = len(shared)
	}
	for _, r := range v.Rows {
		if r.Has {
			return v, true
		}
	}
	return v, false
}

// RepeatsToTell is how many repeats a side an A/B study or a comparison of
// repeats needs before any difference can be called significant, for a
// command to say so before it runs.
func RepeatsToTell() int { return stats.RepeatsNeeded(stats.DefaultAlpha) }
