package suite

import (
	"math"
	"slices"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/goal"
)

// OpenLoop is a workload table's open-loop load and goal search, resolved
// with their defaults: what the runner turns into a run's pacing.
type OpenLoop struct {
	Process arrival.Process
	// Rate is the offered rate in tx/s: in total, or each user's when
	// PerUser; a goal search's first rate.
	Rate          float64
	PerUser       bool
	LateTolerance time.Duration
	// Search is the goal search, nil without one. Its objective's
	// transaction type is as written; the runner checks it against the
	// workload's.
	Search *goal.Search
	// Users are every probe's users when Search is set.
	Users int
}

// OpenLoop resolves the table's open-loop keys for a run of users; nil
// when the run is closed loop. The table has been validated.
func (w WorkloadDef) OpenLoop(users []int) *OpenLoop {
	if w.Rate == 0 && w.RatePerUser == 0 && w.Goal == "" {
		return nil
	}
	o := &OpenLoop{Rate: w.Rate, LateTolerance: arrival.DefaultTolerance}
	if w.RatePerUser > 0 {
		o.Rate, o.PerUser = w.RatePerUser, true
	}
	if w.Arrival != "" {
		o.Process, _ = arrival.ParseProcess(w.Arrival)
	}
	if d, err := time.ParseDuration(w.LateTolerance); err == nil && d > 0 {
		o.LateTolerance = d
	}
	if w.Goal == "" {
		return o
	}
	obj, _ := goal.ParseObjective(w.Goal)
	s := &goal.Search{Objective: obj, Start: goal.DefaultStart, Max: goal.DefaultMax, Resolution: goal.DefaultResolution(),
		MaxProbes: goal.DefaultMaxProbes, Confirm: w.GoalConfirm}
	if w.Rate > 0 {
		s.Start = w.Rate
	}
	o.Rate = s.Start
	if w.GoalMax > 0 {
		s.Max = w.GoalMax
	}
	if r, err := goal.ParseResolution(w.GoalResolution); err == nil {
		s.Resolution = r
	}
	if w.GoalProbes > 0 {
		s.MaxProbes = w.GoalProbes
	}
	o.Search = s
	if len(users) > 0 {
		o.Users = slices.Max(users)
	}
	return o
}

// checkOpenLoop validates a database workload table's open-loop keys.
func (v *validator) checkOpenLoop(table string, w WorkloadDef) {
	rate := func(key string, r float64) {
		if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			v.addf(table, key, "%v: use transactions per second above zero, e.g. 200", r)
		}
	}
	rate("rate", w.Rate)
	rate("rate_per_user", w.RatePerUser)
	if w.Rate > 0 && w.RatePerUser > 0 {
		v.addf(table, "rate_per_user", "give the offered rate once: in total (rate) or for each user (rate_per_user)")
	}
	paced := w.Rate > 0 || w.RatePerUser > 0 || w.Goal != ""
	if w.Arrival != "" {
		if _, err := arrival.ParseProcess(w.Arrival); err != nil {
			v.addf(table, "arrival", "%v", err)
		} else if !paced {
			v.addf(table, "arrival", "applies to open-loop runs: give the offered rate with rate or rate_per_user")
		}
	}
	if w.LateTolerance != "" {
		if d, err := time.ParseDuration(w.LateTolerance); err != nil || d <= 0 {
			v.addf(table, "late_tolerance", "%q is not a positive duration: write it like 10ms", w.LateTolerance)
		} else if !paced {
			v.addf(table, "late_tolerance", "applies to open-loop runs: give the offered rate with rate or rate_per_user")
		}
	}
	if w.Goal == "" {
		for _, k := range []struct {
			key string
			set bool
		}{{"goal_max", w.GoalMax != 0}, {"goal_resolution", w.GoalResolution != ""}, {"goal_probes", w.GoalProbes != 0}, {"goal_confirm", w.GoalConfirm}} {
			if k.set {
				v.addf(table, k.key, "applies to a latency goal search: give the objective with goal, e.g. goal = \"p99<=50ms\"")
			}
		}
		return
	}
	if _, err := goal.ParseObjective(w.Goal); err != nil {
		v.addf(table, "goal", "%v", err)
	}
	if w.RatePerUser > 0 {
		v.addf(table, "rate_per_user", "a goal search offers a total rate: give the first rate probed with rate")
	}
	if w.GoalResolution != "" {
		if _, err := goal.ParseResolution(w.GoalResolution); err != nil {
			v.addf(table, "goal_resolution", "%v", err)
		}
	}
	start, most := goal.DefaultStart, goal.DefaultMax
	if w.Rate > 0 {
		start = w.Rate
	}
	if w.GoalMax != 0 {
		most = w.GoalMax
	}
	if !(most >= start) || math.IsInf(most, 0) {
		v.addf(table, "goal_max", "%v: must be at least the first rate probed (%v tx/s)", most, start)
	}
	if w.GoalProbes < 0 {
		v.addf(table, "goal_probes", "%d: the search needs at least one probe (leave it out for %d)", w.GoalProbes, goal.DefaultMaxProbes)
	}
	if len(w.Users) > 1 {
		v.addf(table, "users", "a goal search runs every probe with one user count: give one, e.g. users = [%d]", slices.Max(w.Users))
	}
}
