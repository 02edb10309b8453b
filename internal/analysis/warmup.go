package analysis

import "dbio/internal/results"

// Warmups is how the ramp-ups of a workload's steps ended when they were to
// end at steady state: which steps got there, and after how long.
type Warmups struct {
	// Criterion and WindowS are the first such step's (one run asks every
	// step for the same).
	Criterion string
	WindowS   float64
	// Steps are the steps whose ramp-up watched for steady state, in order.
	Steps []results.Step
	// Reached counts those that got there; Shortest and Longest are their
	// ramp-ups' lengths in seconds.
	Reached           int
	Shortest, Longest float64
	// NotReached are the steps measured after their longest ramp-up
	// without having become steady.
	NotReached []results.Step
}

// SteadyWarmups reads the steps' ramp-ups; false when none watched for
// steady state.
func SteadyWarmups(steps []results.Step) (Warmups, bool) {
	var w Warmups
	for _, s := range steps {
		su := s.Warmup
		if su == nil {
			continue
		}
		if len(w.Steps) == 0 {
			w.Criterion, w.WindowS = su.Criterion, su.WindowS
		}
		w.Steps = append(w.Steps, s)
		if !su.Reached {
			w.NotReached = append(w.NotReached, s)
			continue
		}
		if w.Reached == 0 || su.AtS < w.Shortest {
			w.Shortest = su.AtS
		}
		w.Longest = max(w.Longest, su.AtS)
		w.Reached++
	}
	return w, len(w.Steps) > 0
}
