package runner

import (
	"strconv"
	"time"

	"dbio/internal/arrival"
	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/vusers"
)

// Pacing is the open-loop load of a run's user steps: every step's users
// send their transactions at the intended starts of a schedule instead of
// one after the other, and each transaction's latency is also measured from
// its intended start.
type Pacing struct {
	// Process is the schedule: fixed or Poisson.
	Process arrival.Process
	// Rate is the offered rate in transactions per second, over all of a
	// step's users, or each user's when PerUser is set. A goal search sets
	// the rate of each of its probes and starts from Rate.
	Rate    float64
	PerUser bool
	// LateTolerance is how late a start may be before it counts as late;
	// 0 means arrival.DefaultTolerance.
	LateTolerance time.Duration
	// Seed makes Poisson schedules reproducible: the run's own seed
	// (workload.Built.Seed), recorded in run.json with the pacing.
	Seed uint64
}

// tolerance is the late tolerance in force.
func (p Pacing) tolerance() time.Duration {
	if p.LateTolerance > 0 {
		return p.LateTolerance
	}
	return arrival.DefaultTolerance
}

// offered is the total offered rate of a step of users.
func (p Pacing) offered(users int) float64 {
	return arrival.Plan{Rate: p.Rate, PerUser: p.PerUser, Users: users}.Total()
}

// arrivals paces users sessions at a total of rate transactions per
// second; each session's transaction is begun on the recorder recs gives
// for it, filled by the sessions' Open before any runs.
func (p Pacing) arrivals(users int, rate float64, recs []*metrics.Recorder) *vusers.Arrivals {
	tol := p.tolerance()
	return &vusers.Arrivals{
		Plan: arrival.Plan{Process: p.Process, Rate: rate, Users: users, Seed: p.Seed},
		Begin: func(i int, t arrival.Timing) {
			recs[i].Begin(t.Delay(), t.Late(tol))
		},
	}
}

// Record is the pacing as run.json's config records it.
func (p Pacing) Record() *results.PacingConfig {
	c := &results.PacingConfig{Arrival: p.Process.String(), LateToleranceMS: float64(p.tolerance()) / float64(time.Millisecond), Seed: p.Seed}
	if p.PerUser {
		c.RatePerUserTPS = p.Rate
	} else {
		c.RateTPS = p.Rate
	}
	return c
}

// formatRate writes a rate in transactions per second as briefly as it is exact: 120, 67.5.
func formatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
