package analysis

import (
	"math"
	"strconv"

	"dbio/internal/results"
)

// Comparisons read every run against a baseline, A: per step (the same user
// count, the same fio point), the other run's value, the differential, the
// ratio and the change in %, then the same over the averages of the steps
// both runs completed. An A/B study does the same with several runs a side.

// Side is one side's value of a metric: the mean over its runs, and the
// spread (min to max) when there are several.
type Side struct {
	Mean, Min, Max float64
	Runs           []float64
}

// SideOf summarizes a side's values, one per run.
func SideOf(vs []float64) Side {
	s := Side{Runs: vs, Min: math.Inf(1), Max: math.Inf(-1)}
	for _, v := range vs {
		s.Min = math.Min(s.Min, v)
		s.Max = math.Max(s.Max, v)
	}
	s.Mean = Mean(vs)
	return s
}

// Difference is side B read against side A.
type Difference struct {
	A, B Side
	// Differential is B − A and Ratio B / A (of the means).
	Differential, Ratio float64
	// ChangePct is the change from A to B in % of A: NaN when either side
	// has no value or either is under the metric's floor.
	ChangePct float64
	// ImprovementPct is the change signed so that it is positive when B is
	// better; the change itself for a metric that is neither better higher
	// nor lower.
	ImprovementPct float64
	// UnderFloor says A or B is under the metric's floor: the ratio and the
	// change in % are left out (NaN) because a ratio of values that small
	// says more about rounding than about the runs; the differential stands.
	UnderFloor bool
	// Judgement says whether B is better or worse than A for the metric.
	Judgement Judgement
	// BeyondSpread says the ranges of A's and B's runs do not overlap (with
	// two runs a side or more), so the difference is larger than the
	// run-to-run noise measured here.
	BeyondSpread bool
}

// Judgement is how a difference reads for its metric.
type Judgement int

// Judgements. Unchanged covers changes under 1 % (or, under the floor,
// differentials smaller than the floor); Higher and Lower are the verdicts
// of a metric that is neither better higher nor lower.
const (
	NoValue Judgement = iota
	Unchanged
	Improved
	Worsened
	WentHigher
	WentLower
)

// Word is the judgement in a word: "better", "worse", "higher", "lower",
// "no change"; empty without a value.
func (j Judgement) Word() string {
	return [...]string{"", "no change", "better", "worse", "higher", "lower"}[j]
}

// Compare reads side b against side a for a metric.
func Compare(a, b Side, m Metric) Difference {
	d := Difference{A: a, B: b, Differential: b.Mean - a.Mean, Ratio: b.Mean / a.Mean, ChangePct: Change(a.Mean, b.Mean)}
	if m.Floor > 0 && (math.Abs(a.Mean) < m.Floor || math.Abs(b.Mean) < m.Floor) {
		d.UnderFloor, d.Ratio, d.ChangePct = true, math.NaN(), math.NaN()
	}
	d.ImprovementPct = d.ChangePct
	if m.Better == results.LowerBetter {
		d.ImprovementPct = -d.ChangePct
	}
	d.Judgement = judge(m, d)
	d.BeyondSpread = len(a.Runs) > 1 && len(b.Runs) > 1 && (a.Max < b.Min || b.Max < a.Min)
	return d
}

// judge reads a difference for its metric: by the change in % (under 1 %
// is no change) or, under the floor, by whether the differential reaches
// the floor. Against a zero A there is no %, but there is a direction.
func judge(m Metric, d Difference) Judgement {
	switch {
	case math.IsNaN(d.Differential):
		return NoValue
	case d.Differential == 0,
		d.UnderFloor && math.Abs(d.Differential) < m.Floor,
		!d.UnderFloor && math.Abs(d.ChangePct) < 1:
		return Unchanged
	}
	up := d.Differential > 0
	switch {
	case m.Better == results.NeitherBetter && up:
		return WentHigher
	case m.Better == results.NeitherBetter:
		return WentLower
	case up == (m.Better == results.HigherBetter):
		return Improved
	}
	return Worsened
}

// Change is the change from a to b in % of a, NaN when a is zero or either is NaN.
func Change(a, b float64) float64 {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return (b - a) / math.Abs(a) * 100
}

// Mean is the mean of some values, NaN without any.
func Mean(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	var t float64
	for _, v := range vs {
		t += v
	}
	return t / float64(len(vs))
}

// Row is one step matched across runs; Steps[i] is run i's, nil where run i lacks it.
type Row struct {
	Label string
	Steps []*results.Step
}

// RowsByUsers matches the steps of one workload kind by their user count,
// in the order the counts first appear (the baseline's first).
func RowsByUsers(runs []*Recorded, kind string) []Row {
	rowOf := map[int]int{}
	var rows []Row
	for ri, r := range runs {
		w, _ := r.Workload(kind)
		for i := range w.Steps {
			s := &w.Steps[i]
			k, ok := rowOf[s.Users]
			if !ok {
				k = len(rows)
				rowOf[s.Users] = k
				rows = append(rows, Row{Label: strconv.Itoa(s.Users), Steps: make([]*results.Step, len(runs))})
			}
			if rows[k].Steps[ri] == nil {
				rows[k].Steps[ri] = s
			}
		}
	}
	return rows
}

// RowsByName matches the steps of runs (those steps gives of each run) by
// their name: the steps a user count does not tell apart, as "backup-2"
// of every repeat of a backup run.
func RowsByName(runs []*Recorded, steps func(*Recorded) []results.Step) []Row {
	rowOf := map[string]int{}
	var rows []Row
	for ri, r := range runs {
		ss := steps(r)
		for i := range ss {
			s := &ss[i]
			k, ok := rowOf[s.Name]
			if !ok {
				k = len(rows)
				rowOf[s.Name] = k
				rows = append(rows, Row{Label: s.Name, Steps: make([]*results.Step, len(runs))})
			}
			if rows[k].Steps[ri] == nil {
				rows[k].Steps[ri] = s
			}
		}
	}
	return rows
}

// RowsByPoint matches fio points by what they measured (see PointKeys),
// keeping only the points that completed.
func RowsByPoint(runs []*Recorded) []Row {
	var rows []Row
	index := map[string]int{}
	for ri, r := range runs {
		for i, k := range PointKeys(r.Fio) {
			j, ok := index[k]
			if !ok {
				j = len(rows)
				index[k] = j
				rows = append(rows, Row{Label: r.Fio[i].Name, Steps: make([]*results.Step, len(runs))})
			}
			if Completed(r.Fio[i]) {
				rows[j].Steps[ri] = &r.Fio[i]
			}
		}
	}
	return rows
}

// Versus is one metric of every run against the baseline's.
type Versus struct {
	Metric Metric
	// Values are [row][run] (NaN where the run lacks the step); Against is
	// [row][run−1], each run after the baseline read against it.
	Values  [][]float64
	Against [][]Difference
	// Averages are each later run's averages over the rows it shares with
	// the baseline, read against the baseline's; Rows counts those rows.
	Averages []Average
}

// Average is one run's average against the baseline's over the rows both have.
type Average struct {
	Rows int
	Difference
}

// VersusBaseline compares every run with the first on one metric; false
// when no row has a value for the baseline and another run.
func VersusBaseline(m Metric, rows []Row, runs int) (Versus, bool) {
	v := Versus{Metric: m}
	sumA := make([]float64, runs-1)
	sumB := make([]float64, runs-1)
	counts := make([]int, runs-1)
	useful := false
	for _, row := range rows {
		vals := make([]float64, runs)
		for i, s := range row.Steps {
			vals[i] = math.NaN()
			if s != nil {
				vals[i] = m.Value(*s)
			}
		}
		var against []Difference
		for i := 1; i < runs; i++ {
			a, b := vals[0], vals[i]
			against = append(against, Compare(Side{Mean: a}, Side{Mean: b}, m))
			if !math.IsNaN(a) && !math.IsNaN(b) {
				useful = true
				counts[i-1]++
				sumA[i-1] += a
				sumB[i-1] += b
			}
		}
		v.Values = append(v.Values, vals)
		v.Against = append(v.Against, against)
	}
	if !useful {
		return Versus{}, false
	}
	for i := range counts {
		a, b := math.NaN(), math.NaN()
		if counts[i] > 0 {
			a, b = sumA[i]/float64(counts[i]), sumB[i]/float64(counts[i])
		}
		v.Averages = append(v.Averages, Average{Rows: counts[i], Difference: Compare(Side{Mean: a}, Side{Mean: b}, m)})
	}
	return v, true
}
