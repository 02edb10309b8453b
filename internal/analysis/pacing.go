package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// AchievedTolerance is the share of the offered rate a step may fall short
// by and still count as achieving it: the goal search's own default, so that
// a report and a search call the same step short.
const AchievedTolerance = 0.05

// Paced says whether any of the steps ran open loop.
func Paced(steps []results.Step) bool {
	for _, s := range steps {
		if s.Pacing != nil {
			return true
		}
	}
	return false
}

// RateShort says whether an open-loop step's achieved rate fell short of
// its offered rate by more than AchievedTolerance, allowing for the
// transactions still in hand when the measurement ended (InFlightTPS);
// false for a closed-loop step. The goal search judges its probes by this
// same rule, so a probe it kept is never marked short in a report.
//
// Terminals' think times are random, so their achieved count over a
// measurement is too: a terminal's cycle over the standard mix has a
// coefficient of variation of about 0.68, which makes the count's variance
// about half its mean. A step of terminals is short only when the count
// also falls more than three Poisson standard deviations (the square root
// of the count expected, a bound above the true spread) below the expected
// one, beyond what chance makes of a few dozen transactions.
func RateShort(s results.Step) bool {
	p := s.Pacing
	if p == nil || p.AchievedTPS+InFlightTPS(s) >= p.OfferedTPS*(1-AchievedTolerance) {
		return false
	}
	if p.Arrival == results.ArrivalTerminals {
		expected := p.OfferedTPS * s.MeasureS
		return expected-(p.AchievedTPS+InFlightTPS(s))*s.MeasureS > 3*math.Sqrt(expected)
	}
	return true
}

// InFlightTPS is the rate the transactions in hand at the end of a step's
// measured time account for: each user (each of the monitor's connections,
// when terminals shared them) may have one that started on schedule but
// finished after the window, so it is not in the achieved rate. At a low
// rate over a short step (4 users at 20 tx/s for 10 s) that alone is 2 % of
// the offered rate; zero when the step recorded no time.
func InFlightTPS(s results.Step) float64 {
	if s.MeasureS <= 0 {
		return 0
	}
	inHand := s.Users
	if p := s.Pacing; p != nil && p.Connections > 0 {
		inHand = p.Connections
	}
	return float64(inHand) / s.MeasureS
}

// CorrectedLatency is the latency of every transaction of an open-loop
// step from its intended start, in ms; false for a closed-loop step or one
// that completed nothing.
func CorrectedLatency(s results.Step) (Latencies, bool) {
	if s.Total == nil || s.Total.Corrected == nil || s.Total.Corrected.Count == 0 {
		return Latencies{}, false
	}
	l := *s.Total.Corrected
	return Latencies{Mean: l.MeanUS / 1000, P50: float64(l.P50US) / 1000, P95: float64(l.P95US) / 1000,
		P99: float64(l.P99US) / 1000, P999: float64(l.P999US) / 1000, Max: float64(l.MaxUS) / 1000}, true
}

// PacingFindings are the sentences an open-loop step calls for: an offered
// rate that was not achieved, said plainly, and transactions that started
// late.
func PacingFindings(steps []results.Step) []string {
	var out, late []string
	tolerance := ""
	terminals := false
	for _, s := range steps {
		p := s.Pacing
		if p == nil {
			continue
		}
		who := "the database or the users"
		if p.Arrival == results.ArrivalTerminals {
			who = fmt.Sprintf("the database or the monitor's %d connections", p.Connections)
		}
		if RateShort(s) {
			out = append(out, fmt.Sprintf("%s: the offered rate was not achieved: %s tx/s offered, %s tx/s achieved (%s %%); %s could not keep up.",
				s.Name, rate(p.OfferedTPS), rate(p.AchievedTPS), percentOf(p.AchievedTPS/p.OfferedTPS), who))
		}
		if p.Late > 0 && p.Transactions > 0 {
			entry := fmt.Sprintf("%d of %d (%s %%) at %s", p.Late, p.Transactions, percentOf(float64(p.Late)/float64(p.Transactions)), s.Name)
			if p.Arrival == results.ArrivalTerminals {
				entry += " (waiting for one of the monitor's connections)"
				terminals = true
			}
			late = append(late, entry)
			tolerance = rate(p.LateToleranceMS)
		}
	}
	if len(late) > 0 {
		intended := "their intended start"
		if terminals {
			intended = "their intended start (a terminal's submission)"
		}
		out = append(out, fmt.Sprintf("Transactions that started more than %s ms after %s: %s.", tolerance, intended, strings.Join(late, ", ")))
	}
	return out
}

// percentOf writes a fraction as a percentage to one decimal: 0.4137 is "41.4".
func percentOf(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) }

// CorrectedNote is the sentence that explains the two latencies of an
// open-loop run.
const CorrectedNote = "Latency from the intended start counts from the moment the schedule meant each transaction to start, so it includes any time spent waiting behind a slow or stalled database (corrected for coordinated omission); the service time counts from the moment the transaction was actually sent, as a closed-loop driver measures it."

// GoalAnswer is the sentence that answers a goal search.
func GoalAnswer(g *results.GoalSearch) string {
	if g == nil {
		return ""
	}
	obj := GoalObjective(g)
	var b strings.Builder
	measured := func(offered float64) string {
		for _, p := range g.Probes {
			if p.OfferedTPS == offered {
				if p.MeasuredMS == nil {
					return " (" + p.Reason + ")"
				}
				if p.Reason == "offered rate not achieved" {
					return fmt.Sprintf(" (%s %s ms; %s)", g.Stat, ms(*p.MeasuredMS), p.Reason)
				}
				return fmt.Sprintf(" (%s %s ms)", g.Stat, ms(*p.MeasuredMS))
			}
		}
		return ""
	}
	switch g.Answer {
	case results.GoalFound:
		fmt.Fprintf(&b, "Highest rate meeting %s: %s tx/s with %d users%s; %s tx/s did not%s.",
			obj, rate(g.RateTPS), g.Users, measured(g.RateTPS), rate(g.FailRateTPS), measured(g.FailRateTPS))
	case results.GoalBelowStart:
		fmt.Fprintf(&b, "No rate probed met %s with %d users: even the first, %s tx/s, did not%s.",
			obj, g.Users, rate(g.FailRateTPS), measured(g.FailRateTPS))
	case results.GoalAtLeast:
		fmt.Fprintf(&b, "Every rate probed met %s with %d users: the highest rate meeting it is at least %s tx/s%s.",
			obj, g.Users, rate(g.RateTPS), measured(g.RateTPS))
	default:
		fmt.Fprintf(&b, "The search for the highest rate meeting %s did not finish: %d probes recorded.", obj, len(g.Probes))
		return b.String()
	}
	switch {
	case g.Truncated:
		b.WriteString(" The probe budget ended the search before the resolution of " + resolution(g.Resolution) + ".")
	case g.Answer == results.GoalFound:
		b.WriteString(" Resolution: " + resolution(g.Resolution) + ".")
	}
	if g.Inconsistent {
		b.WriteString(" Some rate failed at or below one that passed: the answer lies within the noise between probes.")
	}
	return b.String()
}

// GoalObjective words a search's objective: "p99 of new_order at most 50 ms".
func GoalObjective(g *results.GoalSearch) string {
	who := "every transaction"
	if g.Tx != "" {
		who = g.Tx
	}
	return fmt.Sprintf("%s of %s at most %s ms", g.Stat, who, ms(g.LimitMS))
}

func resolution(r string) string {
	if strings.HasSuffix(r, "%") {
		return strings.TrimSuffix(r, "%") + " % of the rate"
	}
	return r + " tx/s"
}

// rate writes a rate as briefly as it is exact, to 2 decimals at most.
func rate(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// ms writes a latency in ms to 2 decimals at most.
func ms(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
