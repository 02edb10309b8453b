package runner

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"dbio/internal/analysis"
	"dbio/internal/arrival"
	"dbio/internal/goal"
	"dbio/internal/metrics"
	"dbio/internal/results"
)

// Goal is a latency goal search, a run's body: instead of one step per
// user count, the run probes offered rates with a fixed number of users,
// each probe a step run open loop, and finds the highest rate whose latency
// from the intended start meets the objective.
type Goal struct {
	// Search is the objective, the first and highest rates, the factor,
	// the resolution and the probe budget.
	Search goal.Search
	// Users are the virtual users of every probe.
	Users int
	// RampUp, Step and Steady time each probe as Steps' time each step.
	RampUp time.Duration
	Step   time.Duration
	Steady *SteadyRampUp
	// Pacing is the probes' schedule, whose rate each probe sets; nil
	// paces them at fixed intervals.
	Pacing *Pacing
}

func (g Goal) needs() needs {
	return needs{engine: true, servers: 1, users: []int{g.Users}, openLoop: true,
		steps: 1, stepTime: g.RampUp + g.Step, steady: g.Steady, rampUp: g.RampUp}
}

func (g Goal) describe(p Setup) string {
	return fmt.Sprintf("%s on %s: the highest rate meeting %s with %d users, probing from %s tx/s (%s and %s measured per probe)",
		p.Workload.Name(), p.Engine.Name(), g.Search.Objective, g.Users, formatRate(g.Search.Start), rampUpText(g.Steady, g.RampUp), g.Step)
}

// configure records the search; its probes replace the user steps, and a
// stepping workload's stepping.
func (g Goal) configure(c *results.RunConfig) {
	c.Users, c.Goal, c.Stepping = []int{g.Users}, g.Record(), nil
}

// run waits at the start barrier, runs the search, then checks the database.
func (g Goal) run(ctx context.Context, ss *session) error {
	if err := ss.barrier(ctx); err != nil {
		return err
	}
	s := Steps{Users: []int{g.Users}, RampUp: g.RampUp, Step: g.Step, Steady: g.Steady, Pacing: g.Pacing}
	if s.Pacing == nil {
		s.Pacing = &Pacing{Process: arrival.Fixed}
	}
	st := ss.stepper(s)
	// The barrier is waited for before the first probe only.
	st.startBarrier, st.steps = nil, g.Search.MaxProbes
	steps, _, err := st.runGoal(ctx, g)
	if err := ss.stepsDone(steps, "", nil, err); err != nil {
		return err
	}
	return ss.check(ctx)
}

// Record is the search as run.json's config records it, defaults filled in.
func (g Goal) Record() *results.GoalConfig {
	s := g.Search
	c := &results.GoalConfig{Objective: s.Objective.String(), Users: g.Users, StartTPS: s.Start, MaxTPS: s.Max, Factor: s.Factor,
		Resolution: s.Resolution.String(), Tolerance: s.Tolerance, MaxProbes: s.MaxProbes, Confirm: s.Confirm}
	if c.Factor == 0 {
		c.Factor = goal.DefaultFactor
	}
	if c.Tolerance == 0 {
		c.Tolerance = goal.DefaultTolerance
	}
	return c
}

// runGoal runs the search, each probe a step written as it ends, and
// records the search in run.json: its objective before the first probe,
// every probe and the answer when it ends, however it ends.
func (st *stepper) runGoal(ctx context.Context, g Goal) (done []results.Step, answer *results.GoalSearch, err error) {
	o := g.Search.Objective
	rec := &results.GoalSearch{Objective: o.String(), Tx: o.Tx, Stat: o.Stat(), LimitMS: ms(o.Limit), Users: g.Users,
		Resolution: g.Search.Resolution.String(), Probes: []results.GoalProbe{}}
	if err := st.rec.Dir.UpdateRun(func(r *results.Run) { r.Goal = rec }); err != nil {
		return nil, nil, err
	}
	bg, err := st.startBackground(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer bg.stop()
	var probed []results.Step
	probe := func(rate float64) (goal.Outcome, error) {
		i := len(probed)
		step, err := st.runStep(ctx, i, stepLoad{users: g.Users, name: "rate-" + formatRate(rate), rate: rate}, bg)
		if step != nil {
			if werr := st.finishStep(i, step); werr != nil && err == nil {
				err = werr
			}
			probed = append(probed, step.summary)
		}
		if err != nil {
			return goal.Outcome{}, err
		}
		corrected := make(stepLatencies, len(step.totals))
		types := st.workload.TxTypes()
		for t, c := range step.totals {
			corrected[types[t]] = c.Corrected
		}
		return goal.Outcome{Achieved: step.summary.Pacing.AchievedTPS, Latencies: corrected,
			InFlight: analysis.InFlightTPS(step.summary)}, nil
	}
	res, err := g.Search.Run(probe)
	recordSearch(rec, res, probed, err == nil)
	if uerr := st.rec.Dir.UpdateRun(func(r *results.Run) { r.Goal = rec }); uerr != nil && err == nil {
		err = uerr
	}
	return probed, rec, err
}

// recordSearch fills the record from the search's result: its probes
// (the i-th judged probe is the i-th step probed) and, when the search
// finished, the answer. A search cut short by an error or an interruption
// has no answer: what its probes bracket is not what it set out to find.
func recordSearch(rec *results.GoalSearch, res goal.Result, probed []results.Step, finished bool) {
	for i, p := range res.Steps {
		gp := results.GoalProbe{Phase: p.Phase.String(), OfferedTPS: p.Offered, AchievedTPS: p.Achieved, Pass: p.Pass, Reason: p.Reason.String()}
		if i < len(probed) {
			gp.Step, gp.Index = probed[i].Name, probed[i].Index
		}
		if p.HasMeasured {
			v := ms(p.Measured)
			gp.MeasuredMS = &v
		}
		rec.Probes = append(rec.Probes, gp)
	}
	if !finished || len(res.Steps) == 0 {
		return
	}
	switch res.Answer {
	case goal.Found:
		rec.Answer = results.GoalFound
	case goal.BelowStart:
		rec.Answer = results.GoalBelowStart
	case goal.AtLeast:
		rec.Answer = results.GoalAtLeast
	}
	rec.RateTPS, rec.FailRateTPS = res.Rate, res.FailRate
	rec.Truncated, rec.Inconsistent = res.Truncated, res.Inconsistent
}

func ms(d time.Duration) float64 { return results.Round6(float64(d) / float64(time.Millisecond)) }

// stepLatencies are a step's latency histograms by transaction type, as
// the goal search reads them (the latency from the intended start); a
// type without a histogram completed nothing.
type stepLatencies map[string]*hdrhistogram.Histogram

// histogram is type tx's histogram, or every type's merged for goal.AllTypes.
func (l stepLatencies) histogram(tx string) (*hdrhistogram.Histogram, error) {
	if tx == goal.AllTypes {
		all := metrics.NewHistogram()
		for _, h := range l {
			if h != nil {
				all.Merge(h)
			}
		}
		if all.TotalCount() == 0 {
			return nil, fmt.Errorf("all transactions: %w", goal.ErrNoSamples)
		}
		return all, nil
	}
	h := l[tx]
	if h == nil || h.TotalCount() == 0 {
		return nil, fmt.Errorf("transaction type %q: %w", tx, goal.ErrNoSamples)
	}
	return h, nil
}

// Percentile implements goal.Latencies.
func (l stepLatencies) Percentile(tx string, p float64) (time.Duration, error) {
	h, err := l.histogram(tx)
	if err != nil {
		return 0, err
	}
	return time.Duration(h.ValueAtQuantile(p)) * time.Microsecond, nil
}

// Mean implements goal.Latencies.
func (l stepLatencies) Mean(tx string) (time.Duration, error) {
	h, err := l.histogram(tx)
	if err != nil {
		return 0, err
	}
	return time.Duration(math.Round(h.Mean() * float64(time.Microsecond))), nil
}
