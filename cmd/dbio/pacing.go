package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"dbio/internal/arrival"
	"dbio/internal/goal"
	"dbio/internal/runner"
	"dbio/internal/workload"
)

// pacingFlags are the open-loop and goal-search flags of the OLTP workload
// commands.
type pacingFlags struct {
	rate          float64
	ratePerUser   float64
	arrival       string
	lateTolerance time.Duration
	goal          string
	goalMax       float64
	goalRes       string
	goalProbes    int
	goalConfirm   bool
	flags         *pflag.FlagSet
}

func (f *pacingFlags) register(fs *pflag.FlagSet) {
	f.flags = fs
	fs.Float64Var(&f.rate, "rate", 0, "run open loop: offer this many transactions per second in total, spread over the users, each measured from its intended start as well as its actual one (with --goal: the first rate probed, default 10)")
	fs.Float64Var(&f.ratePerUser, "rate-per-user", 0, "run open loop at this many transactions per second for each user (instead of --rate)")
	fs.StringVar(&f.arrival, "arrival", "fixed", "open-loop schedule: fixed (evenly spaced starts) or poisson (random starts, the same mean rate)")
	fs.DurationVar(&f.lateTolerance, "late-tolerance", arrival.DefaultTolerance, "open loop: a transaction that starts later than this after its intended start counts as late")
	fs.StringVar(&f.goal, "goal", "", "find the highest rate meeting a latency objective, e.g. 'new_order:p99<=50ms', 'p99.9<=200ms' or 'mean<=10ms' (every transaction type when none is named); each probe is a step run open loop with one user count")
	fs.Float64Var(&f.goalMax, "goal-max", goal.DefaultMax, "with --goal: the highest rate probed, in transactions per second")
	fs.StringVar(&f.goalRes, "goal-resolution", goal.DefaultResolution().String(), "with --goal: stop when the highest passing and lowest failing rates are this close: a share of the rate (10%) or transactions per second (5)")
	fs.IntVar(&f.goalProbes, "goal-probes", goal.DefaultMaxProbes, "with --goal: the most probes (steps) the search runs")
	fs.BoolVar(&f.goalConfirm, "goal-confirm", false, "with --goal: probe the answer and the rate above it once more at the end, to see whether noise decided it")
}

func (f *pacingFlags) changed(name string) bool { return f.flags != nil && f.flags.Changed(name) }

// resolve turns the flags into the run's pacing and goal search (nil when
// the run is closed loop), reporting every problem at once. users are the
// run's user counts; given says whether --users was typed. The objective's
// transaction type is checked against the workload by checkType.
func (f *pacingFlags) resolve(users []int, given bool) (*runner.Pacing, *runner.Goal, []error) {
	if f.flags == nil {
		return nil, nil, nil
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	rateSet, perUserSet := f.changed("rate"), f.changed("rate-per-user")
	positive := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			bad("--%s %v: must be a number of transactions per second above zero, e.g. 200", name, v)
		}
	}
	if rateSet {
		positive("rate", f.rate)
	}
	if perUserSet {
		positive("rate-per-user", f.ratePerUser)
	}
	if rateSet && perUserSet {
		bad("--rate and --rate-per-user: give the offered rate once, in total (--rate) or for each user (--rate-per-user)")
	}
	process, err := arrival.ParseProcess(f.arrival)
	if err != nil {
		bad("--arrival: %v", err)
	}
	if f.lateTolerance <= 0 {
		bad("--late-tolerance %s: must be a positive duration, e.g. 10ms", f.lateTolerance)
	}
	searching := f.goal != "" || f.changed("goal")
	paced := rateSet || perUserSet || searching
	if !paced {
		for _, name := range []string{"arrival", "late-tolerance"} {
			if f.changed(name) {
				bad("--%s: applies to open-loop runs: give the offered rate with --rate or --rate-per-user", name)
			}
		}
	}
	if !searching {
		for _, name := range []string{"goal-max", "goal-resolution", "goal-probes", "goal-confirm"} {
			if f.changed(name) {
				bad("--%s: applies to a latency goal search: give the objective with --goal, e.g. --goal 'p99<=50ms'", name)
			}
		}
	}
	if !paced {
		return nil, nil, errs
	}
	// The seed is the workload's, set once the workload is built.
	pacing := &runner.Pacing{Process: process, Rate: f.rate, LateTolerance: f.lateTolerance}
	if perUserSet {
		pacing.Rate, pacing.PerUser = f.ratePerUser, true
	}
	if !searching {
		return pacing, nil, errs
	}

	var g runner.Goal
	obj, err := goal.ParseObjective(f.goal)
	if err != nil {
		bad("--goal: %v", err)
	}
	res, err := goal.ParseResolution(f.goalRes)
	if err != nil {
		bad("--goal-resolution: %v", err)
	}
	if perUserSet {
		bad("--rate-per-user: a goal search offers a total rate; give the first rate probed with --rate")
	}
	start := goal.DefaultStart
	if rateSet {
		start = f.rate
	}
	if !(f.goalMax >= start) || math.IsInf(f.goalMax, 0) {
		bad("--goal-max %v: must be at least the first rate probed (%v tx/s)", f.goalMax, start)
	}
	if f.goalProbes < 1 {
		bad("--goal-probes %d: the search needs at least one probe", f.goalProbes)
	}
	switch {
	case len(users) == 1:
		g.Users = users[0]
	case given:
		bad("--users %s: a goal search runs every probe with one user count: give one, e.g. --users %d", workload.UserSteps(users), slices.Max(users))
	default:
		// The command's default sequence: the most users it offers.
		g.Users = slices.Max(users)
	}
	pacing.Rate = start
	g.Search = goal.Search{Objective: obj, Start: start, Max: f.goalMax, Resolution: res, MaxProbes: f.goalProbes, Confirm: f.goalConfirm}
	return pacing, &g, errs
}

// checkType finds the objective's transaction type among the workload's,
// and spells it the workload's way.
func (f *pacingFlags) checkType(g *runner.Goal, types []string) error {
	if g == nil {
		return nil
	}
	o, err := g.Search.Objective.For(types)
	if err != nil {
		return usagef("--goal: %v", err)
	}
	g.Search.Objective = o
	return nil
}
