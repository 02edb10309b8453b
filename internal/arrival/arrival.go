// Package arrival schedules open-loop load: the intended start time of every
// transaction, fixed by the offered rate and not by how fast the database
// answers, and the accounting that measures latency from those intended
// starts.
//
// A closed-loop driver sends the next transaction when the previous one
// returns, so when the database stalls the driver stalls with it and the
// stall never shows in its latency percentiles (coordinated omission). An
// open-loop session instead asks its Schedule for the next intended start,
// waits until then if it is early, and starts at once if it is late; the
// latency from the intended start then includes the time the transaction
// spent waiting for the stalled one before it.
//
// Intended starts are computed from the run's start (the n-th of a fixed
// schedule is n/rate, of a Poisson one the sum of the intended gaps), never
// by adding up sleeps, so a session that oversleeps or falls behind does not
// shift the rest of its schedule.
package arrival

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Process is the pattern of intended starts.
type Process int

const (
	// Fixed spaces starts evenly: one every 1/rate seconds.
	Fixed Process = iota
	// Poisson draws exponential gaps of mean 1/rate: the arrivals of many
	// independent clients, burstier than Fixed at the same mean rate.
	Poisson
)

// String names the process.
func (p Process) String() string {
	switch p {
	case Fixed:
		return "fixed"
	case Poisson:
		return "poisson"
	}
	return fmt.Sprintf("Process(%d)", int(p))
}

// ParseProcess reads a process by its name, "fixed" or "poisson".
func ParseProcess(s string) (Process, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fixed":
		return Fixed, nil
	case "poisson":
		return Poisson, nil
	}
	return 0, fmt.Errorf("arrival process %q: use fixed (evenly spaced starts) or poisson (random starts of the same mean rate)", s)
}

// DefaultTolerance is how late a start may be before it counts as late,
// when a run names no tolerance: above the few hundred microseconds by which
// a timer of a busy machine fires late, below any stall worth reporting.
const DefaultTolerance = 10 * time.Millisecond

// Plan is the offered load of a run.
type Plan struct {
	// Process is Fixed or Poisson.
	Process Process
	// Rate is the offered rate in transactions per second: the total over
	// all users, or each user's when PerUser is set.
	Rate float64
	// PerUser makes Rate each user's rate instead of the total.
	PerUser bool
	// Users is the number of sessions sharing the load; at least 1.
	Users int
	// Seed makes Poisson schedules reproducible: the same seed gives the
	// same starts for every user.
	Seed uint64
}

// Total is the offered rate over all users, in transactions per second.
func (p Plan) Total() float64 {
	if p.PerUser {
		return p.Rate * float64(p.Users)
	}
	return p.Rate
}

// UserRate is each user's offered rate, in transactions per second.
func (p Plan) UserRate() float64 {
	if p.PerUser {
		return p.Rate
	}
	return p.Rate / float64(p.Users)
}

// Check reports a plan that cannot be scheduled.
func (p Plan) Check() error {
	switch {
	case p.Process != Fixed && p.Process != Poisson:
		return fmt.Errorf("unknown arrival process %d: use fixed or poisson", int(p.Process))
	case p.Users < 1:
		return fmt.Errorf("open-loop load needs at least one user, got %d", p.Users)
	case !(p.Rate > 0) || math.IsInf(p.Rate, 0):
		return fmt.Errorf("offered rate %v tx/s must be a number above zero", p.Rate)
	}
	return nil
}

// Schedule yields one user's intended starts, as offsets from the run's
// start. It is not safe for concurrent use: each session owns its own.
type Schedule struct {
	process Process
	// Fixed: start n is at (n·users + user) / total seconds, which spreads
	// the users evenly over each period instead of starting them together.
	users, user int
	total       float64
	n           int64
	// Poisson: the running sum of intended gaps, in nanoseconds, and the
	// mean gap.
	at      float64
	meanGap float64
	rng     *rand.Rand
}

// Schedule returns the schedule of user u, from 0 to Users-1. Each user of a
// Poisson plan draws from its own stream of the seed, so users may be
// scheduled in any order and still get the same starts.
func (p Plan) Schedule(u int) (*Schedule, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if u < 0 || u >= p.Users {
		return nil, fmt.Errorf("user %d is outside 0..%d", u, p.Users-1)
	}
	s := &Schedule{process: p.Process, users: p.Users, user: u, total: p.Total()}
	if p.Process == Poisson {
		s.meanGap = 1e9 / p.UserRate()
		s.rng = rand.New(rand.NewPCG(p.Seed, uint64(u)))
	}
	return s, nil
}

// Next returns the offset from the run's start of the next intended start.
// A fixed schedule's first start is at the user's phase (0 for user 0); a
// Poisson schedule's first is one random gap after the run's start.
func (s *Schedule) Next() time.Duration {
	if s.process == Poisson {
		s.at += s.rng.ExpFloat64() * s.meanGap
		return time.Duration(math.Round(s.at))
	}
	k := s.n*int64(s.users) + int64(s.user)
	s.n++
	// k·1e9 is exact in float64 below 2^53 ns (104 days), leaving one
	// rounding in the division: the start is within a nanosecond of exact.
	if k <= math.MaxInt64/int64(time.Second) {
		return time.Duration(math.Round(float64(k*int64(time.Second)) / s.total))
	}
	return time.Duration(math.Round(float64(k) * (1e9 / s.total)))
}

// Timing is one transaction's three instants, read from one clock.
type Timing struct {
	// Intended is when the schedule meant it to start.
	Intended time.Time
	// Started is when the session sent it.
	Started time.Time
	// Ended is when its answer came back.
	Ended time.Time
}

// Latency is the time from the intended start to the end: what a client
// arriving on schedule waited, including any time queued behind a stall
// (corrected for coordinated omission). A transaction started early (before
// its intended time) counts from its actual start, so Latency is never below
// Service.
func (t Timing) Latency() time.Duration {
	from := t.Intended
	if t.Started.Before(from) {
		from = t.Started
	}
	return t.Ended.Sub(from)
}

// Service is the time from the actual start to the end: what the database
// took once asked, the figure a closed-loop driver reports.
func (t Timing) Service() time.Duration { return t.Ended.Sub(t.Started) }

// Delay is how late the transaction started: Started - Intended, 0 when on
// time or early.
func (t Timing) Delay() time.Duration { return max(0, t.Started.Sub(t.Intended)) }

// Late reports whether the transaction started more than tolerance after
// its intended start: the session could not keep up with the offered rate.
func (t Timing) Late(tolerance time.Duration) bool { return t.Delay() > tolerance }

// Lateness counts how many of a session's transactions started late.
type Lateness struct {
	// Tolerance is the delay beyond which a start counts as late.
	Tolerance time.Duration
	// Started is the number of transactions recorded.
	Started int64
	// Late is the number that started more than Tolerance after their intended start.
	Late int64
	// MaxDelay is the largest delay recorded.
	MaxDelay time.Duration
}

// Record adds one transaction.
func (l *Lateness) Record(t Timing) {
	l.Started++
	d := t.Delay()
	if d > l.Tolerance {
		l.Late++
	}
	l.MaxDelay = max(l.MaxDelay, d)
}

// Add merges another session's counts (with the same tolerance).
func (l *Lateness) Add(o Lateness) {
	l.Started += o.Started
	l.Late += o.Late
	l.MaxDelay = max(l.MaxDelay, o.MaxDelay)
}

// LateShare is the fraction of started transactions that started late.
func (l Lateness) LateShare() float64 {
	if l.Started == 0 {
		return 0
	}
	return float64(l.Late) / float64(l.Started)
}
