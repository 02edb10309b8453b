package analysis

import (
	"math"

	"dbio/internal/results"
)

// Headline is what one figure says of a run in a single line: its best
// value and where it was reached.
type Headline struct {
	// Kind is the workload kind ("tpcc") or "fio".
	Kind string
	// Figures are the headline figures at the peak step, in the order
	// Throughput gives them (TPM then NOPM); for fio, IOPS of the best point.
	Figures []results.FigureDef
	Values  []float64
	// Users is the peak step's user count; Point the best fio point's name.
	Users int
	Point string
}

// Headlines are a run's headline figures: for each workload, its throughput
// figures at the step with the highest headline; for fio, the point with the
// most IOPS. A run without a finished step has none.
func Headlines(r *Recorded) []Headline {
	var out []Headline
	for _, w := range r.Workloads {
		tput := Throughput(w.Steps)
		i := Peak(w.Steps, tput[0].Name)
		if i < 0 || math.IsNaN(Value(w.Steps[i], tput[0].Name)) {
			continue
		}
		h := Headline{Kind: w.Kind, Figures: tput, Users: w.Steps[i].Users}
		for _, f := range tput {
			h.Values = append(h.Values, Value(w.Steps[i], f.Name))
		}
		out = append(out, h)
	}
	best := -1
	for i, p := range r.Fio {
		if Completed(p) && (best < 0 || Value(p, results.FigureIOPS) > Value(r.Fio[best], results.FigureIOPS)) {
			best = i
		}
	}
	if best >= 0 {
		out = append(out, Headline{Kind: "fio", Figures: []results.FigureDef{results.FigureIOPS.Def()},
			Values: []float64{Value(r.Fio[best], results.FigureIOPS)}, Point: r.Fio[best].Name})
	}
	for _, s := range r.BlockIO {
		h := Headline{Kind: s.Kind, Point: BlockIOVerdict(s)}
		for _, n := range []results.FigureName{results.FigureReadIOPS, results.FigureWriteIOPS, results.FigureSyncsPerSec} {
			if v := Value(s, n); v > 0 {
				h.Figures = append(h.Figures, n.Def())
				h.Values = append(h.Values, v)
			}
		}
		out = append(out, h)
	}
	return out
}
