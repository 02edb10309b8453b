package goal

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultFactor is the bracketing multiplier when Search.Factor is zero.
const DefaultFactor = 2

// What a search dbio runs uses when its user names nothing else: start at
// 10 tx/s (a rate any engine takes, so that the bracket climbs rather than
// starts above the answer), never probe above 100,000 tx/s, stop within
// 10 % of the rate, and run at most 20 probes (with the factor of 2, enough
// to bracket four decades and then bisect to the resolution).
const (
	DefaultStart     = 10.0
	DefaultMax       = 100000.0
	DefaultMaxProbes = 20
)

// DefaultResolution ends a search dbio runs within 10 % of the rate.
func DefaultResolution() Resolution { return Resolution{Rel: 0.1} }

// DefaultTolerance is the share of the offered rate a probe may fall short
// by and still count as achieved, when Search.Tolerance is zero: 5 %.
const DefaultTolerance = 0.05

// Outcome is what a probe measured at one offered rate.
type Outcome struct {
	// Achieved is the rate actually reached, in transactions per second.
	Achieved float64
	// Latencies are the step's latencies; nil only when nothing completed.
	Latencies Latencies
	// InFlight is the rate, in transactions per second, that the
	// transactions still in hand when the measurement ended account for:
	// they started on schedule but completed after the window, so a short
	// step at a low rate is not called short for them (users / step).
	InFlight float64
}

// Probe runs one step at an offered rate (transactions per second).
type Probe func(rate float64) (Outcome, error)

// Resolution says when bisection stops: once the highest passing rate and
// the lowest failing rate are within Abs transactions per second, or within
// Rel (0.05 for 5 %) of the passing rate. Exactly one must be set.
type Resolution struct {
	// Abs is an absolute width in transactions per second.
	Abs float64
	// Rel is a width relative to the passing rate.
	Rel float64
}

// ParseResolution reads "10" (10 tx/s) or "5%" (5 % of the rate).
func ParseResolution(s string) (Resolution, error) {
	text := strings.TrimSpace(s)
	num, pct := strings.CutSuffix(text, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return Resolution{}, fmt.Errorf("resolution %q: use a rate above zero in tx/s (10) or a percentage of the rate (5%%)", s)
	}
	if pct {
		return Resolution{Rel: v / 100}, nil
	}
	return Resolution{Abs: v}, nil
}

// String writes the resolution as ParseResolution reads it.
func (r Resolution) String() string {
	if r.Rel > 0 {
		return strconv.FormatFloat(r.Rel*100, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(r.Abs, 'f', -1, 64)
}

func (r Resolution) reached(pass, fail float64) bool {
	if r.Rel > 0 {
		return fail-pass <= r.Rel*pass
	}
	return fail-pass <= r.Abs
}

// Search finds the highest offered rate whose step meets an objective.
//
// It brackets first: Start, then Start·Factor, Start·Factor², ... capped at
// Max, until a probe fails. It then bisects between the last rate that passed
// and the first that failed until they are within Resolution. A probe fails
// when its achieved rate falls short of the offered one by more than
// Tolerance (the system could not take that rate, whatever its latency
// says) or when the objective is missed.
//
// Noise: the search takes outcomes to be monotone (a rate that meets the
// objective is met by every lower rate) and probes each rate once, so every
// probe lies strictly between the highest pass and the lowest fail seen
// before it, and the answer is a pass with a fail above it that the probes
// agree on. When noise makes outcomes non-monotone that boundary need not be
// the highest one. Confirm probes both ends again at the end; if either
// gives the opposite outcome, Result.Inconsistent is set and the answer must
// be read as lying within the run-to-run noise. The answer itself is not
// moved: a second search would meet the same noise.
type Search struct {
	// Objective is the latency goal each step is judged against.
	Objective Objective
	// Start is the first rate probed, in transactions per second.
	Start float64
	// Max is the highest rate probed.
	Max float64
	// Factor multiplies the rate while bracketing; 0 means DefaultFactor.
	Factor float64
	// Resolution ends the bisection.
	Resolution Resolution
	// Tolerance is the share of the offered rate a probe may fall short by
	// and still pass; 0 means DefaultTolerance.
	Tolerance float64
	// MaxProbes bounds the number of probes, confirmations included; 0
	// means no bound. A search cut short sets Result.Truncated.
	MaxProbes int
	// Confirm probes the answer's two ends again once the search is done.
	Confirm bool
}

// Phase is the part of the search a probe belonged to.
type Phase int

const (
	// Bracket probes climb from Start by Factor.
	Bracket Phase = iota
	// Bisect probes halve the bracket.
	Bisect
	// Confirm probes repeat the answer's ends.
	Confirm
)

// String names the phase.
func (p Phase) String() string {
	switch p {
	case Bracket:
		return "bracket"
	case Bisect:
		return "bisect"
	case Confirm:
		return "confirm"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Reason says why a probe passed or failed.
type Reason int

const (
	// Met means the rate was achieved and the objective met.
	Met Reason = iota
	// Missed means the rate was achieved but the latency exceeded the limit.
	Missed
	// RateNotAchieved means the achieved rate fell short of the offered one
	// by more than the tolerance: a fail whatever the latency.
	RateNotAchieved
)

// String names the reason as a report states it.
func (r Reason) String() string {
	switch r {
	case Met:
		return "objective met"
	case Missed:
		return "objective missed"
	case RateNotAchieved:
		return "offered rate not achieved"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Step is one probe as recorded, in the order probed: together the steps
// are the curve of rate against latency.
type Step struct {
	// Phase is the part of the search that chose the rate.
	Phase Phase
	// Offered is the rate asked for, in transactions per second.
	Offered float64
	// Achieved is the rate reached.
	Achieved float64
	// Measured is the objective's statistic at this rate, when Measured is known.
	Measured time.Duration
	// HasMeasured is false when the step had no latency to judge (a rate
	// so far out of reach that nothing of the objective's type completed).
	HasMeasured bool
	// Pass is true when the rate was achieved and the objective met.
	Pass bool
	// Reason says why.
	Reason Reason
}

// Answer is the kind of result a search reached.
type Answer int

const (
	// Found means Rate met the objective and FailRate, above it, did not.
	Found Answer = iota
	// BelowStart means even the first rate failed: the answer lies below
	// Start (FailRate), which the search does not go under.
	BelowStart
	// AtLeast means no probe failed: the answer is at least Rate, which is
	// Max unless MaxProbes ran out first (Truncated).
	AtLeast
)

// String names the answer.
func (a Answer) String() string {
	switch a {
	case Found:
		return "found"
	case BelowStart:
		return "below the lowest rate probed"
	case AtLeast:
		return "at least the highest rate probed"
	}
	return fmt.Sprintf("Answer(%d)", int(a))
}

// Result is the outcome of a search.
type Result struct {
	// Answer is the kind of result.
	Answer Answer
	// Rate is the highest rate that met the objective; 0 for BelowStart.
	Rate float64
	// FailRate is the lowest rate above Rate that failed; 0 for AtLeast.
	FailRate float64
	// Truncated is true when MaxProbes stopped the search before the
	// resolution (or the confirmation) was reached.
	Truncated bool
	// Inconsistent is true when some rate failed at or below a rate that
	// passed, as a failed confirmation shows: outcomes are noisy there.
	Inconsistent bool
	// Steps are every probe, in order.
	Steps []Step
}

// errBudget stops a search when MaxProbes is spent.
var errBudget = errors.New("probe budget spent")

func (s Search) check() (Search, error) {
	if s.Factor == 0 {
		s.Factor = DefaultFactor
	}
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	switch {
	case s.Objective.Limit <= 0:
		return s, errors.New("rate search: no latency objective: give one such as p99<=50ms")
	case !(s.Start > 0) || math.IsInf(s.Start, 0):
		return s, fmt.Errorf("rate search: start rate %v must be above zero", s.Start)
	case !(s.Max >= s.Start) || math.IsInf(s.Max, 0):
		return s, fmt.Errorf("rate search: maximum rate %v must be at least the start rate %v", s.Max, s.Start)
	case !(s.Factor > 1) || math.IsInf(s.Factor, 0):
		return s, fmt.Errorf("rate search: factor %v must be above 1", s.Factor)
	case !(s.Tolerance > 0 && s.Tolerance < 1):
		return s, fmt.Errorf("rate search: tolerance %v must lie between 0 and 1 (0.05 for 5%%)", s.Tolerance)
	case s.MaxProbes < 0:
		return s, fmt.Errorf("rate search: probe limit %d is negative", s.MaxProbes)
	}
	r := s.Resolution
	if (r.Abs > 0) == (r.Rel > 0) || r.Abs < 0 || r.Rel < 0 || math.IsNaN(r.Abs) || math.IsNaN(r.Rel) || math.IsInf(r.Abs, 0) {
		return s, fmt.Errorf("rate search: set exactly one resolution, in tx/s or relative (got %+v)", r)
	}
	return s, nil
}

// Run performs the search, calling probe once per rate. On a probe error it
// stops and returns the error with the Result so far: the steps already
// probed and the bracket they establish.
func (s Search) Run(probe Probe) (Result, error) {
	s, err := s.check()
	if err != nil {
		return Result{}, err
	}
	var res Result
	var pass, fail float64 // highest pass and lowest fail so far; 0 when none
	try := func(rate float64, phase Phase) (bool, error) {
		if s.MaxProbes > 0 && len(res.Steps) >= s.MaxProbes {
			res.Truncated = true
			return false, errBudget
		}
		out, err := probe(rate)
		if err != nil {
			return false, fmt.Errorf("probe at %s tx/s: %w", formatRate(rate), err)
		}
		step, err := s.judge(rate, phase, out)
		if err != nil {
			return false, err
		}
		res.Steps = append(res.Steps, step)
		return step.Pass, nil
	}
	finish := func(err error) (Result, error) {
		res.Rate, res.FailRate = pass, fail
		switch {
		case fail == 0:
			res.Answer = AtLeast
		case pass == 0:
			res.Answer = BelowStart
		default:
			res.Answer = Found
		}
		res.Inconsistent = contradicts(res.Steps)
		if errors.Is(err, errBudget) {
			err = nil
		}
		return res, err
	}

	for rate := s.Start; ; rate = math.Min(rate*s.Factor, s.Max) {
		ok, err := try(rate, Bracket)
		if err != nil {
			return finish(err)
		}
		if !ok {
			fail = rate
			break
		}
		pass = rate
		if rate >= s.Max {
			break
		}
	}
	for pass > 0 && fail > 0 && !s.Resolution.reached(pass, fail) {
		mid := (pass + fail) / 2
		if mid <= pass || mid >= fail { // no rate left between them
			break
		}
		ok, err := try(mid, Bisect)
		if err != nil {
			return finish(err)
		}
		if ok {
			pass = mid
		} else {
			fail = mid
		}
	}
	if s.Confirm {
		for _, rate := range []float64{pass, fail} {
			if rate == 0 {
				continue
			}
			if _, err := try(rate, Confirm); err != nil {
				return finish(err)
			}
		}
	}
	return finish(nil)
}

// judge turns a probe's outcome into a step.
func (s Search) judge(rate float64, phase Phase, out Outcome) (Step, error) {
	if math.IsNaN(out.Achieved) || math.IsInf(out.Achieved, 0) || out.Achieved < 0 {
		return Step{}, fmt.Errorf("probe at %s tx/s reported an achieved rate of %v", formatRate(rate), out.Achieved)
	}
	st := Step{Phase: phase, Offered: rate, Achieved: out.Achieved}
	short := out.Achieved+out.InFlight < rate*(1-s.Tolerance)
	met := false
	if out.Latencies != nil {
		ev, err := s.Objective.Evaluate(out.Latencies)
		switch {
		case err == nil:
			st.Measured, st.HasMeasured, met = ev.Measured, true, ev.Met
		case short && errors.Is(err, ErrNoSamples):
			// Nothing completed because the rate was far out of reach.
		default:
			return Step{}, fmt.Errorf("probe at %s tx/s: %w", formatRate(rate), err)
		}
	} else if !short {
		return Step{}, fmt.Errorf("probe at %s tx/s achieved %s tx/s but reported no latencies", formatRate(rate), formatRate(out.Achieved))
	}
	switch {
	case short:
		st.Reason = RateNotAchieved
	case met:
		st.Pass, st.Reason = true, Met
	default:
		st.Reason = Missed
	}
	return st, nil
}

// contradicts reports whether some step failed at or below a rate another passed.
func contradicts(steps []Step) bool {
	for _, f := range steps {
		if f.Pass {
			continue
		}
		for _, p := range steps {
			if p.Pass && p.Offered >= f.Offered {
				return true
			}
		}
	}
	return false
}

func formatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
