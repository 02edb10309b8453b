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
	// ChangePct is the change from A to B in % of A: NaN when A is zero or
	// either side has no value.
	ChangePct float64
	// ImprovementPct is the change signed so that it is positive when B is
	// better; the change itself for a metric that is neither better higher
	// nor lower.
	ImprovementPct float64
	// BeyondSpread says the ranges of A's and B's runs do not overlap (with
	// two runs a side or more), so the difference is larger than the
	// run-to-run noise measured here.
	BeyondSpread bool
}

// Compare reads side b against side a for a metric that improves in the
// direction better.
func Compare(a, b Side, better Better) Difference {
	d := Difference{A: a, B: b, Differential: b.Mean - a.Mean, Ratio: b.Mean / a.Mean, ChangePct: Change(a.Mean, b.Mean)}
	d.ImprovementPct = d.ChangePct
	if better == Lower {
		d.ImprovementPct = -d.ChangePct
	}
	d.BeyondSpread = len(a.Runs) > 1 && len(b.Runs) > 1 && (a.Max < b.Min || b.Max < a.Min)
	return d
}

// Change is the change from a to b in % of a, NaN when a is zero or either is NaN.
func Change(a, b float64) float64 {
	if a == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return (b - a) / math.Abs(a) * 100
}

// Assess classes a change as better (+1) or worse (−1) for a metric, 0 for
// no verdict: a metric that is neither, or a change under 1 %.
func Assess(m Metric, changePct float64) int {
	if m.Better == Neither || math.IsNaN(changePct) || math.Abs(changePct) < 1 {
		return 0
	}
	if (changePct > 0) == (m.Better == Higher) {
		return 1
	}
	return -1
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
			against = append(against, Compare(Side{Mean: a}, Side{Mean: b}, m.Better))
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
		v.Averages = append(v.Averages, Average{Rows: counts[i], Difference: Compare(Side{Mean: a}, Side{Mean: b}, m.Better)})
	}
	return v, true
}
