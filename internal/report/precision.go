package report

import (
	"fmt"
	"strings"

	"dbio/internal/results"
)

// precisionSteps are the steps whose measurement was to end once precise.
func precisionSteps(steps []results.Step) []results.Step {
	var out []results.Step
	for _, s := range steps {
		if s.Precision != nil {
			out = append(out, s)
		}
	}
	return out
}

// precisionFinding says how the measurements that were to end once their
// figures were precise ended: how many did, after how long, and which ran
// to their ceiling and why. Empty when the measurements were of fixed length.
func precisionFinding(title string, steps []results.Step) string {
	ps := precisionSteps(steps)
	if len(ps) == 0 {
		return ""
	}
	first := ps[0].Precision
	var reached []float64
	var ceiling, unsteady, stopped []string
	for _, s := range ps {
		switch s.Precision.Ended {
		case results.PrecisionReached:
			reached = append(reached, s.Precision.AtS)
		case results.PrecisionCeiling:
			ceiling = append(ceiling, usersLabel(s))
		case results.PrecisionNotSteady:
			unsteady = append(unsteady, usersLabel(s))
		default:
			stopped = append(stopped, usersLabel(s))
		}
	}
	out := fmt.Sprintf("%s's measurements were to end once precise (%s at 95 %%, at least %s s, at most %s s)",
		title, first.Asked, fixed(first.MinS, 0), fixed(first.CeilingS, 0))
	switch {
	case len(reached) == len(ps):
		lo, hi := reached[0], reached[0]
		for _, v := range reached {
			lo, hi = min(lo, v), max(hi, v)
		}
		out += ": every step got there, after " + secondsRange(lo, hi) + "."
	case len(reached) > 0:
		out += fmt.Sprintf(": %d of %d steps got there.", len(reached), len(ps))
	default:
		out += ": no step got there."
	}
	if len(ceiling) > 0 {
		out += fmt.Sprintf(" At %s the measurement ran to its ceiling, steady but not precise: its interval is the width reached.", strings.Join(ceiling, ", "))
	}
	if len(unsteady) > 0 {
		out += fmt.Sprintf(" At %s it ran to its ceiling and was not steady at the end: the figures describe a moving system.", strings.Join(unsteady, ", "))
	}
	if len(stopped) > 0 {
		out += fmt.Sprintf(" At %s it stopped before either.", strings.Join(stopped, ", "))
	}
	return out
}

// precisionTable shows each step's measurement until precise: how it
// ended, when, and each figure's interval.
func precisionTable(steps []results.Step, id string) *table {
	ps := precisionSteps(steps)
	if len(ps) == 0 {
		return nil
	}
	first := ps[0].Precision
	t := &table{ID: id, Title: "Measurement until precise",
		Caption: fmt.Sprintf("Each measurement was to end once every figure's 95 %% confidence interval was within its bound (%s) and throughput steady (%s), after at least %s s; the interval of a figure's per-second mean comes from batch means, batches grown until successive means are uncorrelated. The drift is the least-squares line of the throughput across the measurement when it ended, from its start to its end in %% of its mean, with its interval from batch means too.",
			first.Asked, first.Steady, fixed(first.MinS, 0))}
	t.Columns = []column{{Name: "users", Numeric: true}, {Name: "ended"}, {Name: "measured (s)", Numeric: true}, {Name: "ceiling (s)", Numeric: true},
		{Name: "figure"}, {Name: "mean", Numeric: true}, {Name: "interval"}, {Name: "reached ±%", Numeric: true}, {Name: "asked ±%", Numeric: true}, {Name: "batches"}, {Name: "drift"}}
	for _, s := range ps {
		p := s.Precision
		ended := cell{Text: p.Ended, Raw: p.Ended}
		switch p.Ended {
		case results.PrecisionReached:
			ended.Class = "better"
		case results.PrecisionNotSteady, results.PrecisionStopped:
			ended.Class = "worse"
		}
		for i, f := range p.Figures {
			row := []cell{numCell(float64(s.Users), thousands), ended, numCell(p.AtS, func(v float64) string { return fixed(v, 0) }),
				numCell(p.CeilingS, func(v float64) string { return fixed(v, 0) })}
			if i > 0 {
				row = []cell{{}, {}, {}, {}}
			}
			interval, reached, batches := cell{Text: "none yet"}, cell{Text: "-"}, cell{Text: "-"}
			if f.Lo != nil && f.Hi != nil {
				interval = cell{Text: quantity(*f.Lo) + " to " + quantity(*f.Hi)}
				batches = cell{Text: fmt.Sprintf("%d of %d s", f.Batches, f.BatchS)}
			}
			if f.ReachedPct != nil {
				reached = numCell(*f.ReachedPct, func(v float64) string { return fixed(v, 2) })
				if *f.ReachedPct > f.AskedPct {
					reached.Class = "worse"
				}
			}
			row = append(row, cell{Text: f.Name, Raw: f.Name}, numCell(f.Mean, quantity), interval, reached,
				numCell(f.AskedPct, func(v float64) string { return fixed(v, 2) }), batches, driftCell(p, i))
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// driftCell is the steadiness series' drift on a measurement's first row:
// "nopm -3.1 % ± 8.2 %", marked worse when the measurement ended unsteady.
func driftCell(p *results.StepPrecision, row int) cell {
	if row > 0 {
		return cell{}
	}
	if p.Drift == nil {
		return cell{Text: "-"}
	}
	c := cell{Text: p.Drift.Series + " " + strings.TrimPrefix(p.Drift.Said(), p.Drift.Series+" drifted ")}
	if !p.SteadyAtEnd {
		c.Class = "worse"
	}
	return c
}
