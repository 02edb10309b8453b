package analysis

import "dbio/internal/results"

// BottleneckChange is where compared runs' verdicts part: at one step every
// run reached, each run's verdict, when a run's differs in kind from the
// baseline's.
type BottleneckChange struct {
	// Label is the step's row ("4", the users).
	Label string
	// Verdicts are each run's verdict at the step, nil where a run has
	// none (no telemetry, or not that step).
	Verdicts []*results.Verdict
	// Also are the labels of the other rows where the verdicts part too,
	// in row order.
	Also []string
}

// BottleneckChanged finds the heaviest row (the last) at which a run's
// verdict differs in kind from the baseline's; false when the runs agree
// at every row they share.
func BottleneckChanged(rows []Row) (BottleneckChange, bool) {
	var out BottleneckChange
	found := false
	for i := len(rows) - 1; i >= 0; i-- {
		vs, changed := verdictsAt(rows[i])
		if !changed {
			continue
		}
		if !found {
			out.Label, out.Verdicts, found = rows[i].Label, vs, true
			continue
		}
		out.Also = append([]string{rows[i].Label}, out.Also...)
	}
	return out, found
}

// verdictsAt is each run's verdict at a row, and whether any run's kind
// differs from the baseline's.
func verdictsAt(row Row) ([]*results.Verdict, bool) {
	vs := make([]*results.Verdict, len(row.Steps))
	for i, s := range row.Steps {
		if s != nil && s.Telemetry != nil && s.Telemetry.Verdict.Text != "" {
			vs[i] = &s.Telemetry.Verdict
		}
	}
	if len(vs) == 0 || vs[0] == nil {
		return vs, false
	}
	for _, v := range vs[1:] {
		if v != nil && v.Kind != vs[0].Kind {
			return vs, true
		}
	}
	return vs, false
}
