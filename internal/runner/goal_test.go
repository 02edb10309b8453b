package runner

import (
	"context"
	"math"
	"testing"
	"time"

	"dbio/internal/goal"
	"dbio/internal/results"
	"dbio/internal/workload/sysbench"
)

// TestGoalSearchFindsTheRate runs a small latency goal search on
// PostgreSQL and checks its answer against what the results directory
// recorded: the rate it chose met the objective (its p99 from the intended
// start under the limit, its rate achieved), and the probe just above it
// did not.
func TestGoalSearchFindsTheRate(t *testing.T) {
	inst := servers.Instance(t, "postgres")
	// Read-only: no lock wait or deadlock timeout decides a probe.
	w := smallSysbench(t, inst, sysbench.ReadOnly)
	obj, err := goal.ParseObjective("p99<=250ms")
	if err != nil {
		t.Fatal(err)
	}
	g := Goal{Users: 2, Search: goal.Search{Objective: obj, Start: 5, Max: 20000, Resolution: goal.Resolution{Rel: 0.25}, MaxProbes: 14}}
	st := testStepper(t, w, inst, Steps{Users: []int{g.Users}, RampUp: 500 * time.Millisecond, Step: 1500 * time.Millisecond,
		Pacing: &Pacing{}}, nil)
	st.steps = g.Search.MaxProbes
	if _, _, err := st.runGoal(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	l, err := results.Load(st.rec.Dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	rec := l.Run.Goal
	if rec == nil {
		t.Fatal("run.json has no goal record")
	}
	for _, p := range rec.Probes {
		m := math.NaN()
		if p.MeasuredMS != nil {
			m = *p.MeasuredMS
		}
		t.Logf("probe %s %-7s offered %8.2f achieved %8.2f p99 %8.2f ms: %s", p.Step, p.Phase, p.OfferedTPS, p.AchievedTPS, m, p.Reason)
	}
	t.Logf("answer: %s", rec.Answer)
	if rec.Answer != results.GoalFound {
		t.Fatalf("answer %q, want a rate found between two probes (below_start: this machine missed %s even at %v tx/s)", rec.Answer, obj, g.Search.Start)
	}
	step := func(rate float64) (results.Step, results.GoalProbe) {
		t.Helper()
		for _, p := range rec.Probes {
			if p.OfferedTPS == rate {
				for _, s := range l.Steps {
					if s.Index == p.Index {
						return s, p
					}
				}
			}
		}
		t.Fatalf("no recorded step for the probe at %v tx/s", rate)
		return results.Step{}, results.GoalProbe{}
	}
	limit := obj.Limit.Seconds() * 1000
	pass, pp := step(rec.RateTPS)
	fail, fp := step(rec.FailRateTPS)
	p99 := func(s results.Step) float64 { return float64(s.Total.Corrected.P99US) / 1000 }
	achieved := func(s results.Step) bool {
		return s.Pacing.AchievedTPS >= s.Pacing.OfferedTPS*(1-goal.DefaultTolerance)
	}
	if !(p99(pass) <= limit) || !achieved(pass) || !pp.Pass {
		t.Errorf("the rate chosen, %v tx/s, recorded p99 %v ms and %v tx/s achieved: it does not meet p99<=%v ms", rec.RateTPS, p99(pass), pass.Pacing.AchievedTPS, limit)
	}
	if p99(fail) <= limit && achieved(fail) || fp.Pass {
		t.Errorf("the probe above, %v tx/s, recorded p99 %v ms and %v tx/s achieved: it meets the objective too", rec.FailRateTPS, p99(fail), fail.Pacing.AchievedTPS)
	}
	if !(rec.FailRateTPS > rec.RateTPS) || rec.FailRateTPS-rec.RateTPS > 0.25*rec.RateTPS && !rec.Truncated {
		t.Errorf("answer %v tx/s, first failure %v tx/s: not within the 25 %% resolution", rec.RateTPS, rec.FailRateTPS)
	}
	// The search read the same figure the summary records.
	if pp.MeasuredMS == nil || math.Abs(*pp.MeasuredMS-p99(pass)) > 1e-6 {
		t.Errorf("the search judged %v ms, summary.json records %v ms", pp.MeasuredMS, p99(pass))
	}
}

// A search's record keeps every probe, and gives an answer only when the
// search finished.
func TestRecordSearch(t *testing.T) {
	m := 40 * time.Millisecond
	res := goal.Result{Answer: goal.Found, Rate: 20, FailRate: 40, Steps: []goal.Step{
		{Phase: goal.Bracket, Offered: 20, Achieved: 20, Measured: m / 2, HasMeasured: true, Pass: true, Reason: goal.Met},
		{Phase: goal.Bracket, Offered: 40, Achieved: 30, Reason: goal.RateNotAchieved},
	}}
	probed := []results.Step{{Name: "rate-20", Index: 3}, {Name: "rate-40", Index: 4}}
	for _, finished := range []bool{true, false} {
		rec := &results.GoalSearch{}
		recordSearch(rec, res, probed, finished)
		if len(rec.Probes) != 2 || rec.Probes[1].Step != "rate-40" || rec.Probes[1].Index != 4 || rec.Probes[1].MeasuredMS != nil ||
			rec.Probes[0].MeasuredMS == nil || *rec.Probes[0].MeasuredMS != 20 || rec.Probes[1].Reason != "offered rate not achieved" {
			t.Errorf("finished %v: probes %+v", finished, rec.Probes)
		}
		switch {
		case finished && (rec.Answer != results.GoalFound || rec.RateTPS != 20 || rec.FailRateTPS != 40):
			t.Errorf("finished search recorded answer %q %v/%v", rec.Answer, rec.RateTPS, rec.FailRateTPS)
		case !finished && (rec.Answer != "" || rec.RateTPS != 0):
			t.Errorf("a search cut short recorded answer %q at %v tx/s", rec.Answer, rec.RateTPS)
		}
	}
}
