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

// ModalRows match the steps of one workload kind across sets of repeats by
// their user count, each set standing by one of its repeats' steps: the
// first whose verdict is of the kind most of the set's repeats had at that
// count. BottleneckChanged reads them as it reads single runs.
func ModalRows(sets [][]*Recorded, kind string) []Row {
	var rows []Row
	rowOf := map[string]int{}
	for si, runs := range sets {
		for _, row := range RowsByUsers(runs, kind) {
			i, ok := rowOf[row.Label]
			if !ok {
				i = len(rows)
				rowOf[row.Label] = i
				rows = append(rows, Row{Label: row.Label, Steps: make([]*results.Step, len(sets))})
			}
			rows[i].Steps[si] = modal(row.Steps)
		}
	}
	return rows
}

// modal is the first step whose verdict is of the kind most steps had.
func modal(steps []*results.Step) *results.Step {
	count := map[results.VerdictKind]int{}
	var best *results.Step
	for _, s := range steps {
		if s == nil || s.Telemetry == nil || s.Telemetry.Verdict.Text == "" {
			continue
		}
		k := s.Telemetry.Verdict.Kind
		count[k]++
		if best == nil || count[k] > count[best.Telemetry.Verdict.Kind] {
			best = s
		}
	}
	return best
}
