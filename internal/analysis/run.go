package analysis

import (
	"dbio/internal/results"
)

// Recorded is a loaded results directory with its steps sorted by what they
// measured.
type Recorded struct {
	*results.Loaded
	// Workloads are the transaction steps (TPC-C and the like), grouped by
	// kind in the order they ran.
	Workloads []WorkloadSteps
	// Fio are the fio points; each has its FioPoint (a step recorded
	// without one gets one naming the step).
	Fio []results.Step
	// BlockIO are a capture's and a replay's steps (each has its BlockIO).
	BlockIO []results.Step
	// Other are the steps with figures only (backups, tenants...).
	Other []results.Step
}

// WorkloadSteps are the transaction steps of one kind.
type WorkloadSteps struct {
	Kind  string
	Steps []results.Step
}

// NewRecorded sorts a loaded run's steps.
func NewRecorded(l *results.Loaded) *Recorded {
	r := &Recorded{Loaded: l}
	index := map[string]int{}
	for _, s := range l.Steps {
		switch {
		case s.Kind == results.KindFio:
			if s.Fio == nil {
				s.Fio = &results.FioPoint{FioPlan: results.FioPlan{Name: s.Name, Series: s.Name}, Status: s.Status}
			}
			r.Fio = append(r.Fio, s)
		case results.IsBlockIO(s.Kind) && s.BlockIO != nil:
			r.BlockIO = append(r.BlockIO, s)
		case s.Total != nil:
			i, ok := index[s.Kind]
			if !ok {
				i = len(r.Workloads)
				index[s.Kind] = i
				r.Workloads = append(r.Workloads, WorkloadSteps{Kind: s.Kind})
			}
			r.Workloads[i].Steps = append(r.Workloads[i].Steps, s)
		default:
			r.Other = append(r.Other, s)
		}
	}
	return r
}

// Workload returns the steps of one kind.
func (r *Recorded) Workload(kind string) (WorkloadSteps, bool) {
	for _, w := range r.Workloads {
		if w.Kind == kind {
			return w, true
		}
	}
	return WorkloadSteps{}, false
}

// FioProfile is the fio profile the run's points came from, "" when none says.
func (r *Recorded) FioProfile() string {
	for _, p := range r.Fio {
		if p.Fio.Profile != "" {
			return p.Fio.Profile
		}
	}
	return ""
}

// Warehouses is the TPC-C scale, from the configuration or the load report.
func (r *Recorded) Warehouses() int {
	if n, _ := tpccSettings(r.Run.Config).Int("warehouses"); n > 0 {
		return int(n)
	}
	if r.Run.Load != nil {
		return r.Run.Load.Scale
	}
	return 0
}

// Users is the virtual-user sequence: as configured, else as run.
func (r *Recorded) Users(w WorkloadSteps) []int {
	if u := r.Run.Config.Users; len(u) > 0 {
		return u
	}
	var out []int
	for _, s := range w.Steps {
		out = append(out, s.Users)
	}
	return out
}

// Completed says a fio point finished with fio's figures.
func Completed(s results.Step) bool {
	_, ok := s.Figure(results.FigureIOPS)
	return s.Status == results.StatusCompleted && ok
}
